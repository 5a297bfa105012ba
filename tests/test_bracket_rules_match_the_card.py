"""test_bracket_rules_match_the_card — the C bracket target rules (probes/probe.c, run by
`andrea dump` on token-id items WITHOUT targets) give exactly the targets of the bundled card's
items, which tools/fixture_card.py (Python, its own stack matcher) derived: `bracket` (every
position inside a pair -> the innermost unclosed opener) and `bracket_close` (closer -> opener).
Two independent implementations, one answer (docs/probes.md)."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import BIN, FAILED, check  # noqa: E402

SRC = os.environ["ANDREA_SRC"]
stem = os.path.join(SRC, "models", "andrea-bundled")
if not os.path.exists(stem + ".bin") or not os.path.exists(stem + ".probes.jsonl"):
    print("SKIP: the bundled model or its probe items are absent")
    sys.exit(77)
try:
    import h5py  # noqa: E402
except ImportError:
    print("SKIP: python3-h5py missing")
    sys.exit(77)

items = [json.loads(line) for line in open(stem + ".probes.jsonl") if line.strip()]
items = [it for it in items if it["suite"] in ("bracket", "bracket_close")]
check(len(items) == 48, "24 bracket and 24 bracket_close items in the card (got %d)" % len(items))
with tempfile.TemporaryDirectory() as tmp:
    probes = os.path.join(tmp, "b.jsonl")
    with open(probes, "w") as f:
        for it in items:
            f.write(json.dumps({"suite": it["suite"], "tokens": it["tokens"]}) + "\n")  # no targets
    out = os.path.join(tmp, "b.h5")
    r = subprocess.run([BIN, "dump", stem + ".bin", "--probes", probes, "--out", out, "--device", "cpu", "--quiet",
                        "--contrib", "none"], capture_output=True, text=True)
    check(r.returncode == 0, "andrea dump: %s" % r.stderr.strip())
    if r.returncode == 0:
        with h5py.File(out, "r") as h:
            for suite in ("bracket", "bracket_close"):
                got = {}
                for seq, q, k in h[suite]["targets"][:]:
                    got.setdefault(int(seq), []).append([int(q), [int(k)]])
                mine = [it for it in items if it["suite"] == suite]
                same = sum(got.get(i, []) == it["targets"] for i, it in enumerate(mine))
                n = sum(len(it["targets"]) for it in mine)
                print("%s: %d of %d items identical (%d targets)" % (suite, same, len(mine), n))
                check(same == len(mine), "%s: C targets equal the card's on every item" % suite)
sys.exit(1 if FAILED else 0)
