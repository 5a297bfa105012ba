#!/usr/bin/env python3
"""bench_gpu_dump.py — end to end: forward + every attention map as fp16 in an HDF5 file on disk.

Usage: bench_gpu_dump.py ANDREA_BIN MODEL_DIR WORKDIR [STREAM_BIN]
(ANDREA_BIN "-" skips `andrea dump`; STREAM_BIN = bench_gpu_dump_stream, the streaming pipeline of
kernels/cuda_engine.h writing the same attention dataset, timed the same way.)
Side by side, same random ANDREA-120M weights (MODEL_DIR, written by bench_gpu_forward), same
token ids: (a) `andrea dump MODEL --probes FILE.jsonl --device cuda --maps fp16 --contrib none`
and (b) the pipeline a user writes today: HF GPT2Model (eager, fp32) forward with
output_attentions=True, torch.stack(attentions).half().cpu(), h5py create_dataset [n, L, H, T, T]
(chunks of one map, as andrea writes) filled batch by batch. Workloads: 512 sequences of T=128
(batches of 64) and 64 of T=1024 (batches of 8). Wall-clock of the whole job, file closed; each
output file is removed after it is timed (disk space). Prints the table last.
"""
import json
import os
import subprocess
import sys
import time

import h5py
import torch
from transformers import GPT2Model


def hf_pipeline(model, ids, B, path):
    n, T = ids.shape
    t0 = time.perf_counter()
    with h5py.File(path, "w") as f:
        ds = None
        with torch.no_grad():
            for b0 in range(0, n, B):
                out = model(ids[b0:b0 + B].cuda(), output_attentions=True)
                maps = torch.stack(out.attentions).half().cpu()  # [L, B, H, T, T]
                arr = maps.permute(1, 0, 2, 3, 4).numpy()
                if ds is None:
                    ds = f.create_dataset("attention", shape=(n,) + arr.shape[1:], dtype="f2",
                                          chunks=(1, 1, 1, T, T))
                ds[b0:b0 + B] = arr
    return time.perf_counter() - t0


def main():
    andrea, model_dir, work = sys.argv[1], sys.argv[2], sys.argv[3]
    stream = {}
    if len(sys.argv) > 4:
        os.makedirs(work, exist_ok=True)
        r = subprocess.run([sys.argv[4], model_dir, work], capture_output=True, text=True)
        print(r.stdout.strip(), r.stderr.strip()[:300], flush=True)
        for line in r.stdout.splitlines():  # "stream n=512 T=128 B=64: 1.23 s, ..."
            if line.startswith("stream n="):
                T = int(line.split("T=")[1].split()[0])
                stream[T] = float(line.split(": ")[1].split(" s")[0])
    os.makedirs(work, exist_ok=True)
    model = GPT2Model.from_pretrained(model_dir, attn_implementation="eager", dtype=torch.float32).cuda().eval()
    g = torch.Generator().manual_seed(0)
    rows = []
    for n, T, B in ((512, 128, 64), (64, 1024, 8)):
        ids = torch.randint(0, 50257, (n, T), generator=g)
        probes = os.path.join(work, f"probes_{T}.jsonl")
        with open(probes, "w") as f:
            for row in ids.tolist():
                f.write(json.dumps({"suite": "prev_token", "tokens": row}) + "\n")
        gb = n * 12 * 12 * T * T * 2 / 1e9
        # warm the HF path once (CUDA context, cuBLAS handles) on one batch, not timed
        with torch.no_grad():
            model(ids[:B].cuda(), output_attentions=True)
        torch.cuda.synchronize()
        out_a = os.path.join(work, f"andrea_{T}.h5")
        t0 = time.perf_counter()
        r = subprocess.run(["true"]) if andrea == "-" else subprocess.run([andrea, "dump", model_dir, "--probes", probes, "--out", out_a, "--device", "cuda",
                            "--maps", "fp16", "--contrib", "none", "--batch", str(B), "--quiet"],
                           capture_output=True, text=True)
        ta = time.perf_counter() - t0
        if andrea == "-":
            ta = float("nan")
        elif r.returncode != 0:
            print("andrea dump failed:", r.stderr.strip()[:500])
            ta = float("nan")
        size_a = os.path.getsize(out_a) / 1e9 if os.path.exists(out_a) else 0
        if os.path.exists(out_a):
            os.remove(out_a)
        out_h = os.path.join(work, f"hf_{T}.h5")
        th = hf_pipeline(model, ids, B, out_h)
        size_h = os.path.getsize(out_h) / 1e9
        os.remove(out_h)
        rows.append((n, T, B, gb, ta, th, size_a, size_h, stream.get(T, float("nan"))))
        print(f"n={n} T={T}: andrea dump {ta:.2f} s ({size_a:.2f} GB file), HF pipeline {th:.2f} s ({size_h:.2f} GB)",
              flush=True)
    print("| sequences | T | batch | maps (fp16) | andrea dump | streaming pipeline | HF + h5py | HF / andrea dump | HF / streaming |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, T, B, gb, ta, th, sa, sh, ts in rows:
        print(f"| {n} | {T} | {B} | {gb:.2f} GB | {ta:.2f} s ({gb / ta:.2f} GB/s) | {ts:.2f} s ({gb / ts:.2f} GB/s) "
              f"| {th:.2f} s ({gb / th:.2f} GB/s) | {th / ta:.2f}x | {th / ts:.2f}x |")


if __name__ == "__main__":
    main()
