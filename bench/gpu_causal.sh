#!/usr/bin/env bash
# bench/gpu_causal.sh — the causal check's evidence on the GPU machine, in one call (issue 38):
#   1. the float64 transformers reference of the check (tools/make_causal_reference.py ->
#      tests/data/causal_reference.json, copied to $OUT) and test_causal_matches_pytorch against
#      it on the CPU and the CUDA engine; test_cuda_forward and test_analyzer_random;
#   2. verdicts of `analyze --device cuda` against `--device cpu` on the bundled model (same items);
#   3. `andrea analyze` whole-process time of a random ANDREA-120M and of the GPT-2-XL shape with
#      this tree's defaults, beside the build of BASE (a source tree of the previous commit, e.g.
#      `git archive 3167cf5 | tar -x -C .gpu-old`), alternately.
# Usage (device machine, repo root, carry=[".carry/debs"]): BASE=.gpu-old bash bench/gpu_causal.sh
set -u
source bench/gpu_common.sh
M=/tmp/andrea-large; mkdir -p $M
(make_ckpt $M a120 12 12 768 && make_ckpt $M xl 48 25 1600) >$OUT/ckpt.txt 2>&1 & ckpt_pid=$!
echo "== reference ($SECONDS s)"
timeout 300 python3 tools/make_causal_reference.py 2>&1 | grep -v Warning | tail -5
cp tests/data/causal_reference.json $OUT/ 2>/dev/null
echo "== build ($SECONDS s)"
if [ -n "${BASE:-}" ]; then gpu_build "$BASE" base andrea & base_pid=$!; fi
gpu_build . this andrea test_causal_matches_pytorch test_cuda_forward test_analyzer_random || exit 1
[ -n "${BASE:-}" ] && { wait $base_pid || BASE=; }
A=./build-gpu/andrea
B=${BASE:+$BASE/build-gpu/andrea}
echo "== tests ($SECONDS s)"
(cd build-gpu/tests && ANDREA_SRC=$PWD/../.. timeout 200 ./test_causal_matches_pytorch >$OUT/test_causal.txt 2>&1;
 echo "test_causal_matches_pytorch rc=$?"; grep -v "^ok" $OUT/test_causal.txt | tail -12)
for t in test_cuda_forward test_analyzer_random; do
  (cd build-gpu/tests && ANDREA_SRC=$PWD/../.. ANDREA_TEST_QUICK=1 timeout 200 ./$t >$OUT/$t.txt 2>&1; echo "$t rc=$?"; tail -3 $OUT/$t.txt)
done
echo "== verdicts: analyze --device cuda vs cpu, bundled model, 8 items ($SECONDS s)"
Q="SELECT class, layer||'.'||head, round(ablation_delta, 3), evidence FROM head_catalog WHERE label AND current ORDER BY class, layer, head"
for d in cpu cuda; do
  $A analyze models/andrea-bundled.bin --device $d --out /tmp/ev-$d --ablate-items 8 --quiet >/tmp/ev-$d.txt 2>&1 || tail -3 /tmp/ev-$d.txt
  $A sql --db /tmp/ev-$d/catalog.db "$Q" >$OUT/verdicts-$d.txt
done
paste $OUT/verdicts-cpu.txt $OUT/verdicts-cuda.txt
diff <(awk '{print $1, $2, $4}' $OUT/verdicts-cpu.txt) <(awk '{print $1, $2, $4}' $OUT/verdicts-cuda.txt) >/dev/null &&
  echo "verdicts: cuda == cpu" || echo "verdicts: cuda differs from cpu"
echo "== analyze, whole process ($SECONDS s)"
wait $ckpt_pid; cat $OUT/ckpt.txt
T="/usr/bin/time -f whole-process=%es,peak-RSS=%MKB"
for model in a120 a120 a120 xl; do
  for bin in ${B:+"$B"} "$A"; do
    label=this; [ "$bin" = "${B:-}" ] && label=base
    $T $bin analyze $M/$model --device cuda --out /tmp/an-$model-$label --quiet --timing >/tmp/an.txt 2>/tmp/an-err.txt
    echo "$model $label: $(grep whole-process /tmp/an-err.txt) $(grep -i "causal" /tmp/an-err.txt | head -1)"
  done
done
grep -v whole-process /tmp/an-err.txt | tail -4
echo "== bundled model on the GPU ($SECONDS s)"
for bin in ${B:+"$B"} "$A"; do $T $bin analyze models/andrea-bundled.bin --device cuda --out /tmp/bu --quiet 2>&1 | grep whole; done
echo "== done ($SECONDS s)"
