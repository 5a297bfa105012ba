#!/usr/bin/python3
"""test_circuits_numpy — `andrea circuits` agrees with an independent numpy computation of every
score (docs/scores.md, "Circuit scores from the weights") within 1e-4.

numpy reads the .bin (tools/andrea_bin.py) and computes in float64, the direct way: the full
C x C matrices W_QK = W_Q W_K^T and W_OV = W_V W_O (ln1 gains folded into W_Q/W_K/W_V, W_O rows
centred), the three composition products and their Frobenius norms; the baseline from the same
seeded splitmix64 + Box-Muller draws; the copying score from the eigenvalues of the full
V x V matrix W_E W_OV diag(ln_f) W_E^T (its hd largest in magnitude); prev_pos from a causal
softmax over the LayerNorm-normalised position embeddings. andrea computes the composition from
Gram matrices, the copying eigenvalues on an hd x hd matrix: two different routes.
Models: a random tiny checkpoint (random LayerNorm gains, so the fold matters) and the trained
tests/data/series/dyck-step08000.bin."""
import math
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.environ.get("ANDREA_SRC", "."), "tests"))
sys.path.insert(0, os.path.join(os.environ.get("ANDREA_SRC", "."), "tools"))
from testlib import BIN, FAILED, check  # noqa: E402

try:
    import numpy as np
except ImportError:
    print("SKIP: /usr/bin/python3 has no numpy (Debian package python3-numpy)")
    sys.exit(77)
import andrea_bin  # noqa: E402
from tiny_ckpt import write_bin  # noqa: E402

SRC = os.environ["ANDREA_SRC"]
TOL = 1e-4
MASK = (1 << 64) - 1


def splitmix_normals(state, n):
    """n normals as analyzer/circuits.c draws them: pairs (cos, sin) of Box-Muller on 53-bit
    uniforms in (0, 1] from splitmix64. Returns (array, new state)."""
    out = np.empty(n)
    i = 0

    def nxt(s):
        s = (s + 0x9E3779B97F4A7C15) & MASK
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return s, z ^ (z >> 31)

    while i < n:
        state, a = nxt(state)
        state, b = nxt(state)
        u1 = ((a >> 11) + 1.0) * (1.0 / 9007199254740992.0)
        u2 = ((b >> 11) + 1.0) * (1.0 / 9007199254740992.0)
        rad, th = math.sqrt(-2.0 * math.log(u1)), 6.283185307179586 * u2
        out[i] = rad * math.cos(th)
        if i + 1 < n:
            out[i + 1] = rad * math.sin(th)
        i += 2
    return out, state


def fro(x):
    return float(np.linalg.norm(x, "fro"))


def reference(path):
    shape, w = andrea_bin.read_bin(path)
    L, H, C, V, T = shape["n_layer"], shape["n_head"], shape["n_embd"], shape["vocab"], shape["max_t"]
    hd = C // H
    w = {k: v.astype(np.float64) for k, v in w.items()}
    heads = {}
    for l in range(L):
        g = w["ln1w"][l]
        qkv = w["qkvw"][l]
        for h in range(H):
            r = slice(h * hd, (h + 1) * hd)
            Wq = (qkv[0:C][r] * g).T                 # [C, hd]
            Wk = (qkv[C:2 * C][r] * g).T
            Wv = (qkv[2 * C:3 * C][r] * g).T
            Wo = w["attprojw"][l][:, r].T            # [hd, C]
            Wo = Wo - Wo.mean(axis=1, keepdims=True)  # every reader is a LayerNorm: centred writes
            heads[(l, h)] = dict(Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, QK=Wq @ Wk.T, OV=Wv @ Wo)
    comp = {}
    for (l1, h1), s in heads.items():
        for (l2, h2), d in heads.items():
            if l1 >= l2:
                continue
            comp[(l1, h1, l2, h2, "Q")] = fro(s["OV"] @ d["QK"]) / (fro(s["OV"]) * fro(d["QK"]))
            comp[(l1, h1, l2, h2, "K")] = fro(d["QK"] @ s["OV"].T) / (fro(s["OV"]) * fro(d["QK"]))
            comp[(l1, h1, l2, h2, "V")] = fro(s["OV"] @ d["OV"]) / (fro(s["OV"]) * fro(d["OV"]))
    # baseline: 16 samples, seed "andrea", U1, V1, U2, V2 per sample
    state, acc = 0x616E64726561, 0.0
    for _ in range(16):
        U1, state = splitmix_normals(state, C * hd)
        V1, state = splitmix_normals(state, hd * C)
        U2, state = splitmix_normals(state, C * hd)
        V2, state = splitmix_normals(state, hd * C)
        A = U1.reshape(C, hd) @ V1.reshape(hd, C)
        B = U2.reshape(C, hd) @ V2.reshape(hd, C)
        acc += fro(A @ B) / (fro(A) * fro(B))
    baseline = acc / 16
    # copying: eigenvalues of the V x V matrix, the hd largest in magnitude
    WE = w["wte"][:V]
    copying, prev = {}, {}
    Tw = min(T, 128)
    P = w["wpe"][:Tw]
    P = (P - P.mean(axis=1, keepdims=True)) / np.sqrt(P.var(axis=1, keepdims=True) + 1e-5)
    for (l, h), f in heads.items():
        M = WE @ f["OV"] @ np.diag(w["lnfw"]) @ WE.T
        ev = np.linalg.eigvals(M)
        ev = ev[np.argsort(-np.abs(ev))][:hd]
        copying[(l, h)] = float(np.mean(ev.real > 0))
        logits = (P @ f["Wq"]) @ (P @ f["Wk"]).T / math.sqrt(hd)
        logits[np.triu_indices(Tw, 1)] = -np.inf
        A = np.exp(logits - logits.max(axis=1, keepdims=True))
        A /= A.sum(axis=1, keepdims=True)
        prev[(l, h)] = float(np.mean([A[i, i - 1] for i in range(1, Tw)]))
    return comp, baseline, copying, prev


def andrea_scores(path, db):
    r = subprocess.run([BIN, "circuits", path, "--db", db, "--top", "1"], capture_output=True, text=True)
    check(r.returncode == 0, "andrea circuits %s: %s" % (path, r.stderr))
    con = sqlite3.connect(db)
    comp, base = {}, set()
    for sl, sh, dl, dh, k, sc, b in con.execute(
            "SELECT src_layer, src_head, dst_layer, dst_head, kind, score, baseline FROM head_composition"):
        comp[(sl, sh, dl, dh, k)] = sc
        base.add(b)
    w = {(l, h): (c, p) for l, h, c, p in con.execute("SELECT layer, head, copying, prev_pos FROM head_weights")}
    con.close()
    return comp, base, w


def compare(path, db):
    name = os.path.basename(path)
    comp_ref, base_ref, cop_ref, prev_ref = reference(path)
    comp, base, w = andrea_scores(path, db)
    check(set(comp) == set(comp_ref), "%s: the pairs stored are every (src, dst) with src layer < dst layer, x Q/K/V" % name)
    worst = max((abs(comp[k] - v), k) for k, v in comp_ref.items() if k in comp)
    print("%s: %d composition scores, worst |andrea - numpy| = %.2e at %s" % (name, len(comp_ref), worst[0], worst[1]))
    check(worst[0] <= TOL, "%s: composition within %g (worst %.2e at %s)" % (name, TOL, worst[0], worst[1]))
    check(len(base) == 1, "%s: one baseline for every row" % name)
    b = base.pop()
    print("%s: baseline andrea %.6f numpy %.6f" % (name, b, base_ref))
    check(abs(b - base_ref) <= TOL, "%s: baseline %.6f vs numpy %.6f" % (name, b, base_ref))
    for k in cop_ref:
        c, p = w[k]
        check(abs(c - cop_ref[k]) <= TOL, "%s: copying L%d H%d %.4f vs numpy %.4f" % (name, k[0], k[1], c, cop_ref[k]))
        check(abs(p - prev_ref[k]) <= TOL, "%s: prev_pos L%d H%d %.6f vs numpy %.6f" % (name, k[0], k[1], p, prev_ref[k]))
    print("%s: copying and prev_pos of %d heads compared" % (name, len(cop_ref)))


def main():
    with tempfile.TemporaryDirectory() as t:
        tiny = os.path.join(t, "tiny.bin")
        write_bin(tiny, maxT=40, V=61, L=3, H=4, C=32, seed=7, scale=0.3)
        compare(tiny, os.path.join(t, "tiny.db"))
        dyck = os.path.join(SRC, "tests/data/series/dyck-step08000.bin")
        if os.path.exists(dyck):
            compare(dyck, os.path.join(t, "dyck.db"))
        else:
            print("note: %s absent, compared on the random model only" % dyck)
    print("%d failed" % len(FAILED))
    sys.exit(1 if FAILED else 0)


main()
