#!/usr/bin/env bash
# test_circuits_diff_bad_input — every new option of `andrea circuits` and `andrea diff` refuses
# bad input with ONE line on stderr and a non-zero exit: 2 for usage errors and for a selector
# that matches nothing (which lists the checkpoints that exist), 1 for unreadable files and for
# checkpoints of different shapes. Also: circuits --weights / --top / --format work, and
# circuits --db writes into a fresh catalog, replaces a checkpoint's scores when run again, and
# refuses a database that is not andrea's.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_python_modules numpy
write_tiny_bin "$tmp/small-step00100.bin" 3
write_tiny_bin "$tmp/small-step00200.bin" 4
write_tiny_bin "$tmp/small.bin" 6   # a model named like the series "small"
/usr/bin/python3 "$ANDREA_SRC/tests/tiny_ckpt.py" "$tmp/wide.bin" --seed 5 --maxT 48 --H 4 --C 64 --scale 0.3 --ln-ones


c=$tmp/small-step00100.bin
expect_one_line 2 "CKPT is required" circuits
expect_one_line 2 "unexpected argument" circuits "$c" "$c"
expect_one_line 2 "--top -1 is too small \\(at least 0\\)" circuits "$c" --top -1
expect_one_line 2 "--top 2147483648 is too large \\(at most 1073741824\\)" circuits "$c" --top 2147483648
expect_one_line 2 "--top wants a count" circuits "$c" --top many
expect_one_line 2 "format" circuits "$c" --format xml
expect_one_line 2 "--db" circuits "$c" --db
expect_one_line 2 "unknown option|--nope" circuits "$c" --nope
expect_one_line 1 "^andrea: .*nosuch.bin" circuits "$tmp/nosuch.bin"
printf 'not a checkpoint' >"$tmp/junk.bin"
expect_one_line 1 "^andrea: .*junk.bin" circuits "$tmp/junk.bin"
/usr/bin/python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("CREATE TABLE notes(x)"); c.commit()' "$tmp/other.db"
expect_one_line 1 "not an andrea catalog" circuits "$c" --db "$tmp/other.db"

"$A" circuits "$c" --weights --format csv >"$tmp/w.csv"
[[ $(head -1 "$tmp/w.csv" | tr -d '\r') == "layer,head,copying,prev_pos" && $(wc -l <"$tmp/w.csv") == 9 ]] &&
  ok "--weights: one row per head" || bad "--weights" "$(cat "$tmp/w.csv")"
"$A" circuits "$c" --top 5 --format json >"$tmp/t.json"
/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert len(r)==5 and r[0]["score"]>=r[4]["score"] and set(r[0])=={"src_layer","src_head","dst_layer","dst_head","kind","score","baseline"}' "$tmp/t.json" &&
  ok "--top 5 --format json: five strongest" || bad "--top json" "$(cat "$tmp/t.json")"
[[ $("$A" circuits "$c" --top 0 --format csv | wc -l) == $((1 + 16 * 3)) ]] && ok "--top 0: every pair" || bad "--top 0" "row count"

# a catalog: two steps of one series, and a checkpoint of another shape
db=$tmp/c.db
"$A" circuits "$c" --db "$db" >/dev/null && ok "circuits --db creates a catalog" || bad "circuits --db" "failed"
expect_one_line 2 "--from 'small' matches no checkpoint; the catalog holds: \(no analysed checkpoint\)" \
  diff --db "$db" --from small --to small
"$A" circuits "$c" --db "$db" >/dev/null
n=$(/usr/bin/python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute("SELECT count(*) FROM circuit_runs").fetchone()[0], c.execute("SELECT count(*) FROM head_composition").fetchone()[0], c.execute("SELECT count(*) FROM head_weights").fetchone()[0])' "$db")
[[ $n == "1 48 8" ]] && ok "circuits --db again replaces the checkpoint's scores (1 run, 48 + 8 rows)" || bad "replace" "$n"
for m in small-step00100 small-step00200 small wide; do
  "$A" analyze "$tmp/$m.bin" --out "$tmp/a-$m" --probes prev_token,induction --ablate-items 2 --device cpu --keep-dumps --quiet >/dev/null
done
# one catalog holding all three: classify each dump into $db
for m in small-step00100 small-step00200 small wide; do
  "$A" classify "$tmp/a-$m/$m.h5" --db "$db" --ablate-items 2 --device cpu --quiet >/dev/null
done
expect_one_line 2 "--db CATALOG is required" diff --from small --to small-step00100
expect_one_line 2 "--from and --to" diff --db "$db" --from small
expect_one_line 2 "empty" diff --db "$db" --from "" --to small
expect_one_line 2 "format" diff --db "$db" --from small --to small --format xml
expect_one_line 2 "unexpected argument" diff --db "$db" --from small --to small extra
expect_one_line 1 "no such catalog" diff --db "$tmp/none.db" --from small --to small
expect_one_line 2 "--from 'nosuch' matches no checkpoint; the catalog holds: small, small-step00100@100, small-step00200@200, wide" \
  diff --db "$db" --from nosuch --to small
expect_one_line 2 "--to 'small@300' matches no checkpoint" diff --db "$db" --from small --to small@300
expect_one_line 2 "STEP after '@' must be a whole number" diff --db "$db" --from small@x --to small
# a step beyond long long is refused as one, not read as 9223372036854775807 ("matches no checkpoint")
expect_one_line 2 "STEP after '@' must be a whole number" diff --db "$db" --from small@99999999999999999999 --to small
expect_one_line 2 "--class 'nosuch'" diff --db "$db" --from small@100 --to small@200 --class nosuch
expect_one_line 1 "different shapes" diff --db "$db" --from small --to wide
# "small" is a model name and a series: the model wins (a series would be its step 200)
"$A" diff --db "$db" --from small --to small-step00200 --format csv | tail -n +2 | awk -F, '$6 != 0' >"$tmp/n.csv"
[[ -s $tmp/n.csv ]] && ok "a model name wins over a series of that name" || bad "name precedence" "small resolved to small-step00200"
"$A" diff --db "$db" --from small@100 --to small@200 --class induction --format csv >"$tmp/d.csv"
[[ $(wc -l <"$tmp/d.csv") == 9 ]] && ok "--class induction: 8 heads" || bad "--class" "$(cat "$tmp/d.csv")"
"$A" diff --db "$db" --from small@100 --to small@100 --changed --format csv >"$tmp/same.csv"
[[ $(wc -l <"$tmp/same.csv") == 1 ]] && ok "--changed on one checkpoint: header only" || bad "--changed" "$(cat "$tmp/same.csv")"
# a stdout that cannot take the result (/dev/full): exit 1 and one line, never exit 0
if [[ -c /dev/full && -w /dev/full ]]; then
  for args in "circuits $c" "circuits $c --weights --format json" "diff --db $db --from small@100 --to small@200"; do
    rc=0
    # shellcheck disable=SC2086
    "$A" $args >/dev/full 2>"$tmp/err" || rc=$?
    [[ $rc == 1 && $(wc -l <"$tmp/err") == 1 ]] && grep -Eq "^andrea: .*write (failed|error)" "$tmp/err" &&
      ok "andrea $args > /dev/full: exit 1" || bad "$args > /dev/full" "exit $rc: $(cat "$tmp/err")"
  done
fi
finish
