#!/usr/bin/env bash
# bench/gpu_profile_causal.sh — one device call: where a random ANDREA-120M's analyze spends its GPU
# time (the causal check is half of a series' scoring: bench/RESULTS.md). Builds this tree (and
# $BASE's bench_gpu_forward), analyzes one random GPT-2 of ANDREA-120M shape twice with --timing,
# runs bench_gpu_forward of this tree and $BASE alternating, then the analyze once under ncu (one
# metric, the kernel's duration; per-kernel totals by name and grid; NCU_S its time limit, 300 s).
# Usage (device machine, repo root, carry=[".carry"]): BASE=.carry/base bash bench/gpu_profile_causal.sh
set -u
source bench/gpu_common.sh
echo "== build ($SECONDS s)"
gpu_build . new andrea bench_gpu_forward & p1=$!
[ -n "${BASE:-}" ] && { gpu_build "$BASE" base bench_gpu_forward & p2=$!; }
make_ckpt /tmp/m base 12 12 768
wait $p1 || exit 1
echo "== analyze --timing ($SECONDS s)"
for r in 1 2; do
  rm -rf /tmp/an; /usr/bin/time -f "whole process %e s, peak RSS %M KB" ./build-gpu/andrea analyze /tmp/m/base --device cuda \
    --out /tmp/an --quiet --timing >/tmp/an.txt 2>&1; grep "time (" /tmp/an.txt | cut -c1-1500; tail -1 /tmp/an.txt
done
echo "== bench_gpu_forward, new and base alternating ($SECONDS s)"
[ -n "${BASE:-}" ] && { wait $p2 || exit 1; }
for r in 1 2; do for b in new ${BASE:+base}; do
  B=./build-gpu; [ $b = base ] && B=$BASE/build-gpu
  mkdir -p /tmp/bf-$b; $B/bench/bench_gpu_forward /tmp/bf-$b --quick > $OUT/bench-$b-$r.txt 2>&1
  echo "-- $b round $r"; grep -E "^andrea B=|^ceilings" $OUT/bench-$b-$r.txt | head -12
done; done
echo "== ncu ($SECONDS s)"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
rm -rf /tmp/an; timeout ${NCU_S:-300} $NCU --clock-control none --metrics gpu__time_duration.sum,launch__grid_size --csv --page raw \
  --log-file $OUT/ncu.csv ./build-gpu/andrea analyze /tmp/m/base --device cuda --out /tmp/an --quiet --timing >/tmp/ncu-an.txt 2>&1
echo "ncu rc=$? ($SECONDS s)"; grep "time (" /tmp/ncu-an.txt | cut -c1-400
python3 - $OUT/ncu.csv <<'EOF2'
import csv, sys, collections
rows = list(csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')))
h = rows[0]; ki = h.index("Kernel Name"); ti = h.index("gpu__time_duration.sum"); gi = h.index("launch__grid_size")
data = [r for r in rows[1:] if r[ti].replace('.', '', 1).replace(',', '').isdigit()]
unit = rows[1][ti]; print("unit row:", unit)
tot = collections.defaultdict(lambda: [0, 0.0]); by = collections.defaultdict(lambda: [0, 0.0]); all_t = 0
for r in data:
    t = float(r[ti].replace(',', '')); all_t += t
    n = r[ki][:70]; tot[n][0] += 1; tot[n][1] += t
    by[(n, r[gi])][0] += 1; by[(n, r[gi])][1] += t
print(f"{len(data)} launches, {all_t/1e6:.3f} (ms if ns) total")
for n, (c, t) in sorted(tot.items(), key=lambda x: -x[1][1])[:25]: print(f"{t/1e6:9.3f} {100*t/all_t:5.1f}% {c:6d}  {n}")
print("-- by name and grid")
for (n, g), (c, t) in sorted(by.items(), key=lambda x: -x[1][1])[:30]: print(f"{t/1e6:9.3f} {c:6d} grid {g:>8} {n[:60]}")
EOF2
echo "== done ($SECONDS s)"
