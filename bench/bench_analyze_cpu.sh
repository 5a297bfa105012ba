#!/usr/bin/env bash
# bench/bench_analyze_cpu.sh — `andrea analyze` (scores in the forward, default output) against
# `andrea dump` of every map for the same suites, in one run on this machine, with the default
# output folder's size, and analyze without the causal check (--ablate-items 0). Prints lines to
# paste into bench/RESULTS.md.
# usage: bash bench/bench_analyze_cpu.sh [--vs OTHER_ANDREA_BIN] ANDREA_BIN [CKPT]
#        (default CKPT: models/andrea-bundled.bin). With --vs, every measurement runs for both
#        binaries back to back (OTHER first), so a before/after comparison shares the machine's load.
set -euo pipefail
OTHER=
if [ "${1:-}" = --vs ]; then OTHER=$2; shift 2; fi
A=$1
SRC="$(cd "$(dirname "$0")/.." && pwd)"
M=${2:-$SRC/models/andrea-bundled.bin}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
t() { local s; s=$(date +%s.%N); "$@" >"$W/last.out" 2>"$W/last.err"; python3 -c "print(f'{$(date +%s.%N) - $s:.1f}')"; }
bins=("$A")
[ -n "$OTHER" ] && bins=("$OTHER" "$A")
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A d a k
for round in dump analyze noablate; do
  for B in "${bins[@]}"; do
    rm -rf "$W/d.h5" "$W/a" "$W/k"
    case $round in
      dump) d[$B]=$(t "$B" dump "$M" -o "$W/d.h5" --quiet --timing)
            echo "[$B] andrea dump (every map, default suites): ${d[$B]} s, $(du -sh "$W/d.h5" | cut -f1)";;
      analyze) a[$B]=$(t "$B" analyze "$M" --out "$W/a" --quiet --timing)
            echo "[$B] andrea analyze (default): ${a[$B]} s, output folder $(du -sh "$W/a" | cut -f1)";;
      noablate) k[$B]=$(t "$B" analyze "$M" --out "$W/k" --quiet --timing --ablate-items 0)
            echo "[$B] andrea analyze --ablate-items 0: ${k[$B]} s";;
    esac
    tail -1 "$W/last.err"
  done
done
for B in "${bins[@]}"; do
  echo "[$B] ratio analyze / dump: $(python3 -c "print(f'{${a[$B]} / ${d[$B]}:.2f}')"); without the causal check: $(python3 -c "print(f'{${k[$B]} / ${d[$B]}:.2f}')")"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
