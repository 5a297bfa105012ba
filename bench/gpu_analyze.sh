#!/usr/bin/env bash
# bench/gpu_analyze.sh — one device call: build (sm_90), the CUDA tests (forward, dump: the dump's
# streaming path now runs through dump/forward_loop.c; the GPU head scorer's kernel against the
# host scorer on the same maps; the sha256 beside the load), labels of `analyze --device cuda` against
# the CPU on the bundled model, then `andrea analyze` of a random ANDREA-120M (HF safetensors
# written by bench_gpu_forward, GPT-2 BPE from tests/data/gpt2) with the default suites and with
# --n 256, each beside `andrea dump` of the same suites without a file write (forward-only time
# is printed by analyze --timing), and the Hugging Face script that does the same work
# (bench/bench_gpu_hf_analyze.py; BENCH_HF=0 skips it). Results under $OUT.
# Usage (device machine, repo root, carry=[".carry/debs"]): bash bench/gpu_analyze.sh
set -u
source bench/gpu_common.sh
echo "== build ($SECONDS s)"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DANDREA_EXTRA_PREFIX=$PFX >$OUT/build.txt 2>&1 ||
  { tail -30 $OUT/build.txt; exit 1; }
cmake --build build-gpu -j16 --target andrea bench_gpu_forward $([ "${BENCH_ONLY:-0}" = 1 ] || echo test_dump_cuda test_cuda_forward test_gpu_scores_equal_host_scores test_checkpoint_hash bench_attention_versions) >>$OUT/build.txt 2>&1 ||
  { grep -E "error|Error" $OUT/build.txt | head -30; exit 1; }
A=./build-gpu/andrea
# BENCH_ONLY=1: the ANDREA-120M benchmark alone (a second call after the tests passed)
if [ "${BENCH_ONLY:-0}" != 1 ]; then
echo "== CUDA tests ($SECONDS s)"
for t in test_cuda_forward test_dump_cuda test_gpu_scores_equal_host_scores test_checkpoint_hash; do
  (cd build-gpu/tests && ANDREA_TEST_QUICK=1 timeout 150 ./$t >$OUT/$t.txt 2>&1; echo "$t rc=$?"; tail -3 $OUT/$t.txt)
done
echo "== attention kernel versions against the CPU oracle ($SECONDS s)"
[ "${BENCH_ATTN:-1}" = 1 ] && # BENCH_ATTN=0: skipped (a run about something else)
for shape in "8 12 128 64" "4 12 1024 64" "8 12 128 32" "8 8 128 72"; do
  ./build-gpu/bench/bench_attention_versions $shape all 2>&1 | tee -a $OUT/attention_versions.txt
done
echo "== labels: analyze --device cuda vs cpu, bundled model ($SECONDS s)"
for d in cpu cuda; do
  $A analyze models/andrea-bundled.bin --device $d --out /tmp/lab-$d --ablate-items 1 --quiet --timing >/tmp/lab-$d.txt 2>&1 || tail -3 /tmp/lab-$d.txt
done
diff <(grep -v "catalog:\|report:" /tmp/lab-cpu.txt | grep -v "time (") <(grep -v "catalog:\|report:" /tmp/lab-cuda.txt | grep -v "time (") \
  && echo "labels: cuda == cpu" || echo "labels: cuda differs from cpu (above)"
grep "time (" /tmp/lab-cuda.txt
fi
echo "== ANDREA-120M ($SECONDS s)"
BD=/tmp/andrea-bench; mkdir -p $BD
./build-gpu/bench/bench_gpu_forward $BD --profile >$OUT/bench_model.txt 2>&1 || { tail -3 $OUT/bench_model.txt; exit 1; }
cp tests/data/gpt2/vocab.json tests/data/gpt2/merges.txt $BD/model/
N256=${BENCH_N256-"--n 256"} # BENCH_N256= (empty): the default suites only
for args in "" ${N256:+"$N256"}; do
  echo "-- andrea analyze $BD/model $args"
  /usr/bin/time -f "whole process %e s, peak RSS %M KB" $A analyze $BD/model $args --device cuda --out /tmp/an120 --quiet --timing \
    >/tmp/an120.txt 2>$OUT/an120-err.txt; tail -3 $OUT/an120-err.txt; du -sh /tmp/an120
  head -12 /tmp/an120.txt
  # the same work as a script would do it, same GPU and weights (bench/bench_gpu_hf_analyze.py)
  [ "${BENCH_HF:-1}" = 1 ] && python3 bench/bench_gpu_hf_analyze.py $BD/model --seqs $([ -n "$args" ] && echo 1792 || echo 224) 2>&1 | grep "^hf:"
  [ "${BENCH_ONLY:-0}" = 1 ] || [ "${BENCH_DUMP:-1}" = 0 ] && continue # BENCH_DUMP=0: no dump beside
  echo "-- andrea dump $BD/model $args (for comparison: every map to a file)"
  /usr/bin/time -f "whole process %e s" $A dump $BD/model $args --device cuda -o /tmp/d120.h5 --quiet --timing 2>&1 | tail -3
  ls -la /tmp/d120.h5; rm -f /tmp/d120.h5
done
echo "== done ($SECONDS s)"
