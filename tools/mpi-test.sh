#!/usr/bin/env bash
# mpi-test.sh — the CI job of the MPI build: install Open MPI and Debian's parallel HDF5 when
# missing (tools/mpi-packages.txt), build BUILD (default build-mpi) with -DANDREA_MPI=ON
# -DANDREA_CUDA=OFF, and run the MPI tests (tests/test_mpi_*.sh: mpirun -np 2, 3 and 4 on the CPU
# engine against the serial tool). Exit status: ctest's. Safe to run again; root only for apt.
# Usage: tools/mpi-test.sh [ctest args...]        env: BUILD=dir JOBS=n (default 2)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$here/build-mpi}
JOBS=${JOBS:-2}
bash "$here/tools/install-packages.sh" "$here/tools/mpi-packages.txt"
t0=$(date +%s)
cmake -S "$here" -B "$BUILD" -DANDREA_MPI=ON -DANDREA_CUDA=OFF > "$BUILD.configure.log" 2>&1 \
  || { tail -20 "$BUILD.configure.log"; exit 1; }
cmake --build "$BUILD" -j"$JOBS" --target andrea > "$BUILD.build.log" 2>&1 \
  || { grep -E "error|Error" "$BUILD.build.log" | head -30; exit 1; }
t1=$(date +%s)
# The serial suite in this build would run too (MPI starts only under mpirun), but the default
# build's CI job covers it; here only what MPI changes.
ctest --test-dir "$BUILD" -R '^test_mpi_' --output-on-failure "$@"
echo "mpi-test: build $((t1 - t0)) s, tests $(($(date +%s) - t1)) s"
