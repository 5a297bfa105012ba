#!/usr/bin/env bash
# bench_report.sh — the report stage of `andrea analyze` (its --timing "report" line) and the size
# of the output folder by kind of file, for two builds side by side in one run.
#
#   bench/bench_report.sh BEFORE_BIN AFTER_BIN [MODEL] [THREADS...]
#   RENDER=1 bench/bench_report.sh ...   the report stage alone: AFTER_BIN analyses once with
#        --dump, then each build runs `andrea render` of that dump and catalog under /usr/bin/time
#        (wall and user+sys CPU seconds: on a shared machine CPU time is the steadier number)
#
# MODEL: a checkpoint (default: the bundled model); "120m" makes a random ANDREA-120M (12 x 12,
# d_model 768, GPT-2 BPE from tests/data/gpt2) with bench/make_random_model into $TMPDIR and
# analyses it with --n 2 (the report shows 2 examples per suite, so a small --n keeps the
# forwards short on a CPU without changing the report). --ablate-items 0 skips the causal check
# (the report's content does not depend on it but for the Δloss numbers). THREADS: the
# OMP_NUM_THREADS values to run (default: 2). Each run writes into a fresh folder.
set -euo pipefail
BEFORE=$1 AFTER=$2 MODEL=${3:-} ; shift 2; [[ $# -gt 0 ]] && shift
THREADS=("${@:-2}")
[[ ${#THREADS[@]} -eq 0 ]] && THREADS=(2)
W=${TMPDIR:-/tmp}/andrea-bench-report.$$
mkdir -p "$W"
trap 'rm -rf "$W"' EXIT
ARGS=(--ablate-items 0 --quiet --timing)
if [[ $MODEL == 120m ]]; then
  MK=$(dirname "$AFTER")/bench/make_random_model
  "$MK" "$W/m120" > /dev/null
  cp "$(dirname "$0")/../tests/data/gpt2/vocab.json" "$(dirname "$0")/../tests/data/gpt2/merges.txt" "$W/m120/"
  MODEL=$W/m120
  ARGS+=(--n 2)
fi
if [[ ${RENDER:-0} == 1 ]]; then
  "$AFTER" analyze $MODEL "${ARGS[@]}" --dump "$W/d.h5" --out "$W/a" > /dev/null 2>&1
  echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "model: ${MODEL:-bundled}; andrea render DUMP --db CATALOG --out DIR --quiet (dump: analyze ${ARGS[*]} --dump)"
  printf '%-9s %-7s %8s %8s %9s %9s %9s %9s %6s %s\n' build threads wall_s cpu_s total_MB maps_MB data_MB heads_MB PNGs load
  for t in "${THREADS[@]}"; do
    for which in before after after_all after_0; do
      bin=$BEFORE; extra=(); [[ $which == after* ]] && bin=$AFTER
      [[ $which == after_all ]] && extra=(--report-maps all) # the before build's PNGs, drawn by the after build
      [[ $which == after_0 ]] && extra=(--report-maps 0)     # no heatmap PNG: overviews, data, pages
      out=$W/r-$which-$t
      read -r wall usr sys < <(OMP_NUM_THREADS=$t /usr/bin/time -f '%e %U %S' "$bin" render "$W/d.h5" --db "$W/a/catalog.db" \
        --out "$out" --quiet "${extra[@]}" 2>&1 >/dev/null | tail -1)
      mb() { [[ -e $1 ]] && du -sm "$1" | cut -f1 || echo 0; }
      printf '%-9s %-7s %8s %8.2f %9s %9s %9s %9s %6s %s\n' $which $t "$wall" "$(echo "$usr + $sys" | bc)" "$(mb $out)" \
        "$(mb $out/maps)" "$(mb $out/data)" "$(mb $out/heads)" "$(find $out -name '*.png' | wc -l)" "$(cut -d' ' -f1 /proc/loadavg)"
      rm -rf "$out"
    done
  done
  exit 0
fi
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "model: ${MODEL:-bundled}; analyze ${ARGS[*]}"
printf '%-8s %-7s %9s %9s %9s %9s %9s %9s %6s\n' build threads report_s total_MB maps_MB data_MB heads_MB overv_MB PNGs
for t in "${THREADS[@]}"; do
  for which in before after; do
    bin=$BEFORE; [[ $which == after ]] && bin=$AFTER
    out=$W/$which-$t
    line=$(OMP_NUM_THREADS=$t "$bin" analyze $MODEL "${ARGS[@]}" --out "$out" 2>&1 >/dev/null | grep 'time (' | head -1)
    rep=$(sed -n 's/.* report \([0-9.]*\) s.*/\1/p' <<< "$line")
    mb() { [[ -e $1 ]] && du -sm "$1" | cut -f1 || echo 0; }
    rm -f "$out"/catalog.db-*  # the catalog counts; its -wal/-shm companions are transient
    printf '%-8s %-7s %9s %9s %9s %9s %9s %9s %6s\n' $which $t "$rep" "$(mb $out)" "$(mb $out/maps)" "$(mb $out/data)" \
      "$(mb $out/heads)" "$(mb $out/overview)" "$(find $out -name '*.png' | wc -l)"
    rm -rf "$out"
  done
done
