#!/usr/bin/env bash
# test_catalog_readers_keep_runs_apart.sh — one checkpoint classified twice (an older dump without
# the causal check, a newer one with it): every reader answers from one run per cell, as `sql`
# reads the view. `render` of the older dump shows its own run, whose causal was not measured; it
# used to keep the newer run's causal 0 in those cells ("(attention-only)" beside heads nobody
# ablated). And `heads --step` takes every step classify --step stores (it refused those > 2^53).
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-bundled.bin
cd "$tmp"
M=$ANDREA_SRC/models/andrea-bundled.bin
big=9007199254740993 # 2^53 + 1
"$A" dump "$M" --probes induction --n 4 --out d1.h5 --device cpu --quiet >/dev/null 2>d.err &&
  "$A" dump "$M" --probes induction --n 6 --out d2.h5 --device cpu --quiet >/dev/null 2>>d.err &&
  "$A" classify d1.h5 --db c.db --ablate-items 0 --step $big --quiet >/dev/null 2>>d.err &&
  "$A" classify d2.h5 --db c.db --ablate-items 1 --ablation zero --device cpu --quiet >/dev/null 2>>d.err || bad "setup" "$(cat d.err)"

unmeasured=$(sql_rows c.db "SELECT count(*) FROM head_catalog WHERE run = 1 AND label AND causal IS NULL")
flagged=$(sql_rows c.db "SELECT count(*) FROM head_catalog WHERE run = 2 AND current AND label AND causal = 0")
if [[ $unmeasured -ge 1 && $flagged -ge 1 ]]; then
  "$A" render d1.h5 --db c.db --out r1 --quiet >/dev/null 2>r.err && "$A" render d2.h5 --db c.db --out r2 --quiet >/dev/null 2>>r.err ||
    bad "render" "$(cat r.err)"
  n1=$(grep -o '(attention-only)' r1/index.html | wc -l)
  n2=$(grep -o '(attention-only)' r2/index.html | wc -l)
  [[ $n1 -eq 0 ]] && ok "the older dump's report flags none of its $unmeasured labelled heads (causal not measured in its run)" ||
    bad "older dump's report" "$n1 heads flagged attention-only with the newer run's causal"
  [[ $n2 -eq $flagged ]] && ok "the newer dump's report flags its $flagged labelled heads of causal 0" || bad "newer report" "$n2 flagged"
else
  bad "fixture" "want labelled heads without causal in run 1 ($unmeasured) and of causal 0 in run 2 ($flagged)"
fi

out=$("$A" heads --db c.db --step $big --all --format csv 2>h.err | tail -n +2 | cut -d, -f3 | sort -u)
[[ $out == "$big" ]] && ok "heads --step $big lists the checkpoint classify --step stored there" || bad "heads --step" "$out $(cat h.err)"
"$A" heads --db c.db --step 9223372036854775808 >/dev/null 2>h2.err; rc=$?
[[ $rc -eq 2 && $(wc -l <h2.err) -eq 1 ]] && grep -q -- "--step 9223372036854775808 is too large (at most 9223372036854775807)" h2.err &&
  ok "heads --step past 2^63 - 1 is one usage line naming the range" || bad "heads --step 2^63" "rc $rc: $(cat h2.err)"
finish
