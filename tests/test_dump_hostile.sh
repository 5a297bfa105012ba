#!/bin/bash
# test_dump_hostile — crafted dumps that carry a VALID seal but make HDF5 1.10.8 itself read out
# of bounds or crash (fuzz_dump_reader findings, tests/data/regress/hostile-dumps/) are refused by
# `andrea classify` and `andrea render` with exit 1, exactly one stderr line "andrea: DUMP: ...",
# and no output left behind (no catalog, no report folder, no temp file): both commands read the
# whole dump in a sacrificial child process first (andrea_dump_check_isolated, engine/dump.h).
#
# Sanitizer builds (tools/sanitize.sh): the out-of-bounds reads happen inside libhdf5 in that
# child, where ASan reports them and kills it; that is the isolation doing its job, so those
# reports are sent to a test-local folder instead of the job's sanitizer-logs/ (which fails the
# job on any report). A report from the andrea process itself (its pid, the suffix of the log
# file name) is still a failure here, as is any exit other than 1.
set -u
: "${ANDREA_BIN:?ANDREA_BIN must name the andrea binary}"
: "${ANDREA_SRC:?ANDREA_SRC must name the source tree}"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
shopt -s nullglob
files=("$ANDREA_SRC"/tests/data/regress/hostile-dumps/*.h5)
if [ ${#files[@]} -eq 0 ]; then
    echo "FAIL: no inputs in tests/data/regress/hostile-dumps/" >&2
    exit 1
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
san=$T/sanitizer-logs
mkdir -p "$san"
# later options override earlier ones: keep the job's settings, move only the log files
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$san/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$san/ubsan"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# seal IN OUT: OUT = IN with a valid andrea dump seal over its first 512 bytes (what a hostile
# file would carry; the fuzzer's inputs are stored as found)
seal() {
    "$PY" - "$@" <<'PYEOF'
import hashlib, sys
data = bytearray(open(sys.argv[1], "rb").read())
block = b"ANDREA-DUMP 1\nsha256 " + hashlib.sha256(data[512:]).hexdigest().encode() + b"\n"
data[:512] = block + bytes(512 - len(block))
open(sys.argv[2], "wb").write(data)
PYEOF
}

n=0
for f in "${files[@]}"; do
    base=$(basename "$f" .h5)
    for cmd in classify render; do
        w=$T/$base-$cmd
        mkdir -p "$w"
        seal "$f" "$w/d.h5" || { fail "$base: cannot seal"; continue; }
        args=("$w/d.h5" --db "$w/c.db")
        [ "$cmd" = render ] && args+=(--out "$w/report")
        # the wrapper records andrea's own pid (exec keeps it) so its sanitizer logs can be told
        # from the child's
        timeout 120 bash -c 'echo $$ >"$0"; exec "$@"' "$T/pid" "$ANDREA_BIN" "$cmd" "${args[@]}" --quiet \
            >"$T/out" 2>"$T/err"
        rc=$?
        pid=$(cat "$T/pid")
        n=$((n + 1))
        if [ "$rc" -ne 1 ]; then
            fail "$base: andrea $cmd: exit code $rc, want 1: $(head -c 800 "$T/err")"
        elif [ "$(wc -l <"$T/err")" -ne 1 ] || ! grep -q "^andrea: .*$w/d.h5: " "$T/err"; then
            fail "$base: andrea $cmd: stderr is not one 'andrea: $w/d.h5: ...' line: $(head -c 800 "$T/err")"
        elif [ "$(ls -A "$w")" != d.h5 ]; then
            fail "$base: andrea $cmd: left output behind: $(ls -A "$w" | tr '\n' ' ')"
        else
            echo "ok: $base: andrea $cmd: $(cat "$T/err")"
        fi
        for r in "$san"/*."$pid"; do
            fail "$base: andrea $cmd: sanitizer report from the andrea process itself: $(head -c 2000 "$r")"
        done
    done
done
child=("$san"/*)
echo "${#child[@]} sanitizer report(s) from sacrificial check processes (expected in sanitizer builds)"
if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)" >&2
    exit 1
fi
echo "all $n refusals clean"
