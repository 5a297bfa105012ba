#!/usr/bin/env bash
# same_outputs.sh OLD_ANDREA NEW_ANDREA — a before/after run for a change that must not change any
# output (a refactor: issue 40's "bit-identical outputs"). Both binaries analyse, alternately,
#   1. the bundled model with --dump (one checkpoint: catalog, dump, report), and without (the
#      forwards for the scorer and the report alone),
#   2. the dyck series of tests/data/series (3 checkpoints: one catalog, reports, series page),
# on the CPU, each into a fresh folder, and the outputs are compared:
#   catalogs: every row of every table, REALs bit for bit (tests/mpi_compare_catalogs.py --exact;
#             run times and dump seals excepted: they are when and which bytes, not results);
#   dumps:    every dataset and attribute bit for bit (tests/mpi_compare_dumps.py);
#   reports:  every file of the report folders byte for byte, except overview/images.tsv's run
#             time column and the catalog files;
#   stdout:   the printed summaries.
# Prints one line per comparison and exits 1 on any difference.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
old=$(realpath "$1") new=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ANDREA_PROBE_DATA="$here/probes/data" ANDREA_MODEL_DIR="$here/models"
series=("$here"/tests/data/series/dyck-step00{100,300}.bin "$here"/tests/data/series/dyck-step01000.bin)
bad=0
# both runs write to the same paths (the catalog and the report record them), then move aside
for which in old new; do
  bin=$old; [ $which = new ] && bin=$new
  mkdir -p "$work/run"
  (cd "$work/run" && "$bin" analyze --device cpu --out one --dump one.h5 --quiet >one.txt 2>&1) ||
    { echo "$which: analyze of the bundled model failed"; cat "$work/run/one.txt"; bad=1; }
  (cd "$work/run" && "$bin" analyze --device cpu --out plain --quiet >plain.txt 2>&1) ||
    { echo "$which: analyze of the bundled model without a dump failed"; cat "$work/run/plain.txt"; bad=1; }
  (cd "$work/run" && "$bin" analyze "${series[@]}" --device cpu --out series --keep-dumps --quiet >series.txt 2>&1) ||
    { echo "$which: analyze of the series failed"; cat "$work/run/series.txt"; bad=1; }
  mv "$work/run" "$work/$which"
done
[ $bad = 0 ] || exit 1
same() { if "$@" >"$work/cmp.txt" 2>&1; then echo "same: ${label}"; else echo "DIFFERENT: ${label}"; head -20 "$work/cmp.txt"; bad=1; fi; }
for run in one plain series; do
  label="$run: catalog rows" same python3 "$here/tests/mpi_compare_catalogs.py" --exact "$work/old/$run/catalog.db" "$work/new/$run/catalog.db"
  label="$run: printed output" same diff "$work/old/$run.txt" "$work/new/$run.txt"
done
label="one: dump" same python3 "$here/tests/mpi_compare_dumps.py" "$work/old/one.h5" "$work/new/one.h5"
for h5 in "$work"/old/series/*.h5; do
  label="series: dump $(basename "$h5")" same python3 "$here/tests/mpi_compare_dumps.py" "$h5" "$work/new/series/$(basename "$h5")"
done
for run in one plain series; do
  # the report's files; images.tsv records which run (time) drew each heatmap
  label="$run: report files" same diff -r -x 'catalog.db*' -x '*.h5' -x images.tsv "$work/old/$run" "$work/new/$run"
  while IFS= read -r tsv; do
    rel=${tsv#"$work/old/$run/"}
    label="$run: $rel (without the run time)" same diff <(cut -f1-3,5- "$tsv") <(cut -f1-3,5- "$work/new/$run/$rel")
  done < <(find "$work/old/$run" -name images.tsv)
done
exit $bad
