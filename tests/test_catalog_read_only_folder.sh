#!/usr/bin/env bash
# test_catalog_read_only_folder — a catalog copied alone (no -wal, no -shm) into a folder its
# reader cannot write is read by heads, sql, diff and render (docs/catalog.md "Guarantees":
# copying catalog.db alone is enough), still read-only for sql, and nothing is created beside it;
# a -wal beside it that holds frames the file lacks is refused in one line rather than read
# as an old catalog. Root ignores folder permissions, so as root the readers run as nobody
# (setpriv); without a way to drop privileges the test skips.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-tiny.bin

as_reader=()
if [[ $(id -u) == 0 ]]; then
  command -v setpriv >/dev/null || skip "running as root without setpriv: cannot read as a user who lacks write access"
  as_reader=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  "${as_reader[@]}" true 2>/dev/null || skip "setpriv cannot drop to uid 65534 here"
  "${as_reader[@]}" "$A" --help >/dev/null 2>&1 || skip "uid 65534 cannot run $A (a folder above it is not searchable)"
fi

# Under the sanitizer build (tools/sanitize.sh) the reader cannot write the job's log folder nor
# perhaps read its suppressions file: it gets its own, and any report there fails this test.
if [[ ${#as_reader[@]} -gt 0 && -n ${ASAN_OPTIONS:-}${UBSAN_OPTIONS:-}${LSAN_OPTIONS:-} ]]; then
  mkdir "$tmp/san" && chmod a+rwx "$tmp/san"
  cp "$ANDREA_SRC/tests/lsan.supp" "$tmp/san/lsan.supp" && chmod a+r "$tmp/san/lsan.supp"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$tmp/san/asan" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$tmp/san/ubsan"
  export LSAN_OPTIONS="suppressions=$tmp/san/lsan.supp:print_suppressions=0"
fi

"$A" dump "$ANDREA_SRC/models/andrea-tiny.bin" --n 2 --len 16 --device cpu --out "$tmp/d.h5" >/dev/null 2>&1
"$A" classify "$tmp/d.h5" --db "$tmp/cat.db" >/dev/null 2>&1
[[ ! -e $tmp/cat.db-wal && ! -e $tmp/cat.db-shm ]] || bad "writer left files" "$(ls "$tmp")"
mkdir "$tmp/ro" "$tmp/out"
cp "$tmp/cat.db" "$tmp/ro/"
chmod a+rx "$tmp" && chmod a+r "$tmp/d.h5" "$tmp/ro/cat.db" && chmod a+rwx "$tmp/out" && chmod a-w "$tmp/ro"
if "${as_reader[@]}" touch "$tmp/ro/probe" 2>/dev/null; then skip "the reader can still write $tmp/ro"; fi

# reads CODE NAME CMD...: run as the reader, exit CODE, and no "readonly" in what it says
reads() {
  local code=$1 name=$2
  shift 2
  set +e
  "${as_reader[@]}" "$A" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  local rc=$?
  set -e
  if [[ $rc == "$code" ]] && ! grep -qi "readonly" "$tmp/stderr"; then ok "$name (exit $rc)"; else
    bad "$name" "exit $rc (want $code): $(head -c 300 "$tmp/stderr")"; fi
}
reads 0 "heads in a read-only folder" heads --db "$tmp/ro/cat.db" --all
grep -q "andrea-tiny" "$tmp/stdout" && ok "heads lists the model" || bad "heads output" "$(head -c 300 "$tmp/stdout")"
reads 0 "sql in a read-only folder" sql "$tmp/ro/cat.db" "SELECT count(*) AS n FROM head_scores"
grep -Eq "^ *[1-9]" <(tail -n 1 "$tmp/stdout") && ok "sql counts the scores" || bad "sql output" "$(cat "$tmp/stdout")"
reads 0 "diff in a read-only folder" diff --db "$tmp/ro/cat.db" --from andrea-tiny --to andrea-tiny
reads 0 "render from a read-only folder" render "$tmp/d.h5" --db "$tmp/ro/cat.db" --out "$tmp/out/r" --quiet
[[ -f $tmp/out/r/index.html ]] && ok "render wrote its report" || bad "render" "no index.html"
reads 1 "sql still refuses a write" sql "$tmp/ro/cat.db" "DELETE FROM runs"
grep -q "read-only" "$tmp/stderr" && ok "the refusal says read-only" || bad "sql write refusal" "$(cat "$tmp/stderr")"
left=$(ls -A "$tmp/ro")
[[ $left == cat.db ]] && ok "nothing created beside the catalog" || bad "files beside the catalog" "$left"
cmp -s "$tmp/cat.db" "$tmp/ro/cat.db" && ok "the catalog is byte-identical" || bad "catalog changed" ""

# The read-only reopen names the file by URI: '?', '#', '%' and spaces in the path must stay
# part of the name.
odd="$tmp/ro 50%?x=1#frag"
mkdir "$odd" && cp "$tmp/cat.db" "$odd/" && chmod a+rx "$odd" && chmod a+r "$odd/cat.db" && chmod a-w "$odd"
reads 0 "sql in a read-only folder named with URI characters" sql "$odd/cat.db" "SELECT count(*) AS n FROM models"
[[ $(tail -n 1 "$tmp/stdout" | tr -d ' ') == 1 ]] && ok "it read that catalog" || bad "odd path" "$(cat "$tmp/stdout")"

# A -wal holding a committed change the file lacks (a writer still open): copied beside, refused.
mkdir "$tmp/walcopy"
/usr/bin/python3 - "$tmp/cat.db" "$tmp/walcopy" <<'PY'
import shutil, sqlite3, sys
db, dst = sys.argv[1], sys.argv[2]
con = sqlite3.connect(db)
con.execute("PRAGMA wal_autocheckpoint=0")
con.execute("CREATE TABLE late(x)")
con.commit()
shutil.copy(db, dst)
shutil.copy(db + "-wal", dst)  # taken while the writer is open: the table lives only here
con.close()
PY
chmod a+rx "$tmp/walcopy" && chmod a+r "$tmp/walcopy"/* && chmod a-w "$tmp/walcopy"
set +e
"${as_reader[@]}" "$A" sql "$tmp/walcopy/cat.db" "SELECT 1" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
set -e
if [[ $rc == 1 && $(wc -l <"$tmp/stderr") == 1 ]] && grep -q "cat.db-wal beside it holds changes" "$tmp/stderr"; then
  ok "a -wal with frames in a read-only folder is refused: $(cat "$tmp/stderr")"
else
  bad "-wal with frames" "exit $rc: $(cat "$tmp/stderr")"
fi
chmod u+w "$tmp/ro" "$tmp/walcopy" "$odd"
if [[ -d $tmp/san ]] && ls "$tmp/san" | grep -qv '^lsan.supp$'; then
  bad "sanitizers (reader's runs)" "$(cat "$tmp"/san/asan* "$tmp"/san/ubsan* 2>/dev/null | head -c 600)"
fi
finish
