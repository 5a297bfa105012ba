#!/usr/bin/env bash
# test_trainer_checkpoint_series.sh — a Hugging Face Trainer run (run/checkpoint-N folders, some with
# trainer_state.json) is one series: named after the run folder, each checkpoint at its step
# (trainer_state.json's global_step beating the name's N, with a note), the page and the table in
# step order (100, 200, 300, 1000, not the shell's 100, 1000, 200, 300), and `heads --pivot step`
# works on it. step_N / stepN / iter_N .bin files in a run folder likewise. A trainer_state.json
# whose global_step is not a step is refused with one line before any work; --step still wins.
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files tests/data/tiny_hf/model.safetensors tests/data/tiny_hf/config.json tests/data/series/dyck-step00030.bin
cd "$tmp"

# four checkpoints of one run: tests/data/tiny_hf with its last weight changed (each its own sha256)
mkdir -p my-run
for s in 100 200 300 1000; do
  d=my-run/checkpoint-$s
  mkdir "$d" && cp "$ANDREA_SRC/tests/data/tiny_hf/config.json" "$d/"
  /usr/bin/python3 - "$ANDREA_SRC/tests/data/tiny_hf/model.safetensors" "$d/model.safetensors" "$s" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
b[-4:] = struct.pack("<f", int(sys.argv[3]) * 1e-4)
open(sys.argv[2], "wb").write(b)
PY
done
# the Trainer's own record: global_step 100 agrees with the name; 250 does not (the name says 300)
printf '{"best_metric": null, "global_step": 100, "log_history": [{"loss": 2.5, "step": 50}]}\n' \
  >my-run/checkpoint-100/trainer_state.json
printf '{"global_step": 250, "epoch": 1.5}\n' >my-run/checkpoint-300/trainer_state.json

if "$A" analyze my-run/checkpoint-* --out s --probes induction,prev_token --device cpu >out.txt 2>err.txt; then
  ok "analyze my-run/checkpoint-* exits 0"
else
  bad "analyze" "exit $?: $(tail -3 err.txt)"
fi
notes=$(grep -c 'note:' err.txt)
[[ $notes == 1 ]] && grep -q "^andrea analyze: note: my-run/checkpoint-300: trainer_state.json's global_step 250 differs from the step 300 of its name; step 250 is used$" err.txt \
  && ok "one note names the checkpoint whose global_step differs from its name" || bad "note" "$(grep note err.txt)"
grep -q '^series my-run: labelled heads per step$' out.txt && ok "the series is named after the run folder" \
  || bad "series name" "$(head -1 out.txt)"
steps=$(sed -n '/^step /,/^$/p' out.txt | awk 'NR > 1 && NF {print $1}' | tr '\n' ' ')
[[ $steps == "100 200 250 1000 " ]] && ok "the table is in step order, global_step beating the name: $steps" \
  || bad "table order" "$steps: $(cat out.txt)"
rows=$(sql_rows s/catalog.db "SELECT name, series, step FROM models ORDER BY step" | tr '\n' ' ')
[[ $rows == "my-run/checkpoint-100|my-run|100 my-run/checkpoint-200|my-run|200 my-run/checkpoint-300|my-run|250 my-run/checkpoint-1000|my-run|1000 " ]] \
  && ok "the catalog names each RUN/checkpoint-N, series RUN, at its step" || bad "models" "$rows"
page=$(grep -o 'href="checkpoint-[0-9]*/index.html"' s/index.html | awk '!seen[$0]++' | tr '\n' ' ')
[[ $page == 'href="checkpoint-100/index.html" href="checkpoint-200/index.html" href="checkpoint-300/index.html" href="checkpoint-1000/index.html" ' ]] \
  && ok "the series page links the reports in step order" || bad "page order" "$page"
if "$A" heads --db s/catalog.db --series my-run --pivot step --class induction >pivot.txt 2>perr.txt; then
  head -1 pivot.txt | grep -Eq '^class +head +step 100 +step 200 +step 250 +step 1000$' \
    && ok "heads --pivot step: one column per step, in order" || bad "pivot header" "$(head -1 pivot.txt)"
else
  bad "heads --pivot step" "$(cat perr.txt)"
fi

# one step twice in a series (global_step 100 in checkpoint-200 too): by name, whatever the order given
printf '{"global_step": 100}' >my-run/checkpoint-200/trainer_state.json
if "$A" analyze my-run/checkpoint-200 my-run/checkpoint-100 --out tie --probes induction --device cpu -q >/dev/null 2>tie.txt; then
  page=$(grep -o 'href="checkpoint-[0-9]*/index.html"' tie/index.html | awk '!seen[$0]++' | tr '\n' ' ')
  [[ $page == 'href="checkpoint-100/index.html" href="checkpoint-200/index.html" ' ]] \
    && ok "checkpoints at one step are ordered by name" || bad "tie order" "$page"
else
  bad "analyze tie" "$(cat tie.txt)"
fi
rm my-run/checkpoint-200/trainer_state.json

# step_N / stepN / iter_N .bin files in a run folder: one series, the run folder's name
mkdir -p gpt-x
cp "$ANDREA_SRC/tests/data/series/dyck-step00300.bin" gpt-x/step_300.bin
cp "$ANDREA_SRC/tests/data/series/dyck-step00030.bin" gpt-x/step30.bin
cp "$ANDREA_SRC/tests/data/series/dyck-step01000.bin" gpt-x/iter_1000.bin
if "$A" analyze gpt-x/*.bin --out b --probes induction --device cpu -q >bout.txt 2>berr.txt; then
  rows=$(sql_rows b/catalog.db "SELECT name, series, step FROM models ORDER BY step" | tr '\n' ' ')
  [[ $rows == "gpt-x/step30|gpt-x|30 gpt-x/step_300|gpt-x|300 gpt-x/iter_1000|gpt-x|1000 " ]] && grep -q '^series gpt-x:' bout.txt \
    && ok "step30, step_300, iter_1000 .bin files are the series gpt-x at their steps" || bad "bin series" "$rows: $(head -1 bout.txt)"
else
  bad "analyze gpt-x/*.bin" "$(cat berr.txt)"
fi

# a trainer_state.json whose global_step is not a step: refused with one line, before any work
printf '{"global_step": -3}\n' >my-run/checkpoint-200/trainer_state.json
expect_one_line 1 '^andrea: my-run/checkpoint-200/trainer_state.json: "global_step" must be a non-negative integer written as digits \(it is negative\)' \
  analyze my-run/checkpoint-* --out bad1 --probes induction --device cpu
[[ ! -e bad1 ]] && ok "nothing written for the refused run" || bad "refused run wrote" "$(ls bad1)"
printf '{"global_step": 200, "global_step": 201}\n' >my-run/checkpoint-200/trainer_state.json
expect_one_line 1 'trainer_state.json: key "global_step" is given twice' analyze my-run/checkpoint-* --out bad2 --device cpu
printf '{"global_step": "200"}' >my-run/checkpoint-200/trainer_state.json
expect_one_line 1 'trainer_state.json: "global_step" must be .*\(it is a string\)' analyze my-run/checkpoint-200 --out bad3 --device cpu
# --step N names the step of one checkpoint: trainer_state.json is not read
if "$A" analyze my-run/checkpoint-200 --step 7 --out one --probes induction --device cpu -q >/dev/null 2>oerr.txt; then
  rows=$(sql_rows one/catalog.db "SELECT name, series, step FROM models")
  [[ $rows == "my-run/checkpoint-200|my-run|7" ]] && ok "--step wins over a trainer_state.json (not read)" || bad "--step" "$rows"
else
  bad "analyze --step" "$(cat oerr.txt)"
fi
# without its global_step (or null) the file gives no step: the name's counts
printf '{"global_step": null}' >my-run/checkpoint-200/trainer_state.json
if "$A" analyze my-run/checkpoint-200 --out two --probes induction --device cpu -q >/dev/null 2>terr.txt; then
  rows=$(sql_rows two/catalog.db "SELECT step FROM models")
  [[ $rows == 200 && ! -s terr.txt ]] && ok "global_step null: the name's step, no note" || bad "null" "$rows $(cat terr.txt)"
else
  bad "analyze null global_step" "$(cat terr.txt)"
fi
finish
