#!/usr/bin/env bash
# test_heatmap_labels_cut_by_code_point.sh — the interactive heatmap's axis labels (short() in
# reports/assets/andrea.js) cut a long token to 9 characters + an ellipsis by code point: cut by
# UTF-16 unit, a token of emoji past the 9th unit drew half a surrogate pair. The function is taken
# from the shipped script itself and run in Node. Skips (77) without node (Debian: nodejs).
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
command -v node > /dev/null || skip "node not found (Debian package nodejs)"
fn=$(grep -m1 '^ *function short(s)' "$ANDREA_SRC/reports/assets/andrea.js") || true
[[ -n $fn ]] || { bad "short() in andrea.js" "not found"; finish; }
out=$(node -e "$fn
const lone = (s) => /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
const cases = ['abcdefgh\u{1F600}\u{1F600}\u{1F600}', '\u{1F600}'.repeat(12), 'short', 'abcdefghijk', '\u{1F600}'.repeat(10)];
console.log(JSON.stringify(cases.map((c) => [short(c), lone(short(c)), Array.from(short(c)).length])));")
check() { # NAME PYTHON-EXPRESSION over r
  if python3 -c "import json, sys; r = json.loads(sys.argv[1]); sys.exit(0 if ($2) else 1)" "$out"; then ok "$1"
  else bad "$1" "$out"; fi
}
check "no label holds half a surrogate pair" "not any(c[1] for c in r)"
check "a long label is 9 characters and an ellipsis" "r[0][2] == 10 and r[1][2] == 10 and r[3][0] == 'abcdefghi\u2026'"
check "labels of 10 characters or fewer stay whole" "r[2][0] == 'short' and r[4][2] == 10 and not r[4][0].endswith('\u2026')"
finish
