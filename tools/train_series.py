#!/usr/bin/env python3
"""train_series.py — train one small byte-level ANDREA model on synthetic data only and save a
series of checkpoints along the way (tests/data/series/dyck-stepNNNNN.bin).

Why: the series, circuits, diff and bracket-by-function tests need one training run whose heads
form while it trains: an induction head (fed by a previous-token head in the layer below) and a
head that attends from inside brackets to the innermost unclosed opener (what predicting the next
closer needs). No corpus or Debian package is read: every window is generated here.

Data (fractions of each batch): 45 % BOS + a random byte string of period n repeated (induction
food), 35 % nested-bracket lines with code-like filler (build_corpus.bracket_seq), 20 % code-like
lines with nested brackets (build_corpus.code_bracket_seq).
Shape: 2 layers x 4 heads, d_model 64, max 128 tokens, vocab 257 (BOS = 256), fp32 (~0.5 MB each).
Output: --out DIR/dyck-stepNNNNN.bin for every step in --save, plus train-log.json (loss per step,
seed, recipe). Runs on a GPU in about a minute; on a CPU it works, slowly.
"""
import argparse
import json
import math
import os
import random
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import build_corpus  # noqa: E402
from train_fixtures import BOS, GPT, export_bin  # noqa: E402

SHAPE = dict(n_layer=2, n_head=4, n_embd=64, max_t=128, vp=257, dtype="fp32")


def bracket_window(rng, t):
    """t bytes of bracket lines (newline-separated), as a list of ints."""
    out = []
    while len(out) < t:
        if rng.random() < 0.64:
            s, _ = build_corpus.bracket_seq(rng, rng.randint(30, 120), tagged=rng.random() < 0.3)
        else:
            s = build_corpus.code_bracket_seq(rng, rng.randint(40, 120))
            s = s[0] if isinstance(s, tuple) else s
        out.extend(s.encode("utf-8", "replace") + b"\n")
    return out[:t]


def batch(rng, gen, b, t, device):
    n_ind = int(round(b * 0.45))
    rows = []
    for _ in range(b - n_ind):
        rows.append(torch.tensor(bracket_window(rng, t), dtype=torch.long))
    s = torch.stack(rows) if rows else torch.empty(0, t, dtype=torch.long)
    nmax = t // 2
    n = torch.randint(4, nmax + 1, (n_ind, 1), generator=gen)
    src = torch.randint(0, 256, (n_ind, nmax), generator=gen)
    j = torch.arange(t)[None, :]
    ind = src.gather(1, j % n)
    s = torch.cat([ind, s]).to(device)
    x = torch.cat([torch.full((b, 1), BOS, dtype=torch.long, device=device), s[:, :-1]], 1)
    return x, s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(HERE), "tests", "data", "series"))
    ap.add_argument("--steps", type=int, default=8000)
    ap.add_argument("--save", default="30,100,300,1000,3000,8000")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args()
    save = sorted({int(s) for s in a.save.split(",")})
    if not save or save[-1] > a.steps or save[0] < 0:
        raise SystemExit("train_series: --save steps must lie in 0..--steps")
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    gen = torch.Generator().manual_seed(a.seed + 1)
    torch.backends.cuda.matmul.allow_tf32 = False
    model = GPT(**SHAPE).to(a.device)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.01)
    warm = 200
    log = []
    t0 = time.time()
    if 0 in save:
        export_bin(model, SHAPE, os.path.join(a.out, "dyck-step%05d.bin" % 0))
    for step in range(1, a.steps + 1):
        lr = a.lr * min(1.0, step / warm) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / a.steps)))
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = batch(rng, gen, a.batch, SHAPE["max_t"], a.device)
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 0 or step in save:
            log.append((step, float(loss)))
        if step in save:
            export_bin(model, SHAPE, os.path.join(a.out, "dyck-step%05d.bin" % step))
            print("train_series: step %d loss %.4f %.0fs" % (step, float(loss), time.time() - t0), file=sys.stderr, flush=True)
    with open(os.path.join(a.out, "train-log.json"), "w") as f:
        json.dump(dict(shape=SHAPE, seed=a.seed, steps=a.steps, batch=a.batch, lr=a.lr, save=save,
                       mix="45% periodic random bytes, 35% bracket_seq, 20% code_bracket_seq",
                       device=str(a.device), torch=torch.__version__, seconds=round(time.time() - t0, 1),
                       loss=log), f, indent=1)


if __name__ == "__main__":
    main()
