#!/usr/bin/env bash
# test_circuits_diff_dyck_series — the circuit scores and the catalog diff on a model we trained
# (tests/data/series: 2 layers x 4 heads; tools/train_series.py): `andrea analyze` of steps 300 and
# 8000 into one catalog, then
#   - analyze stored the circuit scores (head_composition, head_weights) of both checkpoints;
#   - Olsson et al. 2022: the top K-composition source of the trained induction head 1.1 is the
#     previous-token head 0.3 (K score 0.201; expected pair from this run: 0.3 -> 1.1); 0.3 is
#     labelled prev_token in the same catalog. (Of the other induction heads, 1.0's top K source is
#     0.0 at 0.217 with 0.3 second at 0.210, and 1.3's is 0.0: not asserted.)
#   - the head page of 1.1 links its top source L0_H3.html;
#   - `andrea diff --from dyck@300 --to dyck@8000` lists the induction heads' label change (1.0,
#     1.1, 1.3 gained), sorted by |delta|, columns starting layer,head,class; a series without
#     @STEP picks its highest step.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files tests/data/series/dyck-step00300.bin tests/data/series/dyck-step08000.bin
S=$ANDREA_SRC/tests/data/series
q() { /usr/bin/python3 -c 'import sqlite3,sys; r=sqlite3.connect("file:"+sys.argv[1]+"?mode=ro", uri=True).execute(sys.argv[2]).fetchall(); print("\n".join(",".join(str(c) for c in x) for x in r))' "$@"; }

"$A" analyze "$S/dyck-step00300.bin" "$S/dyck-step08000.bin" --out "$tmp/out" --device cpu --quiet >"$tmp/analyze.txt"
db=$tmp/out/catalog.db

n=$(q "$db" "SELECT count(*) FROM head_composition")
[[ $n == $((2 * 16 * 3)) ]] && ok "analyze stored 48 composition scores per checkpoint" || bad "head_composition rows" "$n"
n=$(q "$db" "SELECT count(*) FROM head_weights WHERE copying BETWEEN 0 AND 1 AND prev_pos BETWEEN 0 AND 1")
[[ $n == 16 ]] && ok "analyze stored copying and prev_pos of 8 heads per checkpoint" || bad "head_weights rows" "$n"

top=$(q "$db" "SELECT src_layer || '.' || src_head FROM head_composition WHERE model = 'dyck-step08000'
               AND dst_layer = 1 AND dst_head = 1 AND kind = 'K' ORDER BY score DESC LIMIT 1")
[[ $top == 0.3 ]] && ok "the top K-composition source of induction head 1.1 is 0.3" || bad "top K source of 1.1" "$top"
lab=$(q "$db" "SELECT label FROM head_catalog WHERE model = 'dyck-step08000' AND current AND layer = 0 AND head = 3
               AND class = 'prev_token'")
[[ $lab == 1 ]] && ok "0.3 is labelled prev_token" || bad "0.3 prev_token label" "$lab"
lab=$(q "$db" "SELECT group_concat(layer || '.' || head, ' ') FROM (SELECT layer, head FROM head_catalog
               WHERE model = 'dyck-step08000' AND current AND class = 'induction' AND label ORDER BY layer, head)")
[[ $lab == "1.0 1.1 1.3" ]] && ok "induction heads at step 8000: $lab" || bad "induction labels" "$lab"

page=$tmp/out/dyck-step08000/heads/L1_H1.html
grep -q 'Top sources' "$page" && grep -q 'href="L0_H3.html">L0 H3</a></td><td>K</td>' "$page" &&
    ok "the head page of 1.1 links its top source 0.3" || bad "head page" "$(grep -c Circuits "$page" || true)"

"$A" diff --db "$db" --from dyck@300 --to dyck@8000 --class induction --changed --format csv >"$tmp/d.csv"
head -1 "$tmp/d.csv" | grep -q '^layer,head,class,from_score,to_score,delta,from_label,to_label,change' &&
    ok "diff columns start layer,head,class" || bad "diff header" "$(head -1 "$tmp/d.csv")"
got=$(tail -n +2 "$tmp/d.csv" | tr -d '\r' | awk -F, '{print $1"."$2":"$9}' | sort | tr '\n' ' ')
[[ $got == "1.0:gained 1.1:gained 1.3:gained " ]] && ok "diff 300 -> 8000 --changed: induction gained by $got" ||
    bad "diff --changed" "$got"
"$A" diff --db "$db" --from dyck-step00300 --to dyck --format csv >"$tmp/all.csv"
n_classes=$("$A" sql "$db" "SELECT COUNT(DISTINCT class) FROM head_catalog" --format csv | tail -1)
[[ $(($(wc -l <"$tmp/all.csv") - 1)) == $((n_classes * 8)) && $n_classes -ge 7 ]] && ok "diff lists $n_classes classes x 8 heads" || bad "diff rows" "$(wc -l <"$tmp/all.csv") ($n_classes classes)"
tail -n +2 "$tmp/all.csv" | tr -d '\r' | awk -F, '{d=$6<0?-$6:$6; if (NR>1 && d>p+1e-12) bad=1; p=d} END {exit bad}' &&
    ok "diff rows sorted by |delta| descending" || bad "diff order" "$(head -5 "$tmp/all.csv")"
cmp -s <("$A" diff --db "$db" --from dyck@300 --to dyck --format csv) "$tmp/all.csv" &&
    ok "a series without @STEP is its highest step" || bad "series selector" "differs from dyck-step00300 -> dyck"
"$A" diff --db "$db" --from dyck@300 --to dyck@8000 --class induction >"$tmp/d.txt"
head -1 "$tmp/d.txt" | grep -q '^layer  head  class' && ok "table format" || bad "table" "$(head -2 "$tmp/d.txt")"
finish
