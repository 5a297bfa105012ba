#!/usr/bin/env python3
"""bench_gpu_dump.py — end to end: forward + every attention map as fp16 in an HDF5 file on disk.

Usage: bench_gpu_dump.py ANDREA_BIN MODEL_DIR WORKDIR [STREAM_BIN]
       bench_gpu_dump.py --hf-job MODEL_DIR PROBES.jsonl B OUT.h5   (one whole HF job, timed by the parent)
(ANDREA_BIN "-" skips `andrea dump`; STREAM_BIN = bench_gpu_dump_stream, the streaming pipeline of
kernels/cuda_engine.h writing the same attention dataset, timed the same way.)
Side by side, same random ANDREA-120M weights (MODEL_DIR, written by bench_gpu_forward), same
token ids: (a) `andrea dump MODEL --probes FILE.jsonl --device cuda --maps fp16 --contrib none`
and (b) the pipeline a user writes today: HF GPT2Model (eager, fp32) forward with
output_attentions=True, torch.stack(attentions).half().cpu(), h5py create_dataset [n, L, H, T, T]
(chunks of one map, as andrea writes) filled batch by batch. Workloads: 512 sequences of T=128
(batches of 64) and 64 of T=1024 (batches of 8). Each output file is removed after it is timed
(disk space). Two views, both printed:
  whole job: process start to file closed on both sides: `andrea dump` (load, CUDA start, dump,
    seal) vs a Python process that imports torch/transformers, loads the model, runs the pipeline;
  steady state: andrea's own dump time (its summary line: engine open to sealed file) vs the HF
    loop with the model already loaded and warmed up.
Also: `andrea dump` of 8 sequences (its fixed cost), and the same dump with `--gzip 1` (the maps
deflated on every core: the same values in fewer bytes). Prints the table last.
Each timed job starts after os.sync(): without it a job inherits the writeback of the previous
job's 2-19 GB (measured on the H200 machine: the same T=1024 andrea dump took 16.1 s right after
other writes and 8.0-11.1 s alone), which made the comparison depend on the order of the jobs.
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


def hf_job(model_dir, probes, B, path):
    """What a user's script does today, start to finish (the parent times this process)."""
    with open(probes) as f:
        ids = torch.tensor([json.loads(line)["tokens"] for line in f])
    model = GPT2Model.from_pretrained(model_dir, attn_implementation="eager", dtype=torch.float32).cuda().eval()
    hf_pipeline(model, ids, B, path)


def main():
    if sys.argv[1] == "--hf-job":
        hf_job(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return
    andrea, model_dir, work = sys.argv[1], sys.argv[2], sys.argv[3]
    stream = {}
    # BENCH_ONLY_T=1024: that workload alone, without the streaming run, the gzip run and the HF
    # loop (short leases)
    only = int(os.environ.get("BENCH_ONLY_T", "0"))
    if only not in (0, 128, 1024):
        sys.exit(f"bench_gpu_dump.py: BENCH_ONLY_T is {only}: 128 or 1024")
    if len(sys.argv) > 4 and not only:
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
        if only and T != only:
            continue
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
        with open(probes) as f:  # the first 8 sequences: the CLI's fixed cost
            few = os.path.join(work, f"probes_{T}_8.jsonl")
            with open(few, "w") as out8:
                out8.writelines(line for _, line in zip(range(8), f))
        out_a = os.path.join(work, f"andrea_{T}.h5")
        ta = tphase = tfixed = float("nan")
        size_a = 0
        if andrea != "-":
            for which, src in (("fixed", few), ("full", probes)):
                os.sync()  # the previous job's dirty pages written back first: each job starts alike
                t0 = time.perf_counter()
                r = subprocess.run([andrea, "dump", model_dir, "--probes", src, "--out", out_a, "--device", "cuda",
                                    "--maps", "fp16", "--contrib", "none", "--batch", str(B), "--timing"],
                                   capture_output=True, text=True)
                t = time.perf_counter() - t0
                if r.returncode != 0:
                    print("andrea dump failed:", r.stderr.strip()[-500:])
                    t = float("nan")
                if which == "fixed":
                    tfixed = t
                    # the full run below must create its file, not replace this one: renaming
                    # over an existing file makes ext4 write the new file back before the rename
                    # returns (auto_da_alloc): 6.7 s of a 15.0 s T=1024 dump on the H200 machine
                    if os.path.exists(out_a):
                        os.remove(out_a)
                    print(f"  andrea dump 8 sequences T={T}: " + " ".join(l for l in r.stderr.splitlines() if "time:" in l))
                    continue
                ta = t
                print(f"  andrea dump n={n} T={T}: " + " ".join(l for l in r.stderr.splitlines() if "time:" in l))
                for line in r.stderr.splitlines():  # "andrea dump: wrote ...: ... in 1.23 s (cuda, batch 64)"
                    if line.startswith("andrea dump: wrote") and " in " in line:
                        tphase = float(line.rsplit(" in ", 1)[1].split(" s")[0])
                size_a = os.path.getsize(out_a) / 1e9 if os.path.exists(out_a) else 0
                if os.path.exists(out_a):
                    os.remove(out_a)
        # the same dump deflated (level 1, on every core: dump/dump_write_h5.c): fewer bytes to
        # the disk, whose writeback bounds the T=1024 job (bench/RESULTS.md, 2026-11-30)
        tgz = float("nan")
        size_gz = 0
        if andrea != "-" and not only:
            os.sync()  # the previous job's dirty pages written back first: each job starts alike
            t0 = time.perf_counter()
            r = subprocess.run([andrea, "dump", model_dir, "--probes", probes, "--out", out_a, "--device", "cuda",
                                "--maps", "fp16", "--contrib", "none", "--batch", str(B), "--gzip", "1", "--timing"],
                               capture_output=True, text=True)
            tgz = time.perf_counter() - t0 if r.returncode == 0 else float("nan")
            print(f"  andrea dump --gzip 1 n={n} T={T}: " + " ".join(l for l in r.stderr.splitlines() if "time:" in l))
            if os.path.exists(out_a):
                size_gz = os.path.getsize(out_a) / 1e9
                os.remove(out_a)
        out_h = os.path.join(work, f"hf_{T}.h5")
        th, size_h = float("nan"), 0
        if not only:
            os.sync()  # the previous job's dirty pages written back first: each job starts alike
            th = hf_pipeline(model, ids, B, out_h)
            size_h = os.path.getsize(out_h) / 1e9
            os.remove(out_h)
        os.sync()  # the previous job's dirty pages written back first: each job starts alike
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--hf-job", model_dir, probes, str(B), out_h],
                           capture_output=True, text=True)
        thjob = time.perf_counter() - t0 if r.returncode == 0 else float("nan")
        if r.returncode != 0:
            print("HF job failed:", r.stderr.strip()[-500:])
        if os.path.exists(out_h):
            os.remove(out_h)
        rows.append((n, T, B, gb, ta, tphase, tfixed, th, thjob, stream.get(T, float("nan"))))
        print(f"n={n} T={T}: andrea dump {ta:.2f} s whole ({tphase:.2f} s dump phase, {tfixed:.2f} s for 8 sequences; "
              f"{size_a:.2f} GB file), andrea dump --gzip 1 {tgz:.2f} s whole ({size_gz:.2f} GB file, "
              f"HF job / it {thjob / tgz:.2f}x), HF loop {th:.2f} s ({size_h:.2f} GB), HF whole job {thjob:.2f} s",
              flush=True)
    print("| sequences | T | batch | maps (fp16) | andrea dump, whole | HF job, whole | HF / andrea (whole) "
          "| andrea dump phase | streaming pipeline alone (no open, no seal) | HF loop, model loaded | HF loop / andrea phase "
          "| andrea, 8 sequences |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, T, B, gb, ta, tp, tf, th, thj, ts in rows:
        print(f"| {n} | {T} | {B} | {gb:.2f} GB | {ta:.2f} s | {thj:.2f} s | **{thj / ta:.2f}x** "
              f"| {tp:.2f} s ({gb / tp:.2f} GB/s) | {ts:.2f} s ({gb / ts:.2f} GB/s) | {th:.2f} s ({gb / th:.2f} GB/s) "
              f"| **{th / tp:.2f}x** | {tf:.2f} s |")


if __name__ == "__main__":
    main()
