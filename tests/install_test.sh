#!/bin/sh
# Installs the build into a temporary prefix, moves it (the installation must not depend on where it was
# put), and builds and runs the examples with nothing but `pkg-config --cflags --libs` and the compilers, then
# with CMake projects of three lines each (find_package(lcpkit), add_executable, target_link_libraries), and
# runs the regression recipe of docs/regress.md (lcpkit regress as a test of a user's CMake project).
# Programs link with a RUNPATH to the installed libdir and no LD_LIBRARY_PATH, so the libraries must find
# each other by themselves.
#
#   install_test.sh BUILD_DIR SOURCE_DIR LIBDIR CC CXX WITH_ODE WITH_BULLET [EXTRA_FLAGS]
#
# LIBDIR is CMAKE_INSTALL_LIBDIR (lib, or lib/<multiarch> under /usr). EXTRA_FLAGS go to every compile
# (the sanitizer build passes its -fsanitize flags, without which its libraries cannot be loaded).
set -eu
build=$1 src=$2 libdir=$3 cc=$4 cxx=$5 with_ode=$6 with_bullet=$7 extra=${8:-}

case $libdir in /*)
	echo "install_test: CMAKE_INSTALL_LIBDIR is absolute ($libdir); nothing to test in a temporary prefix"
	exit 77 ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lcpkit-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
unset LD_LIBRARY_PATH

fail() { echo "install_test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/staged" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install failed"; }
mv "$tmp/staged" "$tmp/prefix"
prefix=$tmp/prefix
PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
export PKG_CONFIG_PATH

pc_libdir=$(pkg-config --variable=libdir lcpkit)
[ "$(cd "$pc_libdir" && pwd -P)" = "$(cd "$prefix/$libdir" && pwd -P)" ] ||
	fail "lcpkit.pc's libdir $pc_libdir is not the moved prefix's $prefix/$libdir"
rpath="-Wl,-rpath,$pc_libdir"

# run NAME ARGS...: runs an example and shows its output only when it fails
run() {
	name=$1
	shift
	"$@" >"$tmp/$name.out" 2>&1 || { cat "$tmp/$name.out"; fail "$name exited with $?"; }
	echo "install_test: $name ok"
}

if [ "$with_bullet" = ON ]; then
	lib=$prefix/$libdir/liblcpkit_bullet.so
	readelf -d "$lib" | grep -q 'NEEDED.*\[liblcpkit\.so\.0\]' || fail "$lib does not record liblcpkit.so.0"
	# shellcheck disable=SC2016 # a literal $ORIGIN
	readelf -d "$lib" | grep -q 'R.*PATH.*\[\$ORIGIN\]' || fail "$lib has no \$ORIGIN RUNPATH"

	# shellcheck disable=SC2046,SC2086 # pkg-config's output is a list of words
	$cc $extra -o "$tmp/hello_bullet" "$src/bullet_shim/examples/hello_bullet.c" \
		$(pkg-config --cflags --libs lcpkit-bullet) -lm $rpath
	run hello_bullet "$tmp/hello_bullet" pgs

	# shellcheck disable=SC2046,SC2086
	$cxx $extra -std=c++17 -o "$tmp/swap_solver" "$src/bullet_shim/examples/swap_solver.cpp" \
		$(pkg-config --cflags --libs lcpkit-bullet) $rpath
	run swap_solver "$tmp/swap_solver" "pgs:iters=10"

	# A program that calls only lk_bt_* and so does not itself need liblcpkit.so.0 (--as-needed drops it):
	# liblcpkit_bullet.so must bring the core along.
	cat >"$tmp/only_bt.c" <<'PROG'
#include <lcpkit/bullet.h>
int main(void)
{
	lk_bt_world_def def = lk_bt_default_world_def();
	lk_bt_world *w = 0;
	if (lk_bt_world_create(&def, &w, 0, 0) != LK_OK)
		return 1;
	lk_bt_world_destroy(w);
	return 0;
}
PROG
	# shellcheck disable=SC2046,SC2086
	$cc $extra -o "$tmp/only_bt" "$tmp/only_bt.c" -Wl,--as-needed $(pkg-config --cflags --libs lcpkit-bullet) $rpath
	run only_bt "$tmp/only_bt"
fi

if [ "$with_ode" = ON ]; then
	# shellcheck disable=SC2046,SC2086
	$cc $extra -o "$tmp/stack" "$src/ode_plugin/examples/stack.c" $(pkg-config --cflags --libs lcpkit-ode) $rpath
	run stack "$tmp/stack"
fi

# The CMake package: one project, a subdirectory of three lines per example, against the moved prefix.
cm=$tmp/cmake
mkdir -p "$cm"
cat >"$cm/core.c" <<'PROG'
#include <lcpkit/generate.h>
#include <stdio.h>
int main(void)
{
	lk_gen_params g = lk_default_gen_params(LK_GEN_BOXSTACK);
	lk_problem *p = NULL;
	char err[256];
	lk_solver_config cfg = lk_default_config(LK_METHOD_AMGS);
	lk_stats st;
	if (lk_generate(&g, &p, err, sizeof err) != LK_OK || lk_solve(p, &cfg, &st, NULL) != LK_OK)
		return 1;
	printf("RES %.3e -> %.3e\n", st.res_initial, st.res_final);
	lk_problem_destroy(p);
	return st.res_final < st.res_initial ? 0 : 1;
}
PROG
# example NAME SOURCE TARGET...: a subdirectory of three lines building SOURCE against TARGET...
subdirs=""
example() {
	mkdir -p "$cm/$1"
	printf 'find_package(lcpkit CONFIG REQUIRED)\nadd_executable(%s %s)\ntarget_link_libraries(%s PRIVATE %s)\n' \
		"$1" "$2" "$1" "$3" >"$cm/$1/CMakeLists.txt"
	subdirs="$subdirs $1"
}
example core "$cm/core.c" lcpkit::lcpkit
if [ "$with_bullet" = ON ]; then
	example hello_bullet "$src/bullet_shim/examples/hello_bullet.c" "lcpkit::bullet m"
	example swap_solver "$src/bullet_shim/examples/swap_solver.cpp" lcpkit::bullet
fi
if [ "$with_ode" = ON ]; then
	example stack "$src/ode_plugin/examples/stack.c" lcpkit::ode
fi
{
	printf 'cmake_minimum_required(VERSION 3.20)\nproject(lcpkit_consumers C CXX)\n'
	for d in $subdirs; do printf 'add_subdirectory(%s)\n' "$d"; done
} >"$cm/CMakeLists.txt"
cmake -S "$cm" -B "$cm/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
	-DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_FLAGS="$extra" -DCMAKE_CXX_FLAGS="$extra" \
	>"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "find_package(lcpkit) failed"; }
cmake --build "$cm/build" >>"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "the CMake examples do not build"; }
for d in $subdirs; do
	exe=$cm/build/$d/$d
	# linked from the moved prefix, not from the tree it was built in
	readelf -d "$exe" | grep -q "R.*PATH.*$prefix/$libdir" || fail "$d has no RUNPATH into $prefix/$libdir"
	case $d in
	hello_bullet) run "cmake $d" "$exe" pgs ;;
	swap_solver) run "cmake $d" "$exe" "pgs:iters=10" ;;
	*) run "cmake $d" "$exe" ;;
	esac
done
# a component that is not there: not found, and the reason
mkdir "$tmp/nosuch"
printf 'cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\nfind_package(lcpkit CONFIG REQUIRED COMPONENTS nosuch)\n' \
	>"$tmp/nosuch/CMakeLists.txt"
if cmake -S "$tmp/nosuch" -B "$tmp/nosuch/build" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/nosuch.log" 2>&1 ||
	! grep -q "lcpkit has no component 'nosuch'" "$tmp/nosuch.log"; then
	cat "$tmp/nosuch.log"
	fail "find_package(lcpkit COMPONENTS nosuch) did not fail with its reason"
fi
echo "install_test: find_package(lcpkit COMPONENTS nosuch) refused ok"

# docs/regress.md's recipe, as the block there says it, in a project of its own: passes on the golden
# results, fails on a regression, and leaves JUnit XML for CI
rp=$tmp/recipe
mkdir -p "$rp/regress/boxstack-ode"
awk '/tests\/install_test.sh runs this block/ { on = 1; next } on && /^```cmake/ { inside = 1; next }
	inside && /^```/ { exit } inside { print }' "$src/docs/regress.md" >"$tmp/recipe.cmake"
grep -q 'add_test' "$tmp/recipe.cmake" || fail "no recipe found in docs/regress.md"
{ printf 'cmake_minimum_required(VERSION 3.20)\nproject(mygame C)\n'; cat "$tmp/recipe.cmake"; } >"$rp/CMakeLists.txt"
lcpkit=$prefix/bin/lcpkit
for n in 4 6; do
	"$lcpkit" gen boxstack --n $n --friction 0.5 --out "$rp/regress/boxstack-ode/stack$n.lkp"
done
"$lcpkit" regress "$rp/regress/boxstack-ode" --solvers pgs,amgs,pgs-sm --update >"$tmp/update.log" 2>&1 ||
	{ cat "$tmp/update.log"; fail "lcpkit regress --update failed"; }
cmake -S "$rp" -B "$rp/build" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/recipe.log" 2>&1 ||
	{ cat "$tmp/recipe.log"; fail "the recipe's project does not configure"; }
ctest --test-dir "$rp/build" --output-on-failure >"$tmp/ctest.log" 2>&1 || { cat "$tmp/ctest.log"; fail "the recipe's test failed"; }
junit=$(find "$rp/build" -name '*.xml' -newer "$rp/CMakeLists.txt" | grep -v Testing/ | head -n 1)
[ -n "$junit" ] && xmllint --noout --schema "$src/tests/junit.xsd" "$junit" 2>/dev/null ||
	fail "the recipe's test left no valid JUnit XML"
echo "install_test: recipe ok"
# PGS's golden RES after the budget made ten times smaller: the same test now reports a regression
awk '$2 == "pgs" { $4 = $4 / 10 } { print }' "$rp/regress/boxstack-ode/golden.txt" >"$tmp/golden.txt"
mv "$tmp/golden.txt" "$rp/regress/boxstack-ode/golden.txt"
if ctest --test-dir "$rp/build" --output-on-failure >"$tmp/ctest.log" 2>&1 || ! grep -q REGRESSION "$tmp/ctest.log"; then
	cat "$tmp/ctest.log"
	fail "the recipe's test did not fail on a regression"
fi
grep -q '<failure message="REGRESSION' "$junit" || fail "the regression is not a failure in $junit"
echo "install_test: recipe catches a regression ok"
