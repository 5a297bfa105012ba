#!/usr/bin/env bash
# test_series_rerun_over_some_checkpoints_links_the_others — a series run again into its folder
# over some of its checkpoints wrote a series page of those alone: the other checkpoints' reports
# stayed in the folder (and their runs in the catalog) but the page no longer linked them. Now the
# page (and the table on stdout) shows every checkpoint of this run and every complete checkpoint
# report already in the folder whose checkpoint the catalog holds in the same series; a report of
# another series, a report stopped midway (no index.html) and a second report of a checkpoint
# given now are left out.
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files tests/data/series/dyck-step00030.bin models/andrea-tiny.bin
cd "$tmp"
S="$ANDREA_SRC/tests/data/series"
M="$ANDREA_SRC/models/andrea-tiny.bin"
opts=(--probes bos --ablate-items 0 --quiet)
"$A" analyze "$S/dyck-step00030.bin" "$S/dyck-step00100.bin" "$S/dyck-step00300.bin" --out s "${opts[@]}" >first.out 2>&1 ||
  bad "setup" "$(cat first.out)"
# beside them: another series' report (its run in the same catalog), a report stopped midway,
# and a copy of a report of a checkpoint the next run gives again
"$A" dump "$M" --probes bos --n 2 --len 16 --device cpu --out t.h5 --quiet >/dev/null 2>&1
"$A" classify t.h5 --db s/catalog.db --ablate-items 0 >/dev/null 2>&1 || bad "setup" "classify"
"$A" render t.h5 --db s/catalog.db --out s/tiny --quiet >/dev/null 2>&1 || bad "setup" "render"
cp -a s/dyck-step00300 s/stopped && rm s/stopped/index.html
cp -a s/dyck-step00100 s/copy-of-100
"$A" analyze "$S/dyck-step00100.bin" "$S/dyck-step00300.bin" --out s "${opts[@]}" >again.out 2>again.err
rc=$?
links=$(grep -o 'href="[^"#]*/index.html"' s/index.html | sort -u | tr '\n' ' ')
want='href="dyck-step00030/index.html" href="dyck-step00100/index.html" href="dyck-step00300/index.html" '
if [[ $rc == 0 && $links == "$want" ]] && grep -q "<h1>Series dyck: 3 checkpoints</h1>" s/index.html; then
  ok "the page links the checkpoint left out of the run again, and nothing else ($links)"
else
  bad "links" "exit $rc: $links; $(cat again.err)"
fi
steps=$(awk '/labelled heads per step/{on=1; next} on && /^[0-9]/{print $1}' again.out | tr '\n' ' ')
[[ $steps == "30 100 300 " ]] && ok "the table on stdout has the same three steps" || bad "table" "steps '$steps': $(cat again.out)"
[[ -f s/dyck-step00030/index.html && -f s/tiny/index.html ]] && ok "the reports beside the run are left as they were" ||
  bad "kept" "$(ls s)"
grep -q "held the report of another checkpoint" again.err && bad "note" "a report of the same checkpoint was called another's" ||
  ok "a report rewritten for its own checkpoint needs no note"
# another run's checkpoint under a name of this series replaces that report, and says so
mkdir -p other && cp "$M" other/dyck-step00030.bin
"$A" analyze other/dyck-step00030.bin "$S/dyck-step00300.bin" --out s --probes bos --ablate-items 0 >other.out 2>other.err
grep -q "note: s/dyck-step00030 held the report of another checkpoint (sha256 [0-9a-f]*...), replaced by this one's" other.err &&
  ok "a report of another checkpoint under the same name is replaced with a note" || bad "replaced note" "$(cat other.err)"
finish
