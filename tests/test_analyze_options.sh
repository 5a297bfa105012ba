#!/usr/bin/env bash
# test_analyze_options.sh — analyze's probe and output options (--n, --len, --seed, --contrib,
# --tokenizer, --dump, --keep-dumps, --timing, --threads) and classify --timing: each reaches the run
# (recorded in the catalog's settings or visible in the output), and bad values are one usage line
# and a non-zero exit.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-tiny.bin
m=$ANDREA_SRC/models/andrea-tiny.bin
"$A" analyze "$m" --out "$tmp/o" --probes induction,bracket --n 3 --len 24 --seed 7 --contrib none --ablate-items 0 \
  --dump "$tmp/one.h5" --timing --quiet >"$tmp/out.txt" 2>"$tmp/err.txt"
settings=$(sql_rows "$tmp/o/catalog.db" "SELECT settings FROM runs ORDER BY id DESC LIMIT 1")
if /usr/bin/python3 -c '
import json, sys
s = json.loads(sys.argv[1])["suites"]
assert [x["name"] for x in s] == ["induction", "bracket"], s
assert all(x["n_seq"] == 3 and x["T"] <= 24 and x["seed"] == "7" for x in s), s' "$settings"; then
  ok "--n, --len, --seed reach the suites (catalog settings: $settings)"
else bad "--n/--len/--seed" "settings $settings"; fi
dla=$(sql_rows "$tmp/o/catalog.db" "SELECT count(*) FROM head_catalog WHERE current AND dla_mean IS NOT NULL")
[[ $dla == 0 ]] && ok "--contrib none: no DLA means" || bad "--contrib none" "$dla heads with a dla_mean"
[[ -f $tmp/one.h5 ]] && ok "--dump FILE writes the dump" || bad "--dump" "no $tmp/one.h5"
for part in "forwards" "scoring [+] report maps" "causal check" "clean forwards" "replacement outputs" "direct effects" \
  "catalog" "circuit scores" "report" "heatmaps [+] thumbnails" "interactive data" "head pages"; do
  grep -q "andrea analyze: time .*$part [0-9.]* s" "$tmp/err.txt" && ok "analyze --timing: $part" || bad "analyze --timing" "no '$part' in: $(cat "$tmp/err.txt")"
done
"$A" classify "$tmp/one.h5" --db "$tmp/c.db" --ablate-items 0 --timing --quiet >/dev/null 2>"$tmp/cerr.txt"
grep -q "andrea classify: time: scoring .* s, causal check .* s (clean forwards .* s, .* ablated sets in [0-9]* forwards .* s), catalog .* s" "$tmp/cerr.txt" && ok "classify --timing" ||
  bad "classify --timing" "$(cat "$tmp/cerr.txt")"
# --threads N (an engine setting): the CPU forwards on N threads give the same rows as every core
for n in 1 3; do
  "$A" analyze "$m" --out "$tmp/th$n" --probes induction,bracket --n 3 --len 24 --device cpu --threads $n --quiet \
    >/dev/null 2>"$tmp/th.err" || bad "--threads $n" "exit $?: $(cat "$tmp/th.err")"
done
"$A" analyze "$m" --out "$tmp/th0" --probes induction,bracket --n 3 --len 24 --device cpu --quiet >/dev/null 2>&1
rows() { sql_rows "$1/catalog.db" "SELECT layer, head, class, score, ablation_delta, evidence FROM head_catalog WHERE current ORDER BY 1, 2, 3"; }
if [[ -n $(rows "$tmp/th0") && $(rows "$tmp/th1") == "$(rows "$tmp/th0")" && $(rows "$tmp/th3") == "$(rows "$tmp/th0")" ]]; then
  ok "--threads 1 and 3: the same scores and causal deltas as the default team"
else bad "--threads" "rows differ"; fi
# --tokenizer is handed to the tokenizer as by `andrea dump` (a byte-level model keeps its bytes)
if "$A" analyze "$m" --out "$tmp/t" --probes induction --n 2 --tokenizer "$ANDREA_SRC/tests/data/gpt2" --ablate-items 0 \
  --quiet >/dev/null 2>&1; then ok "--tokenizer DIR accepted"; else bad "--tokenizer" "refused"; fi
refuse() { # WHAT ARGS...
  local what=$1; shift
  if "$A" analyze "$m" --out "$tmp/bad" "$@" >/dev/null 2>"$tmp/bad.txt"; then bad "$what" "accepted"
  elif [[ $(wc -l <"$tmp/bad.txt") -ge 1 ]] && grep -q "andrea analyze" "$tmp/bad.txt"; then ok "$what refused: $(head -1 "$tmp/bad.txt")"
  else bad "$what" "$(cat "$tmp/bad.txt")"; fi
}
refuse "--n 0" --n 0
refuse "--len 2" --len 2
refuse "--seed -1" --seed -1
refuse "--contrib bogus" --contrib bogus
refuse "--threads 0" --threads 0
refuse "--threads two" --threads two
refuse "--dump ''" --dump ''
refuse "--dump with two checkpoints" "$m" --dump "$tmp/x.h5"
rm -rf "$tmp/bad"
refuse "--dump naming a folder" --dump "$tmp"
[[ ! -e $tmp/bad ]] && ok "--dump naming a folder leaves no --out folder" || bad "--dump folder" "$tmp/bad was made"
# a --rules entry naming no suite of the run (a typo) is said, not silently unused
printf '{"inductoin": {"min_score": 0.9}, "induction": {"min_score": 0.9}}\n' >"$tmp/rules.json"
"$A" analyze "$m" --out "$tmp/r" --probes induction --n 2 --len 16 --ablate-items 0 --rules "$tmp/rules.json" --quiet \
  >/dev/null 2>"$tmp/rules.err" || bad "--rules" "exit $?: $(cat "$tmp/rules.err")"
grep -q "andrea analyze: note: --rules: no suite of this run is named 'inductoin'" "$tmp/rules.err" &&
  ! grep -q "named 'induction'" "$tmp/rules.err" && ok "--rules entry for no suite is noted" ||
  bad "--rules note" "$(cat "$tmp/rules.err")"
# --dump naming the catalog or a report page of DIR is refused before anything is written
"$A" analyze "$m" --out "$tmp/cat1" --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>&1
sum=$(sha256sum <"$tmp/cat1/catalog.db")
refuse_dump() { # NAME
  if "$A" analyze "$m" --out "$tmp/cat1" --probes bos --n 2 --len 16 --ablate-items 0 --dump "$tmp/cat1/$1" --quiet \
    >/dev/null 2>"$tmp/rd.err"; then bad "--dump DIR/$1" "accepted"
  elif grep -q "andrea analyze: --dump .*/$1 is the .* analyze writes into" "$tmp/rd.err"; then ok "--dump DIR/$1 refused"
  else bad "--dump DIR/$1" "$(cat "$tmp/rd.err")"; fi
}
refuse_dump catalog.db
refuse_dump index.html
# nor into the report's folders, which every report clears and rewrites (data/meta.js was
# accepted, then overwritten by the report)
for f in data/meta.js heads/L0_H0.h5 maps/all.h5; do
  if "$A" analyze "$m" --out "$tmp/cat1" --probes bos --n 2 --len 16 --ablate-items 0 --dump "$tmp/cat1/$f" --quiet \
    >/dev/null 2>"$tmp/rd.err"; then bad "--dump DIR/$f" "accepted"
  elif grep -q "andrea analyze: --dump .*/$f lies in the report's folder" "$tmp/rd.err"; then ok "--dump DIR/$f refused"
  else bad "--dump DIR/$f" "$(cat "$tmp/rd.err")"; fi
done
# nor a report folder's own name, in a DIR that does not exist yet (it failed after the work)
for f in heads overview; do
  if "$A" analyze "$m" --out "$tmp/fresh_$f" --probes bos --n 2 --len 16 --ablate-items 0 --dump "$tmp/fresh_$f/$f" --quiet \
    >/dev/null 2>"$tmp/rd.err"; then bad "--dump DIR/$f" "accepted"
  elif grep -q "andrea analyze: --dump .*/$f is the report's folder" "$tmp/rd.err" && [[ ! -e $tmp/fresh_$f/catalog.db ]]; then
    ok "--dump DIR/$f (a report folder's name) refused before any work"
  else bad "--dump DIR/$f" "$(cat "$tmp/rd.err")"; fi
done
# nor the --rules file it reads
echo '{"bos": {"min_score": 0.5}}' >"$tmp/rules.json"
rsum=$(sha256sum <"$tmp/rules.json")
"$A" analyze "$m" --out "$tmp/rul" --probes bos --n 2 --len 16 --ablate-items 0 --rules "$tmp/rules.json" --dump "$tmp/rules.json" \
  --quiet >/dev/null 2>"$tmp/rr.err" && bad "--dump over --rules" "accepted" ||
  { grep -q "rules.json: is the rules file this command reads" "$tmp/rr.err" && [[ $(sha256sum <"$tmp/rules.json") == "$rsum" ]] &&
    ok "--dump naming the --rules file is refused, the rules kept" || bad "--dump over --rules" "$(cat "$tmp/rr.err")"; }
[[ $(sha256sum <"$tmp/cat1/catalog.db") == "$sum" ]] && ok "the catalog is left as it was" || bad "catalog" "changed"
# a report and a `show` page never overwrite each other's folder
"$A" show "$m" "abc" --out "$tmp/cat1" >/dev/null 2>"$tmp/sh.err" && bad "show into a report folder" "accepted" ||
  { grep -q "cat1: holds an andrea report" "$tmp/sh.err" && ok "show into a report folder refused" || bad "show" "$(cat "$tmp/sh.err")"; }
"$A" show "$m" "abc" --out "$tmp/shw" >/dev/null 2>&1 || bad "show" "failed"
"$A" show "$m" "abcd" --out "$tmp/shw" >/dev/null 2>&1 && ok "show into its own folder again" || bad "show again" "refused"
"$A" analyze "$m" --out "$tmp/shw" --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>"$tmp/as.err" &&
  bad "analyze into a show folder" "accepted" ||
  { grep -q "shw: holds an andrea .show. page" "$tmp/as.err" && [[ ! -e $tmp/shw/catalog.db ]] &&
    ok "analyze into a show folder refused before any work" || bad "analyze into show" "$(cat "$tmp/as.err")"; }
# a folder holding someone's own index.html (no andrea report, page or catalog there) is refused
# before any work, the page untouched (it was replaced: `--out .` in a web folder)
mkdir -p "$tmp/web" && echo "my page" >"$tmp/web/index.html"
for cmd in analyze show; do
  if [[ $cmd == analyze ]]; then args=(analyze "$m" --out "$tmp/web" --probes bos --n 2 --len 16 --ablate-items 0 --quiet)
  else args=(show "$m" "abc" --out "$tmp/web"); fi
  "$A" "${args[@]}" >/dev/null 2>"$tmp/web.err" && bad "$cmd into a folder with a foreign index.html" "accepted" ||
    { grep -q "web: holds an index.html that andrea did not write" "$tmp/web.err" && [[ $(cat "$tmp/web/index.html") == "my page" ]] &&
      [[ ! -e $tmp/web/catalog.db && ! -e $tmp/web/data ]] && ok "$cmd into a folder with a foreign index.html refused before any work" ||
      bad "$cmd foreign index" "$(cat "$tmp/web.err")"; }
done
# the other pages a report or page writes are someone's too where andrea left no mark; a heads/
# folder is no mark (a web folder has one: its index.html was replaced)
for f in explore.html compare.html data/meta.js heads+index.html; do
  d="$tmp/web-${f//[\/+.]/_}"
  mkdir -p "$d/data"
  if [[ $f == heads+index.html ]]; then mkdir -p "$d/heads"; f=index.html; fi
  echo "mine" >"$d/$f"
  "$A" analyze "$m" --out "$d" --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>"$tmp/wf.err" &&
    bad "analyze over someone's $f" "accepted" ||
    { grep -q "holds an\? ${f//./\\.} that andrea did not write" "$tmp/wf.err" && [[ $(cat "$d/$f") == mine && ! -e $d/catalog.db ]] &&
      ok "a folder holding someone's $f is refused before any work" || bad "someone's $f" "$(cat "$tmp/wf.err")"; }
done
# an input where the report writes is refused before any work: the page would be renamed over it
# (a --texts file given as DIR/compare.html was replaced by the report's compare.html)
"$A" analyze "$m" --out "$tmp/inp" --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>&1 || bad "analyze inp" "failed"
printf 'hello\n' >"$tmp/inp/compare.html"
cp "$tmp/inp/catalog.db" "$tmp/inp.db.before"
mkdir -p "$tmp/inp/data" && echo '{"suite":"mine","tokens":[256,5,6]}' >"$tmp/inp/data/p.jsonl"
for args in "--texts $tmp/inp/compare.html" "--probes $tmp/inp/data/p.jsonl"; do
  # shellcheck disable=SC2086
  "$A" analyze "$m" --out "$tmp/inp" $args --quiet >/dev/null 2>"$tmp/inp.err" && bad "analyze $args" "accepted" ||
    { grep -q "is the .* file this command reads, and lies where the page in .*inp is written" "$tmp/inp.err" &&
      cmp -s "$tmp/inp/catalog.db" "$tmp/inp.db.before" && [[ $(head -c 5 "$tmp/inp/compare.html") == hello ]] &&
      ok "analyze $(basename "${args##* }") from inside its own report folder refused before any work" ||
      bad "input inside the report" "$(cat "$tmp/inp.err")"; }
done
"$A" show "$m" --text-file "$tmp/inp/compare.html" --out "$tmp/inp" >/dev/null 2>"$tmp/inp.err" && bad "show --text-file inside" "accepted" ||
  { grep -q "is the --text-file this command reads" "$tmp/inp.err" && [[ $(head -c 5 "$tmp/inp/compare.html") == hello ]] &&
    ok "show --text-file inside its own page folder refused" || bad "show input inside" "$(cat "$tmp/inp.err")"; }
# a run that fails leaves no -wal or -shm beside an existing catalog (the check before the work
# opened it read-only, which makes them and cannot remove them)
echo '{"suite":"x","tokens":[99999]}' >"$tmp/badid.jsonl"
"$A" analyze "$m" --out "$tmp/cat1" --probes "$tmp/badid.jsonl" --quiet >/dev/null 2>&1 && bad "bad token id" "accepted" ||
  { [[ ! -e $tmp/cat1/catalog.db-wal && ! -e $tmp/cat1/catalog.db-shm ]] && ok "a failed run leaves no -wal or -shm beside the catalog" ||
    bad "catalog litter" "$(ls "$tmp/cat1")"; }
# a catalog path SQLite cannot open is refused before the work, not after it
long="$tmp/$(printf 'g%.0s' {1..200})/$(printf 'h%.0s' {1..250})"
mkdir -p "$long"
"$A" analyze "$m" --out "$long/$(printf 'i%.0s' {1..60})" --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>"$tmp/long.err" &&
  bad "a catalog path past SQLite's 512 bytes" "accepted" ||
  { grep -q "the catalog's full path is [0-9]* bytes, more than the 472 SQLite can open" "$tmp/long.err" &&
    ok "a catalog path past SQLite's 512 bytes is refused before the work" || bad "long catalog path" "$(cat "$tmp/long.err")"; }
# a map-only suite (--texts) has no score grid: every head's score is n/a
printf 'hello world\nthe cat sat on it\n' >"$tmp/t.txt"
"$A" analyze "$m" --out "$tmp/mo" --probes induction --texts "$tmp/t.txt" --n 2 --ablate-items 0 --quiet >/dev/null 2>&1 || bad "analyze --texts" "failed"
[[ -e $tmp/mo/overview/scores_c0-induction.png && ! -e $tmp/mo/overview/scores_c1-texts.png ]] &&
  ! grep -q "scores_c1-texts" "$tmp/mo/index.html" && ok "a map-only suite draws no score grid of n/a" ||
  bad "map-only score grid" "$(ls "$tmp/mo/overview")"
# a score is a fraction: a query whose targets cover its whole window scores 1, not the 1.0002
# of its fp16 map's rounding
echo '{"suite":"two_tok","tokens":[256,5],"targets":[[1,[0,1]]]}' >"$tmp/whole.jsonl"
"$A" analyze "$m" --probes "$tmp/whole.jsonl" --out "$tmp/whole" --quiet >/dev/null 2>&1 || bad "whole-window suite" "failed"
mx=$(sql_rows "$tmp/whole/catalog.db" "SELECT max(score) <= 1 AND max(control) <= 1 AND min(score) > 0.99 FROM head_scores")
[[ $mx == 1 ]] && ok "scores and controls stay within [0, 1] on fp16 maps" ||
  bad "fractions" "$(sql_rows "$tmp/whole/catalog.db" "SELECT max(score), max(control) FROM head_scores")"
# --dump FILE and --keep-dumps both say where the dump goes: one usage line, exit 2, nothing written
set +e
"$A" analyze "$m" --out "$tmp/both" --dump "$tmp/both.h5" --keep-dumps >/dev/null 2>"$tmp/both.err"
rc=$?
set -e
[[ $rc == 2 && $(wc -l <"$tmp/both.err") == 1 && ! -e $tmp/both.h5 ]] && grep -q -- "--dump FILE and --keep-dumps" "$tmp/both.err" &&
  ok "--dump with --keep-dumps is a usage error" || bad "--dump --keep-dumps" "exit $rc: $(cat "$tmp/both.err")"
finish
