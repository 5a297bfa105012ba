#!/usr/bin/env bash
# bench_dump.sh — `andrea dump` throughput on the CPU (sequences/s, MB/s of dataset payload) and
# peak memory, for a tiny model (L2 H4 C64) and a bundled-size model (L4 H8 C256; random weights,
# or models/andrea-bundled.bin when present), fp16 and fp32 maps.
# Memory is measured for 1x and 10x the sequences of one suite: peak RSS must not grow with the
# number of sequences (buffers are per batch; dump_write.h).
#
# usage: bash bench/bench_dump.sh [ANDREA_BIN]      (default: build-dump/andrea, then build/andrea)
# Prints a Markdown table (paste into bench/RESULTS.md). Needs /usr/bin/python3 with numpy.
set -euo pipefail
SRC="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${1:-}"
if [ -z "$BIN" ]; then
  for b in "$SRC/build-dump/andrea" "$SRC/build/andrea"; do [ -x "$b" ] && BIN="$b" && break; done
fi
[ -x "$BIN" ] || { echo "bench_dump: no andrea binary (build first or pass its path)" >&2; exit 1; }
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"

exec /usr/bin/python3 - "$BIN" "$SRC" <<'PY'
import os, re, shutil, subprocess, sys, tempfile

BIN, SRC = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="andrea-bench-dump-")

sys.path.insert(0, os.path.join(SRC, "tests"))
from tiny_ckpt import write_bin as tiny_bin


def write_bin(path, maxT, V, L, H, C, seed=0):
    tiny_bin(path, maxT, V, L, H, C, seed, scale=0.02)

models = []
tiny = os.path.join(tmp, "tiny.bin"); write_bin(tiny, 128, 257, 2, 4, 64)
models.append(("tiny L2 H4 C64 (random)", tiny))
bundled = os.path.join(SRC, "models", "andrea-bundled.bin")
if os.path.exists(bundled):
    models.append(("bundled L4 H8 C256", bundled))
else:
    b = os.path.join(tmp, "bundled-shape.bin"); write_bin(b, 256, 257, 4, 8, 256)
    models.append(("bundled-shape L4 H8 C256 (random)", b))

def run(ckpt, maps, extra):
    out = os.path.join(tmp, "bench.h5")
    cmd = [BIN, "dump", ckpt, "--device", "cpu", "--maps", maps, "--out", out, *extra]
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read()
    if status != 0:
        sys.exit(f"bench_dump: {' '.join(cmd)} failed: {err}")
    m = re.search(r"(\d+) sequences, ([\d.]+) MB in ([\d.]+) s \((\w+), batch (\d+)\)", err)
    size = os.path.getsize(out) / 1e6
    os.remove(out)
    seqs, mb, secs = int(m.group(1)), float(m.group(2)), float(m.group(3))
    return dict(seqs=seqs, mb=mb, secs=secs, batch=int(m.group(5)), file_mb=size, rss_mb=ru.ru_maxrss / 1024)

print(f"load average at start: {os.getloadavg()[0]:.1f} (the machine has {os.cpu_count()} cores)\n")
print("| model | maps | probes | sequences | batch | time s | seq/s | MB/s | file MB | peak RSS MB |")
print("|---|---|---|---|---|---|---|---|---|---|")
for name, ckpt in models:
    for maps in ("fp16", "fp32"):
        runs = [("defaults: 6 suites (entity 24 x 192, others 32 x 128)", [])]
        if maps == "fp16":
            runs.append(("defaults, --gzip 1", ["--gzip", "1"]))
        for label, extra in runs + [
                ("prev_token 32 x 128, batch 16 (1x)", ["--probes", "prev_token", "--n", "32", "--batch", "16"]),
                ("prev_token 320 x 128, batch 16 (10x)", ["--probes", "prev_token", "--n", "320", "--batch", "16"])]:
            r = run(ckpt, maps, extra)
            print(f"| {name} | {maps} | {label} | {r['seqs']} | {r['batch']} | {r['secs']:.2f} | "
                  f"{r['seqs'] / r['secs']:.0f} | {r['mb'] / r['secs']:.0f} | {r['file_mb']:.1f} | {r['rss_mb']:.0f} |",
                  flush=True)
shutil.rmtree(tmp)
PY
