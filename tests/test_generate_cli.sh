#!/usr/bin/env bash
# test_generate_cli.sh — `andrea generate` end to end on tiny byte-level checkpoints made here.
# Known-answer model: every weight zero except wte, and the final LayerNorm has lnfw = 0 and
# lnfb = 3 * wte['a'], so the final LayerNorm outputs lnfb at every position and the logits are
# lnfb · wte[v], largest for 'a' (whose row is also scaled up): greedy decoding must continue any prompt with "aaaa...".
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_python_modules numpy

# write_bin PATH VOCAB MODE [ID]: an llm.c v3 .bin, L=1 H=2 C=8 maxT=32; MODE known|random; the
# known model's most likely token is ID (default 97, 'a')
write_bin() {
  /usr/bin/python3 - "$@" <<'EOF'
import sys, numpy as np
path, V, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
fav = int(sys.argv[4]) if len(sys.argv) > 4 else ord('a')
L, H, C, T = 1, 2, 8, 32
rng = np.random.default_rng(7)
hdr = np.zeros(256, np.int32)
hdr[:8] = [20240326, 3, T, V, L, H, C, V]
shapes = [(V, C), (T, C), (L, C), (L, C), (L, 3*C, C), (L, 3*C), (L, C, C), (L, C), (L, C), (L, C),
          (L, 4*C, C), (L, 4*C), (L, C, 4*C), (L, C), (C,), (C,)]
if mode == "known":
    ps = [np.zeros(s, np.float32) for s in shapes]
    ps[0] = rng.standard_normal((V, C)).astype(np.float32)
    ps[0][fav] *= 3                        # |wte[a]|^2 dwarfs every wte[a] . wte[v]
    ps[15] = 3 * ps[0][fav]                # lnfb; lnfw (ps[14]) stays 0
else:
    ps = [rng.standard_normal(s).astype(np.float32) * 0.5 for s in shapes]
    ps[2][:] = 1; ps[8][:] = 1; ps[14][:] = 1
with open(path, "wb") as f:
    f.write(hdr.tobytes())
    for p in ps:
        f.write(p.astype(np.float32).tobytes())
EOF
}

# write_hf DIR: the known-answer model in Hugging Face layout (GPT-2 vocabulary of 50257, token
# 64 = "a"), model.safetensors with `transformer.` names and Conv1D [in, out] weights + config.json
write_hf() {
  /usr/bin/python3 - "$@" <<'EOF'
import sys, os, json, struct, numpy as np
d = sys.argv[1]; os.makedirs(d, exist_ok=True)
L, C, V, T, A = 1, 8, 50257, 32, 64
rng = np.random.default_rng(7)
wte = rng.standard_normal((V, C)).astype(np.float32); wte[A] *= 3
z = lambda *s: np.zeros(s, np.float32)
ts = {"transformer.wte.weight": wte, "transformer.wpe.weight": z(T, C),
      "transformer.ln_f.weight": z(C), "transformer.ln_f.bias": 3 * wte[A]}
for k, v in {"ln_1.weight": z(C), "ln_1.bias": z(C), "attn.c_attn.weight": z(C, 3*C), "attn.c_attn.bias": z(3*C),
             "attn.c_proj.weight": z(C, C), "attn.c_proj.bias": z(C), "ln_2.weight": z(C), "ln_2.bias": z(C),
             "mlp.c_fc.weight": z(C, 4*C), "mlp.c_fc.bias": z(4*C), "mlp.c_proj.weight": z(4*C, C),
             "mlp.c_proj.bias": z(C)}.items():
    ts["transformer.h.0." + k] = v
hdr, blobs, off = {}, [], 0
for k, v in ts.items():
    b = np.ascontiguousarray(v).tobytes()
    hdr[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [off, off + len(b)]}
    off += len(b); blobs.append(b)
h = json.dumps(hdr).encode()
with open(os.path.join(d, "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h))); f.write(h); [f.write(b) for b in blobs]
json.dump({"model_type": "gpt2", "n_layer": L, "n_head": 2, "n_embd": C, "vocab_size": V, "n_positions": T,
           "layer_norm_epsilon": 1e-5}, open(os.path.join(d, "config.json"), "w"))
EOF
}

write_bin "$tmp/known257.bin" 257 known
write_hf "$tmp/hf"
write_bin "$tmp/random257.bin" 257 random
write_bin "$tmp/random256.bin" 256 random

# test_greedy_generation_continues_the_prompt_with_the_most_likely_token
out=$("$ANDREA_BIN" generate "$tmp/known257.bin" --prompt "hi " -n 5 --temperature 0 --device cpu)
[[ $out == "hi aaaaa" ]] && ok greedy_known_answer || bad greedy_known_answer "got '$out'"

# test_greedy_generation_on_a_safetensors_folder_with_the_gpt2_tokenizer
out=$("$ANDREA_BIN" generate "$tmp/hf" --tokenizer "$ANDREA_SRC/tests/data/gpt2" --prompt "hi " -n 5 --temperature 0 --device cpu)
[[ $out == "hi aaaaa" ]] && ok safetensors_gpt2_bpe || bad safetensors_gpt2_bpe "got '$out'"

# test_sampling_with_the_same_seed_repeats_the_text
a=$("$ANDREA_BIN" generate "$tmp/random257.bin" --prompt "x" -n 20 --temperature 1 --seed 5 --device cpu)
b=$("$ANDREA_BIN" generate "$tmp/random257.bin" --prompt "x" -n 20 --temperature 1 --seed 5 --device cpu)
[[ "$a" == "$b" ]] && ok same_seed_same_text || bad same_seed_same_text "'$a' vs '$b'"

# test_different_seeds_give_different_text (20 draws from ~257 tokens: a collision is ~impossible)
c=$("$ANDREA_BIN" generate "$tmp/random257.bin" --prompt "x" -n 20 --temperature 1 --seed 6 --device cpu | od -An -tx1)
a_hex=$(printf '%s' "$a" | od -An -tx1)
[[ "$a_hex" != "$c" ]] && ok different_seed_different_text || bad different_seed_different_text "same output"

# test_generation_longer_than_the_context_slides_the_window (maxT = 32, 40 new tokens)
if "$ANDREA_BIN" generate "$tmp/known257.bin" --prompt "ab" -n 40 --temperature 0 --device cpu >"$tmp/long.txt"; then
  [[ $(cat "$tmp/long.txt") == "ab$(printf 'a%.0s' {1..40})" ]] && ok sliding_window || bad sliding_window "$(cat "$tmp/long.txt")"
else
  bad sliding_window "exit $?"
fi

# test_empty_prompt_without_bos_is_a_usage_error
set +e
msg=$("$ANDREA_BIN" generate "$tmp/random256.bin" -n 3 --device cpu 2>&1 >/dev/null); rc=$?
set -e
[[ $rc == 2 && $msg == *"no BOS token"* ]] && ok empty_prompt_without_bos || bad empty_prompt_without_bos "rc=$rc '$msg'"

# test_negative_temperature_is_a_usage_error
set +e
msg=$("$ANDREA_BIN" generate "$tmp/random257.bin" --temperature -1 2>&1 >/dev/null); rc=$?
set -e
[[ $rc == 2 && $msg == *"--temperature"* ]] && ok negative_temperature || bad negative_temperature "rc=$rc '$msg'"

# test_missing_checkpoint_names_the_file
set +e
msg=$("$ANDREA_BIN" generate "$tmp/nope.bin" 2>&1 >/dev/null); rc=$?
set -e
[[ $rc == 1 && $msg == *"nope.bin"* && $(printf '%s\n' "$msg" | wc -l) == 1 ]] && ok missing_checkpoint || bad missing_checkpoint "rc=$rc '$msg'"

# test_tokens_without_text_in_the_vocabulary_are_noted: a model of 300 ids whose vocab.json holds
# the 256 byte tokens only; the model's favourite, id 290, has no text, so the continuation prints
# nothing, and stderr says so in one line (it was an empty continuation, exit 0, not a word)
write_bin "$tmp/known300.bin" 300 known 290
mkdir -p "$tmp/bytes_only"
/usr/bin/python3 - "$tmp/bytes_only" <<'EOF'
import json, sys
bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
cs, n = bs[:], 0
for b in range(256):
    if b not in bs:
        bs.append(b); cs.append(256 + n); n += 1
json.dump({chr(c): b for b, c in zip(bs, cs)}, open(sys.argv[1] + "/vocab.json", "w"), ensure_ascii=False)
open(sys.argv[1] + "/merges.txt", "w").write("#version: 0.2\n")
EOF
set +e
out=$("$ANDREA_BIN" generate "$tmp/known300.bin" --tokenizer "$tmp/bytes_only" --prompt "hi " -n 5 --temperature 0 --device cpu 2>"$tmp/err"); rc=$?
set -e
if [[ $rc == 0 && $out == "hi " && $(wc -l <"$tmp/err") == 1 ]] &&
  grep -q "note: 5 of the 5 generated tokens (first: id 290) have no text in the tokenizer" "$tmp/err"; then
  ok textless_tokens_noted
else
  bad textless_tokens_noted "rc=$rc out='$out' err='$(cat "$tmp/err")'"
fi
# ... and a continuation whose every token has text says nothing
"$ANDREA_BIN" generate "$tmp/known257.bin" --prompt "hi " -n 5 --temperature 0 --device cpu 2>"$tmp/err" >/dev/null
[[ ! -s $tmp/err ]] && ok no_note_when_every_token_has_text || bad no_note_when_every_token_has_text "$(cat "$tmp/err")"

# on a terminal the generated text's control bytes print as \xNN (a vocabulary's escape sequence
# would drive the terminal); piped, the bytes are the text itself
T="$ANDREA_SRC/models/andrea-tiny.bin"
piped=$("$ANDREA_BIN" generate "$T" -n 2000 --temperature 50 --seed 3 --device cpu | tr -cd '\000-\010\013-\037' | wc -c)
if command -v script >/dev/null; then
  ontty=$(script -qec "'$ANDREA_BIN' generate '$T' -n 2000 --temperature 50 --seed 3 --device cpu" /dev/null |
    tr -cd '\000-\010\013\014\016-\037' | wc -c)
  [[ $piped -gt 0 && $ontty == 0 ]] && ok control_bytes_escaped_on_a_terminal_only ||
    bad control_bytes_escaped_on_a_terminal_only "piped $piped, on a terminal $ontty control bytes"
fi

if ((fails)); then echo "test_generate_cli: $fails failed"; exit 1; fi
echo "test_generate_cli: all passed"
