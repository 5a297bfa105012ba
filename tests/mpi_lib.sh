# mpi_lib.sh — sourced by tests/test_mpi_*.sh: skip (77) unless this build has MPI and mpirun
# exists; MR runs mpirun as CI needs it (root in a container, more ranks than cores); tiny_model
# writes a random 2-layer ANDREA .bin (the CPU engine's result is what the tests compare).
if ! grep -q '^ANDREA_MPI:BOOL=ON' "${ANDREA_BUILD:?run through ctest}/CMakeCache.txt" 2>/dev/null; then
  echo "SKIP: this build has no MPI (configure with -DANDREA_MPI=ON; tools/mpi-test.sh does)"; exit 77
fi
if ! command -v mpirun > /dev/null; then
  echo "SKIP: mpirun not found (apt-get install openmpi-bin)"; exit 77
fi
A=${ANDREA_BIN:?}
# One OpenMP thread per rank: 3 ranks share 2 cores in CI.
export OMP_NUM_THREADS=1
MR="mpirun --allow-run-as-root --oversubscribe --bind-to none"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
FAILS=0
check() { if eval "$1"; then :; else echo "CHECK failed: $2"; FAILS=$((FAILS + 1)); fi; }
tiny_model() {
  /usr/bin/python3 - "$1" "${2:-0}" <<'PY'
import sys
import numpy as np
path, seed = sys.argv[1], int(sys.argv[2])
maxT, V, L, H, C = 64, 257, 2, 2, 16
rng = np.random.default_rng(seed)
sizes = [V * C, maxT * C, L * C, L * C, L * 3 * C * C, L * 3 * C, L * C * C, L * C, L * C, L * C,
         L * 4 * C * C, L * 4 * C, L * C * 4 * C, L * C, C, C]
header = np.zeros(256, dtype=np.int32)
header[:8] = [20240326, 3, maxT, V, L, H, C, V]
with open(path, "wb") as f:
    f.write(header.tobytes())
    for n in sizes:
        f.write((rng.standard_normal(n) * 0.3).astype("<f4").tobytes())
PY
}
