#!/usr/bin/env bash
# test_twin_suites_share_one_forward — a suite whose items are an earlier suite's, token for token
# (classes that share a generator stream: duplicate and copy_suppression read induction's items,
# positional prev_token's, dormant bos's), is handed that suite's forward again instead of running
# its own (run/run.c). What it is handed must be its own batch: its scores equal those of a run in
# which it is the only suite and runs its own forward, on the CPU path with and without the HDF5
# writer (analyze --dump, then the dump classified).
# Suites: `first` and `second` (the same 12 random items, different targets) and `third` (other
# items of the same shape), so every run picks the same batch.
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-bundled.bin
cd "$tmp"
/usr/bin/python3 - <<'PY'
import json, random
rng = random.Random(7)
items = [[256] + [rng.randrange(32, 127) for _ in range(23)] for _ in range(12)]
other = [[256] + [rng.randrange(32, 127) for _ in range(23)] for _ in range(12)]
def line(suite, toks, key_of):
    return json.dumps({"suite": suite, "tokens": toks, "targets": [[q, [key_of(q)]] for q in range(2, len(toks))]})
with open("three.jsonl", "w") as f, open("second.jsonl", "w") as g:
    for t in items: f.write(line("first", t, lambda q: q - 1) + "\n")
    for t in items:
        f.write(line("second", t, lambda q: q // 2) + "\n")
        g.write(line("second", t, lambda q: q // 2) + "\n")
    for t in other: f.write(line("third", t, lambda q: q - 2) + "\n")
PY
M="$ANDREA_SRC/models/andrea-bundled.bin"
"$A" analyze "$M" --probes three.jsonl --out all --ablate-items 0 --dump all.h5 --quiet >/dev/null 2>all.err || bad "analyze three suites" "$(cat all.err)"
"$A" analyze "$M" --probes second.jsonl --out alone --ablate-items 0 --quiet >/dev/null 2>alone.err ||
  bad "analyze second alone" "$(cat alone.err)"
"$A" classify all.h5 --db classified.db --no-causal --quiet >/dev/null 2>cl.err || bad "classify the dump" "$(cat cl.err)"
cols="layer, head, score, baseline, control, extra_value, dla_mean, norm_mean, label"
q="SELECT $cols FROM head_catalog WHERE class = 'second' AND current ORDER BY layer, head"
alone=$(sql_rows alone/catalog.db "$q")
[[ $(wc -l <<<"$alone") == 32 ]] && ok "second alone: 32 heads scored" || bad "second alone" "$(wc -l <<<"$alone") rows"
[[ $(sql_rows all/catalog.db "$q") == "$alone" ]] && ok "second as first's twin: the same scores as alone" ||
  bad "second as a twin" "$(diff <(sql_rows all/catalog.db "$q") <(echo "$alone") | head -3)"
[[ $(sql_rows classified.db "$q") == "$alone" ]] && ok "second in the dump (the writer handed the twin batch): the same scores" ||
  bad "second from the dump" "$(diff <(sql_rows classified.db "$q") <(echo "$alone") | head -3)"
q1="SELECT $cols FROM head_catalog WHERE class = 'first' AND current ORDER BY layer, head"
[[ $(sql_rows all/catalog.db "$q1") != "$alone" ]] && ok "first (other targets) scores differently: the test can tell suites apart" ||
  bad "first equals second" "targets ignored?"
finish
