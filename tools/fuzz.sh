#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (address + undefined sanitizers) in build-fuzz/ and
# runs each for a while.     usage: tools/fuzz.sh [SECONDS] [TARGET...]
#
#   SECONDS   per target (default 60; also LK_FUZZ_SECONDS). The test suite (tools/test.sh) runs 30.
#   TARGET    problem_read, fclib_import, solve_args (default: all three)
#   LK_FUZZ_JOBS=N   run N fuzzing processes per target side by side (libFuzzer -jobs, restarting after a
#                    crash so that one run can find several); default: one in-process run that stops at
#                    the first crash
#   LK_FUZZ_OUT=DIR  build and work directory instead of build-fuzz/
#
# The long run of docs/reliability.md:  LK_FUZZ_JOBS=1 tools/fuzz.sh 1800
#
# Each target starts from its seed corpus (tests/fuzz/corpus/TARGET) and its crash regressions
# (tests/fuzz/regress/TARGET) and keeps what it finds in build-fuzz/corpus/TARGET for the next run. A crash
# leaves its input in build-fuzz/artifacts/TARGET/ (emptied when the next run starts); copy it into tests/fuzz/regress/TARGET/ once fixed, and
# the ordinary test suite replays it from then on (test_fuzz_TARGET). Logs: build-fuzz/logs/TARGET.log.
# The last line printed is "N passed, N failed" over the targets.
set -euo pipefail
cd "$(dirname "$0")/.."
src="$PWD"
seconds="${1:-${LK_FUZZ_SECONDS:-60}}"
shift || true
targets=("$@")
((${#targets[@]})) || targets=(problem_read fclib_import solve_args)
jobs="${LK_FUZZ_JOBS:-0}"
out="${LK_FUZZ_OUT:-$src/build-fuzz}"

CC=clang CXX=clang++ cmake -S . -B "$out" -DLCPKIT_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$out" -j"$(nproc)" >/dev/null

# One target's run; its line (and an invariant's log) to $out/logs/TARGET.result, status 1 where it failed.
run_target() {
  local t="$1"
  local bin="$out/tests/fuzz/fuzz_$t"
  local result="$out/logs/$t.result"
  [ -x "$bin" ] || { echo "fuzz: no target '$t'" >"$result"; return 1; }
  mkdir -p "$out/corpus/$t" "$out/artifacts/$t" "$out/logs"
  rm -f "$out/artifacts/$t"/*   # what a run finds is this run's; regressions live in tests/fuzz/regress
  local log="$out/logs/$t.log"
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1
              -close_fd_mask=3 -artifact_prefix="$out/artifacts/$t/")
  [ -f "tests/fuzz/$t.dict" ] && args+=(-dict="$src/tests/fuzz/$t.dict")
  local dirs=("$out/corpus/$t" "tests/fuzz/corpus/$t")
  [ -d "tests/fuzz/regress/$t" ] && [ -n "$(ls -A "tests/fuzz/regress/$t")" ] && dirs+=("tests/fuzz/regress/$t")
  export LSAN_OPTIONS="suppressions=$src/tests/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
  export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
  export LK_FUZZ_FAIL_LOG="$out/logs/$t.invariant"
  rm -f "$LK_FUZZ_FAIL_LOG"
  local rc=0 stats
  if [ "$jobs" -gt 0 ]; then
    # -jobs writes fuzz-N.log into the working directory
    (cd "$out/logs" && "$bin" "${args[@]}" -jobs="$jobs" -workers="$jobs" "${dirs[@]/#tests/$src/tests}" \
      >"$log" 2>&1) || rc=$?
    # the jobs' own logs hold their statistics (libFuzzer echoes a crashed job's log into $log as well)
    stats="$(cat "$out/logs"/fuzz-*.log 2>/dev/null || true)"
    printf '%s\n' "$stats" >>"$log"
    rm -f "$out/logs"/fuzz-*.log
  else
    "$bin" "${args[@]}" "${dirs[@]}" >"$log" 2>&1 || rc=$?
    stats="$(cat "$log")"
  fi
  local runs cov crashes
  runs="$( (grep -o 'stat::number_of_executed_units: [0-9]*' <<<"$stats" || true) | awk '{s += $2} END {print s + 0}')"
  cov="$( (grep -Eo 'cov: [0-9]+ ft: [0-9]+' <<<"$stats" || true) | tail -1)"
  crashes="$(ls "$out/artifacts/$t" | grep -c -E '^(crash|leak|timeout|oom)-' || true)"
  if [ "$rc" -ne 0 ] || grep -q -E '^==[0-9]+==ERROR|fuzz invariant broken|deadly signal' "$log"; then
    { echo "fuzz $t: FAILED after $runs runs (${cov:-no coverage line}); see $log and $out/artifacts/$t/"
      [ -f "$LK_FUZZ_FAIL_LOG" ] && cat "$LK_FUZZ_FAIL_LOG"; } >"$result"
    return 1
  fi
  echo "fuzz $t: ok, $runs runs in ${seconds} s, ${cov:-no coverage line}, $crashes crash files" >"$result"
}

# The targets side by side, as many at once as there are cores (each a single process of its own seconds; with
# LK_FUZZ_JOBS each takes the cores itself, so one after the other): the same fuzzing in less time
mkdir -p "$out/logs"
at_once=1
[ "$jobs" -eq 0 ] && at_once="$(nproc)"
running=0
for t in "${targets[@]}"; do
  rm -f "$out/logs/$t.result"
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$at_once" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true
passed=0
failed=0
for t in "${targets[@]}"; do
  if [ -f "$out/logs/$t.result" ]; then
    cat "$out/logs/$t.result"
  else
    echo "fuzz $t: FAILED: no result"
  fi
  if grep -q "^fuzz $t: ok," "$out/logs/$t.result" 2>/dev/null; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
