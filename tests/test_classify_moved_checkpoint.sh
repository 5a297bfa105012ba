#!/usr/bin/env bash
# test_classify_moved_checkpoint.sh — a dump records its checkpoint's absolute path and sha256;
# when the checkpoint has moved, classify finds it by sha256 beside the dump or under
# --checkpoint PATH, and fails (exit 1, one line) when it finds none: the causal check is never
# skipped silently (--no-causal turns that into a warning and exit 0).
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files tests/data/series/dyck-step08000.bin
cd "$tmp"
mkdir -p a b d elsewhere
cp "$ANDREA_SRC/tests/data/series/dyck-step08000.bin" a/m.bin
# a relative path as typed
"$A" dump a/m.bin --probes induction --out d/x.h5 --device cpu --quiet >/dev/null 2>dump.err || bad "dump" "$(cat dump.err)"
q() { "$A" sql c.db "$1" --format csv | tail -n +2 | tr -d '\r'; }

# the recorded path is absolute: classify from another folder finds it
(cd elsewhere && "$A" classify ../d/x.h5 --db ../c.db --device cpu --quiet >/dev/null 2>../e1) \
  && [[ $(q "SELECT ablation_note IS NULL FROM runs ORDER BY id DESC LIMIT 1") == 1 ]] \
  && ok "classify from another folder runs the causal check" || bad "from elsewhere" "$(cat e1)"
[[ $(q "SELECT substr(dump_path, 1, 1) FROM runs LIMIT 1") != "" ]] || bad "runs" "no dump_path"

# moved, nowhere to be found: exit 1, one line naming --checkpoint and --no-causal
mv a/m.bin b/m.bin
"$A" classify d/x.h5 --db c.db --device cpu --quiet >out 2>e2; rc=$?
[[ $rc -eq 1 && $(wc -l <e2) -eq 1 ]] && grep -q -- "--checkpoint PATH" e2 && grep -q -- "--no-causal" e2 \
  && ok "a moved checkpoint nowhere to be found fails with one line" || bad "not found" "rc $rc: $(cat e2)"

# --no-causal: a warning, exit 0, the note stored
"$A" classify d/x.h5 --db c.db --device cpu --quiet --no-causal --min-score 0.5 >out 2>e3; rc=$?
[[ $rc -eq 0 ]] && grep -q "warning: .*not found" e3 \
  && [[ $(q "SELECT ablation_note LIKE '%--no-causal%' FROM runs ORDER BY id DESC LIMIT 1") == 1 ]] \
  && ok "--no-causal warns and exits 0" || bad "--no-causal" "rc $rc: $(cat e3)"

# --checkpoint FOLDER: found by sha256 in it
"$A" classify d/x.h5 --db c.db --device cpu --quiet --checkpoint b --min-score 0.6 >out 2>e4 \
  && [[ $(q "SELECT ablation_note IS NULL FROM runs ORDER BY id DESC LIMIT 1") == 1 ]] \
  && ok "--checkpoint FOLDER finds the checkpoint by sha256" || bad "--checkpoint folder" "$(cat e4)"
# --checkpoint FILE of another model: refused
"$A" classify d/x.h5 --db c.db --device cpu --quiet --checkpoint "$ANDREA_SRC/tests/data/series/dyck-step00030.bin" \
  >out 2>e5 && bad "--checkpoint other" "accepted" || { grep -q "differs" e5 && ok "--checkpoint of another model is refused"; }

# --checkpoint that does not exist, or a folder without the model: one line, exit 1
"$A" classify d/x.h5 --db c.db --device cpu --quiet --checkpoint nowhere/m.bin >out 2>e7; rc=$?
[[ $rc -eq 1 && $(wc -l <e7) -eq 1 ]] && grep -q "^andrea: nowhere/m.bin: " e7 && ok "--checkpoint of a missing file: one line" \
  || bad "--checkpoint missing" "rc $rc: $(cat e7)"
"$A" classify d/x.h5 --db c.db --device cpu --quiet --checkpoint elsewhere >out 2>e8; rc=$?
[[ $rc -eq 1 && $(wc -l <e8) -eq 1 ]] && grep -q "no checkpoint in this folder has the dump's sha256" e8 \
  && ok "--checkpoint of a folder without the model: one line" || bad "--checkpoint empty folder" "rc $rc: $(cat e8)"

# beside the dump (under another name): found by sha256
cp b/m.bin d/renamed.bin
"$A" classify d/x.h5 --db c.db --device cpu --quiet --min-score 0.7 >out 2>e6 \
  && [[ $(q "SELECT ablation_note IS NULL FROM runs ORDER BY id DESC LIMIT 1") == 1 ]] \
  && ok "a checkpoint beside the dump is found by sha256" || bad "beside" "$(cat e6)"

# --quiet prints only the catalog line
[[ $(wc -l <out) -eq 1 ]] && grep -q '^catalog: ' out && ok "classify --quiet prints only the catalog line" \
  || bad "--quiet" "$(cat out)"
# a recorded path holding a newline and an escape sequence (a crafted folder name): the warning is
# still one line, and no escape byte reaches the terminal (it was printed raw)
evil=$'e\n\e[2Jvil'
mkdir -p "$evil" && cp b/m.bin "$evil/m.bin"
"$A" dump "$evil/m.bin" --probes induction --out d/evil.h5 --device cpu --quiet >/dev/null 2>dump2.err || bad "dump (evil path)" "$(cat dump2.err)"
rm -rf "$evil" d/renamed.bin
"$A" classify d/evil.h5 --db c.db --device cpu --no-causal --min-score 0.5 >out 2>e9; rc=$?
[[ $rc -eq 0 && $(wc -l <e9) -eq 1 ]] && grep -q "warning: " e9 && ! grep -q $'\e' e9 \
  && ok "classify --no-causal shows a crafted recorded path as one line without escapes" || bad "escape in the warning" "rc $rc: $(od -c e9 | head -5)"
finish
