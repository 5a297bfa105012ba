#!/usr/bin/env bash
# test_cli_help_and_notes.sh — `andrea help CMD` and `andrea CMD -h` print the command's help
# (exit 0, the same text as --help); `andrea help` with an unknown or a second name is a usage
# error; a `dump --len` beyond the model's max_seq_len says that it was clipped; a suite whose
# items have no position for the causal check (entity items too short for a re-mention) is named
# in the run's note, on stderr and in runs.ablation_note, not skipped silently.
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
cd "$tmp"
for c in info tokenize generate dump classify render analyze heads sql; do
  "$A" "$c" --help >want.txt 2>&1
  if "$A" help "$c" >got1.txt 2>&1 && "$A" "$c" -h >got2.txt 2>&1 && cmp -s want.txt got1.txt && cmp -s want.txt got2.txt \
    && grep -q "^usage: andrea $c" want.txt; then
    ok "help $c and $c -h print $c --help"
  else
    bad "help $c" "$(head -2 got1.txt got2.txt)"
  fi
done
"$A" help >top.txt 2>&1 && grep -q "andrea help COMMAND" top.txt && ok "andrea help lists the commands" || bad "help" "$(cat top.txt)"
"$A" help nope >/dev/null 2>err.txt; [[ $? -eq 2 && $(wc -l <err.txt) -eq 1 ]] && ok "help of an unknown command: exit 2, one line" \
  || bad "help nope" "$(cat err.txt)"
"$A" help heads sql >/dev/null 2>err.txt; [[ $? -eq 2 ]] && ok "help of two commands: exit 2" || bad "help two" "$(cat err.txt)"

"$A" >/dev/null 2>err.txt; [[ $? -eq 2 && $(wc -l <err.txt) -eq 1 ]] && grep -q "andrea: no command given: one of info, .*show" err.txt &&
  ok "andrea alone: exit 2, one line naming the commands" || bad "no command" "$(cat err.txt)"

# sql takes its options after the two positionals as getopt does before them: abbreviated, -h
"$A" analyze "$ANDREA_SRC/models/andrea-tiny.bin" --out sq --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>&1
[[ $("$A" sql sq/catalog.db "SELECT 7 AS x" --form csv | tail -1 | tr -d '\r') == 7 ]] && ok "sql: --form after the statement" ||
  bad "sql --form" "$("$A" sql sq/catalog.db "SELECT 7 AS x" --form csv 2>&1)"
"$A" sql sq/catalog.db "SELECT 7" -h | grep -q "^usage: andrea sql" && ok "sql: -h after the statement" || bad "sql -h" "no help"
[[ $("$A" sql sq/catalog.db "-- a comment
SELECT 8 AS x" --format csv | tail -1 | tr -d '\r') == 8 ]] && ok "sql: a statement starting with -- is no option" || bad "sql comment" "refused"

need_files models/andrea-tiny.bin
"$A" dump "$ANDREA_SRC/models/andrea-tiny.bin" --probes bos --n 2 --len 5000 --out l.h5 --device cpu --quiet >/dev/null 2>err.txt \
  && grep -q -- "--len 5000 is clipped to the model's max_seq_len 128" err.txt && ok "a clipped --len says so" \
  || bad "--len" "$(cat err.txt)"
"$A" dump "$ANDREA_SRC/models/andrea-tiny.bin" --probes bos --n 2 --len 64 --out m.h5 --device cpu --quiet >/dev/null 2>err.txt \
  && [[ ! -s err.txt ]] && ok "an unclipped --len says nothing" || bad "--len 64" "$(cat err.txt)"

need_files models/andrea-bundled.bin
"$A" dump "$ANDREA_SRC/models/andrea-bundled.bin" --probes entity,bos --len 40 --n 4 --out e.h5 --device cpu --quiet >/dev/null 2>&1
"$A" classify e.h5 --db e.db --min-score 0.2 --min-ratio 1 --min-margin 0 >out.txt 2>err.txt
rc=$?
note=$("$A" sql e.db "SELECT ablation_note FROM runs" --format csv 2>&1 | tail -1)
if [[ $rc == 0 ]] && grep -q "note: no causal check for entity: none of its items has a position where entity's loss is measured (its labelled heads have no ablation_delta)" err.txt \
  && [[ $note == *"no causal check for entity"* && $note != *"for bos"* ]] \
  && [[ $("$A" sql e.db "SELECT count(*) FROM suites WHERE class = 'bos' AND ablation_items = 4" --format csv | tail -1 | tr -d "\r") == 1 ]]; then
  ok "a suite without loss positions is named in the note; the others are checked: $(head -1 err.txt)"
else
  bad "unchecked suite" "exit $rc: $(cat err.txt) / $note"
fi
# -q is --quiet (and -o --out) for every command that has them: it worked for dump and show only
M=$ANDREA_SRC/models/andrea-tiny.bin
same_as_long() { # NAME CMD...: the run with -q prints what the run with --quiet prints, exit 0
  local name=$1; shift
  "$A" "${@/#-q/--quiet}" >long.out 2>long.err; local rl=$?
  "$A" "$@" >short.out 2>short.err; local rs=$?
  if [[ $rl -eq 0 && $rs -eq 0 ]] && cmp -s long.out short.out && cmp -s long.err short.err; then ok "$name -q is --quiet"
  else bad "$name -q" "exit $rs: $(head -2 short.err)"; fi
}
same_as_long dump dump "$M" --n 2 --len 16 --probes bos -o q.h5 -q
same_as_long classify classify q.h5 --db q.db --device cpu --ablate-items 0 -q
same_as_long render render q.h5 --db q.db -o qr -q
same_as_long analyze analyze "$M" -o qa --probes bos --n 2 --len 16 --ablate-items 0 -q
same_as_long show show "$M" "abc" -o qs -q
finish
