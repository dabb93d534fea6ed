#!/usr/bin/env bash
# Regenerates docs/benchmark-outputs.md, the outputs docs/benchmarks.md reads, from the `lcpkit bench` commands.
#
# Runs every suite `lcpkit bench --help` lists (or the suites named), keeps each one's output and CSV files under
# bench-out/ (raw outputs in bench-out/raw/), counts the row kernels' instructions with valgrind's callgrind, and
# writes into docs/benchmark-outputs.md, between generated markers:
#   - the machine (CPU model, cores, caches, memory), compiler, build type and date of the run;
#   - per suite: the exact command, its run time and its output (in the suite's own section, `## SUITE`);
#   - the callgrind instruction counts per row update (kernel section);
#   - the performance targets table, computed from the CSV files (met / missed and by how much).
# Everything outside the markers is left as it is, and a suite that is not re-run keeps the output it recorded;
# docs/benchmarks.md, each question's current result, is written by hand from these outputs.
#
# usage: tools/benchmarks.sh [--quick] [--no-build] [--no-run] [--build DIR] [--out DIR] [--doc FILE] [SUITE...]
#   --quick     pass --quick to every suite (a small fast run; the document says so)
#   --no-build  use an existing build (default: configure and build DIR first)
#   --no-run    run nothing: rewrite the document from the outputs of the last run (in OUT/raw)
#   --build     build directory (default build-bench, RelWithDebInfo as the project's default build)
#   --out       output directory of the suites (default bench-out)
#   --doc       the document to update (default docs/benchmark-outputs.md)
set -euo pipefail
cd "$(dirname "$0")/.."

quick=""
doc="docs/benchmark-outputs.md"
build_dir="build-bench"
out_dir="bench-out"
do_build=1
do_run=1
suites=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick="--quick" ;;
    --no-build) do_build=0 ;;
    --no-run) do_run=0; do_build=0 ;;
    --build) build_dir="$2"; shift ;;
    --out) out_dir="$2"; shift ;;
    --doc) doc="$2"; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    -*) echo "benchmarks.sh: unknown option $1" >&2; exit 2 ;;
    *) suites+=("$1") ;;
  esac
  shift
done

raw="$out_dir/raw"
mkdir -p "$raw"

if [ "$do_build" = 1 ]; then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build_dir" -j2 --target lcpkit_cli >/dev/null
fi
lcpkit="$build_dir/lcpkit"
[ -x "$lcpkit" ] || { echo "benchmarks.sh: $lcpkit not found (build it or drop --no-build)" >&2; exit 1; }

all_suites=$("$lcpkit" bench --help | awk '/^suites:/{on=1; next} on && /^  [a-z]/{print $1}')
if [ ${#suites[@]} -eq 0 ]; then
  # shellcheck disable=SC2206
  suites=($all_suites)
fi
for s in "${suites[@]}"; do
  echo "$all_suites" | grep -qx "$s" || { echo "benchmarks.sh: unknown suite $s (have: $(echo $all_suites))" >&2; exit 2; }
done

# ------------------------------------------------------------------------------------------------ the runs

status=0
for s in "${suites[@]}"; do
  [ "$do_run" = 1 ] || continue
  echo "== lcpkit bench $s $quick" >&2
  t0=$(date +%s)
  rc=0
  "$lcpkit" bench "$s" $quick --out "$out_dir" >"$raw/$s.txt" 2>"$raw/$s.err" || rc=$?
  t1=$(date +%s)
  echo "lcpkit bench $s ${quick:+$quick }--out $out_dir" >"$raw/$s.cmd"
  echo "$((t1 - t0))" >"$raw/$s.seconds"
  echo "$rc" >"$raw/$s.status"
  date -u '+%Y-%m-%d %H:%M UTC' >"$raw/$s.date"
  [ "$rc" = 0 ] || { echo "benchmarks.sh: lcpkit bench $s exited with $rc (see $raw/$s.err)" >&2; status=1; }
done

# callgrind: instructions per row update of each kernel on the 10,000-row packing (independent of machine load)
if [ "$do_run" = 1 ] && printf '%s\n' "${suites[@]}" | grep -qx kernel && command -v valgrind >/dev/null; then
  {
    printf '| kernel | function counted | rows | row updates | instructions | instructions per row update |\n'
    printf '|---|---|---:|---:|---:|---:|\n'
    for k in stream:stream_sweep pgs:lk__pgs_sweep pgs-ref:lk__pgs_sweep_ref amgs:lk__solve_amgs; do
      name=${k%%:*}
      fn=${k#*:}
      cg="$raw/callgrind.$name.out"
      line=$(valgrind --tool=callgrind --toggle-collect="$fn" --callgrind-out-file="$cg" \
        "$lcpkit" bench kernel --callgrind "$name" --sizes 10000 2>/dev/null)
      rows=$(echo "$line" | sed -n 's/.*: \([0-9]*\) rows.*/\1/p')
      updates=$(echo "$line" | sed -n 's/.* \([0-9]*\) row updates.*/\1/p')
      ir=$(callgrind_annotate "$cg" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",", "", $1); print $1}')
      awk -v n="$name" -v f="$fn" -v r="$rows" -v u="$updates" -v i="$ir" \
        'BEGIN{printf "| %s | `%s` | %d | %d | %d | %.1f |\n", n, f, r, u, i, i / u}'
    done
  } >"$raw/kernel-callgrind.md"
fi

# ------------------------------------------------------------------------------------------ the document

# Replaces the block between <!-- benchmarks.sh: NAME begin --> and <!-- benchmarks.sh: NAME end --> with the
# contents of FILE; without the block, inserts it at the end of the section "## HEADING" (or appends the
# section at the end of the document).
splice() {
  local name="$1" file="$2" heading="$3"
  local b="<!-- benchmarks.sh: $name begin -->" e="<!-- benchmarks.sh: $name end -->"
  [ -f "$doc" ] || printf '# Benchmark outputs\n' >"$doc"
  if grep -qF -- "$b" "$doc"; then
    awk -v b="$b" -v e="$e" -v f="$file" '
      $0 == b { print; while ((getline l < f) > 0) print l; skip = 1; next }
      $0 == e { skip = 0 }
      !skip { print }' "$doc" >"$doc.tmp"
  elif grep -q "^## $heading\( \|$\)" "$doc"; then
    awk -v b="$b" -v e="$e" -v f="$file" -v h="## $heading" '
      function emit() { print b; while ((getline l < f) > 0) print l; print e; print ""; done = 1 }
      insec && /^## / && !done { emit() }
      { print }
      $0 == h || index($0, h " ") == 1 { insec = 1 }
      END { if (insec && !done) { print ""; emit() } }' "$doc" >"$doc.tmp"
  else
    { cat "$doc"; printf '\n## %s\n\n%s\n' "$heading" "$b"; cat "$file"; printf '%s\n' "$e"; } >"$doc.tmp"
  fi
  mv "$doc.tmp" "$doc"
}

tmp=$(mktemp)
trap 'rm -f "$tmp" "$doc.tmp"' EXIT

# the machine and the run
{
  cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
  cores=$(nproc)
  l2=$(lscpu | sed -n 's/^L2 cache: *//p' | head -1)
  l3=$(lscpu | sed -n 's/^L3 cache: *//p' | head -1)
  # some virtual machines' lscpu names no caches; the C library's view of them then
  cache_size() { getconf "$1" 2>/dev/null | awk '$1 > 0 {printf "%g MiB", $1 / 1048576}'; }
  [ -n "$l2" ] || l2=$(cache_size LEVEL2_CACHE_SIZE)
  [ -n "$l3" ] || l3=$(cache_size LEVEL3_CACHE_SIZE)
  [ -n "$l2" ] || l2="unknown"
  [ -n "$l3" ] || l3="unknown"
  mem=$(awk '/MemTotal/{printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
  cc=$(cc --version | head -1)
  btype=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build_dir/CMakeCache.txt" 2>/dev/null || true)
  if [ "$do_run" = 1 ]; then
    printf 'Last run of `tools/benchmarks.sh%s%s`: %s.\n\n' "${quick:+ $quick}" \
      "$( [ ${#suites[@]} -lt $(echo $all_suites | wc -w) ] && printf ' %s' "${suites[*]}" )" "$(date -u '+%Y-%m-%d %H:%M UTC')"
  else
    printf 'Rewritten by `tools/benchmarks.sh --no-run` from the outputs of the runs listed below.\n\n'
  fi
  printf -- '- Machine: %s, %s cores (shared with other work: timings are medians of repeats measured side by side),\n' "$cpu" "$cores"
  printf -- '  L2 %s, L3 %s, memory %s; %s.\n' "$l2" "$l3" "$mem" "$(uname -sr)"
  printf -- '- Build: `%s`, %s (the project default, `-O2 -g`), `-ffp-contract=off`.\n' "$cc" "${btype:-RelWithDebInfo}"
  printf -- '- Every suite writes its CSV files to `%s/`; the outputs below are copied from `%s/`.\n' "$out_dir" "$raw"
  printf '\n| suite | command | run time | when |\n|---|---|---:|---|\n'
  for s in $all_suites; do
    if [ -f "$raw/$s.cmd" ]; then
      printf '| %s | `%s` | %s s | %s |\n' "$s" "$(cat "$raw/$s.cmd")" "$(cat "$raw/$s.seconds")" "$(cat "$raw/$s.date")"
    fi
  done
} >"$tmp"
splice header "$tmp" "Machine and commands"

# each suite's output in its own section
for s in "${suites[@]}"; do
  [ -f "$raw/$s.cmd" ] && [ -f "$raw/$s.txt" ] || continue
  {
    printf 'Output of `%s` (%s s, %s):\n\n```\n' "$(cat "$raw/$s.cmd")" "$(cat "$raw/$s.seconds")" "$(cat "$raw/$s.date")"
    # progress lines and engines' stderr chatter are not part of the figures
    sed 's/\r/\n/g' "$raw/$s.txt" | grep -v '^ODE Message' | cat -s
    printf '```\n'
    if [ "$(cat "$raw/$s.status")" != 0 ]; then
      printf '\nThe command exited with status %s; its error output:\n\n```\n' "$(cat "$raw/$s.status")"
      grep -v '^ODE Message' "$raw/$s.err" | cat -s | tail -20
      printf '```\n'
    fi
    if [ "$s" = kernel ] && [ -f "$raw/kernel-callgrind.md" ]; then
      printf '\nInstruction counts (valgrind 3, `valgrind --tool=callgrind --toggle-collect=FUNCTION %s bench kernel\n' "$lcpkit"
      printf -- '--callgrind KERNEL --sizes 10000`; 20 sweeps from lambda = 0; the count covers FUNCTION and what it calls,\n'
      printf 'amgs including its O(n) set-up):\n\n'
      cat "$raw/kernel-callgrind.md"
    fi
  } >"$tmp"
  splice "$s" "$tmp" "$s"
done

# ------------------------------------------------------------------------------------- the targets table

csv() { [ -f "$out_dir/$1" ] && cat "$out_dir/$1" || true; }
# awk over a CSV whose text fields may be quoted and hold commas: F[1..NF] are the fields of each line
csvawk() {
  awk "function split_csv(line, F,   n, i, c, q) {
         n = 1; F[1] = \"\"; q = 0
         for (i = 1; i <= length(line); ++i) {
           c = substr(line, i, 1)
           if (c == \"\\\"\") { q = !q; continue }
           if (c == \",\" && !q) { F[++n] = \"\"; continue }
           F[n] = F[n] c
         }
         for (i = 1; i <= n; ++i)
           if (F[i] ~ /^-?[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?$/) F[i] = F[i] + 0
         return n
       }
       { delete F; split_csv(\$0, F) }
       $1"
}
{
  printf '| target | measured | status |\n|---|---|---|\n'

  # 1. AMGS[D/gamma] <= 0.5x PGS's iterations and <= 0.55x its time to RES < 1e-4 (bench paper, t1)
  csv bench_paper_t1.csv | csvawk '
    F[1] == "t1" && (F[3] == "pgs" || F[3] == "amgs:alpha=0.5" || F[3] == "amgs:alpha=0.1") {
      k = F[2] SUBSEP F[3]; i2[k] = F[5]; i3[k] = F[6]; i4[k] = F[7]; sw[k] = F[8]; sec[k] = F[10]; ord[++n] = F[2] }
    END {
      out = ""; met = 1; best = ""
      for (j = 1; j <= n; ++j) { s = ord[j]; if (seen[s]++) continue
        p = s SUBSEP "pgs"; a = s SUBSEP "amgs:alpha=0.5"; b = s SUBSEP "amgs:alpha=0.1"
        if (!(p in sw) || !(a in sw)) continue
        if (i4[p] > 0 && i4[a] > 0) { ip = i4[p]; ia = i4[a]; tag = "1e-4" }
        else if (i3[p] > 0 && i3[a] > 0) { ip = i3[p]; ia = i3[a]; tag = "1e-3" }
        else if (i2[p] > 0 && i2[a] > 0) { ip = i2[p]; ia = i2[a]; tag = "1e-2" }
        else { out = out sprintf("%s: neither reached 1e-2; ", s); met = 0; continue }
        ri = ia / ip; rt = (ia * sec[a] / sw[a]) / (ip * sec[p] / sw[p])
        if (ri > 0.5 || rt > 0.55) met = 0
        out = out sprintf("%s: %.2fx iterations, %.2fx time (to RES < %s); ", s, ri, rt, tag)
        if ((b in sw) && i2[b] > 0 && i2[p] > 0) best = best sprintf("%s %.2fx, ", s, i2[b] / i2[p])
      }
      if (out == "") exit
      sub(/; $/, "", out); sub(/, $/, "", best)
      printf "| AMGS[D/gamma] <= 0.5x PGS iterations and <= 0.55x its time to RES < 1e-4, Pool 1, Pool 2, Stacking-150 (paper 0.53, 0.55, 0.48) | %s. For comparison AMGS[0.1 D], iterations to 1e-2: %s | %s |\n", out, best, met ? "met" : "**missed**"
    }'

  # 2. Method 3.1 >= 50x faster than 2.2 at the paper's Pool 1 size, and the gap growing (bench paper, t1_size)
  csv bench_paper_t1.csv | csvawk '
    F[1] == "t1_size" { n++; sz[n] = F[2]; r[n] = F[11] / F[10] }
    END { if (!n) exit
      out = ""; grow = 1
      for (j = 1; j <= n; ++j) { s = sz[j]; sub(/.*n=/, "", s); out = out sprintf("%s circles %.0fx, ", s, r[j]); if (j > 1 && r[j] <= r[j-1]) grow = 0 }
      sub(/, $/, "", out)
      printf "| Method 3.1 >= 50x faster than Method 2.2 at Pool 1 (221 circles), gap growing with size | %s | %s |\n", out, (r[1] >= 50 && grow) ? "met" : "**missed**" }'

  # 3. ESP and GSP >= 2x PGS speed per iteration on the box stack (bench paper, ord)
  csv bench_paper_ord.csv | csvawk '
    F[1] == "ord" && F[2] == "densely structured" { e = F[6] / F[7]; g = F[6] / F[8]; f = 1 }
    END { if (!f) exit
      printf "| ESP and GSP >= 2x PGS speed per iteration on the box stack (paper 1.9, 2.7) | ESP %.2fx, GSP %.2fx | %s |\n", e, g, (e >= 2 && g >= 2) ? "met" : "**missed**" }'

  # 4. lcpkit pgs <= 1.0x Bullet SI and ODE quickstep per iteration, same rows (bench engines, per_iteration)
  csv bench_engines.csv | csvawk '
    BEGIN { met = 1 }
    F[1] == "per_iteration" && (F[4] == "bullet-si" || F[4] == "ode-quickstep") && F[16] != "" {
      v = 1 / F[16]; out = out sprintf("%s %s %.2fx, ", F[2], F[4], v); if (v > 1.0) met = 0; f = 1 }
    END { if (!f) exit; sub(/, $/, "", out)
      printf "| lcpkit pgs <= 1.0x Bullet SI and ODE quickstep per iteration, same rows (time per row and iteration, pgs / engine) | %s | %s |\n", out, met ? "met" : "**missed**" }'

  # 5. kernel <= 2x the streaming limit at 100,000 rows (bench kernel)
  csv bench_kernel.csv | csvawk '
    NR > 1 && F[1] >= 50000 && F[1] <= 200000 && (F[5] == "pgs" || F[5] == "amgs") { r[F[5]] = F[7]; rows = F[1]; f = 1 }
    END { if (!f) exit
      st = r["pgs"] <= 2 ? (r["amgs"] <= 2 ? "met" : "met (pgs); amgs **missed**") : "**missed**"
      printf "| PGS kernel <= 2x the streaming limit at 100,000 rows | %d rows: pgs %.2fx, amgs %.2fx | %s |\n", rows, r["pgs"], r["amgs"], st }'

  # 6. bigpool 10,000 spheres, 20 iterations: solve time per step; linear scaling 1,000 -> 100,000 within 1.3x
  csv bench_engines.csv | csvawk '
    F[1] == "scaling" { b = F[2]; sub(/.*n=/, "", b); sub(/,.*/, "", b); b += 0; key = F[3] " " F[4]
      if (b == 1000) base[key] = F[14]
      if (b == 10000) t10[key] = F[9]
      if (b > big[key] + 0) { big[key] = b; last[key] = F[14] }
      f = 1 }
    END { if (!f) exit
      out = ""; met = 1; partial = 0
      for (k in t10) out = out sprintf("%s %.1f ms per step at 10,000; ", k, 1e3 * t10[k])
      for (k in big) if (k ~ /pgs/ && (k in base)) {
        r = last[k] / base[k]; out = out sprintf("%s time per row and iteration at %d vs 1,000: %.2fx; ", k, big[k], r)
        if (r > 1.3) met = 0; if (big[k] < 100000) partial = 1 }
      sub(/; $/, "", out)
      printf "| bigpool: solve time per step at 10,000 spheres, 20 iterations; time per row linear from 1,000 to 100,000 bodies within 1.3x | %s | %s |\n", out, met ? (partial ? "met where measured" : "met") : "**missed**" }'
} >"$tmp"
# a target whose suite has no CSV file in this run keeps the row the document recorded, in its place
tmp2=$(mktemp)
awk -v doc="$doc" '
  function name(row,   n) { n = row; sub(/^\| /, "", n); sub(/ \|.*/, "", n); return n }
  NR <= 2 { print; next }
  { fresh[name($0)] = $0; order[++n] = name($0) }
  END {
    while ((getline line < doc) > 0) {
      if (line ~ /benchmarks.sh: targets begin/) { on = 1; continue }
      if (line ~ /benchmarks.sh: targets end/) on = 0
      if (!on || line !~ /^\| / || line ~ /^\| target \|/ || line ~ /^\|---/) continue
      k = name(line); print (k in fresh) ? fresh[k] : line; done[k] = 1
    }
    for (i = 1; i <= n; ++i) if (!(order[i] in done)) print fresh[order[i]]
  }' "$tmp" >"$tmp2"
mv "$tmp2" "$tmp"
if [ "$(wc -l <"$tmp")" -gt 2 ]; then
  splice targets "$tmp" "Performance targets"
fi

echo "$doc updated; outputs in $raw/" >&2
exit "$status"
