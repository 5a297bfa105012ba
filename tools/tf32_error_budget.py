#!/usr/bin/env python3
"""tf32_error_budget.py CKPT.bin PROBES.jsonl|--random — where the CUDA engine's TF32 error in the attention
maps comes from, without a GPU: the forward in float32 numpy, with the inputs of chosen matmuls
rounded to TF32 (10-bit mantissa, round to nearest, as cvt.rna.tf32.f32 and cuBLAS's TF32 mode
do), against the same forward in float64. Variants: no rounding; the projection matmuls (QKV,
W_O, MLP) rounded; attention's Q.K^T and P.V rounded; both (the engine's default); and each
matmul alone, everything but the two that make the logits (QKV and Q.K^T), and split TF32
(3xTF32: each input as a TF32 high part plus a TF32 remainder, three products) everywhere.
--random: 8 sequences of 64 uniform token ids (the inputs test_cuda_forward gives the fixtures)
instead of the card's probe items."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from andrea_bin import read_bin  # noqa: E402


def tf32(x):
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return ((b + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def forward(tokens, L, H, C, p, dt, proj_tf32, attn_tf32):
    """proj_tf32 / attn_tf32: True, False, or a set naming which matmuls round their inputs:
    {"qkv", "wo", "mlp"} / {"qk", "pv"}."""
    def pick(flag, name):
        on = flag is True or (isinstance(flag, set) and name in flag)
        return (lambda a: tf32(a)) if on else (lambda a: a)
    P = {k: v.astype(dt) for k, v in p.items()}
    T, hd = len(tokens), C // H
    x = P["wte"][tokens] + P["wpe"][:T]
    maps = np.zeros((L, H, T, T))
    mask = np.triu(np.ones((T, T), dtype=bool), 1)

    def ln(x, w, b):
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * w + b

    def x3(a, b):  # split TF32 (3xTF32): a = ah + al, b = bh + bl; ah.bh + ah.bl + al.bh
        ah, bh = tf32(a), tf32(b)
        al, bl = tf32(a.astype(np.float32) - ah), tf32(b.astype(np.float32) - bh)
        return (ah.astype(dt) @ bh.astype(dt) + ah.astype(dt) @ bl.astype(dt) + al.astype(dt) @ bh.astype(dt))

    def mm(a, w, name):  # a @ w.T with TF32-rounded inputs when asked, accumulated in dt
        if proj_tf32 == "3x":
            return x3(a, w.T).astype(dt)
        r = pick(proj_tf32, name)
        return (r(a).astype(dt) @ r(w).astype(dt).T).astype(dt)

    rqk, rpv = pick(attn_tf32, "qk"), pick(attn_tf32, "pv")
    if attn_tf32 == "3x":
        qk_mm, pv_mm = (lambda q, k: x3(q, k.T)), (lambda a, v: x3(a, v))
    else:
        qk_mm = lambda q, k: rqk(q).astype(dt) @ rqk(k).astype(dt).T  # noqa: E731
        pv_mm = lambda a, v: rpv(a).astype(dt) @ rpv(v).astype(dt)  # noqa: E731
    for l in range(L):
        qkv = mm(ln(x, P["ln1w"][l], P["ln1b"][l]), P["qkvw"][l], "qkv") + P["qkvb"][l]
        out = np.zeros((T, C), dt)
        for h in range(H):
            sl = slice(h * hd, (h + 1) * hd)
            q, k, v = qkv[:, sl], qkv[:, C:][:, sl], qkv[:, 2 * C:][:, sl]
            s = qk_mm(q, k) / dt(np.sqrt(hd))
            s[mask] = -np.inf
            e = np.exp(s - s.max(-1, keepdims=True))
            a = e / e.sum(-1, keepdims=True)
            maps[l, h] = a
            out[:, sl] = pv_mm(a, v)
        x = x + mm(out, P["attprojw"][l], "wo") + P["attprojb"][l]
        hh = ln(x, P["ln2w"][l], P["ln2b"][l])
        f = mm(hh, P["fcw"][l], "mlp") + P["fcb"][l]
        f = 0.5 * f * (1 + np.tanh(np.sqrt(2 / np.pi) * (f + 0.044715 * f ** 3)))
        x = x + mm(f, P["fcprojw"][l], "mlp") + P["fcprojb"][l]
    return maps


def main(ckpt, probes, n_items=40):
    shape, p = read_bin(ckpt)
    L, H, C = shape["n_layer"], shape["n_head"], shape["n_embd"]
    if probes == "--random":  # what test_cuda_forward feeds the fixtures: uniform ids, T = 64
        rng = np.random.default_rng(0)
        items = [rng.integers(0, shape["vocab"], 64).tolist() for _ in range(8)]
    else:
        items = [json.loads(line)["tokens"] for line in open(probes)][:: max(1, sum(1 for _ in open(probes)) // n_items)]
    worst = {}
    for toks in items:
        ref = forward(toks, L, H, C, p, np.float64, False, False)
        for name, pt, at in (("fp32", False, False), ("tf32 projections", True, False),
                             ("tf32 attention", False, True), ("tf32 both", True, True),
                             ("tf32 QKV only", {"qkv"}, False), ("tf32 W_O + MLP only", {"wo", "mlp"}, False),
                             ("tf32 Q.K^T only", False, {"qk"}), ("tf32 P.V only", False, {"pv"}),
                             ("tf32 all but QKV and Q.K^T", {"wo", "mlp"}, {"pv"}),
                             ("tf32 all but QKV", {"wo", "mlp"}, True),
                             ("tf32 all but Q.K^T", True, {"pv"}),
                             ("3xTF32 everywhere", "3x", "3x")):
            m = forward(toks, L, H, C, p, np.float32, pt, at)
            worst[name] = max(worst.get(name, 0.0), float(np.abs(m - ref).max()))
    print(f"{ckpt}: {len(items)} probe items, max |attention - float64| over all heads:")
    for name, w in worst.items():
        print(f"  {name:18s} {w:.2e}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
