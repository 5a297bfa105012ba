#!/usr/bin/python3
"""test_circuits_numpy — `andrea circuits` agrees with an independent numpy computation of every
score (docs/scores.md, "Circuit scores from the weights") within the rounding of andrea's route,
relative to the score (issue 39; testlib's fp32_tol, tests/check.h): composition and prev_pos come
from fp32 products, the baseline is float64 on both sides, copying is a share of counts (equal).

numpy reads the .bin (tools/andrea_bin.py) and computes in float64, the direct way: the full
C x C matrices W_QK = W_Q W_K^T and W_OV = W_V W_O (ln1 gains folded into W_Q/W_K/W_V, W_O rows
centred), the three composition products and their Frobenius norms; the baseline from the same
seeded splitmix64 + Box-Muller draws; the copying score from the eigenvalues of the full
V x V matrix W_E W_OV diag(ln_f) W_E^T (its hd largest in magnitude, of which those above 1e-6
of the largest count: a rank-deficient head's zero eigenvalues have no sign); prev_pos from a causal
softmax over the LayerNorm-normalised position embeddings. andrea computes the composition from
Gram matrices, the copying eigenvalues on an hd x hd matrix: two different routes.
Models: a random tiny checkpoint (random LayerNorm gains, so the fold matters), the same with the
W_V of head 0.1 of rank 1 (its one nonzero eigenvalue decides its copying score: the rounding
signs of its zero eigenvalues moved it by 0.25), a one-head model (its centred W_O has rank C-1:
one zero eigenvalue), and the trained tests/data/series/dyck-step08000.bin."""
import math
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.environ.get("ANDREA_SRC", "."), "tests"))
sys.path.insert(0, os.path.join(os.environ.get("ANDREA_SRC", "."), "tools"))
from testlib import BIN, FAILED, check, fp32_tol, fp64_tol  # noqa: E402

try:
    import numpy as np
except ImportError:
    print("SKIP: /usr/bin/python3 has no numpy (Debian package python3-numpy)")
    sys.exit(77)
import andrea_bin  # noqa: E402
from tiny_ckpt import write_bin  # noqa: E402

SRC = os.environ["ANDREA_SRC"]
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
    copying, prev, prev_tol = {}, {}, {}
    Tw = min(T, 128)
    P = w["wpe"][:Tw]
    P = (P - P.mean(axis=1, keepdims=True)) / np.sqrt(P.var(axis=1, keepdims=True) + 1e-5)
    for (l, h), f in heads.items():
        M = WE @ f["OV"] @ np.diag(w["lnfw"]) @ WE.T
        ev = np.linalg.eigvals(M)
        ev = ev[np.argsort(-np.abs(ev))][:hd]
        ev = ev[np.abs(ev) > 1e-6 * np.abs(ev).max()] if np.abs(ev).max() > 0 else ev[:0]
        copying[(l, h)] = float(np.mean(ev.real > 0)) if len(ev) else 0.0
        Q, K = P @ f["Wq"], P @ f["Wk"]
        logits = Q @ K.T / math.sqrt(hd)
        logits[np.triu_indices(Tw, 1)] = -np.inf
        A = np.exp(logits - logits.max(axis=1, keepdims=True))
        A /= A.sum(axis=1, keepdims=True)
        prev[(l, h)] = float(np.mean([A[i, i - 1] for i in range(1, Tw)]))
        # andrea's route: P and the folded, rescaled weights rounded to float (a rounding each),
        # q and k an fp32 C-term product (an sgemm), the scores and softmax in double. A score moves
        # by fp32_tol(C + 3, |q_i||k_j|/sqrt(hd)) (Cauchy-Schwarz: relative errors of q, k and the
        # sum of |terms|), a probability by p_j ((1 - p_j) ds_j + sum_{k != j} p_k ds_k), the mean of
        # the previous-token masses by the mean of those; plus the double softmax's own rounding.
        ds = fp32_tol(C + 3, np.outer(np.linalg.norm(Q, axis=1), np.linalg.norm(K, axis=1)) / math.sqrt(hd))
        ds[np.triu_indices(Tw, 1)] = 0
        pds = (A * ds).sum(axis=1)
        prev_tol[(l, h)] = float(np.mean([A[i, i - 1] * ((1 - A[i, i - 1]) * ds[i, i - 1] + pds[i] - A[i, i - 1] * ds[i, i - 1])
                                          + fp64_tol(i + 1, A[i, i - 1]) for i in range(1, Tw)]))
    return comp, baseline, copying, prev, prev_tol, (C, hd)


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
    comp_ref, base_ref, cop_ref, prev_ref, prev_tol, (C, hd) = reference(path)
    comp, base, w = andrea_scores(path, db)
    check(set(comp) == set(comp_ref), "%s: the pairs stored are every (src, dst) with src layer < dst layer, x Q/K/V" % name)

    # composition: ||M||^2 = <S_s, D_d>, a C(C+1)/2-term inner product of Gram matrices (each a C-term
    # and two hd-term float products), which cancels to ~hd/C of its sum of |terms|: fp32_tol over
    # those reductions relative to the score, times C/hd (tests/test_circuits_unit.c composition_tol)
    def comp_tol(v):  # plus the catalog's storage in millionths (docs/catalog.md): 5e-7
        return fp32_tol(C + 2 * hd + C * (C + 1) / 2, abs(v)) * C / hd + 5e-7
    worst = max((abs(comp[k] - v) / comp_tol(v), abs(comp[k] - v), k) for k, v in comp_ref.items() if k in comp)
    print("%s: %d composition scores, worst |andrea - numpy| = %.2e (%.3g of its bound) at %s" % (
        name, len(comp_ref), worst[1], worst[0], worst[2]))
    check(worst[0] <= 1, "%s: composition within its rounding (worst %.2e, %.3g x its bound, at %s)" % (
        name, worst[1], worst[0], worst[2]))
    check(len(base) == 1, "%s: one baseline for every row" % name)
    b = base.pop()
    # the baseline: float64 on both sides from the same normals, by two routes (Grams and traces
    # here C-term, hd-term and hd^2-term products; numpy the direct C x C products): fp64_tol over
    # those reductions relative to the baseline, times C/hd for the cancellation as above
    btol = fp64_tol(2 * C + 2 * hd + hd * hd, abs(base_ref)) * C / hd
    print("%s: baseline andrea %.6f numpy %.6f (|diff| %.3g of its bound)" % (name, b, base_ref, abs(b - base_ref) / btol))
    check(abs(b - base_ref) <= btol, "%s: baseline %.17g vs numpy %.17g" % (name, b, base_ref))
    wp = 0.0
    for k in cop_ref:
        c, p = w[k]
        # copying is a share of counts (positive eigenvalues / nonzero ones), one correctly rounded
        # division on both sides: the same counts give the same double, other counts differ by >= 1/hd
        check(c == cop_ref[k], "%s: copying L%d H%d %.17g vs numpy %.17g" % (name, k[0], k[1], c, cop_ref[k]))
        wp = max(wp, abs(p - prev_ref[k]) / prev_tol[k])
        check(abs(p - prev_ref[k]) <= prev_tol[k], "%s: prev_pos L%d H%d %.9f vs numpy %.9f (bound %.3g)" % (
            name, k[0], k[1], p, prev_ref[k], prev_tol[k]))
    print("%s: copying and prev_pos of %d heads compared; prev_pos worst %.3g of its bound" % (name, len(cop_ref), wp))


def rank1_value_head(path, maxT, V, L, C, hd, layer, head):
    """Makes W_V of (layer, head) rank 1 in a tiny .bin: its hd value rows all equal the first."""
    w = np.fromfile(path, dtype="<f4", offset=1024)
    at = V * C + maxT * C + 2 * L * C + layer * 3 * C * C  # qkvw [L, 3C, C]: the layer's rows
    rows = w[at:at + 3 * C * C].reshape(3 * C, C)
    first = 2 * C + head * hd
    rows[first:first + hd] = rows[first]
    w[at:at + 3 * C * C] = rows.ravel()
    with open(path, "r+b") as f:
        f.seek(1024)
        f.write(w.astype("<f4").tobytes())


def top0_lists_every_pair(path, L, H):
    """`circuits --top 0` prints every (src, dst, kind) pair, those without a score (NULL: a norm
    is 0) last, as the catalog stores them."""
    out = subprocess.run([BIN, "circuits", path, "--top", "0", "--format", "csv"], capture_output=True, text=True)
    rows = [r for r in out.stdout.strip().splitlines()[1:]]
    pairs = sum(H * H * (L - 1 - l) for l in range(L))
    nulls = [i for i, r in enumerate(rows) if r.split(",")[5].strip() in ("", "NULL")]
    check(out.returncode == 0 and len(rows) == 3 * pairs, "--top 0 printed %d rows of %d pairs" % (len(rows), 3 * pairs))
    check(nulls and nulls == list(range(len(rows) - len(nulls), len(rows))), "the pairs without a score come last")
    print("%s: --top 0 lists %d rows, %d without a score, last" % (os.path.basename(path), len(rows), len(nulls)))


def main():
    with tempfile.TemporaryDirectory() as t:
        tiny = os.path.join(t, "tiny.bin")
        write_bin(tiny, maxT=40, V=61, L=3, H=4, C=32, seed=7, scale=0.3)
        compare(tiny, os.path.join(t, "tiny.db"))
        low = os.path.join(t, "low.bin")
        write_bin(low, maxT=40, V=61, L=3, H=4, C=32, seed=7, scale=0.3)
        rank1_value_head(low, 40, 61, 3, 32, 8, 0, 1)
        compare(low, os.path.join(t, "low.db"))
        zero = os.path.join(t, "zero.bin")
        write_bin(zero, maxT=40, V=61, L=3, H=4, C=32, seed=7, scale=0.3)
        w = np.fromfile(zero, dtype="<f4", offset=1024)
        at = 61 * 32 + 40 * 32 + 2 * 3 * 32 + 2 * 32 * 32  # layer 0's V rows in qkvw, head 0.0's first
        w[at:at + 8 * 32] = 0
        with open(zero, "r+b") as f:
            f.seek(1024)
            f.write(w.astype("<f4").tobytes())
        top0_lists_every_pair(zero, 3, 4)
        one = os.path.join(t, "one.bin")
        write_bin(one, maxT=40, V=61, L=2, H=1, C=16, seed=11, scale=0.3)
        compare(one, os.path.join(t, "one.db"))
        dyck = os.path.join(SRC, "tests/data/series/dyck-step08000.bin")
        if os.path.exists(dyck):
            compare(dyck, os.path.join(t, "dyck.db"))
        else:
            print("note: %s absent, compared on the random model only" % dyck)
    print("%d failed" % len(FAILED))
    sys.exit(1 if FAILED else 0)


main()
