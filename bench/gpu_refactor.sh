#!/usr/bin/env bash
# bench/gpu_refactor.sh — a change that must not change outputs or speed (issue 40: run/ and
# pipeline/), checked on the GPU machine in one call:
#   1. the CUDA tests: test_cuda_forward, test_dump_cuda (the streaming pipeline through
#      run/forward_loop.c), test_gpu_scores_equal_host_scores, test_causal_matches_pytorch;
#   2. `andrea analyze --device cuda` of the bundled model and of a random ANDREA-120M (GPT-2 BPE)
#      by this tree and by BASE: catalogs compared row by row (tests/mpi_compare_catalogs.py
#      --exact: REALs bit for bit), and `andrea dump --device cuda` of the bundled model: datasets
#      compared (tests/mpi_compare_dumps.py);
#   3. whole-process time of ANDREA-120M `analyze`, this and BASE alternately, 3 times each
#      (NO_TIMING=1: not).
# Usage (device machine, repo root, carry=[".carry/debs"]): BASE=.gpu-old bash bench/gpu_refactor.sh
# (BASE: `git archive <previous commit> | tar -x -C .gpu-old`, without models/ tests/data docs/).
set -u
source bench/gpu_common.sh
M=/tmp/andrea-large; mkdir -p $M
(make_ckpt $M a120 12 12 768) >$OUT/ckpt.txt 2>&1 & ckpt_pid=$!
echo "== build ($SECONDS s)"
gpu_build "$BASE" base andrea & base_pid=$!
gpu_build . this andrea test_cuda_forward test_dump_cuda test_gpu_scores_equal_host_scores test_causal_matches_pytorch || exit 1
wait $base_pid || { echo "base build failed"; exit 1; }
A=$PWD/build-gpu/andrea B=$(cd "$BASE" && pwd)/build-gpu/andrea
echo "== CUDA tests ($SECONDS s)"
for t in test_cuda_forward test_dump_cuda test_gpu_scores_equal_host_scores test_causal_matches_pytorch; do
  (cd build-gpu/tests && ANDREA_SRC=$PWD/../.. timeout 300 ./$t >$OUT/$t.txt 2>&1; echo "$t rc=$? $(tail -1 $OUT/$t.txt)")
done
echo "== outputs, base vs this ($SECONDS s)"
wait $ckpt_pid; cat $OUT/ckpt.txt
for model in $PWD/models/andrea-bundled.bin $M/a120; do
  for which in base this; do
    bin=$A; [ $which = base ] && bin=$B
    rm -rf /tmp/o; mkdir -p /tmp/o
    (cd /tmp/o && $bin analyze "$model" --device cuda --out run --quiet >/dev/null 2>/tmp/o/err.txt) || cat /tmp/o/err.txt
    rm -rf /tmp/o-$which; mv /tmp/o /tmp/o-$which
  done
  echo "$(basename $model) catalogs: $(python3 tests/mpi_compare_catalogs.py --exact /tmp/o-base/run/catalog.db /tmp/o-this/run/catalog.db | tail -1)"
done
for which in base this; do
  bin=$A; [ $which = base ] && bin=$B
  $bin dump models/andrea-bundled.bin --device cuda --out /tmp/d-$which.h5 --quiet
done
echo "bundled dump: $(python3 tests/mpi_compare_dumps.py /tmp/d-base.h5 /tmp/d-this.h5 | tail -1)"
[ -n "${NO_TIMING:-}" ] && exit 0
echo "== analyze ANDREA-120M, whole process ($SECONDS s)"
T="/usr/bin/time -f whole-process=%es,peak-RSS=%MKB"
for i in 1 2 3; do
  for which in base this; do
    bin=$A; [ $which = base ] && bin=$B
    $T $bin analyze $M/a120 --device cuda --out /tmp/an-$which-$i --quiet --timing >/dev/null 2>/tmp/an-err.txt
    echo "a120 $which: $(grep whole-process /tmp/an-err.txt) $(grep -o 'forwards [0-9.]* s' /tmp/an-err.txt | head -1), $(grep -o 'causal check [0-9.]* s' /tmp/an-err.txt)"
  done
done
echo "== done ($SECONDS s)"
