#!/usr/bin/env bash
# bench/gpu_large.sh — issue 14's large shapes and issue 18's GPU circuit scores, in one device call.
#   1. builds andrea (sm_90) as bench/gpu_analyze.sh does, and the "before" tree in $BASE when given
#      (another checkout, built the same way, timed side by side in the same call);
#   2. runs tests/test_circuits_cuda (GPU circuit scores against the CPU's, 1e-4, with a random
#      ANDREA-120M shape among the models: it prints both times);
#   3. writes random Hugging Face fp32 safetensors checkpoints (torch + transformers: GPT2Config
#      n_layer/n_head/n_embd, save_pretrained as one model.safetensors) of the GPT-2-XL shape
#      (48 x 25, d 1600, 1.56B, 6.2 GB) and later the GPT-2-medium shape (24 x 16, d 1024, 355M),
#      with the GPT-2 BPE of tests/data/gpt2;
#   4. times, whole process (/usr/bin/time) with --timing, most wanted first (a call cut short
#      still brings back what ran): `andrea dump` of 4 sequences of XL (--probes prev_token --n 4;
#      warm page cache: the file was just written; then cold when /proc/sys/vm/drop_caches is
#      writable and COLD is not 0), `andrea circuits` of XL on the GPU, `andrea analyze` of medium
#      and XL (--device cuda).
#   5. bench_catalog_circuits (storing and reading back the circuit scores of the three shapes).
# Usage (device machine, repo root, carry=[".carry/debs"]):
#   [BASE=dir] [DUMP_REPS=2] [COLD=0] [SKIP_DUMP=1] [SKIP_CIRCUITS=1] [SKIP_ANALYZE=1] [ANALYZE_ALSO="dir.."] bash bench/gpu_large.sh
# Results: $OUT/log.txt (everything printed), $OUT/build*.txt.
set -u
source bench/gpu_common.sh
lscpu | grep -E "Model name|^CPU\(s\)|Flags" | sed 's/\(Flags:\).*\( sha_ni\).*/\1\2 (present)/'
M=/tmp/andrea-large; mkdir -p $M
# the XL checkpoint is written (GPU + one core) while the build takes the cores
make_ckpt $M xl 48 25 1600 >$OUT/ckpt-xl.txt 2>&1 & ckpt_pid=$!
echo "== build ($SECONDS s)"
if [ -n "${BASE:-}" ]; then gpu_build "$BASE" base andrea & base_pid=$!; fi
gpu_build . this andrea test_circuits_cuda bench_catalog_circuits || exit 1
# (wait for that one job only: a bare `wait` would also wait for the tee above, forever)
[ -n "${BASE:-}" ] && { wait $base_pid || BASE=; }
A=./build-gpu/andrea
B=${BASE:+$BASE/build-gpu/andrea}
echo "== circuits on the GPU against the CPU, with their times ($SECONDS s)"
(cd build-gpu/tests && timeout 120 ./test_circuits_cuda 2>&1 | tail -14; echo "test_circuits_cuda rc=${PIPESTATUS[0]}")
T="/usr/bin/time -f whole-process=%es,peak-RSS=%MKB"
dump_xl() { # BIN LABEL
  echo "-- $2: andrea dump xl, 4 sequences"
  $T $1 dump $M/xl --probes prev_token --n 4 --device cuda -o /tmp/dxl.h5 --quiet --timing 2>&1 | tail -3; rm -f /tmp/dxl.h5
}
echo "== circuit scores in the catalog: store and read back ($SECONDS s)"
./build-gpu/bench/bench_catalog_circuits /tmp
echo "== XL checkpoint ($SECONDS s)"
wait $ckpt_pid; cat $OUT/ckpt-xl.txt
echo "== XL dump of 4 sequences, warm page cache ($SECONDS s)"
[ "${SKIP_DUMP:-0}" = 1 ] && DUMP_REPS=0 COLD=0
for i in $(seq ${DUMP_REPS:-2}); do
  [ -n "$B" ] && dump_xl $B before
  dump_xl $A after
done
if [ "${COLD:-1}" = 1 ] && sync && echo 1 2>/dev/null >/proc/sys/vm/drop_caches; then
  echo "== XL dump, cold page cache ($SECONDS s)"
  [ -n "$B" ] && { dump_xl $B "before, cold"; sync; echo 1 >/proc/sys/vm/drop_caches; }
  dump_xl $A "after, cold"
fi
echo "== circuits of XL on the GPU ($SECONDS s)"
[ "${SKIP_CIRCUITS:-0}" = 1 ] || $T $A circuits $M/xl --device cuda --top 3 2>&1 | tail -5
[ "${SKIP_ANALYZE:-0}" = 1 ] && { echo "== done, analyze skipped ($SECONDS s)"; exit 0; }
echo "== medium checkpoint ($SECONDS s)"
make_ckpt $M medium 24 16 1024
echo "== analyze ($SECONDS s)"
# ANALYZE_ALSO: more checkpoint folders to analyze (e.g. bench/gpu_analyze.sh's ANDREA-120M);
# with BASE, the "before" binary analyzes each one right after
for d in $M/medium $M/xl ${ANALYZE_ALSO:-}; do
  n=$(basename $d)
  for bin in $A $B; do
    echo "-- andrea analyze $n ($bin)"
    $T timeout 240 $bin analyze $d --device cuda --out /tmp/an-$n --quiet --timing >/tmp/an-$n.txt 2>$OUT/an-$n-err.txt
    tail -3 $OUT/an-$n-err.txt; du -sh /tmp/an-$n
  done
done
echo "== done ($SECONDS s)"
