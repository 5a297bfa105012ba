# lib.sh — the preamble the script tests share; sourced first thing by tests/test_*.sh:
#   source "$ANDREA_SRC/tests/lib.sh"
# Gives: A (the andrea binary), tmp (a fresh folder, removed on exit), ok/bad (one line per check;
# bad counts into $fails), finish (prints the count; fails the script when a check failed),
# skip (exit 77 = ctest skip), need_files (skip while a source-tree file is absent), need_built
# (skip while a subcommand is a stub), write_tiny_bin (a random tiny checkpoint). The caller keeps
# its own `set` options; these helpers are written to work under `set -euo pipefail`.
: "${ANDREA_BIN:?run through ctest: ANDREA_BIN names the andrea binary}"
: "${ANDREA_SRC:?run through ctest: ANDREA_SRC names the source tree}"
A=$ANDREA_BIN
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
finish() {
  echo "$fails failed"
  [[ $fails -eq 0 ]]
}
skip() {
  echo "SKIP: $*"
  exit 77
}
# need_files PATH...: paths relative to the source tree (fixture models are not always present).
need_files() {
  local f
  for f; do
    if [[ ! -f $ANDREA_SRC/$f ]]; then skip "$f not present yet"; fi
  done
}
# need_built CMD...: skip while `andrea CMD --help` says the subcommand is not built yet.
need_built() {
  local c
  for c; do
    if "$A" "$c" --help 2>&1 | grep -q "not built yet"; then skip "andrea $c is not built yet"; fi
  done
}
# need_python_modules MOD...: skip where /usr/bin/python3 lacks a module the test's fixtures need
# (Debian: python3-numpy, python3-h5py; tools/setup.sh installs them, the GPU machine lacks them).
need_python_modules() {
  local m
  for m; do
    /usr/bin/python3 -c "import $m" 2>/dev/null || skip "/usr/bin/python3 has no module $m (Debian package python3-$m)"
  done
}
# sql_rows DB QUERY: the query's rows, one a line, columns joined by '|' (as the sqlite3 shell
# prints them), read through /usr/bin/python3's own sqlite3 module, read-only: the sqlite3 shell
# is not on every machine the tests run on (the GPU machine has none).
sql_rows() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for row in db.execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))
PY
}
# write_tiny_bin PATH SEED: a random llm.c v3 .bin, L=2 H=4 C=32 maxT=48, byte vocabulary + BOS
# (257); weights N(0, 0.3^2) from numpy's generator seeded SEED, LayerNorm gains 1.
write_tiny_bin() {
  /usr/bin/python3 "$ANDREA_SRC/tests/tiny_ckpt.py" "$1" --seed "$2" --maxT 48 --H 4 --C 32 --scale 0.3 --ln-ones
}
# expect_one_line CODE REGEX ARGS...: `andrea ARGS...` exits CODE with exactly one stderr line
# matching REGEX (stdout in $tmp/out, stderr in $tmp/err); one ok/bad line.
expect_one_line() {
  local code=$1 re=$2
  shift 2
  local rc=0
  "$A" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [[ $rc == "$code" && $lines == 1 ]] && grep -Eq -- "$re" "$tmp/err"; then
    ok "$* -> exit $rc: $(cat "$tmp/err")"
  else
    bad "$*" "exit $rc (want $code), $lines stderr lines: $(cat "$tmp/err")"
  fi
}
