#!/usr/bin/env bash
# test_cli_help_and_notes.sh — `andrea help CMD` and `andrea CMD -h` print the command's help
# (exit 0, the same text as --help); `andrea help` with an unknown or a second name is a usage
# error; a `dump --len` beyond the model's max_seq_len says that it was clipped.
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

need_files models/andrea-tiny.bin
"$A" dump "$ANDREA_SRC/models/andrea-tiny.bin" --probes bos --n 2 --len 5000 --out l.h5 --device cpu --quiet >/dev/null 2>err.txt \
  && grep -q -- "--len 5000 is clipped to the model's max_seq_len 128" err.txt && ok "a clipped --len says so" \
  || bad "--len" "$(cat err.txt)"
"$A" dump "$ANDREA_SRC/models/andrea-tiny.bin" --probes bos --n 2 --len 64 --out m.h5 --device cpu --quiet >/dev/null 2>err.txt \
  && [[ ! -s err.txt ]] && ok "an unclipped --len says nothing" || bad "--len 64" "$(cat err.txt)"
finish
