#!/usr/bin/python3
"""tiny_ckpt — the random tiny ANDREA .bin (llm.c layout, fp32) that tests and benchmarks make:
the 16 parameter tensors in llm.c order, each filled with N(0, scale^2) draws from numpy's
generator seeded `seed` (drawn tensor by tensor in that order, so a file is reproducible), and
optionally the three LayerNorm gains set to 1.

Python:  from tiny_ckpt import write_bin
Shell:   /usr/bin/python3 tests/tiny_ckpt.py PATH --seed S [--maxT .. --V .. --L .. --H .. --C ..
         --scale X --ln-ones]
"""
import argparse

import numpy as np


def write_bin(path, maxT=64, V=257, L=2, H=2, C=16, seed=0, scale=0.1, ln_ones=False):
    rng = np.random.default_rng(seed)
    sizes = [V * C, maxT * C, L * C, L * C, L * 3 * C * C, L * 3 * C, L * C * C, L * C, L * C, L * C,
             L * 4 * C * C, L * 4 * C, L * C * 4 * C, L * C, C, C]
    header = np.zeros(256, dtype=np.int32)
    header[:8] = [20240326, 3, maxT, V, L, H, C, V]
    with open(path, "wb") as f:
        f.write(header.tobytes())
        for i, n in enumerate(sizes):
            p = (rng.standard_normal(n) * scale).astype("<f4")
            if ln_ones and i in (2, 8, 14):  # ln1w, ln2w, lnfw
                p[:] = 1
            f.write(p.tobytes())


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="write a random tiny ANDREA .bin")
    ap.add_argument("path")
    ap.add_argument("--seed", type=int, default=0)
    for k, v in (("maxT", 64), ("V", 257), ("L", 2), ("H", 2), ("C", 16)):
        ap.add_argument("--" + k, type=int, default=v)
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--ln-ones", action="store_true")
    a = ap.parse_args()
    write_bin(a.path, a.maxT, a.V, a.L, a.H, a.C, a.seed, a.scale, a.ln_ones)
