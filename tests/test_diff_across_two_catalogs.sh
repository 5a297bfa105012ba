#!/usr/bin/env bash
# test_diff_across_two_catalogs — `andrea diff --db A --db B` looks --from up in A and --to in B
# (issue 39: 9): two checkpoints analysed into two folders give the same rows, byte for byte in
# every format, as one catalog holding both; the reverse direction too. Bad input is one line: a
# third --db, a second catalog that is missing, not SQLite, another program's or newer, a name
# that only the other catalog holds, and checkpoints of different shapes.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
series="$ANDREA_SRC/tests/data/series"
need_files tests/data/series/dyck-step00030.bin tests/data/series/dyck-step08000.bin

cd "$tmp"
quick=(--ablate-items 0 --report-maps 0 --quiet)
"$A" analyze "$series/dyck-step00030.bin" --out a "${quick[@]}" >/dev/null 2>&1
"$A" analyze "$series/dyck-step08000.bin" --out b "${quick[@]}" >/dev/null 2>&1
"$A" analyze "$series/dyck-step00030.bin" "$series/dyck-step08000.bin" --out both "${quick[@]}" >/dev/null 2>&1

# same LABEL ONE-ARGS -- TWO-ARGS: both commands exit 0 and print the same bytes
same() {
  local label=$1 i
  shift
  for ((i = 1; i <= $#; i++)); do [[ ${!i} == -- ]] && break; done
  local one=("${@:1:i-1}") two=("${@:i+1}")
  if "$A" "${one[@]}" >one.out 2>one.err && "$A" "${two[@]}" >two.out 2>two.err && [[ -s one.out ]] &&
    cmp -s one.out two.out; then
    ok "$label: $(($(wc -l <one.out) - 1)) rows as in one catalog"
  else
    bad "$label" "one catalog: $(head -c 300 one.err one.out); two: $(head -c 300 two.err two.out)"
  fi
}
for fmt in table csv json; do
  same "--format $fmt" diff --db both/catalog.db --from dyck@30 --to dyck --format "$fmt" -- \
    diff --db a/catalog.db --db b/catalog.db --from dyck@30 --to dyck --format "$fmt"
done
same "--changed" diff --db both/catalog.db --from dyck@30 --to dyck --changed -- \
  diff --db a/catalog.db --db b/catalog.db --from dyck --to dyck --changed
same "the other way, --class" diff --db both/catalog.db --from dyck --to dyck@30 --class induction -- \
  diff --db b/catalog.db --db a/catalog.db --from dyck --to dyck --class induction
# one catalog given twice is that catalog
same "one catalog named twice" diff --db both/catalog.db --from dyck@30 --to dyck -- \
  diff --db both/catalog.db --db both/catalog.db --from dyck@30 --to dyck
# the rows are real: the induction heads formed between the two steps
grep -Eq '^ +1 +0 +induction .* gained$' two.out && ok "1.0 gained induction" || bad "rows" "$(head -n 3 two.out)"

expect_one_line 2 "^andrea diff: --db is given more than twice" \
  diff --db a/catalog.db --db b/catalog.db --db both/catalog.db --from dyck --to dyck
expect_one_line 1 "^andrea: nosuch\.db: no such catalog$" diff --db a/catalog.db --db nosuch.db --from dyck --to dyck
echo "not a catalog" >text.db
expect_one_line 1 "^andrea: text\.db: not an SQLite database" diff --db a/catalog.db --db text.db --from dyck --to dyck
/usr/bin/python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE runs(x)'); c.commit()" \
  other.db
expect_one_line 1 "^andrea: other\.db: not an andrea catalog" diff --db a/catalog.db --db other.db --from dyck --to dyck
cp b/catalog.db newer.db
/usr/bin/python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version = 99'); c.commit()" \
  newer.db
expect_one_line 1 "^andrea: newer\.db: catalog schema version 99 is newer" \
  diff --db a/catalog.db --db newer.db --from dyck --to dyck
# each name is looked up in its own catalog only: step 30 is in a, not in b
expect_one_line 2 "^andrea: b/catalog\.db: --to 'dyck@30' matches no checkpoint; the catalog holds: dyck-step08000@8000$" \
  diff --db a/catalog.db --db b/catalog.db --from dyck --to dyck@30
expect_one_line 2 "^andrea: b/catalog\.db: --from 'dyck@30' matches no checkpoint; the catalog holds: dyck-step08000@8000$" \
  diff --db b/catalog.db --db a/catalog.db --from dyck@30 --to dyck
expect_one_line 2 "^andrea: b/catalog\.db: --class 'nosuch': neither dyck-step00030 of a/catalog\.db nor dyck-step08000 of b/catalog\.db" \
  diff --db a/catalog.db --db b/catalog.db --from dyck --to dyck --class nosuch
# another architecture (d_model 32 against the series' 64) in the second catalog
write_tiny_bin small.bin 1
"$A" analyze small.bin --out c "${quick[@]}" >/dev/null 2>&1
expect_one_line 1 "^andrea: c/catalog\.db: dyck-step00030 of a/catalog\.db \(2 layers x 4 heads, d_model 64\) and small of c/catalog\.db \(2 x 4, d_model 32\) have different shapes" \
  diff --db a/catalog.db --db c/catalog.db --from dyck --to small
finish
