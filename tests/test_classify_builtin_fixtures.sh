#!/usr/bin/env bash
# test_classify_builtin_fixtures.sh — with the BUILT-IN probe suites (not the card's probe file),
# the heads each fixture card lists for a class are labelled with that class (bracket and entity:
# or, where the built-in text differs from the card's, clearly the class's best heads: the rule
# and why are in tests/card_heads.py).
# Skips (77) while the fixture models are absent.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
for name in andrea-tiny andrea-bundled; do
  for ext in bin card.json; do need_files "models/$name.$ext"; done
done
for name in andrea-tiny andrea-bundled; do
  m=$ANDREA_SRC/models/$name
  "$ANDREA_BIN" dump "$m.bin" --probes prev_token,induction,duplicate,bracket,bracket_close,entity,bos --out "$tmp/$name.h5" \
      --device cpu --quiet
  "$ANDREA_BIN" classify "$tmp/$name.h5" --db "$tmp/catalog.db" --ablate-items 0 --quiet >"$tmp/$name.out"
  cat "$tmp/$name.out"
  /usr/bin/python3 - "$tmp/catalog.db" "$m.card.json" "$ANDREA_SRC/tests" <<'PY'
import json, sqlite3, sys
sys.path.insert(0, sys.argv[3])
from card_heads import judge
db, card_path = sys.argv[1], sys.argv[2]
card = json.load(open(card_path))
con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
bad = n = 0
for suite, heads in card["classes"].items():
    rows = {(l, h): (s, b, lab) for l, h, s, b, lab in con.execute(
        "SELECT layer, head, score, baseline, label FROM head_catalog WHERE checkpoint_sha256 = ? AND class = ?"
        " AND current", (card["sha256"], suite))}
    for hd in heads:
        n += 1
        ok, note = judge(suite, (hd["layer"], hd["head"]), rows)
        if note:
            print("%s: %s %s %d.%d (card score %.3f): %s" % ("ok" if ok else "FAIL", card["name"], suite,
                  hd["layer"], hd["head"], hd["score"], note))
        bad += not ok
print("%s: %d card heads checked, %d not found" % (card["name"], n, bad))
sys.exit(1 if bad else 0)
PY
done
