#!/usr/bin/env bash
# test_causal_evidence_cli — the causal check's methods and verdicts through the CLI (issue 38):
#   - an unknown --ablation is one usage line naming the methods (analyze and classify);
#   - each method is stored in runs.ablation and the catalog's settings, and mean, resample and
#     zero give different deltas (the same items and positions);
#   - mean and resample refuse a suite of one item with a note, zero checks it;
#   - fewer than 8 items: deltas without intervals or verdicts, and the run's note says so (shown
#     on the terminal unless --quiet);
#   - the bundled model with the CPU default (8 items, mean): the verdicts the issue sets as
#     targets (induction 3.2, 3.4, 3.5 necessary or redundant; bracket 2.3 necessary;
#     prev-token 0.1 and 2.0 not pattern_only), the pattern_only heads listed apart in the
#     summary, and intervals around every labelled head's delta.
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-tiny.bin models/andrea-bundled.bin
cd "$tmp"
T=$ANDREA_SRC/models/andrea-tiny.bin
B=$ANDREA_SRC/models/andrea-bundled.bin
expect_one_line 2 "^andrea analyze: --ablation wants one of mean, resample, zero, not 'medium'" analyze "$T" --ablation medium
expect_one_line 2 "^andrea classify: --ablation wants one of mean, resample, zero, not ''" classify x.h5 --db c.db --ablation ""

for m in mean resample zero; do
  "$A" analyze "$T" --out o-$m --probes induction,prev_token --n 4 --len 48 --ablation $m --quiet >o-$m.out 2>o-$m.err ||
    bad "analyze --ablation $m" "$(cat o-$m.err)"
  got=$(sql_rows o-$m/catalog.db "SELECT ablation, json_extract(settings, '\$.ablation') FROM runs")
  [[ $got == "$m|$m" ]] && ok "--ablation $m stored in runs.ablation and the settings" || bad "runs.ablation $m" "$got"
  sql_rows o-$m/catalog.db "SELECT class, layer, head, ablation_delta FROM head_catalog ORDER BY 1, 2, 3" >d-$m.txt
  sql_rows o-$m/catalog.db "SELECT ablation_note FROM runs" | grep -q "no intervals or verdicts: they need 8 items a suite" &&
    ! grep -q "no intervals" o-$m.err && # --quiet: in the run's note, not on the terminal
    [[ $(sql_rows o-$m/catalog.db "SELECT count(*) FROM head_catalog WHERE ablation_ci_low IS NOT NULL OR evidence IS NOT NULL") == 0 ]] &&
    [[ $(sql_rows o-$m/catalog.db "SELECT count(*) FROM head_catalog WHERE ablation_delta IS NOT NULL") -gt 0 ]] &&
    ok "$m on 4 items: deltas, no intervals or verdicts, and the note" || bad "4 items $m" "$(cat o-$m.err)"
done
! cmp -s d-mean.txt d-zero.txt && ! cmp -s d-mean.txt d-resample.txt && ok "mean, resample and zero measure different deltas" ||
  bad "methods" "two methods gave the same deltas"

"$A" dump "$T" --probes induction --n 1 --len 48 --out one.h5 --device cpu --quiet 2>/dev/null || bad "dump" "one item"
for m in mean resample; do
  "$A" classify one.h5 --db one-$m.db --ablation $m --quiet >/dev/null 2>one.err && grep -q "no causal check for induction: $m ablation needs 2 items, it has 1" one.err &&
    [[ $(sql_rows one-$m.db "SELECT count(*) FROM head_catalog WHERE ablation_delta IS NOT NULL") == 0 ]] &&
    ok "$m refuses a suite of one item with a note" || bad "$m on one item" "$(cat one.err)"
done
"$A" classify one.h5 --db one-zero.db --ablation zero --quiet >/dev/null 2>one.err &&
  [[ $(sql_rows one-zero.db "SELECT count(*) FROM head_catalog WHERE ablation_delta IS NOT NULL") -gt 0 ]] &&
  ok "zero checks a suite of one item" || bad "zero on one item" "$(cat one.err)"

"$A" analyze "$B" --out b --device cpu >b.out 2>b.err || bad "bundled" "$(cat b.err)"
ev() { sql_rows b/catalog.db "SELECT evidence FROM head_catalog WHERE current AND label AND class = '$1' AND layer = $2 AND head = $3"; }
for h in 3.2 3.4 3.5; do
  v=$(ev induction ${h%.*} ${h#*.})
  [[ $v == necessary || $v == redundant ]] && ok "bundled induction $h: $v" || bad "bundled induction $h" "'$v'"
done
v=$(ev bracket 2 3); [[ $v == necessary ]] && ok "bundled bracket 2.3: $v" || bad "bundled bracket 2.3" "'$v'"
for h in 0.1 2.0; do
  v=$(ev prev_token ${h%.*} ${h#*.})
  [[ -n $v && $v != pattern_only ]] && ok "bundled prev_token $h: $v" || bad "bundled prev_token $h" "'$v'"
done
[[ $(sql_rows b/catalog.db "SELECT count(*) FROM head_catalog WHERE current AND label AND NOT (ablation_ci_low <= ablation_delta AND ablation_delta <= ablation_ci_high)") == 0 ]] &&
  ok "every labelled head's delta lies in its interval" || bad "intervals" "a delta outside its interval"
po=$(sql_rows b/catalog.db "SELECT class || ' ' || layer || '.' || head FROM head_catalog WHERE current AND label AND evidence = 'pattern_only' ORDER BY 1" | head -1)
if [[ -n $po ]]; then
  awk '/^attend like their class/{f=1; next} f' b.out | grep -q "^${po%% *} .*${po#* }" &&
    ok "pattern_only heads are listed apart in the summary ($po)" || bad "summary" "$(cat b.out)"
fi
[[ $(sql_rows b/catalog.db "SELECT group_size FROM suites WHERE class = 'induction'") == 3 &&
   $(sql_rows b/catalog.db "SELECT n_controls FROM suites WHERE class = 'induction'") == 20 ]] &&
  ok "the induction set of 3 beside 20 random sets" || bad "set" "$(sql_rows b/catalog.db "SELECT * FROM suites WHERE class = 'induction'")"

# a hand-edited catalog's verdict or method text never reaches a page as markup
"$A" analyze "$T" --out h --probes induction --n 8 --len 48 --ablation zero --dump h.h5 --quiet >/dev/null 2>h.err ||
  bad "hostile setup" "$(cat h.err)"
"$A" render h.h5 --db h/catalog.db --out hr0 --quiet >/dev/null 2>hr.err || bad "render" "$(cat hr.err)"
grep -q "induction (necessary)" hr0/index.html && ok "before the edit the index shows the tiny model's induction head 1.2 as necessary" ||
  bad "baseline render" "no 'induction (necessary)' in the index"
/usr/bin/python3 - h/catalog.db <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE head_scores SET evidence = '<b id=evil>necessary</b>'")
db.execute("UPDATE runs SET ablation = '<script>x</script>'")
db.commit()
PY
"$A" render h.h5 --db h/catalog.db --out hr --quiet >/dev/null 2>hr.err || bad "render" "$(cat hr.err)"
if [[ -s hr/index.html ]] && ! grep -rq "id=evil\|<script>x" hr/; then
  ok "hand-edited verdict and method text is shown as nothing, not as markup"
else
  bad "hostile verdict" "$(grep -rl "id=evil\|<script>x" hr/ | head -3)"
fi
finish
