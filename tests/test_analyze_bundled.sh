#!/usr/bin/env bash
# test_analyze_bundled.sh — `andrea analyze` with no argument, in an empty folder: the catalog and
# the report appear under ./andrea-out/ and no dump (scores are computed in the forward; a dump only
# with --dump FILE or --keep-dumps), the run takes under a minute (2 CPU cores,
# README.md), every head the bundled card lists is found by `andrea heads --class C` with a
# score, a baseline and an ablation effect and is labelled (bracket/entity: see tests/card_heads.py),
# and the final table names index.html; no -wal/-shm is left beside catalog.db.
# Skips (77) while the bundled model is absent.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
card=$ANDREA_SRC/models/andrea-bundled.card.json
need_files models/andrea-bundled.bin models/andrea-bundled.card.json
cd "$tmp"
TIMEFORMAT='%R %U %S'
{ time "$ANDREA_BIN" analyze --device cpu --quiet >out.txt 2>err.txt; } 2>time.txt
cat out.txt err.txt
read -r wall user sys <time.txt
echo "analyze: ${wall}s wall, ${user}s user, ${sys}s sys"
[[ -f andrea-out/catalog.db && -f andrea-out/index.html ]] || { echo "FAIL: outputs missing"; ls -R andrea-out; exit 1; }
# the report's read-only reads leave SQLite's -wal/-shm beside the catalog; analyze folds them away
for f in andrea-out/catalog.db-wal andrea-out/catalog.db-shm; do
    [[ ! -e $f ]] || { echo "FAIL: $f left beside the catalog"; exit 1; }
done
[[ ! -e andrea-out/andrea-bundled.h5 ]] || { echo "FAIL: a dump was written without --dump / --keep-dumps"; exit 1; }
grep -q "andrea-out/index.html" out.txt || { echo "FAIL: index.html not printed"; exit 1; }
# Under a minute on 2 cores = at most 120 CPU-seconds; CPU time does not depend on how loaded the
# test machine is, wall time does (reported above).
awk -v u="$user" -v s="$sys" 'BEGIN { exit !(u + s <= 120) }' || { echo "FAIL: ${user}s + ${sys}s CPU > 120 s"; exit 1; }
/usr/bin/python3 - "$card" "$ANDREA_BIN" "$ANDREA_SRC/tests" <<'PY'
import json, subprocess, sys
sys.path.insert(0, sys.argv[3])
from card_heads import judge
card = json.load(open(sys.argv[1])); bin_ = sys.argv[2]
bad = n = 0
for cls, heads in card["classes"].items():
    if not heads: continue
    out = subprocess.run([bin_, "heads", "--db", "andrea-out/catalog.db", "--class", cls, "--all", "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    rows = {(r["layer"], r["head"]): r for r in json.loads(out)}
    for hd in heads:
        n += 1
        r = rows.get((hd["layer"], hd["head"]))
        if r is None or r["score"] is None or r["baseline"] is None or r["ablation_delta"] is None:
            print("FAIL: heads --class %s lacks %d.%d (or its score/baseline/ablation): %s" % (cls, hd["layer"], hd["head"], r)); bad += 1
            continue
        ok, note = judge(cls, (hd["layer"], hd["head"]),
                         {k: (v["score"], v["baseline"], v["label"]) for k, v in rows.items()})
        if note:
            print("%s: %s %d.%d: %s" % ("ok" if ok else "FAIL", cls, hd["layer"], hd["head"], note))
        bad += not ok
print("%d card heads checked through andrea heads, %d problems" % (n, bad))
sys.exit(1 if bad else 0)
PY
