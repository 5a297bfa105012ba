#!/usr/bin/env bash
# bench/bench_analyze_cpu.sh — `andrea analyze` (scores in the forward, default output) against
# `andrea dump` of every map for the same suites, in one run on this machine, with the default
# output folder's size; then the old way (dump + classify + render from the dump, which is what
# `analyze --keep-dumps` still costs in writes). Prints lines to paste into bench/RESULTS.md.
# usage: bash bench/bench_analyze_cpu.sh ANDREA_BIN [CKPT]   (default: models/andrea-bundled.bin)
set -euo pipefail
A=$1
SRC="$(cd "$(dirname "$0")/.." && pwd)"
M=${2:-$SRC/models/andrea-bundled.bin}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
t() { local s; s=$(date +%s.%N); "$@" >"$W/last.out" 2>"$W/last.err"; python3 -c "print(f'{$(date +%s.%N) - $s:.1f}')"; }
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
d=$(t "$A" dump "$M" -o "$W/d.h5" --quiet --timing); echo "andrea dump (every map, default suites): $d s, $(du -sh "$W/d.h5" | cut -f1)"
tail -1 "$W/last.err"
a=$(t "$A" analyze "$M" --out "$W/a" --quiet --timing); echo "andrea analyze (default): $a s, output folder $(du -sh "$W/a" | cut -f1)"
tail -1 "$W/last.err"
k=$(t "$A" analyze "$M" --out "$W/k" --quiet --timing --ablate-items 0); echo "andrea analyze --ablate-items 0: $k s"
tail -1 "$W/last.err"
echo "ratio analyze / dump: $(python3 -c "print(f'{$a / $d:.2f}')"); without the causal check: $(python3 -c "print(f'{$k / $d:.2f}')")"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
