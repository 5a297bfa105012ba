#!/usr/bin/env python3
"""make_causal_reference.py — an independent computation of the causal check, for its test.

Job: on the tiny fixture model (tests/data/tiny_hf, the weights of models/andrea-tiny.bin as
Hugging Face transformers' GPT2LMHeadModel, run in float64 on the CPU: no TF32, no fused kernel),
compute what andrea's causal check measures (docs/scores.md, "Causal evidence") for one user suite
of 8 items with a labelled set of two heads, for each ablation method (mean, resample, zero):
  - the clean loss: mean next-token loss over the items' loss positions (a target's query p with
    p + 1 < length: predicting token p + 1);
  - each head's delta: the loss with that head's output o_h (the input of attn.c_proj, columns
    h*hd..) replaced, minus the clean loss, pooled over all positions;
  - the labelled set removed together, 20 random sets of as many other heads, and each labelled
    head's leave-one-in (the set's loss minus the loss with only the others removed);
  - each labelled head's direct effect: its output's change (replacement minus clean, through its
    slice of c_proj's weight) added to the clean residual before ln_f, ln_f's scale frozen at the
    clean forward's, the loss of the logits that gives minus the clean loss by the same path.
Replacement (the method): zero: zeros; mean: at each position the mean of o_h over the OTHER items
that reach that position (zeros where none does); resample: the outputs of item perm[b] (a cyclic
permutation drawn by Sattolo's shuffle), the mean where that item is shorter.
The random draws (splitmix64, rejection sampling, the suite's FNV-1a seed) are re-implemented
here from their definitions, so the reference uses the sets andrea draws without calling andrea.
Each item runs alone (batch 1, no padding): nothing of andrea's batching is shared.
The forward: transformers' GPT2LMHeadModel on tests/data/tiny_hf where transformers is installed
(the GPU machine); else (--own, or no transformers) this repository's own PyTorch GPT-2
(tools/train_fixtures.py, checked against transformers to 1e-4 by tools/make_golden.py) on
models/andrea-tiny.bin, both in float64; the file records which.
Writes tests/data/causal_reference.json (items, targets, labelled heads, seed, and per method the
values above); tests/test_causal_matches_pytorch.c compares andrea's CPU (and CUDA) check with it.
Needs: torch and numpy (Debian: python3-torch), transformers for the first forward.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
M64 = (1 << 64) - 1
N_ITEMS, CONTROL_SETS, SEED, SUITE = 8, 20, 0, "mine"
LABELLED = [1, 6]  # heads 0.1 and 1.2 (layer * n_head + head)


def splitmix(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def below(state, n):
    limit = M64 - M64 % n
    while True:
        state, x = splitmix(state)
        if x < limit:
            return state, x % n


def suite_seed(seed, name):
    h = 0xCBF29CE484222325
    for b in name.encode():
        h = ((h ^ b) * 0x100000001B3) & M64
    return seed ^ h


def control_sets(nh, labelled, n):
    state = suite_seed(SEED, SUITE) ^ 0x636F6E74726F6C73  # "controls"
    sets = []
    for _ in range(n):
        taken, s = set(labelled), []
        for _ in labelled:
            while True:
                state, h = below(state, nh)
                if h not in taken:
                    break
            taken.add(h)
            s.append(h)
        sets.append(s)
    return sets


def sattolo(B):
    state, perm = SEED ^ 0x726573616D706C65, list(range(B))  # "resample"
    for i in range(B - 1, 0, -1):
        state, j = below(state, i)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def make_items():
    """8 items of 40..54 byte tokens: a random prefix repeated once (so heads have something to
    do), targets at every 5th query from 6 on (key: the token one period back)."""
    rng = np.random.default_rng(20261205)
    items = []
    for i in range(N_ITEMS):
        n = 40 + 2 * i
        half = rng.integers(1, 256, size=n // 2 + 1).tolist()
        toks = [256] + (half + half)[: n - 1]
        targets = [[q, max(0, q - n // 2)] for q in range(6, n - 1, 5)]
        items.append({"tokens": toks, "targets": targets})
    return items


class Transformers:
    """GPT2LMHeadModel: c_proj is a Conv1D ([in, out])."""
    def __init__(self, path):
        from transformers import GPT2LMHeadModel
        import transformers
        self.model = GPT2LMHeadModel.from_pretrained(path, attn_implementation="eager").double().eval()
        c = self.model.config
        self.L, self.H, self.C = c.n_layer, c.n_head, c.n_embd
        self.projs = [blk.attn.c_proj for blk in self.model.transformer.h]
        self.lnf, self.wte = self.model.transformer.ln_f, self.model.transformer.wte.weight
        self.about = "float64 transformers %s, torch %s, tests/data/tiny_hf" % (transformers.__version__, torch.__version__)

    def logits(self, x):
        return self.model(input_ids=x).logits[0]

    def w_o(self, l, hh, hd):  # [hd, C]: the head's slice of W_O
        return self.projs[l].weight.detach().numpy()[hh * hd:(hh + 1) * hd, :]


class Own:
    """tools/train_fixtures.py's GPT: proj is an nn.Linear ([out, in])."""
    def __init__(self, path):
        sys.path.insert(0, os.path.join(ROOT, "tools"))
        import train_fixtures as tf
        self.model, shape = tf.model_from_bin(path)
        self.model = self.model.double()
        self.L, self.H, self.C = shape["n_layer"], shape["n_head"], shape["n_embd"]
        self.projs = [blk.proj for blk in self.model.blocks]
        self.lnf, self.wte = self.model.lnf, self.model.wte
        self.about = ("float64 tools/train_fixtures.py GPT (torch %s; its attention softmax runs in float32), "
                      "models/andrea-tiny.bin" % torch.__version__)

    def logits(self, x):
        return self.model(x)[0][0]

    def w_o(self, l, hh, hd):
        return self.projs[l].weight.detach().numpy()[:, hh * hd:(hh + 1) * hd].T


def run(model, toks, replace=None):
    """Token losses [T-1] of one item; replace: {layer: [(head, values [T, hd] float64)]} or None.
    Also returns each layer's W_O input o [T, C] ("final": the residual before ln_f)."""
    hd = model.C // model.H
    saved, hooks = {}, []
    for l, proj in enumerate(model.projs):
        def pre(mod, args, l=l):
            x = args[0].clone()
            saved[l] = x[0].detach().clone()
            for h, vals in (replace or {}).get(l, []):
                x[0, :, h * hd:(h + 1) * hd] = vals
            return (x,)
        hooks.append(proj.register_forward_pre_hook(pre))

    def final(mod, args):
        saved["final"] = args[0][0].detach().clone()
    hooks.append(model.lnf.register_forward_pre_hook(final))
    try:
        x = torch.tensor([toks], dtype=torch.long)
        logits = model.logits(x)
    finally:
        for hk in hooks:
            hk.remove()
    lp = torch.log_softmax(logits, dim=-1)
    loss = -lp[torch.arange(len(toks) - 1), torch.tensor(toks[1:])]
    return loss.numpy(), {l: o.numpy() for l, o in saved.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hf", default=os.path.join(ROOT, "tests", "data", "tiny_hf"))
    ap.add_argument("--bin", default=os.path.join(ROOT, "models", "andrea-tiny.bin"))
    ap.add_argument("--own", action="store_true", help="the repository's own PyTorch GPT-2, not transformers")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "causal_reference.json"))
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_grad_enabled(False)
    try:
        if args.own:
            raise ImportError("--own")
        model = Transformers(args.hf)
    except ImportError as e:
        print("make_causal_reference: %s: the repository's own GPT-2 instead" % e, file=sys.stderr)
        model = Own(args.bin)
    L, H, C = model.L, model.H, model.C
    hd, NH = C // H, L * H
    items = make_items()
    use = []
    for it in items:
        n = len(it["tokens"])
        use.append(sorted({q for q, _ in it["targets"] if q + 1 < n}))
    clean_loss, clean_o = [], []
    for it in items:
        loss, o = run(model, it["tokens"])
        clean_loss.append(loss)
        clean_o.append(o)
    lengths = [len(it["tokens"]) for it in items]
    B, T = len(items), max(lengths)

    def loo_mean(l, b, t):
        others = [clean_o[j][l][t] for j in range(B) if j != b and lengths[j] > t]
        return np.mean(others, axis=0) if others else np.zeros(C)

    perm = sattolo(B)

    def values(method, l, b):
        n = lengths[b]
        v = np.zeros((n, C))
        if method == "zero":
            return v
        for t in range(n):
            if method == "resample" and lengths[perm[b]] > t:
                v[t] = clean_o[perm[b]][l][t]
            else:
                v[t] = loo_mean(l, b, t)
        return v

    def sums(method, heads):
        """Per item: (sum of ablated losses at its positions, positions)."""
        out = []
        for b, it in enumerate(items):
            rep = {}
            for h in heads:
                l, hh = divmod(h, H)
                rep.setdefault(l, []).append((hh, torch.from_numpy(values(method, l, b)[:, hh * hd:(hh + 1) * hd])))
            loss, _ = run(model, it["tokens"], rep)
            out.append(float(sum(loss[p] for p in use[b])))
        return np.array(out)

    npos = np.array([len(u) for u in use], dtype=float)
    clean = np.array([float(sum(clean_loss[b][p] for p in use[b])) for b in range(B)])
    controls = control_sets(NH, LABELLED, CONTROL_SETS)
    wu = model.wte.detach().numpy()
    gamma, beta, eps = model.lnf.weight.detach().numpy(), model.lnf.bias.detach().numpy(), model.lnf.eps

    def direct(method, h):
        """Direct effect of head h: pooled (loss with its change carried straight to the logits,
        ln_f's sigma frozen) - (clean loss by the same path)."""
        l, hh = divmod(h, H)
        w_o = model.w_o(l, hh, hd)
        rise = 0.0
        for b, it in enumerate(items):
            v = values(method, l, b)
            for p in use[b]:
                x = clean_o[b]["final"][p]
                sigma = np.sqrt(x.var() + eps)
                y = gamma * (x - x.mean()) / sigma + beta
                d = (v[p, hh * hd:(hh + 1) * hd] - clean_o[b][l][p, hh * hd:(hh + 1) * hd]) @ w_o
                y2 = y + gamma * (d - d.mean()) / sigma
                t = it["tokens"][p + 1]
                loss = lambda yy: float(np.log(np.exp((yy @ wu.T) - (yy @ wu.T).max()).sum()) + (yy @ wu.T).max() - (yy @ wu.T)[t])
                rise += loss(y2) - loss(y)
        return rise / npos.sum()

    result = {}
    for method in ("mean", "resample", "zero"):
        eff = lambda s: float((s - clean).sum() / npos.sum())
        deltas = [eff(sums(method, [h])) for h in range(NH)]
        group = sums(method, LABELLED)
        ctrl = [eff(sums(method, s)) for s in controls]
        restore = {}
        for h in LABELLED:
            rest = [x for x in LABELLED if x != h]
            restore["%d" % h] = float((group - sums(method, rest)).sum() / npos.sum())
        result[method] = {"clean_loss": float(clean.sum() / npos.sum()), "delta": deltas, "group": eff(group),
                          "controls": ctrl, "control_median": float(np.median(ctrl)),
                          "control_max": float(np.max(ctrl)), "restore": restore,
                          "direct": {"%d" % h: direct(method, h) for h in LABELLED}}
        print("%-8s clean %.6f group %.6f controls median %.6f max %.6f restore %s" %
              (method, result[method]["clean_loss"], result[method]["group"], result[method]["control_median"],
               result[method]["control_max"], restore))
    doc = {"about": "tools/make_causal_reference.py: " + model.about,
           "model": "models/andrea-tiny.bin (tests/data/tiny_hf: the same weights)", "suite": SUITE, "seed": SEED,
           "labelled": LABELLED, "items": items, "perm": perm, "control_sets": controls, "methods": result}
    with open(args.out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(args.out + ".tmp", args.out)
    print("wrote", args.out)


if __name__ == "__main__":
    sys.exit(main())
