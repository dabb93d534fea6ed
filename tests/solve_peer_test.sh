#!/bin/sh
# lcpkit solve --peer siconos: every solver's row beside Siconos's, judged by Siconos's error; a solver that
# refuses the problem has its row with the reason and the others keep theirs, and the exit status is 1.
#
#   solve_peer_test.sh LCPKIT
set -eu
lcpkit=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lcpkit-peer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "solve_peer_test: $*" >&2; cat "$tmp/out.txt" "$tmp/err.txt" >&2; exit 1; }

"$lcpkit" gen packing --n 12 --friction 0.3 --out "$tmp/p.lkp"
rc=0
"$lcpkit" solve "$tmp/p.lkp" --peer siconos --tol 1e-8 --solver pgs:friction=cone,iters=2000 \
  --solver ipm:friction=cone,iters=3 --solver ipm:friction=cone,iters=400 >"$tmp/out.txt" 2>"$tmp/err.txt" || rc=$?
[ "$rc" = 1 ] || fail "exit status $rc, not 1 (one solver failed)"
row() { grep -E "^ +$1 " "$tmp/out.txt" || fail "no row for $1"; }
row "lcpkit pgs:friction=cone,iters=2000" | grep -q " solved$" || fail "the cone sweep's row does not say solved"
row "lcpkit ipm:friction=cone,iters=3" | grep -q "failed: ipm: the iteration limit ran out after 3 interior-point" ||
  fail "the refused solver's row does not give its reason"
row "lcpkit ipm:friction=cone,iters=400" | grep -q " solved$" || fail "the solver after the refused one has no result"
row "siconos-nsgs" | grep -q " solved$" || fail "Siconos's nsgs has no row"
row "siconos-nsn-ac" | grep -q " solved$" || fail "Siconos's Newton has no row"
grep -q "ipm:friction=cone,iters=3: ipm: the iteration limit ran out" "$tmp/err.txt" || fail "nothing on stderr"
# the summary: lcpkit's fastest solver to the tolerance, and its time over each of Siconos's
awk '/^ +lcpkit .* solved$/ { if (best == "" || $5 + 0 < t) { best = $2; t = $5 + 0 } }
  /^ +siconos-nsgs / { nsgs = $4 + 0 }
  /^  fastest to 1e-08: / { line = $0 }
  END {
    if (best == "" || index(line, "fastest to 1e-08: lcpkit " best ", ") == 0) exit 1
    split(substr(line, index(line, "s: ") + 3), w, "x")
    r = w[1] / (t / nsgs)
    exit !(r > 0.9 && r < 1.1)
  }' "$tmp/out.txt" || fail "the summary does not name the fastest solved lcpkit row and its ratio to nsgs"
echo "solve_peer_test: ok"

# where no lcpkit solver reaches the tolerance, the summary names the lowest error
"$lcpkit" solve "$tmp/p.lkp" --peer siconos --tol 1e-8 --solver pgs:friction=cone,iters=2 \
  --solver pgs:friction=cone,iters=5 >"$tmp/out.txt" 2>"$tmp/err.txt" || true
grep -q "^  no lcpkit solver reached 1e-08; the lowest error .*: lcpkit pgs:friction=cone,iters=5$" "$tmp/out.txt" ||
  fail "no summary naming the lowest error"
echo "solve_peer_test: summary ok"

# W goes to Siconos sparse, whatever its size: 600 boxes on an incline, 7,200 rows (beyond a dense W's 6,000 once)
"$lcpkit" gen incline --n 600 --friction 0.5 --out "$tmp/big.lkp"
"$lcpkit" solve "$tmp/big.lkp" --peer siconos --tol 1e-8 --peer-iters 2000 \
  --solver newton-minmap:friction=cone,iters=200 >"$tmp/out.txt" 2>"$tmp/err.txt" || fail "exit status $? for 7,200 rows"
grep -q "peer siconos: 2400 contacts" "$tmp/out.txt" || fail "not 2,400 contacts"
row "lcpkit newton-minmap:friction=cone,iters=200" | grep -q " solved$" || fail "lcpkit's row does not say solved"
row "siconos-nsgs" | grep -q " solved$" || fail "Siconos's nsgs does not solve the 7,200 rows"
echo "solve_peer_test: sparse W ok"

# Siconos's solvers run in a process of their own under a memory limit: its Newton (and the sparse solver it
# calls) cannot work in 1 MB, and its row says so while the others keep theirs; the exit status is 1
rc=0
"$lcpkit" solve "$tmp/p.lkp" --peer siconos --peer-memory 1 --tol 1e-8 --solver pgs:friction=cone,iters=2000 \
  >"$tmp/out.txt" 2>"$tmp/err.txt" || rc=$?
[ "$rc" = 1 ] || fail "exit status $rc under --peer-memory 1, not 1"
row "lcpkit pgs:friction=cone,iters=2000" | grep -q " solved$" || fail "the cone sweep's row does not say solved"
row "siconos-nsn-ac" | grep -q "failed: Siconos's process ended without a result" ||
  fail "Siconos's Newton's row does not say that its process ended without a result"
echo "solve_peer_test: memory limit ok"

# a problem of the plane (a normal row and one friction row a contact) goes to Siconos's fc2d solvers, judged by
# fc2d_compute_error. By hand: the normals solve [2 0.5; 0.5 2] l = (1, 2), l = (4/15, 14/15); contact 0 slides
# (sticking would take 0.5 > 0.3 * 4/15), its friction -0.08; contact 1 sticks at 0.2 (< 0.3 * 14/15)
cat >"$tmp/planar.lkp" <<'PLANAR'
lcpkit-problem 1
form matrix
rows 4
# index q lo hi mu findex
0 -1 0 inf 0 -1
1 0.5 -inf inf 0.3 0
2 -2 0 inf 0 -1
3 -0.2 -inf inf 0.3 2
entries 6
# row column value (sorted by row)
0 0 2
0 2 0.5
1 1 1
2 0 0.5
2 2 2
3 3 1
lambda 4
0
0
0
0
end
PLANAR
"$lcpkit" solve "$tmp/planar.lkp" --peer siconos --tol 1e-10 --solver pgs:iters=100,merit=fc3d,tol=1e-10 \
  --out "$tmp/l.csv" >"$tmp/out.txt" 2>"$tmp/err.txt" || fail "exit status $? for a problem of the plane"
awk -F, 'NR > 1 { e = $2 - (NR == 2 ? 4 / 15 : NR == 3 ? -0.08 : NR == 4 ? 14 / 15 : 0.2); if (e * e > 1e-16) bad = 1 }
  END { exit bad }' "$tmp/l.csv" || fail "lcpkit's impulses are not (4/15, -0.08, 14/15, 0.2): $(cat "$tmp/l.csv")"
grep -q "peer siconos: 2 contacts of the plane, .*(fc2d_compute_error)" "$tmp/out.txt" || fail "no fc2d header"
row "lcpkit pgs:iters=100,merit=fc3d,tol=1e-10" | grep -q " solved$" || fail "lcpkit's row does not say solved"
row "siconos-fc2d-nsgs" | grep -q " solved$" || fail "Siconos's fc2d nsgs has no row"
row "siconos-fc2d-cpg" | grep -q " solved$" || fail "Siconos's fc2d cpg has no row"
echo "solve_peer_test: 2D ok"
