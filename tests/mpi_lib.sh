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
trap '[ -n "$KEEP_W" ] || rm -rf "$W"' EXIT
FAILS=0
check() { if eval "$1"; then :; else echo "CHECK failed: $2"; FAILS=$((FAILS + 1)); fi; }
tiny_model() { # PATH [SEED]: L2 H2 C16 maxT64, byte vocabulary, weights N(0, 0.3^2)
  /usr/bin/python3 "$ANDREA_SRC/tests/tiny_ckpt.py" "$1" --seed "${2:-0}" --scale 0.3
}
