# bench/gpu_common.sh — what the device scripts share (sourced, not run): bench/gpu_analyze.sh,
# bench/gpu_large.sh, bench/gpu_causal.sh. On the device machine, repo root, carry=[".carry/debs"]:
#   - everything printed goes to $OUT/log.txt too (OUT: the device tool's folder, else /tmp/...);
#   - the carried Debian -dev packages (tools/gpu-carry.sh) are unpacked into $PFX, which the
#     build points at (-DANDREA_EXTRA_PREFIX) and the loader searches;
#   - gpu_build DIR LOGNAME TARGETS...: a Release sm_90 build of the tree DIR into DIR/build-gpu
#     (log: $OUT/build-LOGNAME.txt; its errors printed on failure), tests configured too;
#   - make_ckpt DIR NAME L H C: a random Hugging Face GPT-2 of that shape (torch + transformers,
#     GPT-2 vocabulary, save_pretrained as one model.safetensors) into DIR/NAME, with the GPT-2 BPE
#     of tests/data/gpt2 beside it.
OUT=${OUT:-/tmp/andrea-gpu-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
PFX=/tmp/andrea-prefix
mkdir -p $PFX
for f in .carry/debs/*.deb; do dpkg -x "$f" $PFX; done
export LD_LIBRARY_PATH=$PFX/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
echo "== device"; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv
gpu_build() { # DIR LOGNAME TARGETS...
  local d=$1 log=$OUT/build-$2.txt; shift 2
  cmake -S $d -B $d/build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DANDREA_EXTRA_PREFIX=$PFX \
    -DANDREA_TESTING=ON >$log 2>&1 && cmake --build $d/build-gpu -j16 --target "$@" >>$log 2>&1 ||
    { grep -E "error|Error" $log | head -20; return 1; }
}
make_ckpt() { # DIR NAME L H C
  python3 - "$@" <<'EOF2'
import sys, time
t0 = time.time()
import torch
from transformers import GPT2Config, GPT2LMHeadModel
out, name, L, H, C = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
torch.manual_seed(0)
cfg = GPT2Config(n_layer=L, n_head=H, n_embd=C, n_positions=1024, vocab_size=50257)
with torch.device("cuda"):
    m = GPT2LMHeadModel(cfg)
m.save_pretrained(f"{out}/{name}", safe_serialization=True, max_shard_size="100GB")
print(f"{name}: {sum(p.numel() for p in m.parameters()) / 1e6:.0f}M parameters, written in {time.time() - t0:.1f} s", flush=True)
EOF2
  cp tests/data/gpt2/vocab.json tests/data/gpt2/merges.txt $1/$2/
}
