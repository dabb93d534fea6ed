#!/usr/bin/env bash
# Builds Bullet with BT_THREADSAFE, then lcpkit against it, so that Bullet's own multithreaded solver
# (btSequentialImpulseConstraintSolverMt, the `bullet-si-mt` solver) can be measured beside lcpkit's threads.
# Debian's libbullet-dev is built without BT_THREADSAFE, and without it Bullet's task scheduler runs every
# loop on the calling thread. Nothing else in lcpkit needs this build.
#
# What it builds is Debian's own source package of the Bullet lcpkit links (bullet 3.24+dfsg-2, from
# deb.debian.org, checked against the checksums of its .dsc), with Debian's library-naming patches and
# configure flags, and one switch more: BULLET2_MULTITHREADING (BT_THREADSAFE=1, Bullet's own thread pool).
#
#   usage: tools/bullet-mt.sh [DIR]        (default DIR: build-mt; Bullet in DIR/bullet, lcpkit in DIR)
#   then:  DIR/lcpkit bench phase --engines bullet --scenes pile:n=3000 --clock wall \
#              --solvers own,bullet-si-mt:threads=2,pgs,pgs:threads=2
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=${1:-build-mt}
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/bullet
pool=http://deb.debian.org/debian/pool/main/b/bullet
orig=bullet_3.24+dfsg.orig.tar.xz
orig_sha256=43c1edae2024ba18bb5d7bfd3bb2394b066a79151a29789504a2d8efcdc333d7
debian=bullet_3.24+dfsg-2.debian.tar.xz
debian_sha256=dc105d1eeaaaf9820e8e4eb355bbce15c3e5181ac48fa5403ec152c28eef08ae

tools/setup.sh --deps-only
mkdir -p "$src"
fetch() { # file sha256
  if [ ! -f "$src/$1" ]; then
    echo "bullet-mt: fetching $pool/$1" >&2
    python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
      "$pool/$1" "$src/$1.part"
    mv "$src/$1.part" "$src/$1"
  fi
  echo "$2  $src/$1" | sha256sum --check --quiet - || { echo "bullet-mt: $1 has the wrong checksum" >&2; exit 1; }
}
fetch "$orig" "$orig_sha256"
fetch "$debian" "$debian_sha256"

tree=$src/bullet3-3.24
if [ ! -f "$tree/.lcpkit-patched" ]; then
  rm -rf "$tree" "$src/debian"
  python3 -c 'import sys, tarfile; [tarfile.open(f).extractall(sys.argv[1]) for f in sys.argv[2:]]' \
    "$src" "$src/$orig" "$src/$debian"
  # Debian's patches that name the double-precision libraries *-float64 (its series; the third, on the
  # extras' tinyxml, does not touch the libraries built here)
  for p in 0003-If-building-with-double-precision-namespace-all-libr.patch \
           0004-CMake-definitions-use-the-namespaced-library-names.patch; do
    patch -s -d "$tree" -p1 < "$src/debian/patches/$p"
  done
  touch "$tree/.lcpkit-patched"
fi

# debian/rules' flags for the float64 build, without the extras and demos, plus the multithreading switch
cmake -S "$tree" -B "$src/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUSE_DOUBLE_PRECISION=on \
  -DBUILD_SHARED_LIBS=on -DBUILD_EXTRAS=off -DBUILD_BULLET3=off -DBUILD_BULLET2_DEMOS=off \
  -DBUILD_OPENGL3_DEMOS=off -DBUILD_CPU_DEMOS=off -DBUILD_UNIT_TESTS=off -DBUILD_PYBULLET=off \
  -DINSTALL_LIBS=on -DBULLET2_MULTITHREADING=on -DCMAKE_INSTALL_PREFIX="$src/prefix" >/dev/null
cmake --build "$src/build" -j"$(nproc)"
cmake --install "$src/build" >/dev/null

# lcpkit against it: pkg-config finds this bullet-float64 before Debian's
PKG_CONFIG_PATH="$src/prefix/lib/pkgconfig" cmake -S "$root" -B "$out" -DCMAKE_BUILD_TYPE=Release \
  -DLCPKIT_BULLET_THREADSAFE=ON >/dev/null
cmake --build "$out" -j"$(nproc)" --target lcpkit_cli test_bullet
log=$("$out/tests/test_bullet" 2>&1) || { echo "$log" >&2; echo "bullet-mt: test_bullet failed" >&2; exit 1; }
if grep -q "not built with BT_THREADSAFE" <<<"$log"; then
  echo "bullet-mt: the Bullet built in $src is not thread-safe" >&2
  exit 1
fi
echo "bullet-mt: $out/lcpkit runs Bullet's multithreaded solver (bullet-si-mt:threads=N)"
