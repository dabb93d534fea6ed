#!/bin/sh
# The Python package as `cmake --install` lays it out: installed into a temporary prefix and moved, it imports
# from there (nothing of the build tree on its path) and solves.
#   install_check.sh BUILD_DIR PYTHON PYTHON_INSTALL_DIR
set -eu
build=$1 python=$2 pydir=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lcpkit-pyinstall.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
cmake --install "$build" --prefix "$tmp/staged" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
mv "$tmp/staged" "$tmp/prefix"
cd "$tmp"
PYTHONPATH=$tmp/prefix/$pydir "$python" -c '
import sys, lcpkit
assert lcpkit.__file__.startswith(sys.argv[1]), lcpkit.__file__
r = lcpkit.solve(lcpkit.generate("boxstack", n=5), "amgs:iters=50")
assert r.res < r.res_initial and r.stop_reason == "iterations", r
print("install_check: lcpkit", lcpkit.__version__, "from", lcpkit.__file__, r)
' "$tmp/prefix/$pydir"
