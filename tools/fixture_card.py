#!/usr/bin/env python3
"""fixture_card.py — the fixture model cards' scoring without torch: target rules, the label rule,
the card's markdown, and a numpy forward that recomputes a card from its saved probe items.

Why: the cards (models/NAME.card.json, NAME.md) are the independent reference the C engine is
tested against (tests/test_classify_fixtures.sh). tools/train_fixtures.py (PyTorch) trains the
fixtures and scores them with these same rules; this module holds the parts that need no torch,
so a card can be recomputed on a machine without it:

    python3 tools/fixture_card.py --rescore models/andrea-bundled

reads NAME.bin (tools/andrea_bin.py), NAME.probes.jsonl and NAME.card.json, re-derives the bracket
targets from each bracket item's bytes (`bracket`: every position inside a pair -> the innermost
unclosed opener; `bracket_close`: each closer -> its opener; docs/probes.md), runs the model in
float64 numpy with explicit softmax attention, recomputes score / baseline / control of every
suite, checks that the suites whose targets did not change reproduce the card's PyTorch numbers
(to 2e-3), and rewrites the three files. Nothing here reads the C engine.
"""
import argparse
import json
import math
import os
import random
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from andrea_bin import read_bin  # noqa: E402

BOS = 256
SUITES = ["prev_token", "induction", "duplicate", "bracket", "bracket_close", "entity", "bos"]
RULE = dict(min_score=0.3, min_ratio=3.0, min_margin=0.2)
OPEN = {40: 41, 91: 93, 123: 125}  # ( [ {  -> their closers
CLOSE = {41, 93, 125}


# ---------------------------------------------------------------- bracket rules (byte tokens)

def bracket_pairs(toks):
    """One stack over the bytes; a closer that does not match the innermost open bracket is
    ignored. Returns (pairs [(open, close)] of matched brackets, unclosed openers)."""
    stack, pairs = [], []
    for i, t in enumerate(toks):
        if t in OPEN:
            stack.append(i)
        elif t in CLOSE and stack and OPEN[toks[stack[-1]]] == t:
            pairs.append((stack.pop(), i))
    return sorted(pairs), stack


def bracket_inside_targets(toks):
    """bracket: each position strictly inside a matched pair -> the opener of the innermost pair
    holding it; a position whose innermost open bracket never closes gets nothing."""
    pairs, unclosed = bracket_pairs(toks)
    spans = [(o, c, True) for o, c in pairs] + [(o, len(toks), False) for o in unclosed]
    out = []
    for q in range(1, len(toks)):
        inner = max((s for s in spans if s[0] < q < s[1]), key=lambda s: s[0], default=None)
        if inner is not None and inner[2]:
            out.append([q, [inner[0]]])
    return out


def bracket_close_targets(toks):
    """bracket_close: each matched closer -> its opener."""
    pairs, _ = bracket_pairs(toks)
    return sorted([c, [o]] for o, c in pairs)


def bracket_not_most_recent(items, suite="bracket_close"):
    """Fraction of a bracket suite's queries whose target opener is not the most recent opener."""
    n = k = 0
    for it in items:
        if it["suite"] != suite:
            continue
        toks = it["tokens"]
        for q, keys in it["targets"]:
            last_open = max(i for i in range(q) if toks[i] in OPEN)
            n += 1
            k += keys[0] != last_open
    return k / max(1, n)


# ---------------------------------------------------------------- statistics and labels

def control_targets(items, seed):
    rng = random.Random(seed)
    out = []
    for it in items:
        tg = []
        for q, keys in it["targets"]:
            pool = [p for p in range(q + 1) if p not in set(keys)]
            if len(pool) < len(keys):
                pool = list(range(q + 1))
            tg.append([q, rng.sample(pool, len(keys))])
        out.append(tg)
    return out


def accumulate(items, attn_of, L, H, seed=7):
    """Per suite: score [L, H], baseline, control [L, H]; attn_of(tokens) -> [L, H, T, T]."""
    ctrl = control_targets(items, seed)
    acc = {}
    for it, ctg in zip(items, ctrl):
        s = acc.setdefault(it["suite"], dict(score=np.zeros((L, H)), control=np.zeros((L, H)), base=0.0, n=0))
        att = attn_of(it["tokens"])
        for (q, keys), (_, ckeys) in zip(it["targets"], ctg):
            s["score"] += att[:, :, q, keys].sum(-1)
            s["control"] += att[:, :, q, ckeys].sum(-1)
            s["base"] += len([k for k in keys if k <= q]) / (q + 1)
            s["n"] += 1
    res = {}
    for suite, s in acc.items():
        n = max(1, s["n"])
        res[suite] = dict(score=s["score"] / n, control=s["control"] / n, baseline=s["base"] / n, n_pairs=s["n"])
    return res


def score_fields(items, res, rnd):
    """The card's fields that come from scoring: per-suite counts, labels, scores, controls,
    baselines, and the random-weight model's best scores and label count (res, rnd: accumulate)."""
    rlab = labels(rnd)
    return dict(
        suites={s: dict(items=sum(1 for it in items if it["suite"] == s), pairs=res[s]["n_pairs"]) for s in SUITES},
        bracket_not_most_recent=bracket_not_most_recent(items, "bracket_close"),
        bracket_inside_not_most_recent=bracket_not_most_recent(items, "bracket"),
        classes=labels(res),
        scores={s: np.round(res[s]["score"], 4).tolist() for s in SUITES},
        controls={s: np.round(res[s]["control"], 4).tolist() for s in SUITES},
        baselines={s: round(res[s]["baseline"], 4) for s in SUITES},
        random_model_max={s: round(float(rnd[s]["score"].max()), 4) for s in SUITES},
        random_model_labelled=sum(len(v) for k, v in rlab.items() if k != "bos"),
    )


def labels(res):
    classes = {}
    for suite in SUITES:
        if suite not in res:
            continue
        r = res[suite]
        heads = []
        L, H = r["score"].shape
        for l in range(L):
            for h in range(H):
                sc, ct, bl = float(r["score"][l, h]), float(r["control"][l, h]), r["baseline"]
                if sc >= RULE["min_score"] and sc >= RULE["min_ratio"] * bl and sc - ct >= RULE["min_margin"]:
                    heads.append(dict(layer=l, head=h, score=round(sc, 4), baseline=round(bl, 4), control=round(ct, 4)))
        heads.sort(key=lambda d: -d["score"])
        classes[suite] = heads
    return classes


# ---------------------------------------------------------------- numpy forward

def _ln(x, w, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * w + b


def numpy_attention(shape, p, toks):
    """Attention probabilities [L, H, T, T] of one sequence, float64, explicit softmax."""
    L, H, C = shape["n_layer"], shape["n_head"], shape["n_embd"]
    hd = C // H
    t = len(toks)
    P = {k: v.astype(np.float64) for k, v in p.items()}
    x = P["wte"][toks] + P["wpe"][:t]  # [T, C]
    mask = np.tril(np.ones((t, t), dtype=bool))
    out = np.zeros((L, H, t, t))
    for l in range(L):
        a = _ln(x, P["ln1w"][l], P["ln1b"][l])
        qkv = a @ P["qkvw"][l].T + P["qkvb"][l]  # [T, 3C]
        q, k, v = (qkv[:, i * C:(i + 1) * C].reshape(t, H, hd).transpose(1, 0, 2) for i in range(3))  # [H, T, hd]
        att = q @ k.transpose(0, 2, 1) / math.sqrt(hd)  # [H, T, T]
        att = np.where(mask, att, -np.inf)
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        out[l] = att
        y = (att @ v).transpose(1, 0, 2).reshape(t, C)
        x = x + y @ P["attprojw"][l].T + P["attprojb"][l]
        m = _ln(x, P["ln2w"][l], P["ln2b"][l]) @ P["fcw"][l].T + P["fcb"][l]
        m = 0.5 * m * (1 + np.tanh(math.sqrt(2 / math.pi) * (m + 0.044715 * m ** 3)))
        x = x + m @ P["fcprojw"][l].T + P["fcprojb"][l]
    return out


def random_params(shape, seed):
    """A fresh init like train_fixtures.GPT's (normal 0.02, projections 0.02/sqrt(2L), zero biases,
    unit LayerNorms) drawn with numpy: the random-weight control where torch is absent."""
    r = np.random.default_rng(seed)
    L, C, T = shape["n_layer"], shape["n_embd"], shape["max_t"]
    sp = 0.02 / math.sqrt(2 * L)
    return dict(wte=r.normal(0, 0.02, (257, C)), wpe=r.normal(0, 0.01, (T, C)), ln1w=np.ones((L, C)),
                ln1b=np.zeros((L, C)), qkvw=r.normal(0, 0.02, (L, 3 * C, C)), qkvb=np.zeros((L, 3 * C)),
                attprojw=r.normal(0, sp, (L, C, C)), attprojb=np.zeros((L, C)), ln2w=np.ones((L, C)),
                ln2b=np.zeros((L, C)), fcw=r.normal(0, 0.02, (L, 4 * C, C)), fcb=np.zeros((L, 4 * C)),
                fcprojw=r.normal(0, sp, (L, C, 4 * C)), fcprojb=np.zeros((L, C)))
def write_card_md(card, path):
    sh = card["shape"]
    tr = card["training"]
    lines = []
    a = lines.append
    a("# %s — fixture model card" % card["name"])
    a("")
    a(card["purpose"])
    a("")
    a("## Shape")
    a("")
    a("| field | value |")
    a("|---|---|")
    a("| file | `models/%s.bin` (%d bytes, sha256 `%s`) |" % (card["name"], card["file_bytes"], card["sha256"]))
    a("| format | ANDREA .bin (llm.c layout), version %d (%s) |" % (sh["version"], "bf16" if sh["version"] == 5 else "fp32"))
    a("| n_layer, n_head, d_model, head_dim | %d, %d, %d, %d |" % (sh["n_layer"], sh["n_head"], sh["n_embd"], sh["n_embd"] // sh["n_head"]))
    a("| max_seq_len | %d |" % sh["max_t"])
    a("| vocab | 257 (bytes 0-255, BOS = 256), padded vocab %d%s |" % (sh["vp"], " (zero rows 257..%d)" % (sh["vp"] - 1) if sh["vp"] > 257 else ""))
    a("| parameters | %d (unpadded) |" % tr["n_params"])
    a("| architecture | GPT-2: pre-LN, LayerNorm eps 1e-5, GELU tanh approximation, attention scale 1/sqrt(head_dim), tied unembedding, biases everywhere |")
    a("")
    a("## How it was made")
    a("")
    a("- Corpus: `python3 tools/build_corpus.py` (seed %s; no downloads). Sections and sha256 in the table below; Debian packages needed: "
      "bible-kjv (its `bible` program), fortunes, libc6-dev and other -dev packages (C headers under /usr/include), python3.N (stdlib sources)." % card["corpus"].get("seed"))
    for k, v in card["corpus"].get("sources", {}).items():
        sec = card["corpus"]["sections"].get(k, {})
        a("  - `%s` (%s bytes, sha256 `%s…`): %s" % (k, sec.get("bytes"), str(sec.get("sha256"))[:16], v))
    a("- Training: `python3 tools/train_fixtures.py --model %s --variant %s` (all of it: `bash tools/fixtures.sh` on a GPU machine)." % (card["name"].replace("andrea-", ""), tr["variant"]))
    a("  Every window starts with BOS (256). Batch mix per step: %s. `ind_rand`: BOS + a random byte string "
      "(0-255 or printable) of period 4..64 repeated to fill the window; `ind_text`: the same with a text chunk as the period."
      % ", ".join("%s %.0f%%" % (k, 100 * v) for k, v in tr["mix"].items()))
    a("- Seed %d, %d steps of batch %d x %d tokens, %s, peak lr %g, %s, %s." % (
        tr["seed"], tr["steps"], tr["batch"], tr["seq_len"], tr["optimizer"], tr["lr"], tr["schedule"], tr["precision"]))
    a("- Final training loss (mean of the last logged steps): %.4f nats/byte. Training time %.1f s on %s (torch %s)." % (
        tr["final_loss"], tr["train_seconds"], tr["device"], tr["torch"]))
    if card.get("selection"):
        a("- %s" % card["selection"])
    a("")
    a("## Heads (computed by tools/train_fixtures.py, independent of the C engine)")
    a("")
    if card.get("rescore_note"):
        a(card["rescore_note"])
        a("")
    a("The exported file was read back with numpy and run in fp32 on the CPU with explicit softmax attention, on the held-out probe items "
      "saved beside this card as `models/%s.probes.jsonl` (docs/probes.md JSON Lines, token ids with BOS = 256 at position 0, explicit targets; "
      "entity items also carry `entities`). Probe seed %d; %s." % (card["name"], card["probe_seed"],
      ", ".join("%s %d items / %d pairs" % (s, card["suites"][s]["items"], card["suites"][s]["pairs"]) for s in card["suites"])))
    a("")
    a("- score(head, suite) = mean over ALL eligible (item, query) pairs pooled across the suite's items of the head's attention mass on that query's target keys;")
    a("- baseline = the same mean under uniform causal attention (|targets| / (q + 1));")
    a("- control = the head's score on shuffled targets: per pair, as many keys drawn (seeded) from [0, q] outside the true targets;")
    a("- label rule: score >= %.1f and score >= %.0f x baseline and score - control >= %.1f. Layers and heads are 0-based." % (
        RULE["min_score"], RULE["min_ratio"], RULE["min_margin"]))
    a("- Targets: prev_token i -> i-1; bos i -> 0 (i >= 1); induction (BOS + r1..rn r1..rn, r without repeats) second-copy i -> i-n+1; "
      "duplicate i -> i-n; bracket: every position inside a matched bracket pair (after the opener, up to and including the token "
      "before its closer) -> the innermost unclosed opener (%.0f%% of them are not the most recent opener); bracket_close (the same "
      "items): each closing bracket -> its matching opener (%.0f%% not the most recent opener); "
      "entity: each position at or after the end of an entity mention, outside mentions, -> every token of the most recent mention."
      % (100 * card.get("bracket_inside_not_most_recent", 0), 100 * card["bracket_not_most_recent"]))
    a("")
    a("| class | heads (layer.head: score / baseline / control) | best head |")
    a("|---|---|---|")
    for s in [s for s in SUITES if s in card["scores"]]:
        hs = card["classes"].get(s, [])
        txt = ", ".join("%d.%d: %.3f / %.3f / %.3f" % (h["layer"], h["head"], h["score"], h["baseline"], h["control"]) for h in hs[:8])
        if len(hs) > 8:
            txt += ", … (%d in all)" % len(hs)
        sc = np.array(card["scores"][s])
        l, h = np.unravel_index(int(np.argmax(sc)), sc.shape)
        a("| %s | %s | %d.%d %.3f (baseline %.3f) |" % (s, txt or "none", l, h, sc[l, h], card["baselines"][s]))
    a("")
    missing = [s for s in card["required"] if not card["classes"].get(s)]
    if missing:
        a("**Not formed:** %s — no head of this model clears the rule for %s; the table above shows the best head anyway." % (
            ", ".join(missing), "it" if len(missing) == 1 else "them"))
        a("")
    a("Random-weight control (same shape, fresh init, seed 1): largest score per suite %s; labelled heads: %d." % (
        ", ".join("%s %.3f" % (s, v) for s, v in card["random_model_max"].items()), card["random_model_labelled"]))
    a("")
    a("Full score grids (rows = layers, columns = heads) are in `models/%s.card.json` (`scores`, `controls`, `baselines`)." % card["name"])
    a("")
    for s in [s for s in SUITES if s in card["scores"]]:
        a("<details><summary>%s scores</summary>" % s)
        a("")
        a("```")
        for row in card["scores"][s]:
            a(" ".join("%.3f" % v for v in row))
        a("```")
        a("</details>")
        a("")
    with open(path + ".tmp-card", "w") as f:
        f.write("\n".join(lines))
    os.replace(path + ".tmp-card", path)



# ---------------------------------------------------------------- rescoring a card without torch

def rebracket(items):
    """The card's bracket items under today's two rules: `bracket` gets the inside rule, and a
    `bracket_close` item with the same tokens gets the closer -> opener rule. Checks that the
    closer rule reproduces the targets the card was made with (when it held old-style ones)."""
    out = []
    for it in items:
        if it["suite"] == "bracket_close":
            continue  # made anew below from the bracket item's tokens
        if it["suite"] != "bracket":
            out.append(it)
            continue
        toks = it["tokens"]
        close = bracket_close_targets(toks)
        inside = bracket_inside_targets(toks)
        if it["targets"] not in (close, inside):
            raise SystemExit("fixture_card: a bracket item's saved targets are neither rule's")
        out.append(dict(suite="bracket", tokens=toks, targets=inside))
        out.append(dict(suite="bracket_close", tokens=toks, targets=close))
    order = {s: i for i, s in enumerate(SUITES)}
    out.sort(key=lambda it: order[it["suite"]])  # stable: items keep their order within a suite
    return out


def rescore(stem):
    with open(stem + ".card.json") as f:
        card = json.load(f)
    with open(stem + ".probes.jsonl") as f:
        items = [json.loads(line) for line in f if line.strip()]
    items = rebracket(items)
    shape, p = read_bin(stem + ".bin")
    L, H = shape["n_layer"], shape["n_head"]
    res = accumulate(items, lambda toks: numpy_attention(shape, p, toks), L, H)
    # The suites whose targets did not change must reproduce the card's (PyTorch) numbers: scores
    # everywhere; controls only before bracket (the control draws follow the items in order).
    worst = 0.0
    for s in ("prev_token", "induction", "duplicate", "entity", "bos"):
        d = np.abs(res[s]["score"] - np.array(card["scores"][s])).max()
        if s in ("prev_token", "induction", "duplicate"):
            d = max(d, np.abs(res[s]["control"] - np.array(card["controls"][s])).max())
        worst = max(worst, float(d))
    if worst > 2e-3:
        raise SystemExit("fixture_card: numpy scores differ from the card's PyTorch ones by %.2e" % worst)
    rnd = accumulate(items, lambda toks: numpy_attention(shape, random_params(shape, 1), toks), L, H)
    card.update(score_fields(items, res, rnd))
    card["rescore_note"] = (
        "Scores recomputed with `python3 tools/fixture_card.py --rescore models/%s` (numpy, float64, no torch) when the "
        "bracket class changed to the inside-bracket rule and the old rule became `bracket_close`: the same held-out items, "
        "bracket targets re-derived from each item's bytes. The suites whose targets did not change reproduce the PyTorch "
        "numbers of the training run to %.1e (largest difference). The random-weight control is a numpy init of the same "
        "distribution (seed 1), not the torch one." % (card["name"], worst))
    with open(stem + ".probes.jsonl.tmp", "w") as f:
        for it in items:
            f.write(json.dumps(it, separators=(",", ":")) + "\n")
    os.replace(stem + ".probes.jsonl.tmp", stem + ".probes.jsonl")
    with open(stem + ".card.json.tmp", "w") as f:
        json.dump(card, f, indent=1)
    os.replace(stem + ".card.json.tmp", stem + ".card.json")
    write_card_md(card, stem + ".md")
    for s in SUITES:
        print("%s %-13s baseline %.3f best %.3f labelled %s" % (card["name"], s, card["baselines"][s],
              np.max(res[s]["score"]), " ".join("%d.%d=%.3f(c%.3f)" % (h["layer"], h["head"], h["score"], h["control"])
                                                for h in card["classes"][s]) or "none"))
    print("largest |numpy - torch| on unchanged suites: %.2e" % worst)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rescore", metavar="STEM", required=True, help="models/NAME (NAME.bin, .card.json, .probes.jsonl)")
    rescore(ap.parse_args().rescore)


if __name__ == "__main__":
    main()
