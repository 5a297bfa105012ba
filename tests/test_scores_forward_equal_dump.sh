#!/usr/bin/env bash
# test_scores_forward_equal_dump.sh — the head scorer fed in the forward (`andrea analyze`) and fed
# from a dump file (`andrea classify DUMP`) give the same statistics (docs/scores.md): score,
# baseline, control, extra (top1 / hard_top1), dla_mean, norm_mean, n_queries, label, for every
# class and head, on a fixture of the training series and on the bundled model, with fp32 maps
# and fp16 maps (the fp16 values scored in both): bit for bit (was 1e-6 relative, 1e-6 absolute
# under 1). The rounding bound is 0, derived (issue 39): one scorer (analyzer/head_scorer.c, no
# threads) takes the same fp32 values (the dump stores the forward's own) in the same order on the
# same CPU, so every rounding is the same; the causal check runs the same batches of the same
# items on either engine (analyzer/ablation.c reserves K x B on both), so its sgemm shapes, and
# with them OpenBLAS's order of summation, are the same. Any difference is a real divergence.
# Also: analyze writes no dump unless asked (--dump / --keep-dumps), and the causal check gives
# the same deltas on the engine the forward ran (analyze) as on a fresh one (classify).
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-bundled.bin tests/data/series/dyck-step08000.bin
cmp_dbs() { # DB_FORWARD DB_DUMP LABEL
  /usr/bin/python3 - "$@" <<'PY'
import math, sqlite3, sys
a, b, label = sys.argv[1], sys.argv[2], sys.argv[3]
q = ("SELECT class, layer, head, score, baseline, control, extra_value, dla_mean, norm_mean, n_queries, "
     "ablation_delta, label FROM head_catalog WHERE current ORDER BY class, layer, head")
ra = sqlite3.connect(a).execute(q).fetchall()
rb = sqlite3.connect(b).execute(q).fetchall()
bad = 0
if len(ra) != len(rb) or not ra:
    print("FAIL %s: %d rows from the forward, %d from the dump" % (label, len(ra), len(rb))); sys.exit(1)
for x, y in zip(ra, rb):
    for i, (u, v) in enumerate(zip(x, y)):
        if isinstance(u, float) or isinstance(v, float):
            if u is None or v is None:
                same = u is v
            else:
                same = (math.isnan(u) and math.isnan(v)) or u == v
        else:
            same = u == v
        if not same:
            bad += 1
            if bad < 5: print("FAIL %s: %s column %d: forward %r, dump %r" % (label, x[:3], i, u, v))
print("%s: %d rows compared, %d differ" % (label, len(ra), bad))
sys.exit(1 if bad else 0)
PY
}
for m in "$ANDREA_SRC/tests/data/series/dyck-step08000.bin" "$ANDREA_SRC/models/andrea-bundled.bin"; do
  n=$(basename "$m" .bin)
  for maps in fp32 fp16; do
    o=$tmp/$n-$maps
    "$A" analyze "$m" --out "$o" --maps "$maps" --dump "$tmp/$n-$maps.h5" --ablate-items 1 --device cpu --quiet \
      --n 6 --probes prev_token,induction,bracket,bos >"$o.out"
    "$A" classify "$tmp/$n-$maps.h5" --db "$o-dump.db" --ablate-items 1 --device cpu --quiet >/dev/null
    if cmp_dbs "$o/catalog.db" "$o-dump.db" "$n $maps"; then ok "$n $maps: forward scores equal dump scores"
    else bad "$n $maps" "forward and dump scores differ"; fi
    ls "$o"/*.h5 >/dev/null 2>&1 && bad "$n $maps" "analyze --dump FILE also left a dump in the output folder"
  done
done
m=$ANDREA_SRC/models/andrea-bundled.bin
"$A" analyze "$m" --out "$tmp/plain" --n 4 --probes induction --ablate-items 0 --quiet >/dev/null
if ls "$tmp/plain"/*.h5 >/dev/null 2>&1; then bad "no dump" "analyze without --dump wrote $(ls "$tmp/plain"/*.h5)"
else ok "analyze without --dump / --keep-dumps writes no dump"; fi
[[ -f $tmp/plain/index.html ]] && ok "analyze without a dump still renders the report" || bad "report" "no index.html"
"$A" analyze "$m" --out "$tmp/keep" --n 4 --probes induction --ablate-items 0 --keep-dumps --quiet >/dev/null
[[ -f $tmp/keep/andrea-bundled.h5 ]] && ok "--keep-dumps keeps DIR/NAME.h5" || bad "--keep-dumps" "no DIR/andrea-bundled.h5"
finish
