#!/usr/bin/env bash
# bench_mpi_cpu.sh ANDREA [WORKDIR] — the CPU measurements of "Multi-GPU under MPI" (bench/RESULTS.md),
# all in one call so they share the machine's state:
#   1. the disk's sequential write rate: dd of 1 GiB (16 MiB blocks) into WORKDIR, once landing in
#      the page cache (as a dump's writes do: andrea does not fsync) and once with conv=fdatasync;
#   2. `andrea dump` of a map-heavy job (random L4 H8 C64 model: the forward is cheap, 1 MiB of fp16
#      maps a sequence, 512 sequences of 128 tokens) with mpirun -np 1, -np 2 (part files + master,
#      the default) and -np 2 --single-file (collective MPI-IO), and the files compared;
#   3. `andrea analyze` of the bundled model (one checkpoint: sequences sharded over the ranks) and
#      of the six-checkpoint dyck series (checkpoints spread over the ranks), -np 1 and -np 2.
# Wall time is mpirun's start to exit; "dump MB/s" is the payload andrea reports over that time.
# Without OMP_NUM_THREADS each rank's OpenMP team is its share of the cores (docs/cluster.md).
# Needs an MPI build (-DANDREA_MPI=ON) and python3-h5py.
set -u
A=${1:?usage: bench_mpi_cpu.sh path/to/andrea [workdir]}
here=$(cd "$(dirname "$0")/.." && pwd)
W=${2:-$(mktemp -d /tmp/andrea-mpi-bench.XXXX)}
mkdir -p "$W" && cd "$W" || exit 1
MR="mpirun --allow-run-as-root --oversubscribe --bind-to none"
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc -l | xargs printf "%.2f"; }
echo "== machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== andrea $(git -C "$here" rev-parse --short HEAD 2>/dev/null), $($MR --version 2>&1 | head -1)"

echo "== 1. disk: sequential write of 1 GiB in $W"
sync
dd if=/dev/zero of=dd.bin bs=16M count=64 2>&1 | tail -1 | sed 's/^/page cache:      /'
rm -f dd.bin && sync
dd if=/dev/zero of=dd.bin bs=16M count=64 conv=fdatasync 2>&1 | tail -1 | sed 's/^/with fdatasync:  /'
rm -f dd.bin && sync

echo "== 2. dump: 512 x 128 tokens, random L4 H8 C64 (1 MiB of fp16 maps a sequence)"
/usr/bin/python3 -c "
import sys; sys.path.insert(0, '$here/tests')
import tiny_ckpt; tiny_ckpt.write_bin('m.bin', maxT=128, L=4, H=8, C=64, seed=0, scale=0.3)"
D="dump m.bin --probes prev_token --n 512 --len 128 --device cpu --batch 16"
for run in "1:" "2:" "2:--single-file"; do
  np=${run%%:*} mode=${run#*:}
  rm -f d$np$mode.h5* && sync
  t0=$(now)
  $MR -np $np $A $D --out d$np$mode.h5 $mode 2> log.txt > /dev/null
  rc=$?
  t=$(since $t0)
  mb=$(grep -o '[0-9.]* MB in' log.txt | cut -d' ' -f1)
  printf "np %s %-14s exit %s  wall %6s s  %6s MB  %6.1f MB/s  files: %s\n" "$np" "${mode:-$([ $np = 1 ] && echo '(serial)' || echo '(parts)')}" "$rc" "$t" "$mb" \
    "$(echo "$mb / $t" | bc -l)" "$(ls d$np$mode.h5* | wc -l) ($(du -cm d$np$mode.h5* | tail -1 | cut -f1) MB)"
done
for f in d2.h5 d2--single-file.h5; do
  printf "%s vs d1.h5: %s\n" "$f" "$(/usr/bin/python3 "$here/tests/mpi_compare_dumps.py" d1.h5 $f | tail -1)"
done
rm -f d*.h5*

echo "== 3. analyze (--device cpu --quiet)"
for job in "bundled:$here/models/andrea-bundled.bin" "dyck series (6):$here/tests/data/series/dyck-step*.bin"; do
  name=${job%%:*} ck=${job#*:}
  for np in 1 2; do
    rm -rf out$np
    t0=$(now)
    $MR -np $np $A analyze $ck --out out$np --device cpu --quiet > /dev/null 2> log.txt
    rc=$?
    printf "%-16s np %s  exit %s  wall %6s s\n" "$name" "$np" "$rc" "$(since $t0)"
  done
  printf "%-16s catalogs: %s\n" "$name" "$(/usr/bin/python3 "$here/tests/mpi_compare_catalogs.py" out1/catalog.db out2/catalog.db | tail -1)"
done
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
