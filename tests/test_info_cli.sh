#!/bin/bash
# test_info_cli — `andrea info` end to end: a tiny .bin and a tiny safetensors folder (written
# here by Python's struct module, independently of andrea's own writers), an ANDREA-120M-shaped
# bf16 .bin (a sparse file of zeros: 250 MB that costs no disk and ~2 s), and bad input: one line
# "andrea: FILE: problem" on stderr, exit code 1; usage errors exit 2.
set -u
source "$ANDREA_SRC/tests/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
T=$tmp
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
expect_line() { # FILE REGEX
    grep -Eq -- "$2" "$1" || fail "no line matching '$2' in $1: $(cat "$1")"
}

"$PY" - "$T" <<'EOF' || { echo "FAIL: fixture generation" >&2; exit 1; }
import json, os, random, struct, sys
t = sys.argv[1]
random.seed(1)
# tiny .bin: L=2 H=2 C=8 V=13 Vp=16 T=10, fp32, llm.c order
L, H, C, V, Vp, T = 2, 2, 8, 13, 16, 10
sizes = [Vp*C, T*C, L*C, L*C, L*3*C*C, L*3*C, L*C*C, L*C, L*C, L*C, L*4*C*C, L*4*C, L*C*4*C, L*C, C, C]
vals = [random.gauss(0, 0.02) for _ in range(sum(sizes))]
hdr = [20240326, 3, T, V, L, H, C, Vp] + [0] * 248
with open(f"{t}/tiny.bin", "wb") as f:
    f.write(struct.pack("<256i", *hdr))
    f.write(struct.pack(f"<{len(vals)}f", *vals))
# the same shape as GPT-2 safetensors (F32, original names, no prefix, with mask buffers)
names = [("wte.weight", [V, C]), ("wpe.weight", [T, C])]
for l in range(L):
    names += [(f"h.{l}.ln_1.weight", [C]), (f"h.{l}.ln_1.bias", [C]),
              (f"h.{l}.attn.bias", [1, 1, T, T]),
              (f"h.{l}.attn.c_attn.weight", [C, 3*C]), (f"h.{l}.attn.c_attn.bias", [3*C]),
              (f"h.{l}.attn.c_proj.weight", [C, C]), (f"h.{l}.attn.c_proj.bias", [C]),
              (f"h.{l}.ln_2.weight", [C]), (f"h.{l}.ln_2.bias", [C]),
              (f"h.{l}.mlp.c_fc.weight", [C, 4*C]), (f"h.{l}.mlp.c_fc.bias", [4*C]),
              (f"h.{l}.mlp.c_proj.weight", [4*C, C]), (f"h.{l}.mlp.c_proj.bias", [C])]
names += [("ln_f.weight", [C]), ("ln_f.bias", [C])]
header, data, off = {}, b"", 0
for n, shape in names:
    k = 1
    for d in shape: k *= d
    header[n] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + 4*k]}
    data += struct.pack(f"<{k}f", *[random.gauss(0, 0.02) for _ in range(k)])
    off += 4*k
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
os.mkdir(f"{t}/st")
with open(f"{t}/st/model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + data)
json.dump({"model_type": "gpt2", "vocab_size": V, "n_positions": T, "n_embd": C, "n_layer": L,
           "n_head": H, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"},
          open(f"{t}/st/config.json", "w"))
# ANDREA-120M shape, bf16, all zeros (sparse)
L, H, C, V, Vp, T = 12, 12, 768, 50257, 50304, 1024
n = Vp*C + T*C + L*(2*C + 3*C*C + 3*C + C*C + C + 2*C + 4*C*C + 4*C + 4*C*C + C) + 2*C
with open(f"{t}/a120.bin", "wb") as f:
    f.write(struct.pack("<256i", *([20240326, 5, T, V, L, H, C, Vp] + [0] * 248)))
    f.truncate(1024 + 2*n)
EOF

# tiny .bin
if "$ANDREA_BIN" info "$T/tiny.bin" >"$T/out" 2>"$T/err"; then
    expect_line "$T/out" '^layers +2$'
    expect_line "$T/out" '^heads +2$'
    expect_line "$T/out" '^head_dim +4$'
    expect_line "$T/out" '^padded vocab +16$'
    expect_line "$T/out" '^format +ANDREA \.bin'
    expect_line "$T/out" '^stored dtype +fp32$'
    expect_line "$T/out" '^family +none'
    expect_line "$T/out" 'attention projections, weights +256 +512 '
    expect_line "$T/out" '^sha256 +[0-9a-f]{64}$'
    sha=$(sha256sum "$T/tiny.bin" | cut -d' ' -f1)
    expect_line "$T/out" "^sha256 +$sha\$"
else
    fail "info on tiny.bin exited non-zero: $(cat "$T/err")"
fi

# tiny safetensors folder
if "$ANDREA_BIN" info "$T/st" >"$T/out" 2>"$T/err"; then
    expect_line "$T/out" '^format +Hugging Face GPT-2 safetensors$'
    expect_line "$T/out" '^stored dtype +fp32$'
    expect_line "$T/out" '^padded vocab +13$'
    sha=$(sha256sum "$T/st/model.safetensors" | cut -d' ' -f1)
    expect_line "$T/out" "^sha256 +$sha\$"
else
    fail "info on the safetensors folder exited non-zero: $(cat "$T/err")"
fi

# ANDREA-120M shape: docs/checkpoints.md's numbers
if "$ANDREA_BIN" info "$T/a120.bin" >"$T/out" 2>"$T/err"; then
    expect_line "$T/out" '^family +ANDREA-120M$'
    expect_line "$T/out" '^head_dim +64$'
    expect_line "$T/out" 'attention projections, weights +2,359,296 +28,311,552 +28\.3M$'
    expect_line "$T/out" '^  total +124,439,808 +124\.4M$'
    expect_line "$T/out" 'attention share +22\.8 %'
    expect_line "$T/out" '^stored dtype +bf16$'
else
    fail "info on a120.bin exited non-zero: $(cat "$T/err")"
fi

# bad file: truncated by 3 bytes -> exit 1, one line naming the file and both sizes
size=$(stat -c %s "$T/tiny.bin")
head -c $((size - 3)) "$T/tiny.bin" >"$T/bad.bin"
"$ANDREA_BIN" info "$T/bad.bin" >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" -eq 1 ] || fail "truncated file: exit code $rc, want 1"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "truncated file: want one line on stderr, got: $(cat "$T/err")"
expect_line "$T/err" "^andrea: $T/bad.bin: truncated: .*needs $size bytes, file has $((size - 3))\$"
[ -s "$T/out" ] && fail "truncated file: something on stdout: $(cat "$T/out")"

# a path holding an escape sequence and a newline reaches no terminal raw
odd="$T/m"$'\e[31mRED\nx'".bin"
cp "$ANDREA_SRC/models/andrea-tiny.bin" "$odd"
"$ANDREA_BIN" info "$odd" >"$T/out" 2>&1 || fail "info of a checkpoint with an odd name failed: $(cat "$T/out")"
grep -q $'\e' "$T/out" && fail "info printed an escape byte of the path"
expect_line "$T/out" '^checkpoint .*/m\?\[31mRED\?x\.bin$'

# usage
"$ANDREA_BIN" info >/dev/null 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "no argument: exit code $rc, want 2"
"$ANDREA_BIN" info --help >"$T/out" 2>&1 || fail "--help exited non-zero"
expect_line "$T/out" '^usage: andrea info CKPT'

if [ "$fails" -ne 0 ]; then
    echo "test_info_cli: $fails failed" >&2
    exit 1
fi
echo "test_info_cli: ok"
