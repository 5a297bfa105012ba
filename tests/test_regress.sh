#!/bin/bash
# test_regress — every input the fuzzers (or anyone) found to crash or hang andrea, kept in
# tests/data/regress/, goes through the CLI command that reads that kind of file. Each must end
# within 60 s with exit 0, or exit 1 and one line "andrea: FILE: problem" — never a signal, a
# sanitizer abort or a hang.
#
# Kinds, by extension (the libFuzzer targets' input formats, so a crash file is copied as is):
#   .bin    an ANDREA checkpoint                       -> andrea info FILE
#   .st     config.json "\n--\n" model.safetensors     -> andrea info DIR
#   .pair   vocab.json "\n--\n" merges.txt             -> andrea tokenize (vocab 50257 model) TEXT --tokenizer DIR
#   .jsonl  a probe file                               -> andrea dump (byte-level model) --probes FILE
#   .h5     a dump                                     -> sealed (below), then andrea classify FILE --db DB
# A dump input is sealed first, as fuzz_dump_reader does: a hostile file carries a valid checksum
# (the first seal form, sha256 of bytes 512..EOF, which readers still accept: engine/dump.h), so what sits behind the
# seal must be refused on its own.
# Files under tests/data/regress/pending/ reproduce a finding whose fix has not landed; they are
# not run here (docs/reliability.md lists them).
set -u
: "${ANDREA_BIN:?ANDREA_BIN must name the andrea binary}"
: "${ANDREA_SRC:?ANDREA_SRC must name the source tree}"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
dir=$ANDREA_SRC/tests/data/regress
shopt -s nullglob
files=("$dir"/*.bin "$dir"/*.st "$dir"/*.pair "$dir"/*.jsonl "$dir"/*.h5)
if [ ${#files[@]} -eq 0 ]; then
    echo "SKIP: no regression inputs in tests/data/regress/"
    exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# models the commands need: a byte-level one for probe files, a GPT-2-vocabulary one (sparse:
# tokenize reads only its header) for tokenizer files
"$PY" - "$T" <<'EOF' || { echo "FAIL: fixture generation" >&2; exit 1; }
import struct, sys
t = sys.argv[1]
def params(L, C, V, T):
    return V*C + T*C + L*(2*C + 3*C*C + 3*C + C*C + C + 2*C + 4*C*C + 4*C + 4*C*C + C) + 2*C
for name, V in (("byte", 257), ("gpt2", 50257)):
    with open(f"{t}/{name}.bin", "wb") as f:
        f.write(struct.pack("<256i", *([20240326, 3, 64, V, 1, 2, 8, V] + [0] * 248)))
        f.truncate(1024 + 4 * params(1, 8, V, 64))
EOF

# split FILE DIR NAME_A NAME_B: the two halves of a fuzzer input around the first "\n--\n"
split() {
    "$PY" - "$@" <<'EOF'
import os, sys
data = open(sys.argv[1], "rb").read()
i = data.find(b"\n--\n")
a, b = (data, b"") if i < 0 else (data[:i], data[i + 4:])
os.makedirs(sys.argv[2], exist_ok=True)
open(os.path.join(sys.argv[2], sys.argv[3]), "wb").write(a)
open(os.path.join(sys.argv[2], sys.argv[4]), "wb").write(b)
EOF
}

# seal IN OUT: OUT = IN with the andrea dump seal written over its first 512 bytes
seal() {
    "$PY" - "$@" <<'EOF'
import hashlib, sys
data = bytearray(open(sys.argv[1], "rb").read())
if len(data) >= 512:
    block = b"ANDREA-DUMP 1\nsha256 " + hashlib.sha256(data[512:]).hexdigest().encode() + b"\n"
    data[:512] = block + bytes(512 - len(block))
open(sys.argv[2], "wb").write(data)
EOF
}

for f in "${files[@]}"; do
    base=$(basename "$f")
    w=$T/work-$base
    mkdir -p "$w"
    case $base in
    *.bin) cmd=(info "$f") ;;
    *.st) split "$f" "$w/m" config.json model.safetensors && cmd=(info "$w/m") ;;
    *.pair) split "$f" "$w/t" vocab.json merges.txt && cmd=(tokenize "$T/gpt2.bin" "Hello world" --tokenizer "$w/t") ;;
    *.jsonl) cmd=(dump "$T/byte.bin" --probes "$f" --out "$w/d.h5" --device cpu --quiet) ;;
    *.h5) seal "$f" "$w/d.h5" && cmd=(classify "$w/d.h5" --db "$w/c.db") ;;
    esac
    timeout 60 "$ANDREA_BIN" "${cmd[@]}" >"$w/out" 2>"$w/err"
    rc=$?
    if [ "$rc" -eq 124 ]; then
        fail "$base: still running after 60 s (hang)"
    elif [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
        fail "$base: exit code $rc: $(head -c 800 "$w/err")"
    elif [ "$rc" -eq 1 ] && { [ "$(wc -l <"$w/err")" -ne 1 ] || ! grep -q '^andrea: ' "$w/err" ||
        grep -q $'\r' "$w/err"; }; then
        fail "$base: refusal is not one 'andrea: ...' line: $(head -c 800 "$w/err")"
    else
        echo "ok: $base: exit $rc $(head -c 300 "$w/err")"
    fi
done

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)" >&2
    exit 1
fi
echo "all ${#files[@]} regression inputs handled"
