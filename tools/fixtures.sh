#!/usr/bin/env bash
# fixtures.sh — rebuild every trained fixture: the tiny and bundled models with their cards and
# probe files, and the Hugging Face golden fixture. Meant for a GPU machine (torch, transformers,
# safetensors, h5py); on a CPU it works too, only slowly.
#
# Inputs: the corpus that tools/build_corpus.py writes (default .carry/corpus/, or $CORPUS); it is
# built here when missing, which needs the Debian packages named in tools/build_corpus.py.
# Output: $OUT/fixtures.tar (or ./fixtures-out/fixtures.tar) holding
#   models/andrea-{tiny,bundled}.{bin,md,card.json,probes.jsonl}, tests/data/golden_tiny.h5,
#   tests/data/tiny_hf/{config.json,model.safetensors}, variants/*.card.json (every bundled try)
# unpack it at the repository root: tar -xf fixtures.tar
# Seeds and step counts are fixed per variant in tools/train_fixtures.py; TIME_TINY / TIME_BUNDLED
# (seconds) cut the step count to fit a time budget, the card records the count actually used;
# STEPS=N overrides every step count (smoke tests).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
out=${OUT:-$here/fixtures-out}
corpus=${CORPUS:-$here/.carry/corpus}
py=${PYTHON:-python3}
mkdir -p "$out"
[[ -f $corpus/recipe.json ]] || "$py" tools/build_corpus.py --out "$corpus"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tiny" "$work/A" "$work/B" "$work/C" "$work/final/models" "$work/final/tests/data" "$work/final/variants"

# the three trainings share the GPU (each is far too small to fill it)
"$py" tools/train_fixtures.py ${STEPS:+--steps $STEPS} --model tiny --corpus "$corpus" --out "$work/tiny" \
    --time-budget "${TIME_TINY:-120}" > "$work/tiny.log" 2>&1 & p1=$!
"$py" tools/train_fixtures.py ${STEPS:+--steps $STEPS} --model bundled --variant bundled-A --corpus "$corpus" --out "$work/A" \
    --time-budget "${TIME_BUNDLED:-200}" > "$work/A.log" 2>&1 & p2=$!
"$py" tools/train_fixtures.py ${STEPS:+--steps $STEPS} --model bundled --variant bundled-B --corpus "$corpus" --out "$work/B" \
    --time-budget "${TIME_BUNDLED:-200}" > "$work/B.log" 2>&1 & p3=$!
"$py" tools/train_fixtures.py ${STEPS:+--steps $STEPS} --model bundled --variant bundled-C --corpus "$corpus" --out "$work/C" \
    --time-budget "${TIME_BUNDLED:-200}" > "$work/C.log" 2>&1 & p4=$!
rc=0
wait $p1 || rc=1; cat "$work/tiny.log"
wait $p2 || rc=1; cat "$work/A.log"
wait $p3 || rc=1; cat "$work/B.log"
wait $p4 || rc=1; cat "$work/C.log"

# collect whatever was made, so a failure in one step still brings the rest back
"$py" tools/train_fixtures.py --select "$work/A" "$work/B" "$work/C" --out "$work/final/models" || rc=1
cp "$work"/tiny/andrea-tiny.* "$work/final/models/" || rc=1
for v in A B C; do
  if [[ -f $work/$v/andrea-bundled.card.json ]]; then
    cp "$work/$v/andrea-bundled.card.json" "$work/final/variants/bundled-$v.card.json"
  fi
done
if [[ -f $work/final/models/andrea-tiny.bin ]]; then
  "$py" tools/make_golden.py --checkpoint "$work/final/models/andrea-tiny.bin" \
      --out-h5 "$work/final/tests/data/golden_tiny.h5" --out-hf "$work/final/tests/data/tiny_hf" || rc=1
fi
tar -C "$work/final" -cf "$out/fixtures.tar" .
tar -tvf "$out/fixtures.tar"
((rc == 0)) || { echo "fixtures.sh: a step failed (see above); the tar holds what was made" >&2; exit 1; }
echo "fixtures.sh: done: $out/fixtures.tar"
