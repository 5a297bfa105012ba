#!/usr/bin/env bash
# test_report_rewritten_keeps_current_suites_heatmaps — a report written again into its folder
# keeps the heatmaps (per-head PNGs, thumbnail grid) of every suite the catalog still lists as
# current for that checkpoint, drawn by an earlier run, and links them; it removes those of suites
# that are no longer current (a map-only suite, a suite whose current run is now another one, a
# report of another checkpoint); a current suite whose heatmaps this folder does not hold is said
# so on the pages, never linked. No page links a file that is not there (issue 39: 2).
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-bundled.bin models/andrea-tiny.bin
cd "$tmp"
M="$ANDREA_SRC/models/andrea-bundled.bin"
common=(--n 4 --ablate-items 0 --quiet --report full) # the PNGs of every head: what this test counts
printf '%s\n' '{"suite": "word_start", "text": "abcabc abcabc", "targets": [[8, [1]]]}' \
  '{"suite": "word_start", "text": "the cat the cat", "targets": [[9, [1]]]}' >ws.jsonl
printf 'The cat sat on the mat.\nA second text.\n' >texts.txt
analyze() { "$A" analyze "$@" "${common[@]}" >/dev/null 2>"$tmp/err" || bad "analyze $*" "$(cat "$tmp/err")"; }
# pngs SUITE: how many per-head heatmaps of SUITE o/maps holds
pngs() { find o/maps -name "*$1*_e0.png" 2>/dev/null | wc -l; }
# dangling: every local src/href of o's index and head pages that names no file
dangling() {
  /usr/bin/python3 - o <<'PY'
import os, re, sys, html
root = sys.argv[1]
pages = [os.path.join(root, "index.html")] + [os.path.join(root, "heads", f) for f in os.listdir(os.path.join(root, "heads"))]
for p in pages:
    for ref in re.findall(r'(?:src|href)="([^"#]+)', open(p, encoding="utf-8").read()):
        ref = html.unescape(ref)
        if ":" in ref or "{" in ref:
            continue  # data-href templates, other schemes
        if not os.path.exists(os.path.join(os.path.dirname(p), ref)):
            print(os.path.relpath(p, root), "->", ref)
PY
}

# 1. induction and bos, then a probe file's suite: the earlier suites stay current, so do their maps
analyze "$M" --out o --probes induction,bos
[[ $(pngs induction) == 32 && $(pngs bos) == 32 ]] && ok "the first report draws induction and bos" ||
  bad "first report" "induction $(pngs induction), bos $(pngs bos)"
analyze "$M" --out o --probes ws.jsonl
if [[ $(pngs induction) == 32 && $(pngs bos) == 32 && $(pngs word_start) == 32 ]]; then
  ok "a report of another suite keeps the heatmaps of the suites still current (32 + 32) beside its own"
else
  bad "kept heatmaps" "induction $(pngs induction), bos $(pngs bos), word_start $(pngs word_start)"
fi
page=o/heads/L3_H2.html
if grep -q 'maps/L3_H2/[^"]*induction_e0\.png' $page && grep -q 'maps/L3_H2/[^"]*bos_e0\.png' $page &&
  grep -q 'overview/thumbs_[^"]*induction[^"]*\.png' o/index.html; then
  ok "the head page links the kept heatmaps, the index the kept thumbnails"
else
  bad "links to kept heatmaps" "$(grep -o '[a-z_/0-9.-]*\.png' $page | sort -u | tr '\n' ' ')"
fi
d=$(dangling)
[[ -z $d ]] && ok "no dangling link after the second report" || bad "dangling links" "$d"

# 2. a map-only suite is never current: its maps go with the next report
analyze "$M" --out o --probes bos --texts texts.txt
[[ $(pngs texts) == 32 ]] && ok "the map-only suite's maps are drawn" || bad "texts maps" "$(pngs texts)"
analyze "$M" --out o --probes induction
[[ $(pngs texts) == 0 && $(pngs bos) == 32 && $(pngs word_start) == 32 ]] &&
  ok "the next report removes the map-only suite's maps and keeps bos's and word_start's" ||
  bad "map-only suite" "texts $(pngs texts), bos $(pngs bos), word_start $(pngs word_start)"
[[ -z $(find o -name '*texts*') ]] && ok "no file of the map-only suite is left" || bad "texts files" "$(find o -name '*texts*' | head -3)"

# 3. a suite whose current run is now one that drew no maps here (a dump classified into the
# catalog): its earlier maps go, and every head page says its heatmaps are not in this report
"$A" dump "$M" --probes bos --n 3 --out bos.h5 --quiet --device cpu 2>"$tmp/err" || bad "dump" "$(cat "$tmp/err")"
"$A" classify bos.h5 --db o/catalog.db --ablate-items 0 --quiet >/dev/null 2>"$tmp/err" || bad "classify" "$(cat "$tmp/err")"
analyze "$M" --out o --probes induction
if [[ $(pngs bos) == 0 && $(pngs word_start) == 32 && $(pngs induction) == 32 ]] &&
  [[ $(grep -l 'bos' o/heads/*.html | xargs grep -l 'not in this report' | wc -l) == 32 ]]; then
  ok "maps drawn with another run than the current one go; the pages say bos's heatmaps are not here"
else
  bad "superseded suite" "bos $(pngs bos), word_start $(pngs word_start); pages saying so: $(grep -l 'not in this report' o/heads/*.html | wc -l)"
fi
grep -q 'overview/thumbs_[^"]*bos' o/index.html && bad "index" "links bos thumbnails" || ok "the index links no bos thumbnails"
d=$(dangling)
[[ -z $d ]] && ok "no dangling link after the third report" || bad "dangling links" "$d"

# 4. a report of another checkpoint: none of the first checkpoint's suites is current for it
analyze "$ANDREA_SRC/models/andrea-tiny.bin" --out o --probes bos
left=$(find o/maps o/overview -name '*induction*' -o -name '*word_start*' | head -3)
[[ -z $left && -n $(find o/maps -name '*bos_e0.png') ]] && ok "a report of another checkpoint keeps none of the first one's heatmaps" ||
  bad "another checkpoint" "left: $left"
d=$(dangling)
[[ -z $d ]] && ok "no dangling link after another checkpoint's report" || bad "dangling links" "$d"
finish
