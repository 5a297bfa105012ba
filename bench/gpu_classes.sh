#!/usr/bin/env bash
# bench/gpu_classes.sh — issue 41's head classes on the GPU machine, in one call:
#   1. the CUDA tests: test_gpu_scores_equal_host_scores (the positional argmax offsets and the
#      control keys' argmax hits of kernels/score_kernel.cu against analyzer/score.c), test_dump_cuda,
#      test_causal_matches_pytorch, test_cuda_forward (ANDREA_TEST_QUICK=1);
#   2. the bundled model analysed with --device cuda and --device cpu: the same labels and verdicts;
#   3. whole-process time of ANDREA-120M `analyze` (random weights, GPT-2 BPE, default suites: the
#      new classes included), this tree and BASE alternately, 3 times each, with the --timing split.
# Usage (device machine, repo root, carry=[".carry/debs"]): BASE=.gpu-old bash bench/gpu_classes.sh
# (BASE: `git archive <commit before the classes> | tar -x -C .gpu-old`).
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
for t in test_gpu_scores_equal_host_scores test_dump_cuda test_causal_matches_pytorch test_cuda_forward; do
  (cd build-gpu/tests && ANDREA_SRC=$PWD/../.. ANDREA_TEST_QUICK=1 timeout 300 ./$t >$OUT/$t.txt 2>&1; echo "$t rc=$? $(tail -1 $OUT/$t.txt)")
done
echo "== bundled model, cuda vs cpu ($SECONDS s)"
for dev in cuda cpu; do
  rm -rf /tmp/b-$dev; $A analyze models/andrea-bundled.bin --device $dev --out /tmp/b-$dev --quiet >$OUT/bundled-$dev.txt 2>&1
done
# labels and verdicts, not every REAL (fp32 sums in another order differ in the last bits; the
# MPI comparator's 1e-12 is for the same sums regrouped)
python3 - <<'EOF2'
import sqlite3
q = "SELECT class, layer, head, evidence FROM head_catalog WHERE label ORDER BY 1, 2, 3"
a, b = (sqlite3.connect("/tmp/b-%s/catalog.db" % d).execute(q).fetchall() for d in ("cpu", "cuda"))
print("labels and verdicts, cuda vs cpu: %s (%d labelled heads)" % ("same" if a == b else "DIFFERENT", len(a)))
for x in sorted(set(a) ^ set(b)): print("  only in %s: %s" % ("cpu" if x in a else "cuda", x))
EOF2
cat $OUT/bundled-cuda.txt
wait $ckpt_pid; cat $OUT/ckpt.txt
echo "== analyze ANDREA-120M, whole process ($SECONDS s)"
T="/usr/bin/time -f whole-process=%es,peak-RSS=%MKB"
for i in 1 2 3; do
  for which in base this; do
    bin=$A; [ $which = base ] && bin=$B
    $T $bin analyze $M/a120 --device cuda --out /tmp/an-$which-$i --quiet --timing >/dev/null 2>/tmp/an-err.txt
    echo "a120 $which: $(grep whole-process /tmp/an-err.txt) $(grep -o 'forwards [0-9.]* s' /tmp/an-err.txt | head -1), $(grep -o 'causal check [0-9.]* s' /tmp/an-err.txt), report $(grep -o 'report [0-9.]* s' /tmp/an-err.txt)"
  done
done
grep -o "time.*" /tmp/an-err.txt
du -sh /tmp/an-this-3 /tmp/an-base-3
echo "== done ($SECONDS s)"
