#!/bin/bash
# test_hostile_inputs — input files that cJSON, open() or the CLI's option parsing used to accept,
# hang on or answer wrongly, each refused through the real CLI with exit 1 (2 for usage errors)
# and one stderr line. Fixtures are made here from tests/data/tiny_hf, tests/data/gpt2-style
# alphabets and tests/tiny_ckpt.py. (Sizes and limits: test_limits; fuzzer finds: test_regress.)
set -u
source "$ANDREA_SRC/tests/lib.sh"
PY=/usr/bin/python3
need_python_modules numpy # fixtures come from tests/tiny_ckpt.py
cd "$tmp" || exit 1 # a command that ran on despite a bad option must not write into the caller's folder

# expect RC NAME REGEX ARGS...: exit code RC, exactly one stderr line matching REGEX, within 20 s.
expect() {
  local want=$1 name=$2 re=$3
  shift 3
  timeout 20 "$A" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$? lines
  lines=$(wc -l <"$tmp/$name.err")
  if [[ $rc -eq 124 ]]; then
    bad "$name" "still running after 20 s (hang)"
  elif [[ $rc -ne $want ]]; then
    bad "$name" "exit $rc, expected $want: $(head -c 400 "$tmp/$name.err")"
  elif [[ $lines -ne 1 ]]; then
    bad "$name" "$lines stderr lines, expected one: $(head -c 400 "$tmp/$name.err")"
  elif ! grep -Eq -- "$re" "$tmp/$name.err"; then
    bad "$name" "message does not match '$re': $(cat "$tmp/$name.err")"
  else
    ok "$name: $(cat "$tmp/$name.err")"
  fi
}

"$PY" - "$tmp" "$ANDREA_SRC" <<'EOF' || { echo "FAIL: fixture generation"; exit 1; }
import json, os, shutil, struct, sys
t, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, f"{src}/tests")
from tiny_ckpt import write_bin
hf = f"{src}/tests/data/tiny_hf"
cfg_text = open(f"{hf}/config.json").read()
st = open(f"{hf}/model.safetensors", "rb").read()
n = struct.unpack("<Q", st[:8])[0]
hdr, data = json.loads(st[8:8 + n]), st[8 + n:]
def hf_dir(name, cfg=cfg_text, header=None, body=data):
    d = f"{t}/{name}"
    os.mkdir(d)
    open(f"{d}/config.json", "w").write(cfg)
    h = (header if header is not None else json.dumps(hdr)).encode()
    open(f"{d}/model.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + body)
    return d
c = json.loads(cfg_text)
# config.json: n_layer given twice (Hugging Face reads the last, 1; cJSON the first, 2)
hf_dir("cfg_dup_key", cfg=json.dumps(c)[:-1] + ', "n_layer": 1}')
hf_dir("cfg_trailing", cfg=json.dumps(c) + ' {"n_layer": 1}')
# safetensors header: trailing garbage, a field given twice, bytes after the last tensor, a gap
hf_dir("st_trailing", header=json.dumps(hdr) + "xx")
k = "transformer.h.0.ln_1.weight"
ent = json.dumps(hdr[k])
hf_dir("st_dup_field", header=json.dumps(hdr).replace(ent, ent[:-1] + ', "dtype": "F16"}', 1))
hf_dir("st_trailing_bytes", body=data + b"\0" * 64)
h2 = json.loads(json.dumps(hdr))
last = max(h2, key=lambda x: h2[x]["data_offsets"][1] if x != "__metadata__" else -1)
b, e = h2[last]["data_offsets"]
h2[last]["data_offsets"] = [b + 64, e + 64]
hf_dir("st_gap", header=json.dumps(h2), body=data[:b] + b"\0" * 64 + data[b:])
# checkpoint folders whose files are FIFOs (made by the shell below)
hf_dir("fifo_st")
os.remove(f"{t}/fifo_st/model.safetensors")
hf_dir("fifo_cfg")
os.remove(f"{t}/fifo_cfg/config.json")
# byte-level model; a model whose finite weights overflow fp32 in the forward
write_bin(f"{t}/byte.bin", maxT=32, V=257, L=1, H=2, C=8)
raw = bytearray(open(f"{t}/byte.bin", "rb").read())
raw[1024:] = struct.pack("<f", 3e38) * ((len(raw) - 1024) // 4)
open(f"{t}/overflow.bin", "wb").write(raw)
# tokenizer: a 300-token model (sparse .bin: tokenize reads only its header) and GPT-2's byte
# alphabet as vocab.json, spoiled three ways
def params(L, C, V, T):
    return V*C + T*C + L*(2*C + 3*C*C + 3*C + C*C + C + 2*C + 4*C*C + 4*C + 4*C*C + C) + 2*C
with open(f"{t}/v300.bin", "wb") as f:
    f.write(struct.pack("<256i", *([20240326, 3, 16, 300, 1, 2, 8, 300] + [0] * 248)))
    f.truncate(1024 + 4 * params(1, 8, 300, 16))
bs = list(range(33, 127)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
cs, m = bs[:], 0
for x in range(256):
    if x not in bs:
        bs.append(x); cs.append(256 + m); m += 1
alpha = {x: chr(y) for x, y in zip(bs, cs)}
vocab = {alpha[x]: x for x in range(256)}
vocab["<|endoftext|>"] = 256
def tok_dir(name, text, merges="#version: 0.2\n"):
    d = f"{t}/{name}"
    os.mkdir(d)
    open(f"{d}/vocab.json", "w", encoding="utf-8").write(text)
    open(f"{d}/merges.txt", "w", encoding="utf-8").write(merges)
tok_dir("tok_ok", json.dumps(vocab, ensure_ascii=False))
tok_dir("tok_trailing", json.dumps(vocab, ensure_ascii=False) + " {}")
tok_dir("tok_long", json.dumps(dict(vocab, **{"a" * 1100: 257}), ensure_ascii=False))
tok_dir("tok_fifo", json.dumps(vocab, ensure_ascii=False))
tok_dir("tok_cr", json.dumps(dict(vocab, **{"he": 257, "ll": 258}), ensure_ascii=False), merges="#version: 0.2\rh e\rl l\r")
os.remove(f"{t}/tok_fifo/vocab.json")
# probe files for the byte-level model
def probe(name, text):
    open(f"{t}/{name}.jsonl", "w").write(text)
probe("two_items_on_a_line", '{"suite": "bos", "tokens": [256, 1]} {"suite": "bos", "tokens": [256, 2]}\n')
probe("key_given_twice", '{"suite": "bos", "tokens": [256, 1], "tokens": [256, 1, 2, 3]}\n')
probe("nul_escape_in_text", '{"suite": "bos", "text": "ab\\u0000cd"}\n')
probe("ok", '{"suite": "bos", "tokens": [256, 1, 2]}\n')
# 1025 one-item suites (a few hundred thousand made the loader quadratic and the dump endless)
probe("too_many_suites", "".join('{"suite": "s%d", "tokens": [1, 2], "targets": [[1, [0]]]}\n' % i for i in range(1025)))
EOF
mkfifo "$tmp/fifo_st/model.safetensors" "$tmp/fifo_cfg/config.json" "$tmp/tok_fifo/vocab.json" \
  "$tmp/fifo.bin" "$tmp/out_fifo"
mkdir "$tmp/probes_folder"

# --- checkpoints
expect 1 config_key_given_twice_is_refused 'cfg_dup_key/config\.json: key "n_layer" is given twice' info "$tmp/cfg_dup_key"
expect 1 config_with_data_after_the_object_is_refused 'cfg_trailing/config\.json: unexpected data after the JSON value' info "$tmp/cfg_trailing"
expect 1 safetensors_header_with_trailing_garbage_is_refused 'st_trailing/model\.safetensors: header: unexpected data after' info "$tmp/st_trailing"
expect 1 safetensors_field_given_twice_is_refused 'st_dup_field/model\.safetensors: header: key "dtype" is given twice' info "$tmp/st_dup_field"
expect 1 safetensors_bytes_after_the_last_tensor_are_refused 'st_trailing_bytes/model\.safetensors: trailing bytes' info "$tmp/st_trailing_bytes"
expect 1 safetensors_gap_between_tensors_is_refused 'st_gap/model\.safetensors: bytes \[[0-9]+, [0-9]+\) of the data section belong to no tensor' info "$tmp/st_gap"
expect 1 fifo_model_safetensors_is_refused_without_blocking 'fifo_st/model\.safetensors: not a regular file \(a FIFO\)' info "$tmp/fifo_st"
expect 1 fifo_config_json_is_refused_without_blocking 'fifo_cfg/config\.json: not a regular file \(a FIFO\)' info "$tmp/fifo_cfg"
expect 1 fifo_bin_is_refused 'fifo\.bin: not a regular file' info "$tmp/fifo.bin"
expect 1 overflowing_forward_is_refused_by_generate 'overflow\.bin: .*(non-finite logit|overflows float32)' \
  generate "$tmp/overflow.bin" -n 3 --device cpu

# --- tokenizer files
if out=$(timeout 20 "$A" tokenize "$tmp/v300.bin" hi --ids --tokenizer "$tmp/tok_ok" 2>&1) && [[ $out == "104 105" ]]; then
  ok "alphabet_tokenizer_fixture_is_accepted: $out"
else
  bad alphabet_tokenizer_fixture_is_accepted "$out"
fi
expect 1 vocab_json_with_data_after_the_object_is_refused 'tok_trailing/vocab\.json: unexpected data after' \
  tokenize "$tmp/v300.bin" hi --tokenizer "$tmp/tok_trailing"
expect 1 vocab_token_over_1024_bytes_is_refused 'tok_long/vocab\.json: token "a+\.\.\." \(id 257\) is 1100 bytes long' \
  tokenize "$tmp/v300.bin" hi --tokenizer "$tmp/tok_long"
expect 1 fifo_vocab_json_is_refused_without_blocking 'tok_fifo/vocab\.json: not a regular file \(a FIFO\)' \
  tokenize "$tmp/v300.bin" hi --tokenizer "$tmp/tok_fifo"

expect 1 merges_with_bare_cr_line_ends_is_refused 'tok_cr/merges\.txt:1: the #version line holds a carriage return' \
  tokenize "$tmp/v300.bin" hello --tokenizer "$tmp/tok_cr"
expect 1 missing_tokenizer_folder_is_refused_even_for_a_byte_model 'nowhere_tok: not a folder' \
  dump "$tmp/byte.bin" --tokenizer "$tmp/nowhere_tok" --out "$tmp/nt.h5" --device cpu --quiet --n 1 --len 8 --probes bos
# a token-id probe file needs no tokenizer when the model has none, but a broken one (or a wrong
# --tokenizer) is refused for it too: it used to be dropped silently (tokenizer "none")
echo '{"suite":"prev_token","tokens":[1,2,3,4]}' >"$tmp/ids300.jsonl"
if out=$(timeout 60 "$A" dump "$tmp/v300.bin" --probes "$tmp/ids300.jsonl" --out "$tmp/ids300.h5" --device cpu --quiet 2>&1); then
  ok "token_id_probe_file_runs_without_a_tokenizer"
else
  bad token_id_probe_file_runs_without_a_tokenizer "$out"
fi
expect 1 broken_tokenizer_is_refused_for_a_token_id_probe_file 'tok_trailing/vocab\.json: unexpected data after' \
  dump "$tmp/v300.bin" --probes "$tmp/ids300.jsonl" --tokenizer "$tmp/tok_trailing" --out "$tmp/ids_bad.h5" --device cpu --quiet
expect 1 wrong_tokenizer_folder_is_refused_for_a_token_id_probe_file 'nowhere_tok: not a folder' \
  analyze "$tmp/v300.bin" --probes "$tmp/ids300.jsonl" --tokenizer "$tmp/nowhere_tok" --out "$tmp/ids_an" --quiet

# --- probe files (and no dump left behind)
for p in two_items_on_a_line key_given_twice nul_escape_in_text; do
  case $p in
  two_items_on_a_line) re='two_items_on_a_line\.jsonl:1: unexpected data after the JSON value' ;;
  key_given_twice) re='key_given_twice\.jsonl:1: key "tokens" is given twice' ;;
  nul_escape_in_text) re='nul_escape_in_text\.jsonl:1: a string holds the escape \\u0000' ;;
  esac
  expect 1 "probe_${p}_is_refused" "$re" dump "$tmp/byte.bin" --probes "$tmp/$p.jsonl" --out "$tmp/$p.h5" --device cpu --quiet
  [[ -e $tmp/$p.h5 ]] && bad "probe_${p}_writes_nothing" "$tmp/$p.h5 exists"
done
expect 1 probe_file_with_1025_suites_is_refused 'too_many_suites\.jsonl: more than 1024 suites \("s1024" would be suite 1025\)' \
  dump "$tmp/byte.bin" --probes "$tmp/too_many_suites.jsonl" --out "$tmp/tms.h5" --device cpu --quiet
expect 1 probe_file_that_is_a_folder_is_refused 'probes_folder/: a folder, not a probe file' \
  dump "$tmp/byte.bin" --probes "$tmp/probes_folder/" --out "$tmp/pf.h5" --device cpu --quiet

expect 1 probe_file_that_is_a_device_is_refused '/dev/zero: a device or socket, not a probe file' \
  dump "$tmp/byte.bin" --probes /dev/zero --out "$tmp/pz.h5" --device cpu --quiet
# a stream without newlines (a pipe of NUL bytes) stops at the first over-long line
expect 1 probe_stream_without_newlines_stops_at_the_line_limit 'line longer than [0-9]+ bytes' \
  dump "$tmp/byte.bin" --probes <(exec cat /dev/zero) --out "$tmp/pn.h5" --device cpu --quiet
# the dump records a long probe file path whole (it was cut at 255 bytes, mid-character)
long_dir="$tmp/$(printf 'ü%.0s' {1..90})/$(printf 'd%.0s' {1..100})"
mkdir -p "$long_dir"
echo '{"suite":"prev_token","tokens":[1,2,3]}' >"$long_dir/p.jsonl"
if "$A" dump "$tmp/byte.bin" --probes "$long_dir/p.jsonl" --out "$tmp/longsrc.h5" --device cpu --quiet 2>/dev/null &&
  src=$(/usr/bin/python3 -c 'import h5py, sys; v = h5py.File(sys.argv[1])["prev_token"].attrs["source"]; print(v.decode() if isinstance(v, bytes) else v)' "$tmp/longsrc.h5" 2>&1) &&
  [[ $src == "$long_dir/p.jsonl" ]]; then
  ok "dump_records_a_long_probe_path_whole"
else
  bad dump_records_a_long_probe_path_whole "${src:-dump failed}"
fi
# 1024 suites of 63-character names pass the loader but not an HDF5 attribute: refused up front
/usr/bin/python3 -c '
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(1024): f.write(json.dumps({"suite": "s%04d" % i + "x" * 58, "tokens": [1, 2, 3], "targets": [[1, [0]]]}) + "\n")
' "$tmp/long_names.jsonl"
expect 1 suite_names_past_the_dump_attribute_are_refused 'suite names take 65535 bytes together, a dump holds at most 60000' \
  dump "$tmp/byte.bin" --probes "$tmp/long_names.jsonl" --out "$tmp/ln.h5" --device cpu --quiet
# endless streams end: of malformed lines (after 1000 of them), of blank lines (at the line limit)
expect 1 probe_stream_of_bad_lines_stops_after_1000 '1000 malformed lines; the rest was not read' \
  dump "$tmp/byte.bin" --probes <(exec yes) --out "$tmp/py.h5" --device cpu --quiet
expect 1 probe_stream_of_blank_lines_stops_at_the_line_limit 'more than [0-9]+ lines' \
  dump "$tmp/byte.bin" --probes <(exec yes '') --out "$tmp/pb.h5" --device cpu --quiet
# a line of exactly the limit is accepted with a CRLF end as with an LF one
/usr/bin/python3 - "$tmp" <<'PY'
import sys
line = '{"suite":"prev_token","tokens":[1,2,3]'
line += ' ' * ((1 << 20) - len(line) - 1) + '}'
open(f"{sys.argv[1]}/crlf_limit.jsonl", "w", newline="").write(line + "\r\n" + line + "\n")
PY
if out=$(timeout 60 "$A" dump "$tmp/byte.bin" --probes "$tmp/crlf_limit.jsonl" --out "$tmp/crlf.h5" --device cpu --quiet 2>&1); then
  ok "probe_line_of_the_limit_with_crlf_is_accepted"
else
  bad probe_line_of_the_limit_with_crlf_is_accepted "$out"
fi
# a series reads a probe stream once and gives every checkpoint its items; a bad probe file
# leaves no empty report folder behind
cp "$tmp/byte.bin" "$tmp/byte2.bin"
/usr/bin/python3 - "$tmp/byte2.bin" <<'PY'
import struct, sys
raw = bytearray(open(sys.argv[1], "rb").read())
raw[2000:2004] = struct.pack("<f", 0.5)  # another checkpoint of the same shape
open(sys.argv[1], "wb").write(raw)
PY
if out=$(timeout 120 "$A" analyze "$tmp/byte.bin" "$tmp/byte2.bin" --out "$tmp/fifo_series" --ablate-items 0 --quiet \
  --probes <(echo '{"suite":"prev_token","text":"hello hello"}') 2>&1) && [[ -f $tmp/fifo_series/index.html ]]; then
  ok "series_reads_a_probe_stream_once_for_every_checkpoint"
else
  bad series_reads_a_probe_stream_once_for_every_checkpoint "$out"
fi
expect 1 analyze_with_a_bad_probe_file_is_refused 'not valid JSON' \
  analyze "$tmp/byte.bin" --probes <(echo garbage) --out "$tmp/no_report" --quiet
[[ -e $tmp/no_report ]] && bad "bad_probe_file_leaves_no_folder" "$tmp/no_report exists" || ok "bad_probe_file_leaves_no_folder"
expect 2 empty_probes_option_is_refused "andrea dump: --probes wants suite names or a probe file, not ''" \
  dump "$tmp/byte.bin" --probes '' --out "$tmp/pe.h5" --device cpu --quiet
expect 2 empty_probes_option_of_analyze_is_refused "andrea analyze: --probes wants suite names or a probe file, not ''" \
  analyze "$tmp/byte.bin" --probes '' --out "$tmp/pe_an" --quiet
# an empty file or folder name (an unset shell variable) is named as such: the open that failed
# on it printed the path as nothing ("andrea: : no such catalog", "andrea: : cannot open: ...")
expect 2 empty_db_is_refused_as_empty "andrea heads: --db wants a catalog file, not ''" heads --db ''
expect 2 empty_db_value_after_equals_too "andrea diff: --db wants a catalog file, not ''" diff --db= --from a --to b
expect 2 empty_tokenizer_folder_is_refused "andrea tokenize: --tokenizer wants a folder, not ''" \
  tokenize "$tmp/byte.bin" hi --tokenizer ''
expect 2 empty_rules_file_is_refused "andrea analyze: --rules wants a rules file, not ''" \
  analyze "$tmp/byte.bin" --rules '' --out "$tmp/re_an" --quiet
expect 2 empty_text_file_is_refused "andrea show: --text-file wants a file, not ''" show "$tmp/byte.bin" --text-file ''
expect 2 empty_also_is_refused "andrea show: --also wants a checkpoint path, not ''" show "$tmp/byte.bin" hi --also ''
expect 1 empty_checkpoint_path_is_named "^andrea: the checkpoint's path is empty$" info ''
expect 1 empty_checkpoint_path_of_tokenize_is_named "^andrea: the checkpoint's path is empty$" tokenize '' hi
expect 1 empty_catalog_path_of_sql_is_named "^andrea: the catalog's file name is empty$" sql '' 'SELECT 1'
out=$("$A" generate "$tmp/byte.bin" --prompt '' -n 2 --device cpu 2>&1) && ok "generate --prompt '' is still the empty prompt" ||
  bad "generate --prompt ''" "$out"

# --- outputs that are inputs: refused, the input left as it was
cp "$tmp/byte.bin" "$tmp/self.bin"
sum_before=$(sha256sum <"$tmp/self.bin")
expect 1 dump_over_its_own_checkpoint_is_refused 'self\.bin: is the checkpoint this command reads' \
  dump "$tmp/self.bin" --probes "$tmp/ok.jsonl" --out "$tmp/self.bin" --device cpu --quiet
ln -s self.bin "$tmp/self_link.bin"
expect 1 dump_over_its_checkpoint_through_a_link_is_refused 'self_link\.bin: is the checkpoint this command reads' \
  dump "$tmp/self.bin" --probes "$tmp/ok.jsonl" --out "$tmp/self_link.bin" --device cpu --quiet
expect 1 analyze_dump_over_its_own_checkpoint_is_refused 'self\.bin: is the checkpoint this command reads' \
  analyze "$tmp/self.bin" --probes "$tmp/ok.jsonl" --dump "$tmp/self.bin" --out "$tmp/self_an" --quiet --device cpu
[[ $(sha256sum <"$tmp/self.bin") == "$sum_before" ]] || bad checkpoint_left_as_it_was "self.bin changed"
cp "$tmp/ok.jsonl" "$tmp/selfp.jsonl"
expect 1 dump_over_its_own_probe_file_is_refused 'selfp\.jsonl: is the probe file this command reads' \
  dump "$tmp/byte.bin" --probes "$tmp/selfp.jsonl" --out "$tmp/selfp.jsonl" --device cpu --quiet
cmp -s "$tmp/ok.jsonl" "$tmp/selfp.jsonl" || bad probe_file_left_as_it_was "selfp.jsonl changed"

# --- a file size limit hit while the dump is written: one line, exit 1 (SIGXFSZ used to kill
# it, and with the signal ignored HDF5's exit handler crashed on the half-closed file: SIGSEGV),
# no temporary left, an older dump kept; the same for classify's catalog
"$A" dump "$tmp/byte.bin" --probes "$tmp/ok.jsonl" --out "$tmp/limit.h5" --device cpu --quiet 2>/dev/null
old_sum=$(sha256sum <"$tmp/limit.h5")
(ulimit -f 64; expect 1 dump_past_the_file_size_limit_fails_in_one_line 'limit\.h5: .*(File too large|write failed)' \
  dump "$tmp/byte.bin" --out "$tmp/limit.h5" --n 16 --len 32 --device cpu --quiet; exit $fails) || fails=$((fails + 1))
ls "$tmp"/limit.h5.tmp* >/dev/null 2>&1 && bad file_size_limit_leaves_no_temporary "$(ls "$tmp"/limit.h5.tmp*)"
"$A" dump "$tmp/byte.bin" --out "$tmp/lim_big.h5" --n 16 --len 32 --device cpu --quiet 2>/dev/null
(ulimit -f 8; expect 1 classify_past_the_file_size_limit_fails_in_one_line 'lim\.db' \
  classify "$tmp/lim_big.h5" --db "$tmp/lim.db" --ablate-items 1 --ablation zero --quiet; exit $fails) || fails=$((fails + 1))
[[ $(sha256sum <"$tmp/limit.h5") == "$old_sum" ]] || bad file_size_limit_keeps_the_older_dump "limit.h5 changed"

# --- names that hold control characters print as one line
expect 1 checkpoint_name_with_a_newline_is_one_line 'missing\?x\.bin: ' info "$tmp/missing"$'\n'"x.bin"
# a path near PATH_MAX filled the whole message (768 bytes): the line was the path alone, cut,
# with no reason; it keeps its start and its end now
deep=$tmp/deep
while [[ ${#deep} -lt 3990 ]]; do deep=$deep/$(printf 'd%.0s' {1..150}); done
deep=${deep:0:3990}
deep=${deep%/}
mkdir -p "$deep"
expect 1 output_path_near_path_max_keeps_the_reason "^andrea: $tmp/deep/[d/]+\.\.\.[d/]*/x+\.h5: .*File name too long\$" \
  dump "$tmp/byte.bin" --probes "$tmp/ok.jsonl" --out "$deep/$(printf 'x%.0s' {1..120}).h5" --device cpu --quiet
rm -rf "$tmp/deep"
"$A" show "$tmp/byte.bin" abc --out "$tmp/sh"$'\n'"ow" >/dev/null 2>"$tmp/show_nl.err" || bad show_into_a_name_with_a_newline "failed"
[[ $(wc -l <"$tmp/show_nl.err") -eq 1 ]] && grep -q 'open .*/sh?ow/index.html' "$tmp/show_nl.err" &&
  ok "show_names_a_folder_with_a_newline_in_one_line: $(cat "$tmp/show_nl.err")" ||
  bad show_names_a_folder_with_a_newline_in_one_line "$(cat "$tmp/show_nl.err")"
# show --text-file reads a regular file: a folder was "read failed", a FIFO without a writer hung
expect 1 show_text_file_that_is_a_folder_is_refused 'not a regular file \(a folder\)' show "$tmp/byte.bin" --text-file "$tmp" --out "$tmp/shf"
mkfifo "$tmp/text.fifo"
expect 1 show_text_file_that_is_a_fifo_is_refused 'not a regular file \(a FIFO\)' show "$tmp/byte.bin" --text-file "$tmp/text.fifo" --out "$tmp/shf"
expect 2 command_name_with_an_escape_is_one_line "andrea: unknown command 'bad\?\[2J'" $'bad\e[2J'

# --- a FIFO as the checkpoint of classify's causal check: refused, never waited on
"$A" dump "$tmp/byte.bin" --probes "$tmp/ok.jsonl" --out "$tmp/cl.h5" --device cpu --quiet 2>/dev/null
mkfifo "$tmp/ck_fifo.bin"
echo "not a database" >"$tmp/text.db"
expect 1 sql_over_a_text_file_is_refused_even_for_a_query_reading_no_table 'text\.db: not an SQLite database' \
  sql "$tmp/text.db" "SELECT 1"
"$A" classify "$tmp/cl.h5" --db "$tmp/newer.db" --ablate-items 0 --quiet >/dev/null 2>&1
"$PY" -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version = 99'); c.commit()" "$tmp/newer.db"
expect 1 render_of_a_catalog_from_a_newer_andrea_is_refused 'newer\.db: catalog schema version 99 is newer than this andrea' \
  render "$tmp/cl.h5" --db "$tmp/newer.db" --out "$tmp/r_newer" --quiet
expect 1 diff_of_a_catalog_from_a_newer_andrea_is_refused 'newer\.db: catalog schema version 99 is newer than this andrea' \
  diff --db "$tmp/newer.db" --from byte --to byte
mkfifo "$tmp/db_fifo"
expect 1 render_catalog_fifo_is_refused_without_blocking 'db_fifo: not a regular file' \
  render "$tmp/cl.h5" --db "$tmp/db_fifo" --out "$tmp/r_fifo" --quiet
expect 1 classify_checkpoint_fifo_is_refused_without_blocking 'ck_fifo\.bin: not a regular file \(a FIFO\)' \
  classify "$tmp/cl.h5" --db "$tmp/cl.db" --checkpoint "$tmp/ck_fifo.bin" --quiet

# --- options
expect 1 dump_out_naming_a_fifo_is_refused_and_left_alone 'out_fifo: exists and is not a regular file' \
  dump "$tmp/byte.bin" --probes "$tmp/ok.jsonl" --out "$tmp/out_fifo" --device cpu --quiet
[[ -p $tmp/out_fifo ]] || bad dump_out_fifo_is_still_a_fifo "it was replaced"
expect 1 dump_out_in_a_missing_folder_is_refused_before_loading 'nowhere/x\.h5: folder .*/nowhere does not exist' \
  dump "$tmp/missing.bin" --out "$tmp/nowhere/x.h5"
expect 2 dump_option_without_its_value_is_one_line 'andrea dump: --out needs a value' dump "$tmp/byte.bin" --out
expect 2 analyze_option_value_that_is_an_option_is_refused "andrea analyze: --out needs a value, and the next word '--quiet' is an option" \
  analyze "$tmp/byte.bin" --out --quiet
[[ -e ./--quiet ]] && bad analyze_out_quiet_made_no_folder "a folder ./--quiet was made"
expect 2 dump_short_option_value_that_is_an_option_is_refused "andrea dump: -o needs a value, and the next word '-q' is an option" \
  dump "$tmp/byte.bin" -o -q
# an option that takes one value, given twice, is refused (the last one silently won: `heads --db
# a --db b` read b); --probes and --also take theirs more than once
expect 2 heads_db_given_twice_is_refused "andrea heads: --db is given twice" heads --db a.db --db b.db
expect 2 classify_db_given_twice_is_refused "andrea classify: --db is given twice" classify x.h5 --db a.db --db=b.db
expect 2 diff_from_given_twice_is_refused "andrea diff: --from is given twice" diff --db a.db --from x --to y --from y
expect 2 dump_out_given_twice_short_and_long_is_refused "andrea dump: --out is given twice" dump "$tmp/byte.bin" -o a.h5 --out b.h5
"$A" dump "$tmp/byte.bin" --probes bos --probes prev_token --n 2 --out "$tmp/two.h5" >/dev/null 2>&1 &&
  ok "--probes given twice counts both" || bad probes_twice "refused"
/usr/bin/python3 -c "import sqlite3; sqlite3.connect('$tmp/cat.db').execute('create table t(x)')"
expect 1 dump_out_over_a_catalog_is_refused 'cat\.db: is an SQLite database \(a catalog\?\), which a dump would replace' \
  dump "$tmp/byte.bin" --out "$tmp/cat.db"
expect 2 version_with_an_argument_is_refused 'andrea: --version takes no arguments' --version extra
expect 2 dump_unknown_option_is_one_line "andrea dump: unknown option '--bogus'" dump "$tmp/byte.bin" --bogus
expect 2 generate_option_without_its_value_is_one_line 'andrea generate: -n needs a value' generate "$tmp/byte.bin" -n
expect 2 tokenize_option_without_its_value_is_one_line 'andrea tokenize: --tokenizer needs a value' tokenize "$tmp/byte.bin" x --tokenizer
expect 2 info_unknown_option_is_one_line "andrea info: unknown option '-x'" info -x "$tmp/byte.bin"
expect 2 generate_seed_with_a_space_and_minus_is_refused "andrea generate: --seed wants a non-negative integer, not ' -1'" \
  generate "$tmp/byte.bin" --seed " -1"
expect 2 dump_seed_with_a_space_and_minus_is_refused "andrea dump: --seed wants a positive integer, not ' -1'" \
  dump "$tmp/byte.bin" --seed " -1" --out "$tmp/seed.h5"
# numbers are decimals as written: no wrap past 2^32, no sign where none is meant, no leading
# space, no hex float
expect 2 heads_head_past_int_range_is_refused "andrea heads: --head wants LAYER.HEAD .*not '4294967296.1'" \
  heads --db "$tmp/cl.db" --head 4294967296.1
expect 2 heads_head_with_a_minus_is_refused "andrea heads: --head wants LAYER.HEAD .*not '-0.1'" heads --db "$tmp/cl.db" --head -0.1
expect 2 heads_layer_with_a_leading_space_is_refused "andrea heads: --layer wants a layer number .*not ' 1'" \
  heads --db "$tmp/cl.db" --layer " 1"
expect 2 heads_min_score_in_hex_is_refused "andrea heads: --min-score wants a number, not '0x1p-2'" \
  heads --db "$tmp/cl.db" --min-score 0x1p-2
expect 2 dump_len_names_its_range "andrea dump: --len 3 is too small \(at least 5\)" dump "$tmp/byte.bin" --len 3
expect 2 dump_len_junk_names_its_range "andrea dump: --len wants 5\.\.1048576 tokens, not '3x'" dump "$tmp/byte.bin" --len 3x
expect 2 tokenize_flag_with_a_value_is_named "andrea tokenize: --ids takes no value, not '--ids=3'" tokenize "$tmp/byte.bin" x --ids=3
if "$A" generate "$tmp/byte.bin" --prompt "-nice" -n 2 >"$tmp/gen_dash.out" 2>"$tmp/gen_dash.err" && grep -q '^-nice' "$tmp/gen_dash.out"; then
  ok "generate_prompt_starting_with_a_dash_is_text"
else
  bad generate_prompt_starting_with_a_dash_is_text "$(cat "$tmp/gen_dash.err")"
fi
expect 1 probes_list_with_an_empty_name_is_refused "andrea: --probes 'bos,' has an empty suite name" \
  dump "$tmp/byte.bin" --probes 'bos,' --n 2 --len 16 --out "$tmp/empty_name.h5" --device cpu --quiet
if [[ -c /dev/full && -w /dev/full ]]; then
  timeout 20 "$A" info "$tmp/byte.bin" >/dev/full 2>"$tmp/full.err"
  rc=$?
  if [[ $rc -eq 1 ]] && [[ $(cat "$tmp/full.err") == "andrea: stdout: write failed" ]]; then
    ok "info_to_a_full_stdout_fails"
  else
    bad info_to_a_full_stdout_fails "exit $rc: $(cat "$tmp/full.err")"
  fi
else
  echo "skip: info_to_a_full_stdout_fails (no writable /dev/full)"
fi
finish
