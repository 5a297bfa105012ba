#!/usr/bin/env python3
"""bench_gpu_hf.py — the Hugging Face side of bench_gpu_forward, on the SAME random weights.

Usage: bench_gpu_hf.py OUTDIR [--quick]
Loads OUTDIR/model (written by bench_gpu_forward) into transformers' GPT2Model (no LM head: the
maps need none) with eager attention in fp32, and times forward(output_attentions=True) with the
maps left on the GPU, at B=64 T=128 and B=8 T=1024: CUDA events, 3 warm-ups, median of 10.
Rows: PyTorch's default fp32 matmuls, and again with TF32 allowed (andrea's default precision),
so the comparison is fair either way. Then reads OUTDIR/andrea_results.txt and prints the side by
side table with the floor and the speed-ups.
"""
import os
import statistics
import sys

import torch
from transformers import GPT2Model


def set_tf32(on):
    try:
        torch.backends.cuda.matmul.fp32_precision = "tf32" if on else "ieee"
    except Exception:
        torch.backends.cuda.matmul.allow_tf32 = on


def time_forward(model, ids, reps):
    times = []
    with torch.no_grad():
        for r in range(3 + reps):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            out = model(ids, output_attentions=True)
            e1.record()
            torch.cuda.synchronize()
            assert len(out.attentions) == 12
            del out
            if r >= 3:
                times.append(e0.elapsed_time(e1))
    return statistics.median(times)


def main():
    outdir = sys.argv[1]
    reps = 5 if "--quick" in sys.argv else 10
    model = GPT2Model.from_pretrained(os.path.join(outdir, "model"), attn_implementation="eager",
                                      dtype=torch.float32).cuda().eval()
    res = {}
    with open(os.path.join(outdir, "andrea_results.txt")) as f:
        for line in f:
            k, v = line.strip().split("=")
            res[k] = float(v)
    g = torch.Generator().manual_seed(0)
    rows = []
    for B, T in ((64, 128), (8, 1024)):
        ids = torch.randint(0, 50257, (B, T), generator=g).cuda()
        set_tf32(False)
        hf32 = time_forward(model, ids, reps)
        set_tf32(True)
        hftf = time_forward(model, ids, reps)
        set_tf32(False)
        a = res[f"andrea_B{B}_T{T}_mode1_ms"]
        fl = res[f"floor_B{B}_T{T}_mode1_ms"]
        a16 = res[f"andrea_B{B}_T{T}_mode2_ms"]
        a0 = res[f"andrea_B{B}_T{T}_mode0_ms"]
        rows.append((B, T, a0, a, a16, fl, hf32, hftf))
    print(f"ceilings: TF32 {res['tf32_tflops']:.1f} TFLOP/s, copy {res['copy_gbs']:.0f} GB/s")
    print("| B | T | andrea no maps | andrea fp32 maps | andrea fp16 maps | floor (fp32 maps) | andrea/floor | HF eager fp32 | HF eager TF32 | HF fp32 / andrea | HF TF32 / andrea |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for B, T, a0, a, a16, fl, h32, htf in rows:
        print(f"| {B} | {T} | {a0:.2f} ms | {a:.2f} ms | {a16:.2f} ms | {fl:.2f} ms | {a / fl:.2f}x | {h32:.2f} ms | {htf:.2f} ms | {h32 / a:.1f}x | {htf / a:.1f}x |")


if __name__ == "__main__":
    main()
