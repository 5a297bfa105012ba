#!/bin/bash
# test_limits — hostile sizes are refused before anything is allocated or read whole.
#
# Every case makes its own input (most are sparse files: a 1 TB claim costs no disk) and runs the
# real CLI. Allocation is fenced two ways: in a plain build the CLI runs under `ulimit -v`
# (LIMIT_KB of address space), so an attempt to allocate what a header claims fails loudly as
# "cannot allocate" instead of passing quietly on an overcommitting kernel; in a sanitizer build
# (ulimit -v breaks ASan's shadow memory) ASan's max_allocation_size_mb does the same job and any
# report lands in sanitize.sh's log folder. Memory that grows with the input is measured as peak
# RSS (getrusage of the child).
# Each case checks one refusal: exit code 1, one line "andrea: FILE: problem" naming the limit.
set -u
: "${ANDREA_BIN:?ANDREA_BIN must name the andrea binary}"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

LIMIT_KB=$((3 * 1024 * 1024)) # 3 GiB of address space: the CLI needs ~0.5 GiB (OpenBLAS buffers)
if grep -q __asan_init "$ANDREA_BIN" 2>/dev/null; then
    asan=1
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=2048:allocator_may_return_null=0"
else
    asan=0
fi

# run_andrea OUT ERR ARGS...: the CLI with its address space fenced; sets $rc.
run_andrea() {
    local out=$1 err=$2
    shift 2
    if ((asan)); then
        "$ANDREA_BIN" "$@" >"$out" 2>"$err"
    else
        (ulimit -v "$LIMIT_KB" && exec "$ANDREA_BIN" "$@") >"$out" 2>"$err"
    fi
    rc=$?
}

# expect_refusal NAME REGEX ARGS...: exit 1, exactly one stderr line, matching REGEX, and no sign
# of an allocation attempt.
expect_refusal() {
    local name=$1 re=$2
    shift 2
    run_andrea "$T/$name.out" "$T/$name.err" "$@"
    local lines
    lines=$(wc -l <"$T/$name.err")
    if [ "$rc" -ne 1 ]; then
        fail "$name: exit code $rc, expected 1: $(head -c 600 "$T/$name.err")"
    elif [ "$lines" -ne 1 ]; then
        fail "$name: $lines lines on stderr, expected one: $(head -c 600 "$T/$name.err")"
    elif ! grep -Eq -- "$re" "$T/$name.err"; then
        fail "$name: message does not match '$re': $(cat "$T/$name.err")"
    elif grep -Eqi 'allocat|out of memory' "$T/$name.err"; then
        fail "$name: an allocation was attempted: $(cat "$T/$name.err")"
    else
        echo "ok: $name: $(cat "$T/$name.err")"
    fi
}

# A .bin header (256 int32, llm.c layout) with the given shape; the file is cut/extended to BYTES.
"$PY" - "$T" <<'EOF' || { echo "FAIL: fixture generation" >&2; exit 1; }
import json, os, struct, sys
t = sys.argv[1]
def params(L, C, V, Vp, T):
    return Vp*C + T*C + L*(2*C + 3*C*C + 3*C + C*C + C + 2*C + 4*C*C + 4*C + 4*C*C + C) + 2*C
def bin_header(path, version, T, V, L, H, C, Vp, size):
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", *([20240326, version, T, V, L, H, C, Vp] + [0] * 248)))
        f.truncate(size)
# 1. terabytes: L=1024, C=65536 (about 52.8 T parameters), the file only holds the header
bin_header(f"{t}/tb.bin", 3, 1024, 50257, 1024, 1024, 65536, 50304, 1024)
# 2. the same claim in a bf16 file, cut one byte short of 4 GiB
bin_header(f"{t}/tb_bf16.bin", 5, 1024, 50257, 1024, 1024, 65536, 50304, (4 << 30) - 1)
# 3. a claim that matches a sparse file of 16 GB: the allocation is legitimate here, so it must
#    fail as a one-line "cannot allocate" message (the address-space fence makes it fail)
L, H, C, V, T = 32, 32, 4096, 50257, 1024
n = params(L, C, V, V, T)
bin_header(f"{t}/sparse16g.bin", 3, T, V, L, H, C, V, 1024 + 4 * n)
# 4. safetensors header length 2^63 (and 2^64 - 1) in a small file, beside a valid config.json
cfg = {"model_type": "gpt2", "vocab_size": 20, "n_positions": 8, "n_embd": 8, "n_layer": 1,
       "n_head": 2, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}
for name, n_hdr in (("st63", 1 << 63), ("st64", (1 << 64) - 1)):
    os.mkdir(f"{t}/{name}")
    json.dump(cfg, open(f"{t}/{name}/config.json", "w"))
    with open(f"{t}/{name}/model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", n_hdr) + b"{}      ")
# 5. a header length inside the (sparse, 300 MB) file but above the 100 MB header limit
os.mkdir(f"{t}/stbig")
json.dump(cfg, open(f"{t}/stbig/config.json", "w"))
with open(f"{t}/stbig/model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", 250_000_000) + b"{")
    f.truncate(300_000_000)
# 6. a config.json of 1 GB (sparse) beside a tiny safetensors
os.mkdir(f"{t}/cfgbig")
with open(f"{t}/cfgbig/config.json", "wb") as f:
    f.write(b"{")
    f.truncate(1 << 30)
with open(f"{t}/cfgbig/model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", 8) + b"{}      ")
# 7. tokenizer files: a model with a 300-token vocabulary (sparse .bin: tokenize reads only its
#    header) and, in folders, a 1 GB vocab.json; a 1 GB merges.txt; a merges.txt whose second
#    line is 8 MB long
bin_header(f"{t}/v300.bin", 3, 16, 300, 1, 2, 8, 300, 1024 + 4 * params(1, 8, 300, 300, 16))
def alphabet():
    bs = list(range(33, 127)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, k = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b); cs.append(256 + k); k += 1
    return {b: chr(c) for b, c in zip(bs, cs)}
a = alphabet()
vocab = {a[b]: i for i, b in enumerate(sorted(a))}
vocab["<|endoftext|>"] = 256
for name in ("vocabbig", "mergesbig", "mergesline"):
    os.mkdir(f"{t}/{name}")
    json.dump(vocab, open(f"{t}/{name}/vocab.json", "w", encoding="utf-8"), ensure_ascii=False)
with open(f"{t}/vocabbig/vocab.json", "r+b") as f:
    f.truncate(1 << 30)
open(f"{t}/vocabbig/merges.txt", "w").write("#version: 0.2\n")
with open(f"{t}/mergesbig/merges.txt", "wb") as f:
    f.write(b"#version: 0.2\n")
    f.truncate(1 << 30)
with open(f"{t}/mergesline/merges.txt", "wb") as f:
    f.write(b"#version: 0.2\n" + b"a" * (8 << 20) + b" b\n")
# 8. probe files for a byte-level model (vocab 257): one line of 10 million token ids (20 MB),
#    and a short valid file to compare peak memory with
L, H, C, V, T = 1, 2, 8, 257, 64
bin_header(f"{t}/byte.bin", 3, T, V, L, H, C, V, 1024 + 4 * params(L, C, V, V, T))
with open(f"{t}/huge_line.jsonl", "w") as f:
    f.write('{"suite": "bos", "tokens": [256' + ", 1" * 10_000_000 + "]}\n")
with open(f"{t}/small.jsonl", "w") as f:
    f.write('{"suite": "bos", "tokens": [256, 1, 2, 3]}\n')
EOF

expect_refusal bin_header_claiming_terabytes_is_refused_by_its_size \
    'tb\.bin: truncated: header \(L=1024 H=1024 C=65536.*needs [0-9]+ bytes, file has 1024' info "$T/tb.bin"
expect_refusal bf16_header_claiming_terabytes_is_refused_by_its_size \
    'tb_bf16\.bin: truncated: .*bf16\) needs [0-9]+ bytes, file has 4294967295' info "$T/tb_bf16.bin"
expect_refusal safetensors_header_length_2_63_is_refused \
    'model\.safetensors: header length 9223372036854775808 is larger than the file \(16 bytes\)' info "$T/st63"
expect_refusal safetensors_header_length_2_64_minus_1_is_refused \
    'model\.safetensors: header length 18446744073709551615 is larger than the file' info "$T/st64"
expect_refusal safetensors_header_over_the_limit_is_refused_before_reading \
    'model\.safetensors: header length 250000000 exceeds the [0-9]+-byte limit' info "$T/stbig"
expect_refusal config_json_of_a_gigabyte_is_refused_before_reading \
    'config\.json: 1073741824 bytes, too large for a config\.json' info "$T/cfgbig"
expect_refusal vocab_json_of_a_gigabyte_is_refused_before_reading \
    'vocab\.json: 1073741824 bytes, larger than' tokenize "$T/v300.bin" hi --tokenizer "$T/vocabbig"
expect_refusal merges_txt_of_a_gigabyte_is_refused_before_reading \
    'merges\.txt: 1073741824 bytes, larger than' tokenize "$T/v300.bin" hi --tokenizer "$T/mergesbig"
expect_refusal merges_line_of_8_megabytes_is_refused_with_its_length \
    'merges\.txt:2: line of 8388610 bytes is too long for a merge' tokenize "$T/v300.bin" hi --tokenizer "$T/mergesline"
expect_refusal probe_line_of_10_million_tokens_is_refused \
    'huge_line\.jsonl:1: line longer than [0-9]+ bytes' dump "$T/byte.bin" --probes "$T/huge_line.jsonl" \
    --out "$T/never.h5" --device cpu --quiet
[ -e "$T/never.h5" ] && fail "probe_line_of_10_million_tokens: a dump was written"

# A claim the file backs (sparse 16 GB .bin): the allocation is honest, so the refusal is an
# out-of-memory message, one line, exit 1 — never a crash. (Only meaningful with the fence.)
if ((asan)); then
    echo "skip: sparse_16g_bin_fails_with_one_line_when_memory_is_short (sanitizer build: no ulimit -v)"
else
    run_andrea "$T/s16.out" "$T/s16.err" info "$T/sparse16g.bin"
    if [ "$rc" -ne 1 ] || [ "$(wc -l <"$T/s16.err")" -ne 1 ] ||
        ! grep -Eq 'sparse16g\.bin: .*(cannot allocate|out of memory)' "$T/s16.err"; then
        fail "sparse_16g_bin_fails_with_one_line_when_memory_is_short: exit $rc: $(head -c 600 "$T/s16.err")"
    else
        echo "ok: sparse_16g_bin_fails_with_one_line_when_memory_is_short: $(cat "$T/s16.err")"
    fi
fi

# Memory stays bounded while the 20 MB line is skipped: peak RSS within 12 MB of a run on a
# one-line file (the reader keeps at most PROBE_FILE_MAX_LINE = 1 MiB of a line).
peak_kb() { # ARGS...: peak RSS in KB of the CLI run with ARGS
    "$PY" -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$ANDREA_BIN" "$@"
}
small=$(peak_kb dump "$T/byte.bin" --probes "$T/small.jsonl" --out "$T/small.h5" --device cpu --quiet)
huge=$(peak_kb dump "$T/byte.bin" --probes "$T/huge_line.jsonl" --out "$T/never.h5" --device cpu --quiet)
if [ -z "$small" ] || [ -z "$huge" ] || [ $((huge - small)) -gt 12288 ]; then
    fail "probe_line_of_10_million_tokens_keeps_memory_bounded: peak RSS ${huge:-?} KB vs ${small:-?} KB for a one-line file"
else
    echo "ok: probe_line_of_10_million_tokens_keeps_memory_bounded: peak RSS $huge KB vs $small KB"
fi

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)" >&2
    exit 1
fi
echo "all limits cases passed"
