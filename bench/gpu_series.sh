#!/usr/bin/env bash
# bench/gpu_series.sh — one device call: a training run of N checkpoints of ANDREA-120M shape
# (one random GPT-2 from torch, then N Trainer-style folders run/checkpoint-STEP, each a distinct
# file: a slice of its weights scaled by 1 + STEP * 1e-4) analysed as one series by this tree and
# by the tree in $BASE (the commit before the series engine), alternating; then two checkpoints
# analysed alone by this tree, their catalog rows compared with the series' (exact).
# Usage (device machine, repo root, carry=[".carry"]): BASE=.carry/base N=12 bash bench/gpu_series.sh
# (ROUNDS=2 by default; DTYPE=BF16 writes bf16 checkpoints: 100 of ANDREA-120M are 25 GB, not 50)
# (.carry/base: `git archive BASE_COMMIT | tar -x -C .carry/base`, git-ignored)
set -u
source bench/gpu_common.sh
N=${N:-12}
echo "== build ($SECONDS s)"
gpu_build . new andrea test_engine_swap_model & p1=$!
[ -n "${BASE:-}" ] && { gpu_build "$BASE" base andrea & p2=$!; wait $p2 || exit 1; }
wait $p1 || exit 1
echo "== test_engine_swap_model ($SECONDS s)"
(cd build-gpu/tests && ./test_engine_swap_model 2>&1 | tail -3)
echo "== checkpoints ($SECONDS s)"
R=/tmp/run; mkdir -p $R
make_ckpt $R base 12 12 768
df -h /tmp | tail -1
python3 - $R $N ${DTYPE:-F32} <<'EOF2'
import os, sys, json, struct, shutil
r, n, dtype = sys.argv[1], int(sys.argv[2]), sys.argv[3]
raw = open(f"{r}/base/model.safetensors", "rb").read()
hl = struct.unpack("<Q", raw[:8])[0]
import numpy as np
data = np.frombuffer(raw, dtype=np.uint8, offset=8 + hl).view(np.float32).copy()
head = raw[: 8 + hl]
if dtype == "BF16": # every tensor's dtype and offsets halved (a Trainer's bf16 checkpoint)
    h = json.loads(raw[8 : 8 + hl])
    for k, v in h.items():
        if k != "__metadata__": v["dtype"] = "BF16"; v["data_offsets"] = [o // 2 for o in v["data_offsets"]]
    hb = json.dumps(h).encode(); hb += b" " * (-len(hb) % 8)
    head = struct.pack("<Q", len(hb)) + hb
for k in range(n):
    step = (k + 1) * 100
    d = f"{r}/run/checkpoint-{step}"; os.makedirs(d, exist_ok=True)
    x = data.copy(); x[: len(x) // 2] *= np.float32(1 + step * 1e-4)
    if dtype == "BF16": # round to nearest even
        u = x.view(np.uint32); x = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    with open(f"{d}/model.safetensors", "wb") as f: f.write(head); f.write(x.tobytes())
    shutil.copy(f"{r}/base/config.json", d)
print(f"{n} checkpoints written ({dtype})", flush=True)
EOF2
CK=($(ls -d $R/run/checkpoint-* | sort -t- -k2 -n))
TIMING=--timing
for round in $(seq ${ROUNDS:-2}); do
  for b in new ${BASE:+base}; do
    A=./build-gpu/andrea; [ $b = base ] && A=$BASE/build-gpu/andrea
    rm -rf /tmp/s-$b
    /usr/bin/time -f "$b round $round: ${#CK[@]} checkpoints, whole process %e s, peak RSS %M KB" \
      $A analyze "${CK[@]}" --tokenizer $R/base --device cuda --out /tmp/s-$b --quiet ${TIMING:-} >/tmp/s-$b.txt 2>/tmp/s-$b.err
    # the series' phases and its last checkpoint's scoring (--timing, trees that print them)
    grep "time (" /tmp/s-$b.err | tail -2 | cut -c1-900; tail -1 /tmp/s-$b.err; du -sh /tmp/s-$b
    # where a checkpoint's bytes go (its report folder's parts, bytes), and the series' catalog
    c1=$(ls -d /tmp/s-$b/*/ | head -1); echo "$c1: $(cd $c1 && du -sb * | sort -n | tr '\t\n' ': ')"; du -sb /tmp/s-$b/catalog.db
  done
done
echo "== alone vs series ($SECONDS s)"
for i in 0 $((${#CK[@]} - 1)); do
  rm -rf /tmp/a$i; ./build-gpu/andrea analyze ${CK[$i]} --tokenizer $R/base --device cuda --out /tmp/a$i --quiet --timing >/tmp/a$i.txt 2>&1
  grep "time (" /tmp/a$i.txt | head -1 | cut -c1-1200
  sha=$(sha256sum ${CK[$i]}/model.safetensors | cut -c1-64)
  q="SELECT layer, head, class, printf('%.17g %.17g %.17g %.17g %.17g', score, baseline, ablation_delta, ablation_ci_low, direct_delta), evidence, label FROM head_catalog WHERE checkpoint_sha256 = '$sha' ORDER BY 1, 2, 3"
  ./build-gpu/andrea sql /tmp/a$i/catalog.db "$q" > /tmp/ra$i.txt; ./build-gpu/andrea sql /tmp/s-new/catalog.db "$q" > /tmp/rs$i.txt
  cmp -s /tmp/ra$i.txt /tmp/rs$i.txt && echo "checkpoint $i: $(wc -l < /tmp/ra$i.txt) rows, series == alone" || { echo "checkpoint $i: series differs from alone"; diff /tmp/ra$i.txt /tmp/rs$i.txt | head -6; }
done
echo "== done ($SECONDS s)"
