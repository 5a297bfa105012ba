#!/usr/bin/env bash
# bench/gpu_class_fixture.sh — issue 41's trained fixture and the GPU timing, in one call:
#   1. tools/train_class_fixture.py trains the successor/retrieval fixture and writes its card
#      ($OUT/classes, copied into tests/data/classes of this copy of the tree);
#   2. tests/test_class_fixture_matches_card.py: andrea's scores against the card;
#   3. whole-process time of ANDREA-120M `analyze` (random weights, GPT-2 BPE, default suites with the
#      new classes), this tree and BASE alternately, 3 times each, with the --timing split and the
#      output folder's size.
# Usage (device machine, repo root, carry=[".carry/debs"]): BASE=.gpu-old bash bench/gpu_class_fixture.sh
# TASK=retrieval trains the retrieval fixture instead (tools/train_class_fixture.py --task
# retrieval; STEPS, default 6000); TIMING=0 skips step 3 (and BASE).
set -u
source bench/gpu_common.sh
M=/tmp/andrea-large; mkdir -p $M
TASK=${TASK:-both} TIMING=${TIMING:-1}
if [ $TIMING = 1 ]; then
  [ -d $M/a120 ] || (make_ckpt $M a120 12 12 768) >$OUT/ckpt.txt 2>&1 & ckpt_pid=$!
  gpu_build "$BASE" base andrea & base_pid=$!
fi
echo "== build ($SECONDS s)"
gpu_build . this andrea || exit 1
echo "== fixture ($SECONDS s)"
mkdir -p $OUT/classes tests/data/classes
python3 tools/train_class_fixture.py --out $OUT/classes --task $TASK --steps ${STEPS:-6000} 2>$OUT/train.txt | tail -30
tail -3 $OUT/train.txt
cp $OUT/classes/* tests/data/classes/
ANDREA_BIN=$PWD/build-gpu/andrea ANDREA_SRC=$PWD python3 tests/test_class_fixture_matches_card.py 2>&1 | tail -15
[ $TIMING = 1 ] || { echo "== done ($SECONDS s)"; exit 0; }
wait $base_pid || { echo "base build failed"; exit 1; }
wait $ckpt_pid; cat $OUT/ckpt.txt 2>/dev/null
A=$PWD/build-gpu/andrea B=$(cd "$BASE" && pwd)/build-gpu/andrea
echo "== analyze ANDREA-120M, whole process ($SECONDS s)"
T="/usr/bin/time -f whole-process=%es,peak-RSS=%MKB"
for i in 1 2 3; do
  for which in base this; do
    bin=$A; [ $which = base ] && bin=$B
    rm -rf /tmp/an-$which
    $T $bin analyze $M/a120 --device cuda --out /tmp/an-$which --quiet --timing >/dev/null 2>/tmp/an-err-$which.txt
    echo "a120 $which: $(grep whole-process /tmp/an-err-$which.txt) $(grep -o 'forwards [0-9.]* s' /tmp/an-err-$which.txt | head -1), $(grep -o 'causal check [0-9.]* s' /tmp/an-err-$which.txt), $(grep -o 'report [0-9.]* s' /tmp/an-err-$which.txt | head -1), $(du -sh /tmp/an-$which | cut -f1)"
  done
done
cat /tmp/an-err-this.txt
echo "== done ($SECONDS s)"
