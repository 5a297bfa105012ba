#!/usr/bin/env bash
# test_bracket_by_function — on a model trained on nested brackets (tests/data/series/
# dyck-step08000.bin, tools/train_series.py: bracket lines and code-like bracket lines), the
# `bracket` class (attention from inside a pair to the innermost unclosed opener) labels the head
# that does the matching, and the causal check (loss predicting each closer) shows it:
#  - `bracket` labels exactly head 1.2; its causal flag is 1;
#  - of the last layer's heads, 1.2's ablation hurts closer prediction most, more than 4 times the
#    others' (whose weaker innermost-opener attention, 0.19-0.21, comes with causal = 0): the stored
#    effects tell the matching head apart;
#  - today's closer -> opener rule (`bracket_close`) does not see 1.2 (score near its baseline)
#    and does not label it; on this fixture it labels no head at all.
# The bundled model adds the case the dyck fixture lacks (see the end of this script): there the
# two rules label different heads, and the stored causal effects tell them apart.
# What the fixture does NOT show, stated so nobody reads more into the test: 1.2 is not the head
# whose ablation hurts closer prediction most over the whole model. Layer-0 heads 0.0 and 0.2
# raise the closer loss more when ablated (about 2.3 nats against 1.4 for 1.2; every later head
# reads them), while their attention to the innermost opener is weak (0.025 and 0.111 against a
# 0.028 baseline, top-1 on non-recent openers 0): they feed the matching, they do not do it.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files tests/data/series/dyck-step08000.bin
cd "$tmp"
"$A" analyze "$ANDREA_SRC/tests/data/series/dyck-step08000.bin" --probes bracket,bracket_close --out out \
  --device cpu --quiet >out.txt 2>err.txt || { cat out.txt err.txt; bad analyze "failed"; finish; }
cat out.txt
/usr/bin/python3 - out/catalog.db <<'PY' || fails=$((fails + 1))
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT class, layer, head, score, baseline, ablation_delta, ablation_mean, causal, label "
                  "FROM head_catalog").fetchall()
h = {(c, l, hd): dict(score=s, base=b, delta=d, mean=m, causal=ca, label=lab) for c, l, hd, s, b, d, m, ca, lab in rows}
bad = 0
def check(cond, what):
    global bad
    print(("ok   " if cond else "FAIL ") + what)
    bad += not cond
br = {k[1:]: v for k, v in h.items() if k[0] == "bracket"}
bc = {k[1:]: v for k, v in h.items() if k[0] == "bracket_close"}
for (l, hd), v in sorted(br.items()):
    print("  %d.%d bracket score %.3f/%.3f delta %+.3f (mean %.3f) | bracket_close score %.3f/%.3f delta %+.3f" %
          (l, hd, v["score"], v["base"], v["delta"], v["mean"], bc[(l, hd)]["score"], bc[(l, hd)]["base"],
           bc[(l, hd)]["delta"]))
labelled = sorted(k for k, v in br.items() if v["label"])
check(labelled == [(1, 2)], "bracket labels exactly 1.2 (got %s)" % labelled)
m = br[(1, 2)]
check(m["causal"] == 1 and m["delta"] > 1.3 * m["mean"], "1.2's ablation raises the closer loss above the mean head's "
      "(%.3f vs %.3f), causal = 1" % (m["delta"], m["mean"]))
last = [k for k in br if k[0] == 1]
best = max(last, key=lambda k: br[k]["delta"])
check(best == (1, 2), "of the last layer's heads, 1.2 hurts closer prediction most")
others = [br[k]["delta"] for k in last if k != (1, 2)]
check(all(m["delta"] > 4 * max(d, 0.01) for d in others), "its effect is > 4x theirs (%s)" %
      ", ".join("%.3f" % d for d in others))
check(all(br[k]["causal"] == 0 for k in last if k != (1, 2)), "their causal flag is 0")
strong = [k for k, v in br.items() if v["score"] >= 0.3]
check(strong == [(1, 2)], "1.2 is the only head with score >= 0.3 (its next: %.3f)" %
      max(v["score"] for k, v in br.items() if k != (1, 2)))
check(bc[(1, 2)]["score"] < 2 * bc[(1, 2)]["base"] and not bc[(1, 2)]["label"],
      "bracket_close (closer -> opener) does not see 1.2: %.3f at baseline %.3f" % (bc[(1, 2)]["score"], bc[(1, 2)]["base"]))
check(not any(v["label"] for v in bc.values()), "bracket_close labels no head on this fixture")
check(abs(m["delta"] - bc[(1, 2)]["delta"]) > 1e-6, "bracket and bracket_close measure different loss positions")
sys.exit(1 if bad else 0)
PY
# The bundled model (models/andrea-bundled.md): its card labels `bracket` 2.3 and `bracket_close`
# 2.1, two different heads. On the built-in suites the stored causal effects tell them apart: 2.3's
# ablation raises the loss of predicting closers far above the mean head's (causal 1), 2.1's does
# not (causal 0), and 2.1 is still the best closer -> opener head there.
if [[ -f $ANDREA_SRC/models/andrea-bundled.bin ]]; then
  "$A" analyze "$ANDREA_SRC/models/andrea-bundled.bin" --probes bracket,bracket_close --out bundled \
    --device cpu --quiet >b.txt 2>b.err || { cat b.txt b.err; bad bundled "analyze failed"; finish; }
  cat b.txt
  /usr/bin/python3 - bundled/catalog.db "$ANDREA_SRC/models/andrea-bundled.card.json" <<'PY' || fails=$((fails + 1))
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
card = json.load(open(sys.argv[2]))
h = {(c, l, hd): (s, d, m, ca, lab) for c, l, hd, s, d, m, ca, lab in db.execute(
    "SELECT class, layer, head, score, ablation_delta, ablation_mean, causal, label FROM head_catalog")}
bad = 0
def check(cond, what):
    global bad
    print(("ok   " if cond else "FAIL ") + what)
    bad += not cond
cb = [(x["layer"], x["head"]) for x in card["classes"]["bracket"]]
cc = [(x["layer"], x["head"]) for x in card["classes"]["bracket_close"]]
check(cb == [(2, 3)] and cc == [(2, 1)], "the card: bracket %s, bracket_close %s" % (cb, cc))
b23, b21 = h[("bracket", 2, 3)], h[("bracket", 2, 1)]
check(b23[4] == 1 and b23[3] == 1, "bracket labels 2.3 on the built-in suite, causal 1 (%.3f vs mean %.3f)" % (b23[1], b23[2]))
check(b21[3] == 0 and b21[1] < 0.1 * b23[1], "2.1's ablation does not raise the closer loss: %.3f, causal 0" % b21[1])
best = max((k for k in h if k[0] == "bracket_close"), key=lambda k: h[k][0])
check(best == ("bracket_close", 2, 1), "2.1 is the best bracket_close head on the built-in suite (%.3f)" % h[best][0])
sys.exit(1 if bad else 0)
PY
fi
finish
