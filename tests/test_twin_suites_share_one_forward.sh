#!/usr/bin/env bash
# test_twin_suites_share_one_forward — a suite whose items are an earlier suite's, token for token
# (classes that share a generator stream: duplicate and copy_suppression read induction's items,
# positional prev_token's, dormant bos's), is handed that suite's forward again instead of running
# its own (run/run.c). What it is handed must be its own batch: its scores equal those of a run in
# which it is the only suite and runs its own forward, on the CPU path with and without the HDF5
# writer (analyze --dump, then the dump classified). The report keeps one copy of the twins' maps:
# data/meta.js says second's are first's ("same"), each head's data file holds first's and third's
# examples only, one thumbnail grid (first's, naming second too) serves both, and the browser side (reports/assets/andrea.js, run under node where there is
# one) reads second's example maps at first's offsets: every value the same as first's.
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
# the report's interactive data: second is first's twin there too
/usr/bin/python3 - all <<'PY' && ok "report data: second's maps are first's (meta \"same\"), stored once" || bad "report data" "see above"
import base64, json, re, sys, zlib
meta = open(sys.argv[1] + "/data/meta.js").read()
m = json.loads(meta[meta.index("andrea_meta(") + 12:meta.rindex(")")])
names = [s["name"] for s in m["suites"]]
same = {s["name"]: s.get("same") for s in m["suites"]}
assert same == {"first": None, "second": 0, "third": None}, same
head = open(sys.argv[1] + "/data/L0_H0.js").read()
values = len(zlib.decompress(base64.b64decode(re.search(r'"([A-Za-z0-9+/=]*)"', head).group(1)))) // 2
want = sum(e["n"] * (e["n"] + 1) // 2 for s in m["suites"] if "same" not in s for e in s["examples"])
assert values == want, (values, want)
PY
# one thumbnail grid for the twins: first's, titled and described with second's name too
if [[ -s all/overview/thumbs_s-first.png && ! -e all/overview/thumbs_s-second.png && -s all/overview/thumbs_s-third.png ]] &&
  grep -q 'src="overview/thumbs_s-first.png"[^>]*alt="all heads, suite first, second"' all/index.html; then
  ok "report: the twins share first's thumbnail grid (no second grid drawn), its alt text names both"
else
  bad "twin thumbnail grid" "$(ls all/overview | tr '\n' ' '); $(grep -o '<img src="overview/thumbs[^>]*>' all/index.html | head -3)"
fi
if command -v node >/dev/null; then
  node - all "$ANDREA_SRC/reports/assets/andrea.js" <<'JS' && ok "andrea.js: second's examples read first's values; a damaged data file is an error, not values" || bad "andrea.js" "twin offsets"
const fs = require('fs'), vm = require('vm');
const [dir, js] = process.argv.slice(2);
const ctx = {document: {currentScript: null, readyState: 'loading', addEventListener() {}}, atob: (b) => Buffer.from(b, 'base64').toString('binary'),
             Blob, Response, DecompressionStream}; /* the data inflates as in a browser */
ctx.window = ctx;
vm.createContext(ctx);
for (const f of [js, dir + '/data/meta.js', dir + '/data/L1_H3.js']) vm.runInContext(fs.readFileSync(f, 'utf8'), ctx);
const A = ctx.ANDREA, m = A.meta;
ctx.andrea_head(0, 0, Buffer.from('not a zlib stream').toString('base64')); /* a damaged file: an error, no values */
(function wait(tries) { /* the head's values arrive once inflated */
  if ((!A.heads['0:1.3'] || !A.errors.length) && tries > 0) return setTimeout(() => wait(tries - 1), 10);
  check(A.heads['0:1.3']);
})(500);
function check(v) {
if (!v) { console.error('no values', A.errors); process.exit(1); }
if (A.heads['0:0.0'] || A.errors.length !== 1 || !/head 0:0\.0: its data does not inflate/.test(A.errors[0])) {
  console.error('a damaged data file', A.errors); process.exit(1);
}
let n = 0;
m.suites[1].examples.forEach((ex, e) => {
  const lead = m.suites[0].examples[e];
  for (let q = 0; q < ex.n; q++) for (let k = 0; k <= q; k++, n++)
    if (A.prob(v, ex, q, k) !== A.prob(v, lead, q, k)) { console.error('differs', e, q, k); process.exit(1); }
});
const third = m.suites[2].examples[0];
if (third.off !== m.suites[0].examples.reduce((a, ex) => a + ex.n * (ex.n + 1) / 2, 0)) { console.error('third', third.off); process.exit(1); }
if (n === 0) process.exit(1);
}
JS
else
  echo "note: node not found: andrea.js's reading of twin suites not exercised here"
fi
finish
