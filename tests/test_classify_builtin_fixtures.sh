#!/usr/bin/env bash
# test_classify_builtin_fixtures.sh — with the BUILT-IN probe suites (not the card's probe file),
# the heads each fixture card lists for a class are labelled with that class.
# Skips (77) while the fixture models are absent.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
for name in andrea-tiny andrea-bundled; do
  for ext in bin card.json; do need_files "models/$name.$ext"; done
done
for name in andrea-tiny andrea-bundled; do
  m=$ANDREA_SRC/models/$name
  "$ANDREA_BIN" dump "$m.bin" --probes prev_token,induction,duplicate,bracket,entity,bos --out "$tmp/$name.h5" \
      --device cpu --quiet
  "$ANDREA_BIN" classify "$tmp/$name.h5" --db "$tmp/catalog.db" --ablate-items 0 --quiet >"$tmp/$name.out"
  cat "$tmp/$name.out"
  /usr/bin/python3 - "$tmp/catalog.db" "$m.card.json" <<'PY'
import json, sqlite3, sys
db, card_path = sys.argv[1], sys.argv[2]
card = json.load(open(card_path))
con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
bad = n = 0
for suite, heads in card["classes"].items():
    for hd in heads:
        r = con.execute("SELECT score, baseline, control, label FROM head_catalog WHERE checkpoint_sha256 = ? AND class = ?"
                        " AND layer = ? AND head = ? AND latest", (card["sha256"], suite, hd["layer"], hd["head"])).fetchone()
        n += 1
        if r is None or r[3] != 1:
            print("FAIL: %s %s %d.%d (card score %.3f) not labelled on the built-in suite: %s" % (
                card["name"], suite, hd["layer"], hd["head"], hd["score"], r)); bad += 1
print("%s: %d card heads checked, %d not labelled" % (card["name"], n, bad))
sys.exit(1 if bad else 0)
PY
done
