#!/usr/bin/env bash
# setup.sh — install what is missing (Debian packages), then configure and build andrea in
# build/ (or $ANDREA_BUILD_DIR). Safe to run again: it installs nothing that is already there.
# ANDREA_CMAKE_ARGS=-DANDREA_CUDA=OFF builds without the CUDA backend where a toolkit is installed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${ANDREA_BUILD_DIR:-$here/build}

bash "$here/tools/install-packages.sh" "$here/tools/debian-packages.txt"

# CUDA is optional; nvcc is usually not on PATH by default.
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
# ANDREA_TESTING=ON (tools/test.sh) compiles the test hooks in; the plain set-up builds without them
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DANDREA_TESTING=${ANDREA_TESTING:-OFF} ${ANDREA_CMAKE_ARGS:-} >/dev/null
# The plain set-up builds the tool alone (what `andrea analyze` needs); the test build
# (tools/test.sh) builds the tests and benchmarks too.
if [[ ${ANDREA_TESTING:-OFF} == ON ]]; then
  cmake --build "$build" -j"$(nproc)"
else
  cmake --build "$build" -j"$(nproc)" --target andrea
fi
