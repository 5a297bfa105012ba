#!/usr/bin/env bash
# test_full_stdout.sh — every command whose result goes to stdout fails when stdout cannot take it
# (/dev/full: every write fails with ENOSPC): exit 1 and one line, "andrea: stdout: write failed"
# ("write error" from heads and sql, whose rows go through cli_print_rows), never exit 0 with the
# output lost. Covers --version, --help (top level and each subcommand), and the results of
# classify, render, analyze, heads, sql and tokenize on a random tiny byte-level model made here.
# (`andrea info` has its own case in test_hostile_inputs.sh.)
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
[[ -c /dev/full && -w /dev/full ]] || skip "no writable /dev/full"
need_python_modules numpy
need_built dump classify render

# full NAME ARGS...: andrea ARGS > /dev/full must exit 1 with exactly that one line on stderr.
full() {
  local name=$1 rc=0
  shift
  timeout 120 "$A" "$@" >/dev/full 2>"$tmp/err" || rc=$?
  if [[ $rc -eq 1 ]] && [[ $(cat "$tmp/err") =~ ^andrea:\ stdout:\ write\ (failed|error)$ ]]; then
    ok "$name"
  else
    bad "$name" "exit $rc: $(head -c 300 "$tmp/err")"
  fi
}

full version_to_a_full_stdout_fails --version
full help_to_a_full_stdout_fails --help
for c in info tokenize generate dump classify render analyze heads sql; do
  full "${c}_help_to_a_full_stdout_fails" "$c" --help
done

cd "$tmp"
write_tiny_bin tiny.bin 7
"$A" dump tiny.bin --probes prev_token,bos --n 4 --len 32 --out d.h5 --device cpu --quiet
full classify_summary_to_a_full_stdout_fails classify d.h5 --db c.db --device cpu --quiet
[[ -s c.db ]] && ok classify_catalog_is_written_before_the_summary || bad classify_catalog_is_written_before_the_summary "no c.db"
full render_line_to_a_full_stdout_fails render d.h5 --db c.db --out rep --quiet
[[ -s rep/index.html ]] && ok render_report_is_written_before_its_line || bad render_report_is_written_before_its_line "no rep/index.html"
full analyze_summary_to_a_full_stdout_fails analyze tiny.bin --out an --probes prev_token,bos --device cpu --quiet
full heads_table_to_a_full_stdout_fails heads --db c.db --all
full sql_rows_to_a_full_stdout_fails sql c.db "SELECT count(*) FROM head_catalog"
full tokenize_to_a_full_stdout_fails tokenize tiny.bin "hello"
finish
