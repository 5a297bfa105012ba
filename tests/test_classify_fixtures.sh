#!/usr/bin/env bash
# test_classify_fixtures.sh — on the fixture models, with the probe files saved beside their cards:
#   - every head's score equals the card's (float64 numpy, tools/fixture_card.py --rescore, which
#     reproduced the training run's PyTorch numbers) within the card's rounding to 4 decimals plus
#     the fp32 rounding of andrea's attention, relative to each probability and the magnitudes of its
#     q and k (a float64 forward here gives them; was 1e-3 + 5e-5 absolute) (dump --maps fp32);
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
  # the causal check is not what this test is about: one item keeps it cheap. The cards were made
  # under the three-condition rule; andrea's entity rule also asks top1 >= 0.75 (docs/scores.md),
  # which the card's second entity head 3.7 (top1 0.52 on these probes) misses: judged here under
  # the card's rule, the fourth condition has its own test (test_entity_label_needs_entity_data).
  echo '{"entity": {"min_extra": 0}}' >"$tmp/card-rule.json"
  "$ANDREA_BIN" classify "$tmp/$name.h5" --db "$tmp/catalog.db" --ablate-items 1 --device cpu --rules "$tmp/card-rule.json" \
      --quiet >"$tmp/$name.out"
  cat "$tmp/$name.out"
  /usr/bin/python3 - "$tmp/catalog.db" "$m.card.json" "$m.bin" "$m.probes.jsonl" <<'PY'
import json, math, os, sqlite3, sys
import numpy as np
sys.path.insert(0, os.path.join(os.environ["ANDREA_SRC"], "tools"))
sys.path.insert(0, os.path.join(os.environ["ANDREA_SRC"], "tests"))
from fixture_card import accumulate, _ln  # noqa: E402
from andrea_bin import read_bin  # noqa: E402
from testlib import FLT_EPSILON, fp32_tol  # noqa: E402
db, card_path, bin_path, probes_path = sys.argv[1:5]
card = json.load(open(card_path))
shape, params = read_bin(bin_path)
L, H, C = shape["n_layer"], shape["n_head"], shape["n_embd"]
hd = C // H


def attn_bounds(toks):
    """[L, H, T, T]: how far andrea's fp32 probability may be from the exact one (issue 39; as
    tests/test_forward_golden.c's attn_worst_ratio). A score of layer l carries the roundings of the
    chain before it (per earlier layer QKV C, a score hd, P.V T, W_O C, the MLP C + 4C; this layer's
    LayerNorm C, QKV C, score hd) relative to |q||k|/sqrt(hd) (it bounds the score's |terms| and how
    far relative errors of q and k move it), plus the softmax's shift by the row's largest score (one
    rounding): ds. p moves by p_j ((1 - p_j) ds_j - sum_{k != j} p_k ds_k); plus the softmax's own
    rounding relative to p_j (an exp, a division, a sum of up to T exponentials) and FLT_MIN.
    q, k and p from a float64 forward (fixture_card.numpy_attention's)."""
    t = len(toks)
    P = {k: v.astype(np.float64) for k, v in params.items()}
    x = P["wte"][toks] + P["wpe"][:t]
    mask = np.tril(np.ones((t, t), dtype=bool))
    out = np.zeros((L, H, t, t))
    for l in range(L):
        a = _ln(x, P["ln1w"][l], P["ln1b"][l])
        qkv = a @ P["qkvw"][l].T + P["qkvb"][l]
        q, k, v = (qkv[:, i * C:(i + 1) * C].reshape(t, H, hd).transpose(1, 0, 2) for i in range(3))
        att = np.where(mask, q @ k.transpose(0, 2, 1) / math.sqrt(hd), -np.inf)
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        mag = np.where(mask, np.linalg.norm(q, axis=-1)[:, :, None] * np.linalg.norm(k, axis=-1)[:, None, :] / math.sqrt(hd), 0)
        n_l = l * (7.0 * C + hd + t) + 2.0 * C + hd
        ds = np.where(mask, fp32_tol(n_l, mag) + FLT_EPSILON * (mag + mag.max(-1, keepdims=True)), 0)
        pds = (att * ds).sum(-1, keepdims=True)
        out[l] = np.where(mask, att * ((1 - att) * ds + pds - att * ds) + fp32_tol(t, att) + np.finfo(np.float32).tiny, 0)
        y = (att @ v).transpose(1, 0, 2).reshape(t, C)
        x = x + y @ P["attprojw"][l].T + P["attprojb"][l]
        mm = _ln(x, P["ln2w"][l], P["ln2b"][l]) @ P["fcw"][l].T + P["fcb"][l]
        mm = 0.5 * mm * (1 + np.tanh(math.sqrt(2 / math.pi) * (mm + 0.044715 * mm ** 3)))
        x = x + mm @ P["fcprojw"][l].T + P["fcprojb"][l]
    return out


# a score is a mean over the suite's (query, target keys) pairs of the probabilities at the keys
# (fixture_card.accumulate): its error at most the same mean of their bounds, plus the mean's own
# rounding (a sum of n_pairs terms, fp32 at worst) relative to the score
items = [json.loads(line) for line in open(probes_path) if line.strip()]
bounds = accumulate(items, attn_bounds, L, H)
worst = beyond = 0.0
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
            # the card rounds to 4 decimals (half a unit: 5e-5) the float64 score andrea's is within
            # the fp32 rounding of
            tol = 5e-5 + bounds[suite]["score"][l, h] + fp32_tol(bounds[suite]["n_pairs"], abs(want) + 5e-5)
            if got is not None:  # the whole bound, and its fp32 part beyond the card's rounding
                worst = max(worst, abs(got - want) / tol)
                beyond = max(beyond, max(0.0, abs(got - want) - 5e-5) / (tol - 5e-5))
            if got is None or abs(got - want) > tol:
                print("FAIL: %s %s %d.%d score %s, card %.4f (bound %.3g)" % (card["name"], suite, l, h, got, want, tol)); bad += 1
    for hd in card["classes"].get(suite, []):
        if rows[(hd["layer"], hd["head"])][1] != 1:
            print("FAIL: %s %s %d.%d listed in the card, not labelled (score %.4f)" % (
                card["name"], suite, hd["layer"], hd["head"], rows[(hd["layer"], hd["head"])][0])); bad += 1
print("%s: %d scores compared, %d problems; worst |andrea - card| %.3g of its bound (the card's rounding, 5e-5, "
      "is most of it: beyond that %.3g of the fp32 part)" % (card["name"], n, bad, worst, beyond))
sys.exit(1 if bad else 0)
PY
done
