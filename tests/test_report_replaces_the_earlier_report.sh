#!/usr/bin/env bash
# test_report_replaces_the_earlier_report — a report written over an earlier one leaves none of
# the earlier one's files: analyze with two suites, then with one, into one folder: no example map
# of the dropped suite remains (its scores stay in the catalog, current for that class, so the
# report's score overview still shows them), the catalog holds both runs, and a file of the
# user's in the report's folders stays.
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-tiny.bin
cd "$tmp"
M="$ANDREA_SRC/models/andrea-tiny.bin"
"$A" analyze "$M" --out out --probes bos,induction --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>&1 ||
  bad "first analyze" "failed"
[[ -n $(find out/maps -name '*induction*') ]] && ok "the first report has induction maps" || bad "first report" "$(ls out/maps | head)"
echo mine >out/maps/notes.txt
"$A" analyze "$M" --out out --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>&1 || bad "second analyze" "failed"
left=$(find out/maps -name '*induction*' | head -3)
if [[ -z $left && -f out/index.html && $(cat out/maps/notes.txt) == mine ]]; then
  ok "the second report left none of the first one's induction files, and the user's file"
else
  bad "stale files" "left: $left; index $([[ -f out/index.html ]] && echo present || echo missing)"
fi
runs=$("$A" sql out/catalog.db "SELECT count(*) FROM runs" --format csv | tail -1 | tr -d '\r')
[[ $runs == 2 ]] && ok "the catalog keeps both runs" || bad "runs" "$runs"
finish
