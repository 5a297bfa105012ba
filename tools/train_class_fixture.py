#!/usr/bin/env python3
"""train_class_fixture.py — a small byte-level model trained to have successor and retrieval heads,
and its card: those heads' scores computed here, independently of the C code (issue 41).

Why: the successor and retrieval detectors (docs/scores.md, "Classes from recent papers") need a
trained model that has such heads, and numbers from another implementation to compare with:
tests/test_class_fixture_matches_card.py runs `andrea analyze` on the model with the card's probe
items and checks every head's score against the card (<= 1e-4) and the labels.

Data (each batch): half ordinal runs with filler, half needle-in-a-haystack copying.
  - ordinal runs: BOS, then runs of one kind (digits, a-z, A-Z) from a random start, each item
    followed by 1-3 filler bytes from "#%&*+=~^" ("d#e%%f&g"): after the filler the next item is the
    successor of the last one, so a head that attends back to it and maps it to its successor
    (a successor head, Gould et al. 2024) pays;
  - needles: BOS, random lowercase haystack, a needle of 8 distinct digits/capitals at a random
    depth, more haystack, the needle again: copying it back from far needs retrieval heads
    (Wu et al. 2024).
Shape: 2 layers x 4 heads, d_model 128, 256 positions, vocab 257 (BOS 256), fp32 (~1.9 MB).
What it gives (tests/data/classes, 6000 steps on one H100, 86 s): three successor heads (0.0, 0.1,
0.2: shares 0.81-0.86, chance 0.048) and no retrieval head (every head's top1 on the needle items is
0: the needle is 8 of up to 256 positions, too little of the loss for two layers to learn to copy
it back in 6000 steps). A variant with 3 layers, a third of periodic random bytes as induction food
and 8000 steps (tried on an H200) lost the successor heads and gave one head of top1 0.10 at a
mass under 0.1: a fixture with both classes is still to be made.

Card (independent of andrea's C code; numpy in float64 from the exported .bin):
  - successor per head: the share of ordinal pairs of the kinds a byte-level tokenizer keeps from
    probes/data/ordinals.txt (digits, lowercase, uppercase; 59 pairs) whose successor is the first
    maximum among the kind's tokens of row t of the effective OV circuit
        e_t = W_E[t] (+ MLP0(LN2_0(W_E[t])) above layer 0), centred, times ln1w, W_V^h W_O^h,
        centred, times lnfw, W_U^T (docs/scores.md: LayerNorm divisions and biases left out);
  - retrieval per head, on the card's needle items (written as a probe file with explicit targets):
    score = mean attention mass on the targets, top1 = share of queries whose first-max key is the
    target, from a float64 forward (this file's own numpy forward, GPT-2 exactly).
--task retrieval: the needles alone, the loss on the needle's second copy only (every other
position weighs 0), so that the copy, not the haystack, is what the model learns: a fixture for
the retrieval detector (tests/data/classes/retrieval-fixture.*), whose successor shares are those
of a model that never saw ordinals (the random-data control of that class).
Outputs (--out DIR): class-fixture.{bin,probes.jsonl,card.json} (retrieval-fixture.* with --task
retrieval).
Failure contract: bad arguments end with a one-line message, exit 1.
"""
import argparse
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from train_fixtures import BOS, GPT, VOCAB, export_bin  # noqa: E402

SHAPE = dict(n_layer=2, n_head=4, n_embd=128, max_t=256, vp=257, dtype="fp32")
FILLER = b"#%&*+=~^"
KINDS = [b"0123456789", b"abcdefghijklmnopqrstuvwxyz", b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
NEEDLE_POOL = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
NEEDLE = 8


def ordinal_window(rng, t):
    out = [BOS]
    while len(out) < t:
        kind = KINDS[rng.randrange(len(KINDS))]
        i = rng.randrange(len(kind) - 2)
        for c in kind[i:i + rng.randint(3, len(kind) - i)]:
            out.append(c)
            out.extend(rng.choice(FILLER) for _ in range(rng.randint(1, 3)))
        out.append(32)
    return out[:t]


def needle_window(rng, t):
    needle = rng.sample(NEEDLE_POOL, NEEDLE)
    hay = [rng.randrange(97, 123) for _ in range(t - 1 - 2 * NEEDLE)]
    d = rng.randrange(len(hay) + 1)
    return [BOS] + hay[:d] + needle + hay[d:] + needle, d + 1


def batch(rng, b, t, device, task):
    """Inputs, next tokens and the loss weight of each position: task both (the mixed data, every
    position weighed), or retrieval (needles only, the loss on the needle's second copy alone)."""
    rows, weight = [], torch.zeros(b, t)
    for i in range(b):
        if task == "both" and i % 2 == 0:
            rows.append(ordinal_window(rng, t + 1))
            weight[i] = 1
        else:
            n = rng.randint(2 * NEEDLE + 24, t + 1)
            rows.append((needle_window(rng, n)[0] + [32] * (t + 1))[:t + 1])
            if task == "both":
                weight[i] = 1
            else:  # position q predicts token q + 1: the copy's tokens n - NEEDLE .. n - 1
                weight[i, n - NEEDLE - 1:n - 1] = 1
    s = torch.tensor(rows, dtype=torch.long, device=device)
    return s[:, :-1], s[:, 1:], weight.to(device)


def train(a):
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    torch.backends.cuda.matmul.allow_tf32 = False
    model = GPT(**SHAPE).to(a.device)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.01)
    t0, log = time.time(), []
    for step in range(1, a.steps + 1):
        lr = a.lr * min(1.0, step / 200) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / a.steps)))
        for g in opt.param_groups:
            g["lr"] = lr
        x, y, w = batch(rng, a.batch, SHAPE["max_t"], a.device, a.task)
        logits, _ = model(x)
        each = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="none")
        loss = (each * w.reshape(-1)).sum() / w.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 500 == 0:
            log.append((step, round(float(loss), 4)))
            print("train_class_fixture: step %d loss %.4f %.0fs" % (step, float(loss), time.time() - t0),
                  file=sys.stderr, flush=True)
    return model, log, time.time() - t0


# ---------------------------------------------------------------- the card, in float64 numpy

def params(model):
    b = model.blocks
    g = lambda t: t.detach().cpu().double().numpy()  # noqa: E731
    return dict(wte=g(model.wte), wpe=g(model.wpe), lnfw=g(model.lnf.weight), lnfb=g(model.lnf.bias),
                blocks=[dict(ln1w=g(x.ln1.weight), ln1b=g(x.ln1.bias), qkvw=g(x.qkv.weight), qkvb=g(x.qkv.bias),
                             projw=g(x.proj.weight), projb=g(x.proj.bias), ln2w=g(x.ln2.weight), ln2b=g(x.ln2.bias),
                             fcw=g(x.fc.weight), fcb=g(x.fc.bias), fcprojw=g(x.fcproj.weight),
                             fcprojb=g(x.fcproj.bias)) for x in b])


def layernorm(x, w, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * w + b


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def successor_shares(p):
    C, H = p["wte"].shape[1], SHAPE["n_head"]
    hd = C // H
    W_E, W_U, b0 = p["wte"][:VOCAB], p["wte"][:VOCAB], p["blocks"][0]
    eff = W_E + gelu(layernorm(W_E, b0["ln2w"], b0["ln2b"]) @ b0["fcw"].T + b0["fcb"]) @ b0["fcprojw"].T + b0["fcprojb"]
    out, pairs, chance = [], 0, 0.0
    for k in KINDS:
        pairs += len(k) - 1
        chance += (len(k) - 1) / len(k)
    for l in range(SHAPE["n_layer"]):
        bl = p["blocks"][l]
        e = (W_E if l == 0 else eff)
        e = e - e.mean(1, keepdims=True)
        for h in range(H):
            wv = bl["qkvw"][2 * C + h * hd:2 * C + (h + 1) * hd]  # [hd, C] rows of V
            wo = bl["projw"][:, h * hd:(h + 1) * hd]               # [C, hd]
            v = (e * bl["ln1w"]) @ wv.T @ wo.T                      # [V, C]
            v = (v - v.mean(1, keepdims=True)) * p["lnfw"]
            hits = 0
            for k in KINDS:
                ids = list(k)
                rows = v[ids] @ W_U[ids].T                          # [n, n]: among the kind
                for i in range(len(ids) - 1):
                    hits += int(np.argmax(rows[i]) == i + 1)        # np.argmax: the first maximum
            out.append(hits / pairs)
    return out, chance / pairs


def attention_maps(p, tokens):
    """Every layer's [H, T, T] softmax of one sequence, float64."""
    C, H = p["wte"].shape[1], SHAPE["n_head"]
    hd, T = C // H, len(tokens)
    x = p["wte"][tokens] + p["wpe"][:T]
    mask = np.tril(np.ones((T, T), bool))
    maps = []
    for bl in p["blocks"]:
        qkv = layernorm(x, bl["ln1w"], bl["ln1b"]) @ bl["qkvw"].T + bl["qkvb"]
        q, k, v = (qkv[:, i * C:(i + 1) * C].reshape(T, H, hd).transpose(1, 0, 2) for i in range(3))
        s = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
        s = np.where(mask, s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        a = s / s.sum(-1, keepdims=True)
        maps.append(a)
        y = (a @ v).transpose(1, 0, 2).reshape(T, C)
        x = x + y @ bl["projw"].T + bl["projb"]
        x = x + gelu(layernorm(x, bl["ln2w"], bl["ln2b"]) @ bl["fcw"].T + bl["fcb"]) @ bl["fcprojw"].T + bl["fcprojb"]
    return maps


def retrieval_card(p, seed, n_items):
    rng = random.Random(seed)
    items, mass, top1, n = [], None, None, 0
    for i in range(n_items):
        t = SHAPE["max_t"] * (1 + i % 4) // 4
        toks, at = needle_window(rng, t)
        answer = len(toks) - NEEDLE
        targets = [[answer + j - 1, [at + j]] for j in range(NEEDLE)]
        items.append({"suite": "retrieval", "tokens": toks, "targets": targets})
        maps = attention_maps(p, toks)
        a = np.stack([m for m in maps]).reshape(-1, len(toks), len(toks))  # [L*H, T, T]
        if mass is None:
            mass, top1 = np.zeros(a.shape[0]), np.zeros(a.shape[0])
        for q, (key,) in targets:
            mass += a[:, q, key]
            top1 += (a[:, q, :q + 1].argmax(-1) == key)
            n += 1
    return items, (mass / n).tolist(), (top1 / n).tolist()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(HERE), "tests", "data", "classes"))
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--items", type=int, default=16)
    ap.add_argument("--task", choices=("both", "retrieval"), default="both")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args()
    if a.steps < 1 or a.items < 1:
        raise SystemExit("train_class_fixture: --steps and --items must be positive")
    os.makedirs(a.out, exist_ok=True)
    model, log, secs = train(a)
    model = model.cpu().eval()
    stem = "class-fixture" if a.task == "both" else "retrieval-fixture"
    binpath = os.path.join(a.out, stem + ".bin")
    export_bin(model, SHAPE, binpath)
    p = params(model)
    succ, chance = successor_shares(p)
    items, mass, top1 = retrieval_card(p, a.seed + 100, a.items)
    with open(os.path.join(a.out, stem + ".probes.jsonl"), "w") as f:
        for it in items:
            f.write(json.dumps(it, separators=(",", ":")) + "\n")
    heads = ["%d.%d" % (i // SHAPE["n_head"], i % SHAPE["n_head"]) for i in range(len(succ))]
    card = dict(shape=SHAPE, task=a.task, seed=a.seed, steps=a.steps, batch=a.batch, lr=a.lr, device=str(a.device),
                torch=torch.__version__, train_seconds=round(secs, 1), loss=log,
                successor=dict(zip(heads, succ)), successor_chance=chance,
                retrieval_score=dict(zip(heads, mass)), retrieval_top1=dict(zip(heads, top1)),
                recipe=__doc__.split("Data (each batch):")[1].split("Card")[0].strip())
    with open(os.path.join(a.out, stem + ".card.json"), "w") as f:
        json.dump(card, f, indent=1)
    print(json.dumps({k: card[k] for k in ("successor", "retrieval_top1", "train_seconds")}, indent=1))


if __name__ == "__main__":
    main()
