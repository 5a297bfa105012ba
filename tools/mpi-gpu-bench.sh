#!/usr/bin/env bash
# mpi-gpu-bench.sh — multi-GPU scaling of `andrea dump` under MPI (issue 9, docs/cluster.md).
#   tools/mpi-gpu-bench.sh fetch   (here, with apt): download Open MPI + parallel HDF5 .debs into
#                                  .carry/mpi-debs (the GPU machine has no network and no Open MPI)
#   tools/mpi-gpu-bench.sh [NPS]   (on the GPU machine, repo root, carry [".carry"]): unpack the
#                                  carried .debs, build with MPI + CUDA, write ANDREA-120M-shaped
#                                  random weights and a token-id probe file, run `mpirun -np N
#                                  andrea dump --device cuda` for each N in NPS (default "1 2"),
#                                  print sequences/s and scaling efficiency against -np 1, and
#                                  check that the files agree; each N > 1 twice: part files +
#                                  master (the default) and --single-file; first the disk's own
#                                  sequential write rate (dd, 4 GiB, page cache and fdatasync) in
#                                  the same folder. Output under $OUT.
# NCCL is not used (no gradient traffic); NCCL_NVLS_ENABLE=0 stays exported anyway (NVLink
# multicast must stay off on the shared hosts). Env: SEQS (default 512), LEN (default 128).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
PKGS="libopenmpi3 libopenmpi-dev openmpi-bin openmpi-common libhdf5-openmpi-103-1 libhdf5-openmpi-dev
      libpmix2 libevent-core-2.1-7 libevent-pthreads-2.1-7 libhwloc15 libfabric1 libucx0 libibverbs1
      librdmacm1 libpsm2-2 libpsm-infinipath1 libnl-3-200 libnl-route-3-200 libnuma1 libltdl7 libmunge2
      libxnvctrl0 libgfortran5 libpciaccess0 libaec0 libsz2"
if [ "${1:-}" = fetch ]; then
  mkdir -p "$here/.carry/mpi-debs" && cd "$here/.carry/mpi-debs" && apt-get download $PKGS && du -sh .
  exit $?
fi
NPS=${1:-"1 2"}
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-/tmp/andrea-mpi-bench}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
PFX=/tmp/andrea-prefix
mkdir -p $PFX
for f in "$here"/.carry/debs/*.deb "$here"/.carry/mpi-debs/*.deb; do [ -f "$f" ] && dpkg -x "$f" $PFX; done
LIB=$PFX/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$LIB:$LIB/openmpi/lib:${LD_LIBRARY_PATH:-}
MPI_ARGS=()
if [ ! -x $PFX/usr/bin/orterun ]; then
  MPIRUN=mpirun
else
  # the carried Debian Open MPI even where the machine has its own: andrea links the carried libmpi
  # and parallel HDF5, and a foreign mpirun's PMIx components break against the carried libpmix
  # Debian's Open MPI relocated: OPAL_PREFIX points it at the unpacked tree (components, help
  # files, wrapper data); the alternatives symlinks (mpirun, mpicc) do not survive dpkg -x.
  export OPAL_PREFIX=$PFX/usr PATH=$PFX/usr/bin:$PATH
  MPIRUN=$PFX/usr/bin/orterun
  MPI_ARGS=(-DMPI_C_COMPILER=$PFX/usr/bin/mpicc.openmpi -DMPI_C_HEADER_DIR=$LIB/openmpi/include
            -DMPI_C_LIB_NAMES=mpi -DMPI_mpi_LIBRARY=$LIB/openmpi/lib/libmpi.so)
fi
echo "== device"; nvidia-smi --query-gpu=index,name,memory.used --format=csv
echo "== mpirun: $($MPIRUN --version 2>&1 | head -1)"
B=$here/build-mpi-gpu
cmake -S "$here" -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DANDREA_MPI=ON \
  -DANDREA_EXTRA_PREFIX=$PFX "${MPI_ARGS[@]}" > $OUT/cmake.txt 2>&1 || { tail -30 $OUT/cmake.txt; exit 1; }
grep -E "andrea: (MPI|CUDA)" $OUT/cmake.txt
cmake --build $B -j16 --target andrea > $OUT/build.txt 2>&1 || { grep -E "error" $OUT/build.txt | head -30; exit 1; }
W=/tmp/andrea-mpi-bench-work
mkdir -p $W
SEQS=${SEQS:-512} LEN=${LEN:-128}
python3 - $W "$SEQS" "$LEN" <<'PY' || exit 1
# ANDREA-120M shape (L 12, H 12, C 768, V 50257 padded 50304, maxT 1024), N(0, 0.02) weights,
# and SEQS token-id probe items of LEN tokens (no tokenizer needed).
import json, sys
import numpy as np
w, n, t = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
L, H, C, V, Vp, T = 12, 12, 768, 50257, 50304, 1024
rng = np.random.default_rng(0)
sizes = [Vp * C, T * C, L * C, L * C, L * 3 * C * C, L * 3 * C, L * C * C, L * C, L * C, L * C,
         L * 4 * C * C, L * 4 * C, L * C * 4 * C, L * C, C, C]
hdr = np.zeros(256, np.int32); hdr[:8] = [20240326, 3, T, V, L, H, C, Vp]
with open(f"{w}/a120m.bin", "wb") as f:
    f.write(hdr.tobytes())
    for k in sizes:
        f.write((rng.standard_normal(k, dtype=np.float32) * 0.02).tobytes())
with open(f"{w}/probes.jsonl", "w") as f:
    for _ in range(n):
        f.write(json.dumps({"suite": "bench", "tokens": rng.integers(0, V, t).tolist()}) + "\n")
PY
echo "== disk: sequential write of 4 GiB in $W"
dd if=/dev/zero of=$W/dd.bin bs=64M count=64 2>&1 | tail -1 | sed 's/^/page cache:     /'
rm -f $W/dd.bin; sync
dd if=/dev/zero of=$W/dd.bin bs=64M count=64 conv=fdatasync 2>&1 | tail -1 | sed 's/^/with fdatasync: /'
rm -f $W/dd.bin; sync
declare -A RATE
RUNS=""
for np_ in $NPS; do RUNS="$RUNS $np_"; [ $np_ -gt 1 ] && RUNS="$RUNS $np_:--single-file"; done
for run in $RUNS; do
  np_=${run%%:*} mode=""; [ "$run" != "$np_" ] && mode=${run#*:}
  rm -f $W/d$np_$mode.h5*
  # warm-up of the page cache and the GPU(s): a short run first
  $MPIRUN --allow-run-as-root --bind-to none -np $np_ -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH \
    $B/andrea dump $W/a120m.bin --probes $W/probes.jsonl --out $W/warm.h5 --device cuda --quiet > /dev/null 2>&1
  t0=$(date +%s.%N)
  $MPIRUN --allow-run-as-root --bind-to none -np $np_ -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH \
    $B/andrea dump $W/a120m.bin --probes $W/probes.jsonl --out $W/d$np_$mode.h5 --device cuda $mode 2>&1 | grep -v '^\s*$' | tail -2
  rc=${PIPESTATUS[0]}
  t1=$(date +%s.%N)
  secs=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
  RATE[$run]=$(python3 -c "print(f'{$SEQS / ($t1 - $t0):.1f}')")
  mb=$(du -cm $W/d$np_$mode.h5* | tail -1 | cut -f1)
  echo "np $np_ ${mode:-(parts)}: rc $rc, $SEQS sequences x $LEN tokens in $secs s (mpirun to exit) = ${RATE[$run]} seq/s, files ${mb} MB = $(python3 -c "print(f'{$mb / ($t1 - $t0):.0f}')") MB/s"
done
base=$(echo $NPS | cut -d' ' -f1)
for run in $RUNS; do
  python3 -c "r=${RATE[$run]}/${RATE[$base]}; print(f'np $run: speed-up {r:.2f} x over np $base, scaling efficiency {100*r*$base/${run%%:*}:.0f} %')"
done
for run in $RUNS; do
  [ $run = $base ] && continue
  np_=${run%%:*} mode=""; [ "$run" != "$np_" ] && mode=${run#*:}
  python3 "$here/tests/mpi_compare_dumps.py" $W/d$base.h5 $W/d$np_$mode.h5 | tail -3
done
rm -f $W/*.h5 $W/*.h5.part-*
echo "== done"
