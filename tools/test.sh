#!/usr/bin/env bash
# test.sh — the README's test command (and .ci/run): install what is missing, build, and run
#   1. the whole ctest suite (build/),
#   2. the same suite under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/),
#   3. every libFuzzer target for a short time (build-fuzz/; TEST_FUZZ_SECONDS, default 30),
#   4. the MPI build's tests: mpirun -np 2/3/4 against the serial tool (build-mpi/),
# after the house checks (includes only run down a floor, no function over 120 lines:
# tools/include_graph.py, tools/function_length.py; docs/ARCHITECTURE.md). The house check that
# needs a build (every exported symbol starts with andrea_, CUDA kernels are static:
# tools/prefix_symbols.py --check) runs right after the ctest stage's build.
# Stops at the first failing stage. TEST_STAGES="ctest asan fuzz mpi" picks stages.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
stages=${TEST_STAGES:-house ctest asan fuzz mpi}
t0=$(date +%s)
bash "$here/tools/install-packages.sh" "$here/tools/debian-packages.txt" "$here/tools/ci-packages.txt" \
  "$here/tools/ci-extra-packages.txt" "$here/tools/mpi-packages.txt"

stage() { echo; echo "=== test.sh: $1 ($(( $(date +%s) - t0 )) s so far) ==="; }
for s in $stages; do
  case $s in
    house) stage "house checks"
           python3 "$here/tools/include_graph.py"
           python3 "$here/tools/function_length.py" ;;
    ctest) stage "build + ctest"
           ANDREA_TESTING=ON bash "$here/tools/setup.sh"
           python3 "$here/tools/prefix_symbols.py" --check --build "${ANDREA_BUILD_DIR:-$here/build}"
           ctest --test-dir "${ANDREA_BUILD_DIR:-$here/build}" --output-on-failure -j2 ;;
    asan)  stage "ASan + UBSan build + ctest"
           bash "$here/tools/sanitize.sh" ;;
    fuzz)  stage "fuzz smoke"
           bash "$here/tools/fuzz.sh" "${TEST_FUZZ_SECONDS:-30}" ;;
    mpi)   stage "MPI build + mpirun tests"
           bash "$here/tools/mpi-test.sh" ;;
    *)     echo "test.sh: unknown stage '$s'" >&2; exit 2 ;;
  esac
done
echo "test.sh: all stages passed ($stages) in $(( $(date +%s) - t0 )) s"
