"""test_class_fixture_matches_card — the successor and retrieval scores of `andrea analyze` on models
trained to have such heads (tests/data/classes, tools/train_class_fixture.py) equal their cards',
which that script computed in float64 numpy from the weights and its own forward, independently of
the C code: every head's successor share (from the weights) and retrieval mass and top1 (on the
card's needle items, given with explicit targets) within 1e-4, and the heads the card's numbers put
over the label rule (docs/scores.md) are the heads andrea labels.
  - class-fixture (ordinals and needles): its three successor heads and no other; no retrieval head
    (the script's docstring says why);
  - retrieval-fixture (needles alone, the loss on the copy): at least one retrieval head, every
    retrieval label one the card's top1 and mass allow, and no successor head (it never saw
    ordinals)."""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import BIN, FAILED, check  # noqa: E402

SRC = os.environ["ANDREA_SRC"]
TOL = 1e-4  # the card's float64 against the engine's float32 forward and fp32 maps (--maps fp32)


def check_fixture(name, want_successor, want_retrieval):
    stem = os.path.join(SRC, "tests", "data", "classes", name)
    card = json.load(open(stem + ".card.json"))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        r = subprocess.run([BIN, "analyze", stem + ".bin", "--probes", stem + ".probes.jsonl,successor", "--out", out,
                            "--maps", "fp32", "--device", "cpu", "--quiet", "--report-maps", "0"],
                           capture_output=True, text=True)
        check(r.returncode == 0, "%s: andrea analyze: %s" % (name, r.stderr.strip()))
        db = sqlite3.connect(os.path.join(out, "catalog.db"))
        rows = {(c, "%d.%d" % (l, h)): (s, e) for c, l, h, s, e in
                db.execute("SELECT class, layer, head, score, extra_value FROM head_scores")}
        labels = {(c, "%d.%d" % (l, h)) for c, l, h in db.execute("SELECT class, layer, head FROM labels")}
    for head, want in card["successor"].items():
        got = rows[("successor", head)][0]
        check(abs(got - want) <= TOL, "%s: successor %s: andrea %.6f, card %.6f" % (name, head, got, want))
    for head in card["retrieval_score"]:
        score, top1 = rows[("retrieval", head)]
        check(abs(score - card["retrieval_score"][head]) <= TOL,
              "%s: retrieval %s mass: andrea %.6f, card %.6f" % (name, head, score, card["retrieval_score"][head]))
        check(abs(top1 - card["retrieval_top1"][head]) <= TOL,
              "%s: retrieval %s top1: andrea %.6f, card %.6f" % (name, head, top1, card["retrieval_top1"][head]))
    # the rules' thresholds decided on the card's numbers (successor: share >= 0.5 and 3x chance;
    # retrieval: top1 >= 0.1 and mass >= 0.1 with the ratio and margin andrea measured itself)
    succ_heads = {h for h, v in card["successor"].items() if v >= 0.5 and v >= 3 * card["successor_chance"]
                  and v - card["successor_chance"] >= 0.15}
    got_succ = {h for c, h in labels if c == "successor"}
    check(got_succ == succ_heads, "%s: successor labels %s, the card's %s" % (name, sorted(got_succ), sorted(succ_heads)))
    check((len(succ_heads) >= 1) == want_successor, "%s: successor heads on the card: %s" % (name, card["successor"]))
    # retrieval: only heads whose card numbers pass top1 and mass can be labelled (ratio and margin
    # need andrea's baseline and control keys)
    ret = {h for h in card["retrieval_top1"] if card["retrieval_top1"][h] >= 0.1 and card["retrieval_score"][h] >= 0.1}
    got_ret = {h for c, h in labels if c == "retrieval"}
    check(got_ret <= ret, "%s: retrieval labels %s within the card's candidates %s" % (name, sorted(got_ret), sorted(ret)))
    check((len(got_ret) >= 1) == want_retrieval, "%s: retrieval labels %s (card top1 %s)" % (name, sorted(got_ret),
                                                                                        card["retrieval_top1"]))
    print("%s: successor labels %s, retrieval labels %s" % (name, sorted(got_succ), sorted(got_ret)))


check_fixture("class-fixture", want_successor=True, want_retrieval=False)
if os.path.exists(os.path.join(SRC, "tests", "data", "classes", "retrieval-fixture.bin")):
    check_fixture("retrieval-fixture", want_successor=False, want_retrieval=True)
else:
    check(False, "tests/data/classes/retrieval-fixture.bin is missing (tools/train_class_fixture.py --task retrieval)")
sys.exit(1 if FAILED else 0)
