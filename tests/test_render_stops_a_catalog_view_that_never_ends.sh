#!/usr/bin/env bash
# test_render_stops_a_catalog_view_that_never_ends — a catalog whose head_catalog view is an
# endless recursive CTE made `render` run until killed (issue 43, 6: killed after 150 s) while
# `heads` stopped the same query at --timeout. Every catalog connection now gets the one time limit
# (common/sqlite_time_limit.h, set where the catalog is opened): render stops at its --timeout with
# one line and exit 1, writing no report; sql reading the view stops the same way.
# The limit counts time inside SQLite only, so a loaded machine makes the run slower, never wrong;
# the guard below (120 s) only turns a hang into a failure.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files tests/data/series/dyck-step00030.bin

"$A" dump "$ANDREA_SRC/tests/data/series/dyck-step00030.bin" --n 2 --len 16 --device cpu --out "$tmp/d.h5" >/dev/null
"$A" classify "$tmp/d.h5" --db "$tmp/c.db" >/dev/null
# the view keeps its columns (render checks them) and never ends: every row of the real view is
# joined with a recursive CTE that counts up forever, looking for 0
/usr/bin/python3 - "$tmp/c.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
(sql,) = db.execute("SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'head_catalog'").fetchone()
db.execute("DROP VIEW head_catalog")
db.execute(sql.replace("head_catalog", "head_catalog_whole", 1))
db.execute("CREATE VIEW head_catalog AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
           "SELECT v.* FROM head_catalog_whole AS v, c WHERE c.x = 0")
db.commit()
PY

# ends NAME CMD...: exit 1 within the guard, one stderr line naming the time limit
ends() {
  local name=$1
  shift
  set +e
  timeout -s KILL 120 "$A" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  local rc=$?
  set -e
  local lines
  lines=$(wc -l <"$tmp/stderr")
  if [[ $rc == 1 && $lines == 1 ]] && grep -q "^andrea: .*stopped after 1 s" "$tmp/stderr"; then
    ok "$name stops at the time limit: $(cat "$tmp/stderr")"
  else
    bad "$name" "exit $rc (want 1; 137 = killed by the guard), $lines lines: $(head -c 400 "$tmp/stderr")"
  fi
}
ends render render "$tmp/d.h5" --db "$tmp/c.db" --out "$tmp/report" --timeout 1 --quiet
[[ ! -e $tmp/report/index.html ]] && ok "render wrote no report" || bad "render" "left $tmp/report/index.html"
ends "sql over the view" sql "$tmp/c.db" "SELECT count(*) FROM head_catalog" --timeout 1

set +e
"$A" render "$tmp/d.h5" --db "$tmp/c.db" --out "$tmp/report" --timeout -1 >/dev/null 2>"$tmp/stderr"
rc=$?
set -e
[[ $rc == 2 ]] && ok "render --timeout -1 is a usage error" || bad "render --timeout -1" "exit $rc: $(cat "$tmp/stderr")"
finish
