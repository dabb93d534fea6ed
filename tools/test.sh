#!/usr/bin/env bash
# The whole test suite: an optimised build and an address/undefined-sanitizer build, each with every test;
# valgrind over a few unit tests, the threaded sweeps under ThreadSanitizer and a short run of the fuzz targets
# (docs/reliability.md).
# usage: tools/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh --deps-only
jobs="$(nproc)"

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

# memcheck of a few fast unit tests under valgrind (docs/reliability.md): the problem, the file reader with
# its fuzz corpus, the solver guards, the FCLIB reader with its malformed files and fuzz corpus
vg_tests=(test_problem test_io test_fuzz_problem_read test_guards test_fclib test_fuzz_fclib_import)
for t in "${vg_tests[@]}"; do
  LK_TEST_DATA="$PWD/tests/data" LK_FUZZ_DIR="$PWD/tests/fuzz" \
    valgrind --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --suppressions="$PWD/tests/valgrind.supp" "build/tests/$t" >/dev/null
done
echo "valgrind memcheck: ${#vg_tests[@]} tests clean"

# libFuzzer targets, LK_FUZZ_SECONDS (default 30) each, in their own clang tree build-fuzz/: a smoke run (in a clean
# clone 30 s reach 85-99 % of the edges 60 s reach); the long run is docs/reliability.md's
tools/fuzz.sh "${LK_FUZZ_SECONDS:-30}"

# the threaded sweeps under ThreadSanitizer: the core's threads and lent schedulers, and the ODE plugin's sweeps
# on ODE's thread pool (libode is not instrumented: ode_threads.c tells the sanitizer the order its calls keep)
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLCPKIT_TSAN=ON -DLCPKIT_WITH_ODE=ON \
  -DLCPKIT_WITH_BULLET=OFF >/dev/null
cmake --build build-tsan -j"$jobs" --target test_parallel test_ode_step
for t in test_parallel test_ode_step; do
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "build-tsan/tests/$t" >/dev/null
done
echo "thread sanitizer: test_parallel and test_ode_step clean"

# Debug keeps the core's debug checks (NDEBUG unset); -O1, as the sanitizers' own documentation advises, for a
# run that takes two thirds of the unoptimised one's time (docs/reliability.md)
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DLCPKIT_SANITIZE=ON -DCMAKE_C_FLAGS_DEBUG="-g -O1" \
  -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" >/dev/null
cmake --build build-sanitize -j"$jobs"
ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize --output-on-failure -j"$jobs"
