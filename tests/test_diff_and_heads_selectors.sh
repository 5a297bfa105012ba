#!/usr/bin/env bash
# test_diff_and_heads_selectors — two checkpoints with one name (m1/run.bin, m2/run.bin: other
# weights, no step) in one catalog: `diff --from run --to run` is ambiguous (exit 2, one line
# naming both by sha256 prefix and path) instead of comparing one with itself; a sha256 prefix or
# the path selects each. `heads --model/--series` matching nothing, or empty, is an error (exit 2)
# listing what the catalog holds, never an empty table; a path or sha256 prefix selects one model.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-tiny.bin

mkdir "$tmp/m1" "$tmp/m2"
cp "$ANDREA_SRC/models/andrea-tiny.bin" "$tmp/m1/run.bin"
cp "$ANDREA_SRC/models/andrea-tiny.bin" "$tmp/m2/run.bin"
# m2: the sign of 4096 floats after the 1024-byte header flipped (a different model, same shape)
/usr/bin/python3 - "$tmp/m2/run.bin" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(1024)
    b = bytearray(f.read(4 * 4096))
    for i in range(3, len(b), 4):
        b[i] ^= 0x80
    f.seek(1024)
    f.write(b)
PY
cd "$tmp"
for m in m1 m2; do
  "$A" dump "$m/run.bin" --n 2 --len 16 --device cpu --out "$m.h5" >/dev/null 2>&1
  "$A" classify "$m.h5" --db same.db >/dev/null 2>&1
done
sha() { "$A" sql same.db "SELECT sha256 FROM models WHERE path LIKE '%$1/run.bin'" --format csv | tail -n 1 | tr -d '\r'; }
s1=$(sha m1) s2=$(sha m2)
[[ ${#s1} == 64 && ${#s2} == 64 && $s1 != "$s2" ]] && ok "two checkpoints named run" || bad "setup" "$s1 / $s2"

# expect CODE REGEX CMD...: exit code CODE, exactly one stderr line matching REGEX (none for 0)
expect() {
  local code=$1 re=$2
  shift 2
  set +e
  "$A" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  set -e
  local lines
  lines=$(wc -l <"$tmp/err")
  if [[ $rc == "$code" ]] && { [[ $code == 0 && $lines == 0 ]] || { [[ $lines == 1 ]] && grep -Eq -- "$re" "$tmp/err"; }; }; then
    ok "$* -> exit $rc $(cat "$tmp/err")"
  else
    bad "$*" "exit $rc (want $code), $lines stderr lines: $(cat "$tmp/err")"
  fi
}
expect 2 "--from 'run' is ambiguous: it matches run \(sha256 ${s1:0:12}, [^)]*m1/run.bin\), run \(sha256 ${s2:0:12}, [^)]*m2/run.bin\)" \
  diff --db same.db --from run --to run
expect 2 "--to 'run' is ambiguous" diff --db same.db --from "${s1:0:8}" --to run
expect 2 "matches no checkpoint; the catalog holds: run \(sha256 ${s1:0:12}, .*\), run \(sha256 ${s2:0:12}, " \
  diff --db same.db --from nosuch --to run
expect 2 "matches no checkpoint" diff --db same.db --from "${s1:0:3}" --to "${s2:0:8}" # 3 digits: too short

expect 0 "" diff --db same.db --from m1/run.bin --to m2/run.bin --format csv
by_path=$(cat "$tmp/out")
# some head's score moved: the two sides are two models
awk -F, 'NR > 1 && $6 != "" && $6 != 0 { moved = 1 } END { exit !moved }' "$tmp/out" && ok "diff by path compares two models" ||
  bad "diff by path" "every delta 0: $(head -n 3 "$tmp/out")"
expect 0 "" diff --db same.db --from "${s1:0:6}" --to "${s2:0:6}" --format csv
[[ $(cat "$tmp/out") == "$by_path" ]] && ok "a sha256 prefix selects the same checkpoints" || bad "diff by sha256" "differs"
expect 0 "" diff --db same.db --from "$tmp/m1/run.bin" --to "${s2^^}" --format csv
[[ $(cat "$tmp/out") == "$by_path" ]] && ok "an absolute path and an upper-case sha256 too" || bad "diff by abs path" "differs"

expect 2 "--model wants .*not an empty string" heads --db same.db --model ""
expect 2 "--series wants .*not an empty string" heads --db same.db --series ""
expect 2 "--model 'nosuch' matches no model; the catalog holds: run$" heads --db same.db --model nosuch
expect 2 "--series 'nosuch' matches no series; the catalog holds: run$" heads --db same.db --series nosuch
for sel in m2/run.bin "${s2:0:10}"; do
  expect 0 "" heads --db same.db --all --model "$sel" --format csv
  n=$(tail -n +2 "$tmp/out" | grep -c . || true)
  other=$(grep -c "$s1" "$tmp/out" || true)
  [[ $n -gt 0 && $other == 0 ]] && ok "heads --model $sel: $n rows, all of m2" || bad "heads --model $sel" "$n rows, $other of m1"
done
# a model named like a short sha256 prefix (here m1's first 3 hex digits) is that model alone: a
# prefix selects from 4 hex digits on, as diff's (heads --model brought m1's rows along)
short=${s1:0:3}
mkdir m3 && cp m2/run.bin "m3/$short.bin" && printf '\x01' | dd of="m3/$short.bin" bs=1 seek=2000 conv=notrunc 2>/dev/null
"$A" dump "m3/$short.bin" --n 2 --len 16 --device cpu --out m3.h5 >/dev/null 2>&1 && "$A" classify m3.h5 --db same.db >/dev/null 2>&1 ||
  bad "m3" "dump or classify of m3/$short.bin failed"
expect 0 "" heads --db same.db --all --model "$short" --format csv
n=$(tail -n +2 "$tmp/out" | grep -c . || true)
other=$(tail -n +2 "$tmp/out" | grep -vc "^$short," || true)
[[ $n -gt 0 && $other == 0 ]] && ok "heads --model $short: $n rows, all of the model named $short" || bad "heads --model $short" "$n rows, $other of other models"
# analyze given relative paths records them absolute (as a dump does), so a selector by the
# absolute path, or by a path relative to another folder, finds the model
"$A" analyze m1/run.bin m2/run.bin --out an --n 2 --len 16 --device cpu --ablate-items 0 --quiet >/dev/null 2>&1 ||
  bad "analyze" "of m1/run.bin m2/run.bin failed"
p1=$("$A" sql an/catalog.db "SELECT path FROM models WHERE path LIKE '%m1/run.bin'" --format csv | tail -n 1 | tr -d '\r')
[[ $p1 == "$tmp/m1/run.bin" || $p1 == "$(cd "$tmp" && pwd -P)/m1/run.bin" ]] && ok "analyze records $p1" || bad "analyze path" "$p1"
expect 0 '' heads --db an/catalog.db --model "$tmp/m1/run.bin"
(cd m1 && "$A" diff --db ../an/catalog.db --from run.bin --to ../m2/run.bin >/dev/null 2>"$tmp/rel.err") &&
  ok "diff selects by paths relative to another folder" || bad "diff relative" "$(cat "$tmp/rel.err")"

# --pivot step shows one checkpoint a step: without steps it says so, and two checkpoints at one
# step are an error naming both (the table kept one of them silently)
expect 1 'no checkpoint of the selection has a step' heads --db same.db --series run --pivot step
mkdir -p p1 p2
cp m1/run.bin p1/run-step10.bin
cp m2/run.bin p2/run-step10.bin
"$A" analyze p1/run-step10.bin p2/run-step10.bin --out pv --n 2 --len 16 --device cpu --ablate-items 0 --quiet >/dev/null 2>&1 ||
  bad "analyze p1 p2" "failed"
expect 1 'two checkpoints at step 10 \(run-step10 [0-9a-f]{12} and run-step10 [0-9a-f]{12}\)' \
  heads --db pv/catalog.db --series run --pivot step
# --step, like --model and --series, must match a checkpoint: a step none has (a typo) is exit 2
# naming the steps there are, never an empty table with exit 0
expect 0 '' heads --db pv/catalog.db --step 10 --all
expect 2 "--step 11 matches no checkpoint; the catalog's steps: 10$" heads --db pv/catalog.db --step 11
expect 2 "--step 0 matches no checkpoint; no checkpoint of the catalog has a step" heads --db same.db --step 0

# a checkpoint of the series without a step has no column: the pivot says so on stderr
"$A" analyze m1/run.bin p2/run-step10.bin --out pn --n 2 --len 16 --device cpu --ablate-items 0 --quiet >/dev/null 2>&1 ||
  bad "analyze m1 p2" "failed"
if "$A" heads --db pn/catalog.db --series run --pivot step >pn.out 2>pn.err && [[ $(wc -l <pn.err) == 1 ]] &&
  grep -q "note: --pivot step leaves out 1 checkpoint without a step (run)" pn.err && grep -q "step 10" pn.out; then
  ok "the pivot names the checkpoint it leaves out: $(cat pn.err)"
else
  bad "stepless note" "$(cat pn.err pn.out | head -5)"
fi

# diff reads each side's current runs: a later run of other suites on one side hides nothing
s_m1=$("$A" sql pn/catalog.db "SELECT sha256 FROM models WHERE path LIKE '%m1/run.bin'" --format csv | tail -n 1 | tr -d '\r')
"$A" diff --db pn/catalog.db --from "${s_m1:0:12}" --to run@10 --format csv >d1.csv 2>d1.err
# (a run joins a series' catalog by classify: analyze of one checkpoint would replace the series page)
"$A" dump p2/run-step10.bin --out p2bos.h5 --probes bos --n 2 --len 16 --device cpu --quiet >/dev/null 2>&1 &&
  "$A" classify p2bos.h5 --db pn/catalog.db --ablate-items 0 --quiet >/dev/null 2>&1 || bad "classify p2 bos" "failed"
"$A" diff --db pn/catalog.db --from "${s_m1:0:12}" --to run@10 --format csv >d2.csv 2>d2.err
n_ind=$(grep -c ',induction,' d2.csv || true)
if [[ -s d1.csv ]] && cmp -s d1.csv d2.csv && ((n_ind > 0)) && ! grep -q ',induction,[^,]*,,' d2.csv; then
  ok "diff after a later bos-only run still compares every class ($n_ind induction rows, unchanged)"
else
  bad "diff current runs" "$(diff d1.csv d2.csv | head -5) $(cat d2.err)"
fi

# an empty file is no catalog (it was "schema version 0 ... the next analyze upgrades it")
: >empty.db
expect 1 'empty.db: not an andrea catalog \(it holds no runs' heads --db empty.db

# diff's CSV keeps REALs exact (%.17g) as heads and sql do: 0.xxxxxxxxxx... with 10+ digits
grep -q -E ',0\.[0-9]{10,}' d2.csv && ok "diff --format csv prints exact REALs" || bad "diff csv digits" "$(head -2 d2.csv)"

# a hand-edited catalog (text where andrea writes numbers) gives no wrong number: a text score is
# no delta in diff (it counted as 0) and shows as it is in the pivot (it was 0.000abc); a text
# step is no step (it was step 0); a text n_layer leaves the other models' --layer check working
cp pn/catalog.db hand.db
/usr/bin/python3 - hand.db <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE head_scores SET score = 'abc' WHERE layer = 0 AND head = 0")
c.commit()
PY
"$A" diff --db hand.db --from "${s_m1:0:12}" --to run@10 --format csv >hd.csv 2>hd.err
grep -q '^0,0,induction,,,,' hd.csv && ok "diff: a text score has no delta" || bad "diff text score" "$(grep '^0,0,induction' hd.csv) $(cat hd.err)"
"$A" heads --db hand.db --series run --pivot step --class induction >hp.out 2>/dev/null
grep -q '^induction  *0\.0  *abc$' hp.out && ! grep -q '0\.000abc' hp.out && ok "pivot: a text score shows as it is" || bad "pivot text score" "$(head -3 hp.out)"
/usr/bin/python3 - hand.db <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE models SET step = 'abc', n_layer = 'abc' WHERE step IS NULL")
c.commit()
PY
"$A" heads --db hand.db --series run --pivot step --class induction >hp2.out 2>hp2.err
! grep -q 'step 0' hp2.out && grep -q 'step 10' hp2.out && grep -q 'leaves out 1 checkpoint without a step' hp2.err &&
  ok "pivot: a text step is no step" || bad "pivot text step" "$(head -2 hp2.out) $(cat hp2.err)"
"$A" heads --db hand.db --layer 1 --all >hl.out 2>hl.err && grep -q induction hl.out && ok "--layer works beside a model with a text n_layer" ||
  bad "--layer with a text n_layer" "$(cat hl.err)"

# a text holding NUL bytes is shown whole: '?' in the table, \u0000 in JSON, the byte in CSV (it
# was cut at the NUL); fts3_tokenizer, which returns a pointer out of andrea's memory, is refused
nul_q="SELECT 'a' || char(0) || 'b' AS x"
[[ $("$A" sql hand.db "$nul_q" | tail -1) == 'a?b' ]] && ok "sql table: a NUL shows as ?" || bad "NUL in table" "$("$A" sql hand.db "$nul_q" | od -c | head -3)"
"$A" sql hand.db "$nul_q" --format json | /usr/bin/python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)[0]["x"] != "a\x00b")' &&
  ok "sql json: a NUL is \\u0000" || bad "NUL in json" "$("$A" sql hand.db "$nul_q" --format json)"
[[ $("$A" sql hand.db "$nul_q" --format csv | tail -1 | od -An -c | tr -d ' \n') == 'a\0b\r\n' ]] && ok "sql csv: a NUL is kept" ||
  bad "NUL in csv" "$("$A" sql hand.db "$nul_q" --format csv | od -c | head -3)"
expect 1 'not authorized' sql hand.db "SELECT hex(fts3_tokenizer('simple'))"

"$A" heads --db hand.db --min-score 0.99 --all --format csv >hm.csv 2>hm.err
! grep -q ',abc,' hm.csv && ok "--min-score: a text score passes no threshold" || bad "text score over --min-score" "$(grep abc hm.csv | head -2)"

# an '@' in a file or folder name is part of the name when no step follows it (run@v2.bin was
# refused: "STEP after '@' must be a whole number"), and NAME@STEP still selects by step
mkdir -p at && cp m1/run.bin at/run@v2.bin && cp m2/run.bin at/run@v3-step10.bin
"$A" analyze at/run@v2.bin at/run@v3-step10.bin --out atc --n 2 --len 16 --device cpu --ablate-items 0 --quiet >/dev/null 2>&1 ||
  bad "analyze at/" "failed"
expect 0 "" diff --db atc/catalog.db --from run@v2 --to at/run@v3-step10.bin --format csv
expect 0 "" diff --db atc/catalog.db --from at/run@v2.bin --to run@v3@10 --format csv
expect 2 "--from 'run@x': STEP after '@' must be a whole number" diff --db atc/catalog.db --from run@x --to run@v2
expect 2 "--to 'run@v2@11' matches no checkpoint" diff --db atc/catalog.db --from run@v2 --to run@v2@11

finish
