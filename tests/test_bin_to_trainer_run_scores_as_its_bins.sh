#!/usr/bin/env bash
# test_bin_to_trainer_run_scores_as_its_bins — tools/bin_to_trainer_run.py (the README's Trainer
# series) saves .bin checkpoints as RUN/checkpoint-STEP folders that andrea reads as the same
# weights: the run's series scores every head exactly as the .bin files do (same fp32 values in
# the same order, so equal to the last bit), each at its step from trainer_state.json; a bf16 .bin
# stays bf16; bad input is one line before anything is written.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
series="$ANDREA_SRC/tests/data/series"
need_files tests/data/series/dyck-step00300.bin tests/data/series/dyck-step08000.bin models/andrea-bundled.bin
tool="$ANDREA_SRC/tools/bin_to_trainer_run.py"
cd "$tmp"

/usr/bin/python3 "$tool" "$series/dyck-step00300.bin" "$series/dyck-step08000.bin" --out my-run
[[ -f my-run/checkpoint-300/model.safetensors && -f my-run/checkpoint-8000/config.json &&
  $(cat my-run/checkpoint-8000/trainer_state.json) == '{"global_step": 8000}' ]] &&
  ok "checkpoint-300 and checkpoint-8000 written" || bad "layout" "$(ls -R my-run)"
quick=(--probes induction,prev_token,bos --ablate-items 0 --report-maps 0 --quiet)
"$A" analyze my-run/checkpoint-* --out hf "${quick[@]}" >hf.out 2>/dev/null
"$A" analyze "$series/dyck-step00300.bin" "$series/dyck-step08000.bin" --out bin "${quick[@]}" >/dev/null 2>&1
grep -q '^series my-run: labelled heads per step$' hf.out && ok "the series is my-run" || bad "series" "$(head -n 1 hf.out)"
scores() {
  sql_rows "$1" "SELECT m.step, s.layer, s.head, s.class, s.score FROM head_scores s JOIN runs r ON r.id = s.run_id
                 JOIN models m ON m.id = r.model_id ORDER BY m.step, s.layer, s.head, s.class"
}
scores hf/catalog.db >hf.scores
scores bin/catalog.db >bin.scores
[[ -s hf.scores ]] && cmp -s hf.scores bin.scores && ok "$(wc -l <hf.scores) scores equal to the .bin series'" ||
  bad "scores" "$(diff hf.scores bin.scores | head -n 4)"

# bf16 stays bf16 and generates the same text
cp "$ANDREA_SRC/models/andrea-bundled.bin" bundled-step5.bin
/usr/bin/python3 "$tool" bundled-step5.bin --out bf
"$A" info bf/checkpoint-5 | grep -Eq '^stored dtype +bf16$' && ok "bf16 stays bf16" || bad "bf16" "$("$A" info bf/checkpoint-5 | head -n 4)"
a=$("$A" generate bf/checkpoint-5 --prompt "And God said" -n 20 --temperature 0)
b=$("$A" generate bundled-step5.bin --prompt "And God said" -n 20 --temperature 0)
[[ -n $a && $a == "$b" ]] && ok "same greedy text: $a" || bad "generate" "'$a' vs '$b'"

# tool_refuses REGEX ARGS...: exit 1, one stderr line matching REGEX, no folder RUN made
tool_refuses() {
  local re=$1 rc=0
  shift
  /usr/bin/python3 "$tool" "$@" --out refused 2>err.txt || rc=$?
  if [[ $rc == 1 && $(wc -l <err.txt) == 1 && ! -e refused ]] && grep -Eq "$re" err.txt; then
    ok "refused: $(cat err.txt)"
  else
    bad "tool $*" "exit $rc: $(cat err.txt)"
  fi
}
tool_refuses "no step in its name" "$ANDREA_SRC/models/andrea-bundled.bin"
printf 'not a checkpoint' >junk-step1.bin
tool_refuses "junk-step1\.bin: shorter than the 1024-byte header" junk-step1.bin
head -c 4096 "$series/dyck-step00300.bin" >cut-step2.bin
tool_refuses "cut-step2\.bin: 4096 bytes, its header .* needs 499968" cut-step2.bin
cp "$series/dyck-step00300.bin" again-step300.bin
tool_refuses "step 300 again" "$series/dyck-step00300.bin" again-step300.bin
rc=0
/usr/bin/python3 "$tool" "$series/dyck-step00300.bin" --out my-run 2>err.txt || rc=$?
[[ $rc == 1 ]] && grep -q "my-run/checkpoint-300: already there" err.txt && ok "an existing checkpoint folder is refused" ||
  bad "existing folder" "exit $rc: $(cat err.txt)"
finish
