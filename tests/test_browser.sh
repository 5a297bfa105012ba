#!/usr/bin/env bash
# test_browser.sh — the report in a real browser (headless Chromium, no network).
# A random tiny model made here is dumped (`andrea dump`, built-in suites), classified and
# rendered; then copies of index.html and of one head page get a small test script appended and
# are opened with `chromium --headless --dump-dom`: after the load event the script checks that the
# head table has one row per head, that every image loaded (naturalWidth > 0), that clicking the
# score header sorts the rows (descending, then ascending: the order changes), that the class
# filter works and that every src/href of the page resolves to a file: URL; it writes its findings into
# the DOM, which this script reads back. A screenshot of index.html is saved to
# $ANDREA_BUILD/test-artifacts/browser-index.png.
# Skips (exit 77) when /usr/bin/chromium is absent (Debian: apt-get install chromium).
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_python_modules numpy
CHROMIUM=/usr/bin/chromium
if [[ ! -x $CHROMIUM ]]; then skip "$CHROMIUM not found (Debian package chromium; see tools/ci-extra-packages.txt)"; fi
need_built dump classify

write_tiny_bin "$tmp/tiny.bin" 5
cd "$tmp"
"$A" dump tiny.bin --probes prev_token,induction,bos --n 3 --len 32 --out d.h5 --quiet --device cpu
"$A" classify d.h5 --db c.db --quiet --device cpu > /dev/null
"$A" render d.h5 --db c.db --out rep --report full --quiet > /dev/null
N_HEADS=8

# The test script: runs after the load event (all images settled), writes one line of JSON.
cat > check.js <<'EOF'
<script>
window.addEventListener('load', function () {
  var r = {};
  function rows() { return Array.prototype.slice.call(document.querySelectorAll('#heads tbody tr')); }
  var imgs = Array.prototype.slice.call(document.images);
  r.images = imgs.length;
  r.broken = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); })
                 .map(function (i) { return i.getAttribute('src'); });
  r.offsite = Array.prototype.slice.call(document.querySelectorAll('[src],[href]'))
                 .map(function (e) { return e.src || e.href; })
                 .filter(function (u) { return u.indexOf('file:') !== 0; });
  r.links = document.querySelectorAll('[src],[href]').length;
  var table = document.getElementById('heads');
  if (table) {
    r.rows = rows().length;
    var th = table.querySelector('th.score'), col = +th.getAttribute('data-col');
    var order = function () { return rows().map(function (tr) { return tr.getAttribute('data-i'); }).join(','); };
    var vals = function () { return rows().map(function (tr) { return parseFloat(tr.cells[col].getAttribute('data-v')); }); };
    var before = order();
    th.click();
    var desc = vals(), o1 = order();
    th.click();
    var asc = vals(), o2 = order();
    r.sorted_desc = desc.every(function (v, i) { return i === 0 || desc[i - 1] >= v; });
    r.sorted_asc = asc.every(function (v, i) { return i === 0 || asc[i - 1] <= v; });
    r.reordered = o1 !== before && o1 !== o2;
    var sel = document.getElementById('filter');
    sel.value = 'any';
    sel.dispatchEvent(new Event('change'));
    var shown = rows().filter(function (tr) { return tr.style.display !== 'none'; }).length;
    var labelled = rows().filter(function (tr) { return tr.getAttribute('data-classes').trim() !== ''; }).length;
    r.filter_ok = shown === labelled;
  }
  var pre = document.createElement('pre');
  pre.textContent = 'ANDREA_RESULT ' + JSON.stringify(r);
  document.body.appendChild(pre);
});
</script>
EOF
inject() { # SRC DST: DST = SRC with check.js before </body>
  /usr/bin/python3 -c "import sys; s=open(sys.argv[1]).read(); j=open('check.js').read(); open(sys.argv[2],'w').write(s.replace('</body>', j + '</body>'))" "$1" "$2"
}
inject rep/index.html rep/_test_index.html
inject rep/heads/L1_H2.html rep/heads/_test_head.html

# No network: a dead proxy and a resolver that resolves nothing, besides the offline-only flags.
chrome() {
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-extensions \
    --proxy-server=127.0.0.1:9 --host-resolver-rules="MAP * ~NOTFOUND" \
    --user-data-dir="$tmp/profile-$1" "${@:2}" 2> "$tmp/chrome-$1.log"
}
result() { # NAME URL -> JSON line
  chrome "$1" --virtual-time-budget=10000 --dump-dom "$2" | sed -n 's/.*ANDREA_RESULT \(.*\)<\/pre>.*/\1/p' | head -1
}
r_index=$(result index "file://$tmp/rep/_test_index.html")
r_head=$(result head "file://$tmp/rep/heads/_test_head.html")
if [[ -z $r_index || -z $r_head ]]; then
  echo "no result from Chromium; its log:"; tail -20 "$tmp"/chrome-*.log
  exit 1
fi
echo "index: $r_index"
echo "head page: $r_head"
check() { # NAME JSON PYTHON-EXPRESSION over r
  if /usr/bin/python3 -c "import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if ($3) else 1)" "$2"; then ok "$1"
  else bad "$1" "$2"; fi
}
check "head table has one row per head ($N_HEADS)" "$r_index" "r['rows'] == $N_HEADS"
check "every image on the index loads" "$r_index" "r['images'] >= 3 + 3 and r['broken'] == []"
# head pages load their PNGs lazily, inside closed "static image" details (test_interactive_browser.sh
# opens them and checks they load)
check "a head page links one PNG per suite (3 suites; --report-maps default 1)" "$r_head" "r['images'] == 3"
check "clicking the score header sorts descending then ascending" "$r_index" "r['sorted_desc'] and r['sorted_asc']"
check "sorting by score reorders the rows" "$r_index" "r['reordered']"
check "the class filter shows exactly the labelled heads" "$r_index" "r['filter_ok']"
check "every src and href of the index is a file: URL" "$r_index" "r['links'] > $N_HEADS and r['offsite'] == []"
check "every src and href of a head page is a file: URL" "$r_head" "r['links'] > 6 and r['offsite'] == []"

art="${ANDREA_BUILD:-$tmp}/test-artifacts"
mkdir -p "$art"
chrome shot --window-size=1400,1200 --screenshot="$art/browser-index.png" "file://$tmp/rep/index.html" > /dev/null
if [[ -s $art/browser-index.png ]] && head -c 8 "$art/browser-index.png" | grep -q PNG; then ok "screenshot saved: $art/browser-index.png"
else bad "screenshot" "$art/browser-index.png missing"; fi

finish
