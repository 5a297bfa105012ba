#!/usr/bin/env bash
# test_catalog_target_refused_before_the_work — a catalog path that cannot hold andrea's rows is
# refused with one line and a non-zero exit BEFORE any forward runs (a mistake must not cost an
# analysis), and nothing is created or changed: a device (SQLite used to leave /dev/null-journal
# beside it), a symlink to a device, a folder, another application's SQLite file, a file that is
# not SQLite at all. `--out` naming a file, or '', is refused the same way. Evidence that no work
# ran: `analyze --dump FILE` writes its dump during the forwards, and no FILE appears.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
M=$ANDREA_SRC/models/andrea-bundled.bin
small=(--n 2 --len 16 --probes bos --quiet)

# no_dump NAME: the dump of a refused analyze was never written
no_dump() {
  if compgen -G "$tmp/$1.h5*" >/dev/null; then bad "$1: refused before the work" "a dump was written: $(ls "$tmp" | grep "$1")"
  else ok "$1: refused before the work (no dump written)"; fi
}
journals_before=$(ls /dev | grep -c -- '-journal$' || true)

mkdir "$tmp/dev" && ln -s /dev/zero "$tmp/dev/catalog.db"
expect_one_line 1 "catalog.db: not a regular file \(a device" analyze "$M" --out "$tmp/dev" --dump "$tmp/dev-dump.h5" "${small[@]}"
no_dump dev-dump
mkdir -p "$tmp/dir/catalog.db"
expect_one_line 1 "catalog.db: not a regular file \(a folder\)" analyze "$M" --out "$tmp/dir" --dump "$tmp/dir-dump.h5" "${small[@]}"
no_dump dir-dump
# foreign_catalog NAME SQL...: $tmp/NAME/catalog.db made by SQLite from the statements (another
# application's database), and `analyze --out $tmp/NAME` refused with REGEX before the work and the
# file left unchanged
foreign_catalog() {
  local name=$1 re=$2
  shift 2
  mkdir "$tmp/$name"
  /usr/bin/python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); [c.execute(q) for q in sys.argv[2:]]; c.commit()' \
    "$tmp/$name/catalog.db" "$@"
  cp "$tmp/$name/catalog.db" "$tmp/$name.copy"
  expect_one_line 1 "$re" analyze "$M" --out "$tmp/$name" --dump "$tmp/$name-dump.h5" "${small[@]}"
  no_dump "$name-dump"
  cmp -s "$tmp/$name/catalog.db" "$tmp/$name.copy" && ok "$name: the database is unchanged" || bad "$name.db" "changed"
}
foreign_catalog other "not an andrea catalog" "CREATE TABLE notes(x)"
# one whose tables have andrea's names but another layout (a `runs` of its own): refused before
# the work, the file unchanged (it was switched to WAL and failed after the work), and readers say
# the same instead of "no such column" or "matches no checkpoint"
foreign_catalog lookalike "not an andrea catalog \(a SQLite database whose table 'runs' has no column 'id'\)" \
  "CREATE TABLE runs(x)" "INSERT INTO runs VALUES(1)"
expect_one_line 1 "not an andrea catalog" diff --db "$tmp/lookalike/catalog.db" --from a --to b
expect_one_line 1 "not an andrea catalog" heads --db "$tmp/lookalike/catalog.db"
mkdir "$tmp/text" && printf 'root:x:0:0\n' >"$tmp/text/catalog.db"
expect_one_line 1 "catalog.db: not an SQLite database" analyze "$M" --out "$tmp/text" --dump "$tmp/text-dump.h5" "${small[@]}"
no_dump text-dump
[[ $(cat "$tmp/text/catalog.db") == root:x:0:0 ]] && ok "a text file named catalog.db is unchanged" || bad "text" "changed"
printf 'a file\n' >"$tmp/afile"
expect_one_line 1 "afile: not a folder" analyze "$M" --out "$tmp/afile" --dump "$tmp/afile-dump.h5" "${small[@]}"
no_dump afile-dump
expect_one_line 2 "--out wants a folder name" analyze "$M" --out '' "${small[@]}"

"$A" dump "$M" --n 2 --len 16 --probes bos --quiet -o "$tmp/d.h5"
expect_one_line 1 "/dev/null: not a regular file" classify "$tmp/d.h5" --db /dev/null --quiet
expect_one_line 1 "/dev/full: not a regular file" circuits "$M" --db /dev/full --top 1
expect_one_line 1 "not a regular file \(a folder\)" circuits "$M" --db "$tmp/dir/catalog.db" --top 1
journals_after=$(ls /dev | grep -c -- '-journal$' || true)
[[ $journals_after == "$journals_before" ]] && ok "no -journal file left in /dev" || bad "/dev" "$(ls /dev | grep -- '-journal$')"

# a folder that cannot be written (SQLite failed at the first write, after the work): chmod for
# a user; root ignores modes, so a read-only bind mount where the machine allows one
mkdir -p "$tmp/ro_src/r" "$tmp/ro"
ro=""
chmod 555 "$tmp/ro_src/r"
if ! touch "$tmp/ro_src/r/probe" 2>/dev/null; then ro=$tmp/ro_src/r
elif mount --bind "$tmp/ro_src" "$tmp/ro" 2>/dev/null; then
  if mount -o remount,ro,bind "$tmp/ro" 2>/dev/null; then ro=$tmp/ro/r; else umount "$tmp/ro"; fi
fi
rm -f "$tmp/ro_src/r/probe"
if [[ -n $ro ]]; then
  expect_one_line 1 "cannot write the catalog's folder" analyze "$M" --out "$ro" --dump "$tmp/ro-dump.h5" "${small[@]}"
  no_dump ro-dump
  [[ $ro == "$tmp/ro/r" ]] && umount "$tmp/ro"
else
  echo "note: no read-only folder could be made here (root without mount): that case is not checked"
fi
chmod 755 "$tmp/ro_src/r"

# and a good catalog still takes runs
"$A" analyze "$M" --out "$tmp/good" "${small[@]}" >/dev/null && "$A" analyze "$M" --out "$tmp/good" "${small[@]}" >/dev/null &&
  ok "an andrea catalog takes a second run" || bad "good" "a second run into an andrea catalog failed"
finish
