#!/usr/bin/env bash
# test_probe_sources_mix_and_plain_texts.sh — probe inputs of issue 39 end to end: --probes takes
# built-in suites and probe files in any mix (comma-separated or repeated); --texts FILE|- makes
# one map-only suite "texts"; a probe file's suite without targets is map-only; classify and
# analyze skip map-only suites with one note line (no NULL rows); analyze --maps-only writes the
# maps alone; bad inputs are refused with one line (docs/probes.md).
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-tiny.bin
need_python_modules h5py
M=$ANDREA_SRC/models/andrea-tiny.bin # byte-level + BOS, max_seq_len 128

# suites_of DUMP: the dump's `suites` attribute (docs/dump-format.md)
suites_of() { /usr/bin/python3 -c 'import h5py,sys; a=h5py.File(sys.argv[1],"r").attrs["suites"]; print(a.decode() if isinstance(a,bytes) else a)' "$1"; }
# items_of DUMP SUITE: its number of sequences
items_of() { /usr/bin/python3 -c 'import h5py,sys; print(h5py.File(sys.argv[1],"r")[sys.argv[2]]["tokens"].shape[0])' "$1" "$2"; }

printf '%s\n' '{"suite": "my_heads", "text": "abcabc", "targets": [[4, [1]]]}' >"$tmp/mine.jsonl"
printf '%s\n' '{"suite": "my_texts", "text": "The cat sat."}' '{"suite": "my_texts", "text": "Another one."}' >"$tmp/maponly.jsonl"
printf '%s\n' '{"suite": "bos", "text": "hello there"}' >"$tmp/bos.jsonl"
printf 'The cat sat on the mat.\n\n  \nA second text, with commas.\n' >"$tmp/texts.txt"
common=(--device cpu --quiet --n 2 --len 16)

# test_builtin_suites_and_a_probe_file_mix_in_one_list
"$A" dump "$M" --probes "induction,$tmp/mine.jsonl" --out "$tmp/mix.h5" "${common[@]}" 2>"$tmp/err" &&
  [[ $(suites_of "$tmp/mix.h5") == "induction,my_heads" ]] && ok comma_mix || bad comma_mix "$(cat "$tmp/err"; suites_of "$tmp/mix.h5")"

# test_repeated_probes_keep_every_source (it kept the last only)
"$A" dump "$M" --probes induction --probes "$tmp/mine.jsonl" --probes bos --out "$tmp/rep.h5" "${common[@]}" 2>"$tmp/err" &&
  [[ $(suites_of "$tmp/rep.h5") == "induction,my_heads,bos" ]] && ok repeated || bad repeated "$(cat "$tmp/err"; suites_of "$tmp/rep.h5")"

# test_plain_texts_are_one_map_only_suite (blank lines skipped), from a file and from stdin
"$A" dump "$M" --texts "$tmp/texts.txt" --out "$tmp/texts.h5" "${common[@]}" 2>"$tmp/err" &&
  [[ $(suites_of "$tmp/texts.h5") == texts && $(items_of "$tmp/texts.h5" texts) == 2 ]] && ok texts_file ||
  bad texts_file "$(cat "$tmp/err")"
"$A" dump "$M" --probes bos --texts - --out "$tmp/stdin.h5" "${common[@]}" <"$tmp/texts.txt" 2>"$tmp/err" &&
  [[ $(suites_of "$tmp/stdin.h5") == bos,texts && $(items_of "$tmp/stdin.h5" texts) == 2 ]] && ok texts_stdin ||
  bad texts_stdin "$(cat "$tmp/err")"

# test_classify_skips_map_only_suites_with_one_note_and_no_null_rows
"$A" dump "$M" --probes "bos,$tmp/maponly.jsonl" --out "$tmp/mo.h5" "${common[@]}" 2>"$tmp/err" || bad maponly_dump "$(cat "$tmp/err")"
if "$A" classify "$tmp/mo.h5" --db "$tmp/mo.db" --quiet >/dev/null 2>"$tmp/err" &&
  [[ $(cat "$tmp/err") == "andrea classify: note: my_texts: map-only (no targets), not scored" ]] &&
  [[ $(sql_rows "$tmp/mo.db" "SELECT count(*) FROM head_scores WHERE class = 'my_texts'") == 0 ]] &&
  [[ $(sql_rows "$tmp/mo.db" "SELECT count(*) FROM head_scores WHERE class = 'bos'") -gt 0 ]]; then
  ok classify_skips_map_only
else
  bad classify_skips_map_only "$(cat "$tmp/err")"
fi
expect_one_line 1 "^andrea: .*texts\.h5: its one suite is map-only \(no query has a target\): nothing to classify" \
  classify "$tmp/texts.h5" --db "$tmp/t.db" --quiet

# test_analyze_scores_the_scored_suites_and_notes_the_map_only_one
if "$A" analyze "$M" --probes induction --texts "$tmp/texts.txt" --out "$tmp/an" --n 2 --device cpu --quiet \
  >/dev/null 2>"$tmp/err" && grep -q "^andrea analyze: note: texts: map-only (no targets), not scored$" "$tmp/err" &&
  [[ $(sql_rows "$tmp/an/catalog.db" "SELECT group_concat(class) FROM suites") == induction ]]; then
  ok analyze_mixed
else
  bad analyze_mixed "$(cat "$tmp/err")"
fi
expect_one_line 1 "^andrea: every suite is map-only \(texts without targets\): nothing to score; --maps-only" \
  analyze "$M" --texts "$tmp/texts.txt" --out "$tmp/an2" --device cpu --quiet
# test_analyze_maps_only_writes_each_checkpoints_dump_and_nothing_else
if "$A" analyze "$M" --texts "$tmp/texts.txt" --out "$tmp/mo_out" --device cpu --maps-only >"$tmp/out" 2>"$tmp/err" &&
  [[ -f $tmp/mo_out/andrea-tiny.h5 && ! -e $tmp/mo_out/catalog.db && ! -e $tmp/mo_out/index.html ]] &&
  grep -q "maps of 1 suite in $tmp/mo_out/andrea-tiny.h5" "$tmp/out"; then
  ok maps_only
else
  bad maps_only "$(cat "$tmp/out" "$tmp/err")"
fi

# bad inputs: one line each
printf 'fine\nbad \xff byte\n' >"$tmp/badutf8.txt"
: >"$tmp/empty.txt"
printf '\n \n' >"$tmp/blank.txt"
/usr/bin/python3 -c 'print("x" * 200)' >"$tmp/long.txt"
expect_one_line 1 "badutf8\.txt:2: not valid UTF-8 at byte 5 of the line" dump "$M" --texts "$tmp/badutf8.txt" --out "$tmp/x.h5" "${common[@]}"
expect_one_line 1 "empty\.txt: empty: --texts wants one text a line" dump "$M" --texts "$tmp/empty.txt" --out "$tmp/x.h5" "${common[@]}"
expect_one_line 1 "blank\.txt: no text, only blank lines" dump "$M" --texts "$tmp/blank.txt" --out "$tmp/x.h5" "${common[@]}"
# a byte vocabulary's tokens are one byte long: 200 bytes are refused before any encoding
expect_one_line 1 "long\.txt:1: 200 bytes: more tokens with BOS than the model's max_seq_len 128 \(no token is longer than 1 bytes\)" dump "$M" --texts "$tmp/long.txt" --out "$tmp/x.h5" "${common[@]}"
printf '\xef\xbb\xbfhello\n' >"$tmp/bom.txt"
expect_one_line 1 "bom\.txt: starts with a UTF-8 byte-order mark" dump "$M" --texts "$tmp/bom.txt" --out "$tmp/x.h5" "${common[@]}"
expect_one_line 1 "^andrea: bos: suite named twice" dump "$M" --probes bos --probes bos --out "$tmp/x.h5" "${common[@]}"
expect_one_line 1 "^andrea: nosuch: not a built-in probe suite .* nor a probe file" dump "$M" --probes bos,nosuch --out "$tmp/x.h5" "${common[@]}"
expect_one_line 1 "suite \"bos\" comes from both the built-in suites and .*bos\.jsonl: give each suite name once" \
  dump "$M" --probes "bos,$tmp/bos.jsonl" --out "$tmp/x.h5" "${common[@]}"
expect_one_line 1 "texts\.txt: is the --texts file this command reads" dump "$M" --texts "$tmp/texts.txt" --out "$tmp/texts.txt" "${common[@]}"
expect_one_line 2 "^andrea show: shows one text .*--texts FILE, many texts in one map-only suite, is for dump and analyze" \
  show "$M" --texts "$tmp/texts.txt"
[[ ! -e $tmp/x.h5 ]] && ok "refusals_leave_no_dump" || bad refusals_leave_no_dump "$tmp/x.h5 written"
finish
