#!/usr/bin/env bash
# test_sql_takes_db_like_the_other_commands — `andrea sql --db CATALOG "SELECT ..."` (issue 39: 9),
# with --db before or after the statement, answers as the positional form `sql CATALOG "SELECT
# ..."`, which keeps working. The catalog given twice, --db twice or empty, or no statement is one
# usage line, exit 2.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files tests/data/series/dyck-step00030.bin

cd "$tmp"
"$A" analyze "$ANDREA_SRC/tests/data/series/dyck-step00030.bin" --out a --ablate-items 0 --report-maps 0 --quiet \
  >/dev/null 2>&1
q="SELECT name, step FROM models"
"$A" sql a/catalog.db "$q" --format csv >positional.out
[[ $(tr -d '\r' <positional.out) == $'name,step\ndyck-step00030,30' ]] && ok "positional: $(tail -n 1 positional.out)" ||
  bad "positional" "$(cat positional.out)"
for args in "--db|a/catalog.db|$q" "$q|--db|a/catalog.db" "--db=a/catalog.db|$q" "$q|--db=a/catalog.db"; do
  IFS='|' read -r -a argv <<<"$args"
  if "$A" sql "${argv[@]}" --format csv >db.out 2>db.err && cmp -s db.out positional.out; then
    ok "sql ${argv[*]}"
  else
    bad "sql ${argv[*]}" "$(cat db.err db.out)"
  fi
done
"$A" sql --db a/catalog.db "$q" >table.out && [[ $(tail -n 1 table.out) =~ ^dyck-step00030\ +30$ ]] &&
  ok "sql --db, table" || bad "sql --db, table" "$(cat table.out)"

expect_one_line 2 "^andrea sql: the catalog is given twice: --db and 'a/catalog.db'" sql --db a/catalog.db a/catalog.db "$q"
expect_one_line 2 "^andrea sql: --db is given twice" sql --db a/catalog.db "$q" --db a/catalog.db
expect_one_line 2 "^andrea sql: --db wants a catalog file, not ''" sql --db "" "$q"
expect_one_line 2 "^andrea sql: --db wants a catalog file, not ''" sql "$q" --db ""
expect_one_line 2 "^andrea sql: wants one SQL statement" sql --db a/catalog.db
expect_one_line 2 "^andrea sql: --db needs a value" sql "$q" --db
expect_one_line 1 "^andrea: nosuch\.db: no such catalog$" sql --db nosuch.db "$q"
# read-only as before
expect_one_line 1 "refused: andrea sql is read-only" sql --db a/catalog.db "DELETE FROM models"
finish
