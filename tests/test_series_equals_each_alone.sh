#!/usr/bin/env bash
# test_series_equals_each_alone.sh — `andrea analyze CKPT CKPT..` runs a serial series on one engine
# (each next checkpoint of the same shape swapped in, pipeline/series_keep.h) and reads the next
# checkpoint on a thread while the current one runs. Neither may change a number: every catalog row
# of every checkpoint (scores, baselines, ablation effects and intervals, direct effects,
# verdicts, labels, circuit scores) equals the row of that checkpoint analysed alone, to the last
# bit (%.17g). The series holds a checkpoint of another shape in the middle (the engine is closed
# and a new one opened, then swapped again) and the same-shape checkpoints on both sides of it.
# --timing (on the series) prints each checkpoint's scoring and the series' phases.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files tests/data/series/dyck-step00300.bin tests/data/series/dyck-step08000.bin models/andrea-bundled.bin
cd "$tmp"
S="$ANDREA_SRC/tests/data/series"
ckpts=("$S/dyck-step00300.bin" "$S/dyck-step01000.bin" "$ANDREA_SRC/models/andrea-bundled.bin" "$S/dyck-step08000.bin")
args=(--probes bracket,prev_token,induction --n 12 --device cpu --quiet)

"$A" analyze "${ckpts[@]}" --out series "${args[@]}" --timing > series.txt 2> series.err \
  && ok "a series of 4 checkpoints (one of another shape between) exits 0" || bad "series" "$(tail -3 series.err)"
# --timing: a scoring line per checkpoint, then the series' phases with the reports' stages
if [[ $(grep -c '^andrea analyze: time (.*): model load + probes' series.err) == 4 ]] &&
  grep -q '^andrea analyze: time (series of 4 checkpoints): scoring .* reports .* a checkpoint: heatmaps' series.err; then
  ok "--timing: each checkpoint's scoring and the series' phases"
else
  bad "--timing in a series" "$(grep 'time (' series.err | cut -c1-120)"
fi
for i in "${!ckpts[@]}"; do
  "$A" analyze "${ckpts[$i]}" --out "alone$i" "${args[@]}" > /dev/null 2> "alone$i.err" || bad "alone $i" "$(tail -3 "alone$i.err")"
done

# the rows of one checkpoint, every column that a number or verdict lands in, exact
rows() { # DB SHA256
  "$A" sql "$1" "SELECT layer, head, class, printf('%.17g|%.17g|%.17g|%.17g|%.17g|%.17g', score, baseline,
    ablation_delta, ablation_ci_low, ablation_ci_high, direct_delta), causal, evidence, label
    FROM head_catalog WHERE checkpoint_sha256 = '$2' ORDER BY layer, head, class"
  "$A" sql "$1" "SELECT src_layer, src_head, dst_layer, dst_head, kind, printf('%.17g|%.17g', score, baseline)
    FROM head_composition WHERE checkpoint_sha256 = '$2' ORDER BY 1, 2, 3, 4, 5"
  "$A" sql "$1" "SELECT layer, head, printf('%.17g|%.17g', copying, prev_pos) FROM head_weights
    WHERE checkpoint_sha256 = '$2' ORDER BY 1, 2"
}
for i in "${!ckpts[@]}"; do
  sha=$(sha256sum "${ckpts[$i]}" | cut -c1-64)
  rows "alone$i/catalog.db" "$sha" > "a$i.txt"
  rows series/catalog.db "$sha" > "s$i.txt"
  n=$(wc -l < "a$i.txt")
  if [[ $n -gt 20 ]] && cmp -s "a$i.txt" "s$i.txt"; then ok "checkpoint $i: its $n catalog rows in the series equal those of it alone"
  else bad "checkpoint $i" "$n rows; differences: $(diff "a$i.txt" "s$i.txt" | head -4)"; fi
done
# the labelled heads, as one line per checkpoint
for i in "${!ckpts[@]}"; do
  sha=$(sha256sum "${ckpts[$i]}" | cut -c1-64)
  a=$("$A" sql "alone$i/catalog.db" "SELECT group_concat(class || ' ' || layer || '.' || head) AS labels FROM head_catalog WHERE label = 1" --format csv | tail -n +2)
  s=$("$A" sql series/catalog.db "SELECT group_concat(class || ' ' || layer || '.' || head) AS labels FROM head_catalog WHERE label = 1 AND checkpoint_sha256 = '$sha'" --format csv | tail -n +2)
  [[ $a == "$s" ]] && ok "checkpoint $i: the same labels ($a)" || bad "labels $i" "alone '$a', series '$s'"
done
finish
