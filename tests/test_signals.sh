#!/bin/bash
# test_signals — an interrupted `andrea dump` never leaves a partial file under the final name.
#
# The dump writes "<out>.tmp-<pid>" and renames it when complete (common/atomic_file.h).
# - SIGINT, SIGTERM, SIGHUP (the terminal or ssh session closed) and SIGPIPE (its reader gone)
#   while the temporary file is being written: the process exits non-zero within a few seconds,
#   no file under the final name, no *.tmp-* left behind.
# - SIGKILL (no handler can run): still no file under the final name (the temporary may stay).
# The run is made long enough to be caught mid-write: a random 4-layer C=256 model (written here
# with numpy), 64 items per built-in suite in batches of 4. Each case waits for the temporary file
# to appear before signalling, so the signal lands during the write, not before it.
set -u
: "${ANDREA_BIN:?ANDREA_BIN must name the andrea binary}"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c "import numpy" 2>/dev/null || { echo "SKIP: $PY has no module numpy (Debian package python3-numpy)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
set -m # background jobs get their own process group and default signal dispositions, as at a terminal

"$PY" - "$T" <<'EOF' || { echo "FAIL: fixture generation" >&2; exit 1; }
import struct, sys
import numpy as np
t = sys.argv[1]
L, H, C, V, T = 4, 8, 256, 257, 256
n = V*C + T*C + L*(2*C + 3*C*C + 3*C + C*C + C + 2*C + 4*C*C + 4*C + 4*C*C + C) + 2*C
rng = np.random.default_rng(1)
with open(f"{t}/m.bin", "wb") as f:
    f.write(struct.pack("<256i", *([20240326, 3, T, V, L, H, C, V] + [0] * 248)))
    f.write((rng.standard_normal(n) * 0.05).astype(np.float32).tobytes())
EOF

# start_dump NAME: starts a dump to $T/NAME/out.h5 in the background (pid in $pid) and waits up to
# 120 s for its temporary file; returns 1 (with a failure) if the dump ended or never wrote one.
start_dump() {
    mkdir -p "$T/$1"
    "$ANDREA_BIN" dump "$T/m.bin" --out "$T/$1/out.h5" --device cpu --n 64 --batch 4 --quiet \
        >"$T/$1/stdout" 2>"$T/$1/stderr" &
    pid=$!
    local i
    for ((i = 0; i < 1200; i++)); do
        if compgen -G "$T/$1/out.h5.tmp-*" >/dev/null; then
            sleep 0.3 # well inside the write, past the file's creation
            if kill -0 "$pid" 2>/dev/null; then return 0; fi
            break
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    wait "$pid"
    fail "$1: the dump ended (exit $?) before it could be interrupted: $(head -c 400 "$T/$1/stderr")"
    return 1
}

# the time in ms
now_ms() { date +%s%3N; }

for sig in INT TERM HUP PIPE; do
    name=sig$sig
    start_dump "$name" || continue
    t0=$(now_ms)
    kill -s "$sig" "$pid"
    wait "$pid"
    rc=$?
    dt=$(($(now_ms) - t0))
    leftovers=$(ls "$T/$name" | grep -c '\.tmp-')
    if [ "$rc" -eq 0 ]; then
        fail "sig${sig}_stops_the_dump: exit code 0 after SIG$sig"
    elif [ "$dt" -gt 5000 ]; then
        fail "sig${sig}_stops_the_dump_promptly: took $dt ms"
    elif [ -e "$T/$name/out.h5" ]; then
        fail "sig${sig}_leaves_no_file_under_the_final_name: out.h5 exists"
    elif [ "$leftovers" -ne 0 ]; then
        fail "sig${sig}_removes_the_temporary_file: $(ls "$T/$name")"
    else
        echo "ok: SIG$sig during dump: exit $rc after $dt ms, no out.h5, no temporary left"
    fi
done

name=sigKILL
if start_dump "$name"; then
    kill -s KILL "$pid"
    wait "$pid"
    rc=$?
    if [ "$rc" -ne 137 ]; then
        fail "sigKILL: expected exit 137, got $rc"
    elif [ -e "$T/$name/out.h5" ]; then
        fail "sigKILL_leaves_no_file_under_the_final_name: out.h5 exists"
    else
        echo "ok: SIGKILL during dump: no out.h5 (left: $(ls "$T/$name" | grep '\.tmp-' | tr '\n' ' '))"
    fi
fi

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)" >&2
    exit 1
fi
echo "all signal cases passed"
