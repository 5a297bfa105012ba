#!/usr/bin/env bash
# bench/gpu_fused_series.sh — one device call for attention reading the fused QKV (no split/concat
# copies) and the series engine, most important first: the attention harness (every version,
# contiguous and fused layouts, against its double-precision oracle), the CUDA forward and dump
# tests against the CPU engine, a series of N checkpoints with one kept engine (bench/gpu_series.sh:
# its catalog rows against each checkpoint alone), then bench_gpu_forward of this tree and of
# $BASE side by side (alternating), then $BASE's series if time is left.
# Usage (device machine, repo root, carry=[".carry"]): BASE=.carry/base N=12 bash bench/gpu_fused_series.sh
set -u
source bench/gpu_common.sh
echo "== build ($SECONDS s)"
gpu_build . new andrea bench_attention_versions bench_gpu_forward test_cuda_forward test_dump_cuda test_engine_swap_model & p1=$!
gpu_build "$BASE" base andrea bench_gpu_forward & p2=$!
wait $p1 || exit 1
echo "== attention harness ($SECONDS s)"
for shape in "8 12 128 64" "8 12 1024 64" "4 8 256 32" "2 4 100 72"; do
  ./build-gpu/bench/bench_attention_versions $shape all 2>&1 | grep -v "^$"; echo "rc=$?"
done
echo "== CUDA tests ($SECONDS s)"
for t in test_cuda_forward test_dump_cuda; do
  (cd build-gpu/tests && ANDREA_TEST_QUICK=1 timeout 150 ./$t > $OUT/$t.txt 2>&1; echo "$t rc=$?"; tail -2 $OUT/$t.txt)
done
echo "== series, this tree ($SECONDS s)"
BASE= ROUNDS=1 bash bench/gpu_series.sh 2>&1 | grep -v "^== device\|^name, driver\|NVIDIA H"
wait $p2 || exit 1
echo "== bench_gpu_forward, new and base alternating ($SECONDS s)"
for r in 1 2; do for b in new base; do
  B=./build-gpu; [ $b = base ] && B=$BASE/build-gpu
  mkdir -p /tmp/bf-$b; $B/bench/bench_gpu_forward /tmp/bf-$b --quick > $OUT/bench-$b-$r.txt 2>&1
  echo "-- $b round $r"; grep -E "^andrea B=|^ceilings" $OUT/bench-$b-$r.txt | head -12
done; done
echo "== series, base ($SECONDS s)"
R=/tmp/run; CK=($(ls -d $R/run/checkpoint-* | sort -t- -k2 -n)); rm -rf /tmp/s-base
/usr/bin/time -f "base: ${#CK[@]} checkpoints, whole process %e s, peak RSS %M KB" \
  $BASE/build-gpu/andrea analyze "${CK[@]}" --tokenizer $R/base --device cuda --out /tmp/s-base --quiet >/dev/null 2>/tmp/s-base.err
tail -1 /tmp/s-base.err; du -sh /tmp/s-base
echo "== done ($SECONDS s)"
