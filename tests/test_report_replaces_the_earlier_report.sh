#!/usr/bin/env bash
# test_report_replaces_the_earlier_report — a report written over an earlier one leaves none of
# the earlier one's files it does not keep: analyze with a scored suite and a map-only one (texts
# without targets, never current in the catalog), then with another scored suite, into one folder:
# no file of the dropped suite remains, the catalog holds both runs, and a file of the user's in
# the report's folders stays (the images of a dropped suite that stays current are kept:
# test_report_rewritten_keeps_current_suites_heatmaps). A `show` page written over an earlier one,
# with fewer heads and no second checkpoint, leaves none of the earlier page's head data (nor its
# data/m1/).
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-tiny.bin
cd "$tmp"
M="$ANDREA_SRC/models/andrea-tiny.bin"
printf 'abcabc abcabc\nThe cat sat.\n' >texts.txt
"$A" analyze "$M" --out out --probes induction --texts texts.txt --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>&1 ||
  bad "first analyze" "failed"
[[ -n $(find out/maps -name '*texts*') ]] && ok "the first report has the map-only suite's maps" || bad "first report" "$(ls out/maps | head)"
echo mine >out/maps/notes.txt
"$A" analyze "$M" --out out --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>&1 || bad "second analyze" "failed"
left=$(find out/maps out/overview -name '*texts*' | head -3)
if [[ -z $left && -f out/index.html && $(cat out/maps/notes.txt) == mine ]]; then
  ok "the second report left none of the first one's map-only suite's files, and the user's file"
else
  bad "stale files" "left: $left; index $([[ -f out/index.html ]] && echo present || echo missing)"
fi
runs=$("$A" sql out/catalog.db "SELECT count(*) FROM runs" --format csv | tail -1 | tr -d '\r')
[[ $runs == 2 ]] && ok "the catalog keeps both runs" || bad "runs" "$runs"
# only andrea's own files of a marked earlier report go: a user's pages and scripts under heads/,
# data/, maps/ stay, in a folder that was never a report and in one that is
mkdir -p site/heads/team site/data/vendor site/maps/tiles
echo mine >site/heads/team/alice.html; echo mine >site/data/app.js; echo mine >site/data/vendor/lib.js
echo mine >site/maps/tiles/0_0.png
"$A" analyze "$M" --out site --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>&1 || bad "site analyze" "failed"
echo mine >site/heads/notes.html
"$A" analyze "$M" --out site --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>&1 || bad "site analyze 2" "failed"
kept=1
for f in site/heads/team/alice.html site/data/app.js site/data/vendor/lib.js site/maps/tiles/0_0.png site/heads/notes.html; do
  [[ $(cat "$f" 2>/dev/null) == mine ]] || { kept=0; bad "user file" "$f is gone"; }
done
((kept)) && [[ -f site/index.html && -f site/heads/L0_H0.html ]] && ok "a user's files in the report's folders stay"
# show: all heads and a second checkpoint, then two heads alone
"$A" show "$M" "abcabc abcabc" --out page --also "$M" --quiet >/dev/null 2>&1 || bad "first show" "failed"
echo mine >page/data/mine.js
n_first=$(ls page/data | grep -c '^L.*_H.*\.js$')
[[ $n_first -gt 2 && -d page/data/m1 ]] && ok "the first page has every head's data and a second checkpoint's" ||
  bad "first page" "$(ls page/data)"
"$A" show "$M" "abcabc" --out page --heads 0.0,0.1 --quiet >/dev/null 2>&1 || bad "second show" "failed"
heads=$(cd page/data && ls L*_H*.js 2>/dev/null | sort | tr '\n' ' ')
if [[ $heads == "L0_H0.js L0_H1.js " && ! -e page/data/m1 && -f page/index.html && $(cat page/data/mine.js) == mine ]]; then
  ok "the second page left none of the first page's heads or checkpoints, and the user's file"
else
  bad "stale page files" "heads: $heads; m1 $([[ -e page/data/m1 ]] && echo left || echo gone)"
fi
finish
