#!/usr/bin/env bash
# Installs the Debian packages lcpkit needs (tools/debian-packages.txt) that are missing, builds lcpkit
# into build/ (the Python package into build/python) and runs the main job.   usage: tools/setup.sh [--deps-only | --no-run]
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
while read -r pkg; do
  case "$pkg" in ''|'#'*) continue ;; esac
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done < tools/debian-packages.txt
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y "${missing[@]}"
fi
[ "${1:-}" = "--deps-only" ] && exit 0

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
# the Python package: where it is and the interpreter it was built for (docs/python.md)
python_note() {
  if [ -f build/python/interpreter ]; then
    echo "setup: the Python package lcpkit is in build/python:" \
      "PYTHONPATH=$PWD/build/python $(cat build/python/interpreter) -c 'import lcpkit'" >&2
  fi
}
[ "${1:-}" = "--no-run" ] && { python_note; exit 0; }

./build/lcpkit compare
python_note
