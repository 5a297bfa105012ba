#!/usr/bin/env bash
# test_classify_fixtures.sh — on the fixture models, with the probe files saved beside their cards:
#   - every head's score equals the card's (computed in PyTorch) within 1e-3 (dump --maps fp32);
#   - every head the card lists for a class carries that label in the catalog.
# Skips (77) while the fixture models are absent.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
for name in andrea-tiny andrea-bundled; do
  for ext in bin card.json probes.jsonl; do need_files "models/$name.$ext"; done
done
for name in andrea-tiny andrea-bundled; do
  m=$ANDREA_SRC/models/$name
  "$ANDREA_BIN" dump "$m.bin" --probes "$m.probes.jsonl" --maps fp32 --out "$tmp/$name.h5" --device cpu --quiet
  # the causal check is not what this test is about: one item keeps it cheap
  "$ANDREA_BIN" classify "$tmp/$name.h5" --db "$tmp/catalog.db" --ablate-items 1 --device cpu --quiet >"$tmp/$name.out"
  cat "$tmp/$name.out"
  /usr/bin/python3 - "$tmp/catalog.db" "$m.card.json" <<'PY'
import json, sqlite3, sys
db, card_path = sys.argv[1], sys.argv[2]
card = json.load(open(card_path))
con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
bad = 0
n = 0
for suite, grid in card["scores"].items():
    rows = {(l, h): (s, lab) for l, h, s, lab in con.execute(
        "SELECT layer, head, score, label FROM head_catalog WHERE checkpoint_sha256 = ? AND class = ? AND current",
        (card["sha256"], suite))}
    if not rows:
        print("FAIL: %s: no rows for suite %s" % (card["name"], suite)); bad += 1; continue
    for l, row in enumerate(grid):
        for h, want in enumerate(row):
            got = rows[(l, h)][0]
            n += 1
            # the card rounds to 4 decimals: allow that on top of 1e-3
            if got is None or abs(got - want) > 1e-3 + 5e-5:
                print("FAIL: %s %s %d.%d score %s, card %.4f" % (card["name"], suite, l, h, got, want)); bad += 1
    for hd in card["classes"].get(suite, []):
        if rows[(hd["layer"], hd["head"])][1] != 1:
            print("FAIL: %s %s %d.%d listed in the card, not labelled (score %.4f)" % (
                card["name"], suite, hd["layer"], hd["head"], rows[(hd["layer"], hd["head"])][0])); bad += 1
print("%s: %d scores compared, %d problems" % (card["name"], n, bad))
sys.exit(1 if bad else 0)
PY
done
