#!/usr/bin/env bash
# fixtures.sh — rebuild every trained fixture: the tiny and bundled models with their cards and
# probe files, and the Hugging Face golden fixture. Meant for a GPU machine (torch, transformers,
# safetensors, h5py); on a CPU it works too, only slowly (and without transformers, no golden).
#
# Inputs: the corpus that tools/build_corpus.py writes (default .carry/corpus/, or $CORPUS); it is
# built here when missing, which needs the Debian packages named in tools/build_corpus.py.
# Output: $OUT/fixtures.tar (or ./fixtures-out/fixtures.tar) holding
#   models/andrea-{tiny,bundled}.{bin,md,card.json,probes.jsonl}, tests/data/golden_tiny.h5,
#   tests/data/tiny_hf/{config.json,model.safetensors}, variants/*.card.json (every bundled try)
# unpack it at the repository root: tar -xf fixtures.tar
# Knobs (environment):
#   VARIANTS      bundled variants to train one after the other, best kept (default "bundled-D",
#                 the committed model's recipe)
#   TINY_BIN      reuse this tiny checkpoint (and its card files beside it) instead of training one
#   TIME_TINY, TIME_BUNDLED   seconds of training per model; default 0: every step of the variant's
#                 recipe (bundled-D: 36,000 steps, ~440 s on one H200, as the committed bundled model;
#                 the committed tiny model ran 5,440 of its 6,000 steps under a 40 s budget:
#                 TIME_TINY=40). With a budget the step count is cut to fit, with a hard stop at
#                 1.15 x; the card records the steps actually run
#   STEPS         override every step count (smoke tests)
#   SKIP_GOLDEN   1: do not remake the Hugging Face golden fixture (when only a bundled model is retrained)
# Trainings run one after the other: several CUDA processes on one GPU time-slice badly.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
out=${OUT:-$here/fixtures-out}
corpus=${CORPUS:-$here/.carry/corpus}
py=${PYTHON:-python3}
variants=${VARIANTS:-bundled-D}
mkdir -p "$out"
# (re)built when a section is missing, e.g. bracket_code.bin, added after the first corpora
[[ -f $corpus/recipe.json && -f $corpus/bracket_code.bin ]] || "$py" tools/build_corpus.py --out "$corpus"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
final=$work/final
mkdir -p "$final/models" "$final/tests/data" "$final/variants"
rc=0
train() {  # train NAME VARIANT OUTDIR BUDGET
  mkdir -p "$3"
  local budget=${4%.*}
  timeout $(( budget > 0 ? budget * 2 + 120 : 3600 )) "$py" tools/train_fixtures.py ${STEPS:+--steps $STEPS} --model "$1" \
      --variant "$2" --corpus "$corpus" --out "$3" --time-budget "$4" || { echo "fixtures.sh: $2 failed" >&2; rc=1; }
}

if [[ -n ${TINY_BIN:-} ]]; then
  cp "${TINY_BIN%.bin}".{bin,md,card.json,probes.jsonl} "$final/models/"
else
  train tiny tiny "$work/tiny" "${TIME_TINY:-0}"
  cp "$work"/tiny/andrea-tiny.* "$final/models/" || rc=1
fi
dirs=()
for v in $variants; do
  train bundled "$v" "$work/$v" "${TIME_BUNDLED:-0}"
  if [[ -f $work/$v/andrea-bundled.card.json ]]; then
    cp "$work/$v/andrea-bundled.card.json" "$final/variants/$v.card.json"
    dirs+=("$work/$v")
  fi
done
if ((${#dirs[@]})); then
  "$py" tools/train_fixtures.py --select "${dirs[@]}" --out "$final/models" || rc=1
else
  rc=1
fi
if [[ -f $final/models/andrea-tiny.bin && ${SKIP_GOLDEN:-0} != 1 ]]; then
  timeout 300 "$py" tools/make_golden.py --checkpoint "$final/models/andrea-tiny.bin" \
      --out-h5 "$final/tests/data/golden_tiny.h5" --out-hf "$final/tests/data/tiny_hf" || rc=1
fi
tar -C "$final" -cf "$out/fixtures.tar" .
tar -tvf "$out/fixtures.tar"
((rc == 0)) || { echo "fixtures.sh: a step failed (see above); the tar holds what was made" >&2; exit 1; }
echo "fixtures.sh: done: $out/fixtures.tar"
