#!/usr/bin/env bash
# test_tokenize_cli.sh — `andrea tokenize` end to end. Checkpoints are made here: a .bin header with
# zero weights (tokenize reads only the header, but the file length must agree with it) and a
# safetensors folder's config.json. GPT-2 vocabulary: tests/data/gpt2.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
gpt2="$ANDREA_SRC/tests/data/gpt2"

# write_bin PATH VOCAB [TRUNCATE_BYTES]: llm.c v3 header (L=1 H=2 C=8 maxT=16) + zero fp32 weights.
write_bin() {
  /usr/bin/python3 - "$@" <<'EOF'
import struct, sys
path, V = sys.argv[1], int(sys.argv[2])
cut = int(sys.argv[3]) if len(sys.argv) > 3 else 0
L, H, C, T = 1, 2, 8, 16
n = V*C + T*C + L*(2*C + 3*C*C + 3*C + C*C + C + 2*C + 4*C*C + 4*C + 4*C*C + C) + 2*C
hdr = struct.pack("<8i", 20240326, 3, T, V, L, H, C, V) + bytes(4 * 248)
with open(path, "wb") as f:
    f.write(hdr)
    f.write(bytes(4 * n - cut))
EOF
}

mkdir -p "$tmp/gpt2model" "$tmp/bytemodel" "$tmp/st"
write_bin "$tmp/gpt2model/model.bin" 50257
cp "$gpt2/vocab.json" "$gpt2/merges.txt" "$tmp/gpt2model/"
write_bin "$tmp/bytemodel/model.bin" 257
write_bin "$tmp/bytemodel/model256.bin" 256
write_bin "$tmp/bytemodel/gpt2_no_vocab.bin" 50257
write_bin "$tmp/bytemodel/truncated.bin" 50257 100

# test_tokens_print_as_id_tab_quoted_piece
out=$("$ANDREA_BIN" tokenize "$tmp/gpt2model/model.bin" "Hello world")
want=$'15496\t"Hello"\n995\t" world"'
[[ "$out" == "$want" ]] && ok id_tab_piece || bad id_tab_piece "got '$out'"

# test_ids_flag_prints_the_ids_on_one_line
out=$("$ANDREA_BIN" tokenize "$tmp/gpt2model/model.bin" "Hello world" --ids)
[[ "$out" == "15496 995" ]] && ok ids_flag || bad ids_flag "got '$out'"

# test_ids_match_the_reference_encoding (one case of reference_encodings.json through the CLI)
text=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cases"][2]["text"], end="")' "$gpt2/reference_encodings.json")
want=$(/usr/bin/python3 -c 'import json,sys; print(" ".join(map(str, json.load(open(sys.argv[1]))["cases"][2]["ids"])))' "$gpt2/reference_encodings.json")
out=$("$ANDREA_BIN" tokenize "$tmp/gpt2model/model.bin" "$text" --ids)
[[ "$out" == "$want" ]] && ok reference_case || bad reference_case "got '$out', want '$want'"

# test_control_bytes_quotes_and_backslashes_are_escaped
out=$("$ANDREA_BIN" tokenize "$tmp/gpt2model/model.bin" $'a\n\t"\\')
want=$'64\t"a"\n198\t"\\n"\n197\t"\\t"\n1\t"\\""\n59\t"\\\\"'
[[ "$out" == "$want" ]] && ok escapes || bad escapes "got '$out'"

# test_whole_utf8_characters_print_as_is_and_split_ones_as_hex
out=$("$ANDREA_BIN" tokenize "$tmp/bytemodel/model.bin" $'h\xc3\xa9')
want=$'104\t"h"\n195\t"\\xc3"\n169\t"\\xa9"'
[[ "$out" == "$want" ]] && ok byte_level_257 || bad byte_level_257 "got '$out'"
out=$("$ANDREA_BIN" tokenize "$tmp/gpt2model/model.bin" $'caf\xc3\xa9' )
[[ "$out" == $'66\t"c"\n1878\t"af"\n2634\t"é"' ]] && ok utf8_piece || bad utf8_piece "got '$out'"

# test_byte_level_256_needs_no_vocabulary_files
out=$("$ANDREA_BIN" tokenize "$tmp/bytemodel/model256.bin" "AB" --ids)
[[ "$out" == "65 66" ]] && ok byte_level_256 || bad byte_level_256 "got '$out'"

# test_invalid_utf8_text_is_tokenized_not_refused
out=$("$ANDREA_BIN" tokenize "$tmp/gpt2model/model.bin" $'Hello\xff world' --ids)
[[ "$out" == "15496 187 995" ]] && ok invalid_utf8 || bad invalid_utf8 "got '$out'"

# test_tokenizer_flag_points_at_another_folder
out=$("$ANDREA_BIN" tokenize "$tmp/bytemodel/gpt2_no_vocab.bin" "Hello world" --ids --tokenizer "$gpt2")
[[ "$out" == "15496 995" ]] && ok tokenizer_flag || bad tokenizer_flag "got '$out'"

# test_safetensors_folder_is_peeked_through_its_config_json
cat >"$tmp/st/config.json" <<'EOF'
{"model_type": "gpt2", "n_embd": 8, "n_layer": 1, "n_head": 2, "n_positions": 16, "vocab_size": 50257}
EOF
cp "$gpt2/vocab.json" "$gpt2/merges.txt" "$tmp/st/"
: >"$tmp/st/model.safetensors"
out=$("$ANDREA_BIN" tokenize "$tmp/st" "Hello world" --ids)
[[ "$out" == "15496 995" ]] && ok safetensors_folder || bad safetensors_folder "got '$out'"

# expect_fail NAME CODE PATTERN CMD...: CMD exits with CODE and its one-line stderr matches PATTERN
expect_fail() {
  local name=$1 code=$2 pattern=$3 rc=0
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  local err
  err=$(cat "$tmp/err")
  if [[ $rc -eq $code && "$err" == $pattern && $(wc -l <"$tmp/err") -eq 1 && ! -s "$tmp/out" ]]; then
    ok "$name"
  else
    bad "$name" "exit $rc, stderr '$err'"
  fi
}

# test_missing_vocabulary_names_the_folder
expect_fail missing_vocab 1 "andrea: $tmp/bytemodel: no GPT-2 tokenizer here (vocab.json and merges.txt missing)*" \
  "$ANDREA_BIN" tokenize "$tmp/bytemodel/gpt2_no_vocab.bin" "x"

# test_truncated_checkpoint_is_refused_with_its_size
expect_fail truncated 1 "andrea: $tmp/bytemodel/truncated.bin: truncated: *" \
  "$ANDREA_BIN" tokenize "$tmp/bytemodel/truncated.bin" "x"

# test_missing_checkpoint_is_named
expect_fail missing_ckpt 1 "andrea: $tmp/nope.bin: cannot open*" "$ANDREA_BIN" tokenize "$tmp/nope.bin" "x"

# test_malformed_merges_are_reported_with_file_and_line
mkdir -p "$tmp/badmerges"
cp "$gpt2/vocab.json" "$tmp/badmerges/"
printf '#version: 0.2\n\xc4\xa0 t\nnot a merge\n' >"$tmp/badmerges/merges.txt"
expect_fail bad_merges 1 "andrea: $tmp/badmerges/merges.txt:3: *" \
  "$ANDREA_BIN" tokenize "$tmp/gpt2model/model.bin" "x" --tokenizer "$tmp/badmerges"

# test_missing_text_is_a_usage_error
expect_fail usage 2 "andrea tokenize: expects a checkpoint and a text*" "$ANDREA_BIN" tokenize "$tmp/gpt2model/model.bin"

# test_help_describes_the_output
"$ANDREA_BIN" tokenize --help | grep -q -- "--ids" && ok help || bad help "no --ids in --help"

# test_offsets_print_each_tokens_character_span (code points: é is one character of two bytes;
# " Zo" + "ë" split "Zoë" after its second character)
out=$("$ANDREA_BIN" tokenize "$tmp/gpt2model/model.bin" $'Zo\xc3\xab met Zo\xc3\xab' --offsets)
want=$'57\t0\t1\t"Z"\n78\t1\t2\t"o"\n26689\t2\t3\t"ë"\n1138\t3\t7\t" met"\n31645\t7\t10\t" Zo"\n26689\t10\t11\t"ë"'
[[ "$out" == "$want" ]] && ok offsets || bad offsets "got '$out'"
# a character split across byte tokens is in the span of each
out=$("$ANDREA_BIN" tokenize "$tmp/bytemodel/model.bin" $'h\xc3\xa9' --offsets)
[[ "$out" == $'104\t0\t1\t"h"\n195\t1\t2\t"\\xc3"\n169\t1\t2\t"\\xa9"' ]] && ok offsets_split_char || bad offsets_split_char "got '$out'"
expect_one_line 2 "^andrea tokenize: --ids prints the ids alone" tokenize "$tmp/gpt2model/model.bin" x --ids --offsets

finish
