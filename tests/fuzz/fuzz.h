/* The libFuzzer entry point every target in tests/fuzz defines. The same sources build into the fuzzers
 * (clang, -fsanitize=fuzzer; tools/fuzz.sh) and into the replay tests of the ordinary build
 * (tests/fuzz/replay.c), which run the seed corpora and every input that once crashed. */
#ifndef LCPKIT_FUZZ_H
#define LCPKIT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: abort, which both libFuzzer and the replay test report with the message. */
void lk_fuzz_fail(const char *what);

#endif
