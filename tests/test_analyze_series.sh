#!/usr/bin/env bash
# test_analyze_series.sh — `andrea analyze` of a checkpoint series (tests/data/series: one training
# run saved at six steps) scores every checkpoint before rendering any, so each report has its
# score-against-step plots; writes the series page and a table across steps; and a later run of a
# custom probe file on one checkpoint hides neither `heads` nor the report of the earlier dump.
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files tests/data/series/dyck-step00030.bin tests/data/series/dyck-step08000.bin
cd "$tmp"
ckpts=("$ANDREA_SRC"/tests/data/series/dyck-step*.bin)
[[ ${#ckpts[@]} -eq 6 ]] || bad "fixture" "want 6 checkpoints, found ${#ckpts[@]}"

start=$SECONDS
if "$A" analyze "${ckpts[@]}" --out s --probes induction,prev_token --device cpu --keep-dumps >out.txt 2>err.txt; then
  ok "analyze of 6 checkpoints exits 0 ($((SECONDS - start)) s)"
else
  bad "analyze" "exit $?: $(tail -3 err.txt)"
fi

# progress: k/N and the checkpoint's name; every scoring line before the first rendering line
grep -q '\[1/6\] scoring .*dyck-step00030.bin' err.txt && grep -q '\[6/6\] rendering .*dyck-step08000.bin' err.txt \
  && ok "progress lines name the checkpoint and k/N" || bad "progress" "$(cat err.txt)"
last_score=$(grep -n 'scoring' err.txt | tail -1 | cut -d: -f1)
first_render=$(grep -n 'rendering' err.txt | head -1 | cut -d: -f1)
[[ -n $last_score && -n $first_render && $last_score -lt $first_render ]] \
  && ok "all checkpoints are scored before any is rendered" || bad "order" "$(cat err.txt)"

# every report, the first one included, has the score-against-step plots of the whole series
for s in 00030 08000; do
  [[ -f s/dyck-step$s/index.html && -n $(ls s/dyck-step$s/overview/steps_* 2>/dev/null) ]] \
    && ok "report of step $s has its score-against-step plots" || bad "report $s" "$(ls s/dyck-step$s/overview 2>&1)"
done

# the series page: links to every report, a head x step matrix, formation plots with the threshold
p=s/index.html
if [[ -f $p ]]; then
  n_links=$(grep -o 'href="dyck-step[0-9]*/index.html"' $p | sort -u | wc -l)
  [[ $n_links -eq 6 ]] && ok "series page links the 6 reports" || bad "links" "$n_links"
  grep -q 'class="matrix"' $p && grep -q '<th>1.3</th>' $p && ok "series page has a head x step matrix" || bad "matrix" ""
  grep -q 'class="thr"' $p && grep -q 'step (log)' $p && ok "formation plots draw the threshold on a log step axis" \
    || bad "plots" ""
  grep -q '0\.926\*' $p && ok "labelled cells are marked" || bad "marks" "$(grep -o '0\.92[0-9]*.' $p | head -2)"
  # a diff between each pair of adjacent steps, linked from the top: label changes, as `andrea diff --changed`
  n_diffs=$(grep -o 'href="#diff-[0-9]*"' $p | sort -u | wc -l)
  gained=$(sed -n '/id="diff-/,$p' $p | grep -o '<tr><td>1\.[0-3]</td><td>induction</td><td>[^<]*</td><td>[^<]*</td><td>[^<]*</td><td>gained' |
    grep -o '1\.[0-3]' | sort -u | tr '\n' ' ')
  [[ $n_diffs -eq 5 && $gained == "1.0 1.1 1.3 " ]] \
    && ok "series page links 5 step-to-step diffs; induction gained by $gained" || bad "diffs" "$n_diffs links, gained: $gained"
else
  bad "series page" "no $p"
fi

# the table across steps on stdout
grep -Eq '^8000 +- +1\.0 1\.1 1\.3|^8000 .*1\.0 1\.1 1\.3' out.txt && grep -Eq '^30 +- +-' out.txt \
  && ok "terminal table: induction heads 1.0 1.1 1.3 at step 8000, none at 30" || bad "table" "$(cat out.txt)"

# a run of a custom suite on the step-8000 checkpoint does not hide the built-in runs
cat >custom.jsonl <<'J'
{"suite": "my_suite", "tokens": [256, 40, 41, 42, 40, 41, 42], "targets": [[4, [1]], [5, [2]], [6, [3]]]}
{"suite": "my_suite", "tokens": [256, 50, 51, 52, 50, 51, 52], "targets": [[4, [1]], [5, [2]], [6, [3]]]}
J
"$A" dump "${ckpts[5]}" --probes custom.jsonl --out c.h5 --device cpu --quiet >/dev/null 2>dump.err \
  && "$A" classify c.h5 --db s/catalog.db --quiet >/dev/null 2>cls.err || bad "custom run" "$(cat dump.err cls.err)"
n=$("$A" heads --db s/catalog.db --class induction --step 8000 --format csv | tail -n +2 | wc -l)
[[ $n -eq 3 ]] && ok "heads --class induction still lists the 3 heads after a custom run" || bad "heads" "$n rows"
"$A" render s/dyck-step08000.h5 --db s/catalog.db --out r8 --quiet >/dev/null 2>r8.err || bad "render" "$(cat r8.err)"
grep -q '0\.926' r8/index.html 2>/dev/null && ok "re-rendering the earlier dump shows its own run's scores" \
  || bad "render of the earlier dump" "no induction score in r8/index.html"
"$A" render c.h5 --db s/catalog.db --out rc --quiet >/dev/null 2>rc.err || bad "render custom" "$(cat rc.err)"
grep -q 'my_suite' rc/index.html 2>/dev/null && ok "rendering the custom dump shows the custom run" || bad "render custom" ""

# a newer dump of the same suite (other items) becomes current; rendering the earlier dump still
# shows the run that scored it (matched by its seal)
"$A" dump "${ckpts[5]}" --probes induction --n 6 --seed 7 --out b.h5 --device cpu --quiet >/dev/null 2>b.err \
  && "$A" classify b.h5 --db s/catalog.db --quiet >/dev/null 2>>b.err || bad "second dump" "$(cat b.err)"
new=$("$A" heads --db s/catalog.db --class induction --step 8000 --head 1.0 --format csv | tail -1 | cut -d, -f7)
new3=$(printf '%.3f' "$new")
if [[ $new3 != 0.926 ]]; then
  "$A" render s/dyck-step08000.h5 --db s/catalog.db --out r8b --quiet >/dev/null 2>r8b.err || bad "render" "$(cat r8b.err)"
  grep -q '0\.926' r8b/index.html && ! grep -q "${new3/./\\.}" r8b/index.html \
    && ok "the earlier dump renders with its own run, not the newer current one ($new3)" || bad "seal match" "current $new3"
  "$A" render b.h5 --db s/catalog.db --out rb --quiet >/dev/null 2>rb.err || bad "render b" "$(cat rb.err)"
  grep -q "${new3/./\\.}" rb/index.html && ok "the newer dump renders with its run ($new3)" || bad "render b" "no $new3"
else
  bad "second dump" "scores 0.926 like the first: pick another seed"
fi
# the series page is nobody else's to replace: `show`, one checkpoint's report or a `render` into
# the series folder are refused with the page as it was; a series into a report folder likewise
page_sum=$(sha256sum <s/index.html)
"$A" show "${ckpts[0]}" "abc" --out s >/dev/null 2>sp1.err; rc1=$?
"$A" analyze "${ckpts[0]}" --out s --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>sp2.err; rc2=$?
[[ $rc1 -ne 0 && $rc2 -ne 0 && $(sha256sum <s/index.html) == "$page_sum" ]] && grep -q "s: holds an andrea series page" sp1.err &&
  grep -q "s: holds an andrea series page" sp2.err && ok "show and a one-checkpoint analyze into a series folder are refused" ||
  bad "series folder overwritten" "rc $rc1/$rc2: $(cat sp1.err sp2.err)"
"$A" analyze "${ckpts[0]}" --out one --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>&1
one_sum=$(sha256sum <one/index.html)
"$A" analyze "${ckpts[0]}" "${ckpts[1]}" --out one --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>sp3.err &&
  bad "a series into a report folder" "accepted" ||
  { grep -q "one: holds an andrea report, whose index.html this series page would replace" sp3.err &&
    [[ $(sha256sum <one/index.html) == "$one_sum" ]] && ok "a series into a report folder is refused" || bad "series into report" "$(cat sp3.err)"; }

# a series whose last checkpoint cannot be read fails before any row is written: an existing
# catalog keeps exactly its runs (it used to gain the runs scored before the bad one, without reports)
head -c 5000 "${ckpts[5]}" >trunc.bin
runs_before=$("$A" sql s/catalog.db "SELECT count(*) FROM runs" --format csv | tail -1)
if "$A" analyze "${ckpts[0]}" "${ckpts[1]}" trunc.bin --out s --probes bos --device cpu --quiet >bad.out 2>bad.err; then
  bad "truncated series" "exit 0"
else
  runs_after=$("$A" sql s/catalog.db "SELECT count(*) FROM runs" --format csv | tail -1)
  [[ $runs_after == "$runs_before" && $(wc -l <bad.err) -eq 1 ]] && grep -q 'trunc\.bin: truncated' bad.err \
    && ok "a series with a truncated checkpoint writes no run ($runs_before runs before and after)" \
    || bad "truncated series" "runs $runs_before -> $runs_after: $(cat bad.err)"
fi

# checkpoint names whose stem is "..", "." or a page of DIR stay inside DIR as their own folders,
# and the series page links each by its URL-escaped name
mkdir -p odd
cp "${ckpts[0]}" "odd/...bin"; cp "${ckpts[1]}" "odd/index.html.bin"; cp "${ckpts[2]}" "odd/run#1%41?x_step00400.bin"
cp "${ckpts[3]}" "odd/catalog.db-journal.bin"; cp "${ckpts[4]}" "odd/catalog.db-wal.bin"
mkdir -p oddout/o
echo mine >oddout/index.html
if "$A" analyze odd/...bin odd/index.html.bin "odd/run#1%41?x_step00400.bin" odd/catalog.db-journal.bin odd/catalog.db-wal.bin \
  --out oddout/o --probes bos --n 2 --len 16 \
  --ablate-items 0 --quiet >odd.out 2>odd.err; then
  [[ $(cat oddout/index.html) == mine && -f oddout/o/__/index.html && -f oddout/o/index.html-ckpt/index.html &&
     -f "oddout/o/run#1%41?x_step00400/index.html" && -f oddout/o/catalog.db-journal-ckpt/index.html &&
     -f oddout/o/catalog.db-wal-ckpt/index.html && ! -e oddout/o/catalog.db-journal ]] && ok "odd stems get folders inside DIR: $(ls oddout/o | tr '\n' ' ')" ||
    bad "odd stems" "$(ls oddout oddout/o)"
  grep -q 'href="run%231%2541%3Fx_step00400/index.html"' oddout/o/index.html && ok "series links are URL-escaped" ||
    bad "series links" "$(grep -o 'href="[^"]*"' oddout/o/index.html | head -5)"
else
  bad "odd stems" "exit $?: $(cat odd.err)"
fi

# the same checkpoint twice under two names is refused before any run is written
cp "${ckpts[0]}" twin-step1.bin; cp "${ckpts[0]}" twin-step2.bin
if "$A" analyze twin-step1.bin twin-step2.bin --out tw --probes bos --n 2 --len 16 --ablate-items 0 --quiet >tw.out 2>tw.err; then
  bad "twins" "exit 0"
else
  grep -q "twin-step1.bin and twin-step2.bin are the same checkpoint" tw.err && [[ ! -s tw/catalog.db ]] &&
    ok "one checkpoint under two names is refused" || bad "twins" "$(cat tw.err)"
fi

# the same file twice (or through a link) is refused before any work; a copy after the first
# checkpoint is scored, before the rest is
ln -sf twin-step1.bin twin-link-step3.bin
"$A" analyze twin-step1.bin twin-link-step3.bin --out tw2 --probes bos --n 2 --len 16 --ablate-items 0 >tw2.out 2>tw2.err; rc=$?
[[ $rc -eq 2 ]] && grep -q "twin-step1.bin and twin-link-step3.bin are the same checkpoint file" tw2.err && ! grep -q scoring tw2.err &&
  ok "one file under two names is refused before any work" || bad "same file twice" "rc $rc: $(cat tw2.err)"
"$A" analyze twin-step1.bin twin-step2.bin "${ckpts[1]}" --out tw3 --probes bos --n 2 --len 16 --ablate-items 0 >tw3.out 2>tw3.err
grep -q "twin-step1.bin and twin-step2.bin are the same checkpoint" tw3.err && ! grep -q '\[3/3\] scoring' tw3.err &&
  ok "a copy stops the series before the checkpoints after it are scored" || bad "copy in a series" "$(cat tw3.err)"

# the series page's diff commands are shell words: a name with a quote and $( ) is quoted, not run
mkdir -p q
cp "${ckpts[0]}" "q/x' \$(id)-step1.bin"
cp "${ckpts[1]}" "q/x' \$(id)-step2.bin"
if "$A" analyze q/*.bin --out qo --probes bos --n 2 --len 16 --ablate-items 0 --quiet >q.out 2>q.err; then
  if /usr/bin/python3 - qo/index.html <<'PY'
import html, re, shlex, sys
page = open(sys.argv[1], encoding="utf-8").read()
cmds = [html.unescape(c) for c in re.findall(r"<code>(andrea diff [^<]*)</code>", page)]
want = ["andrea", "diff", "--db", "catalog.db", "--from", "x' $(id)-step1", "--to", "x' $(id)-step2", "--changed"]
sys.exit(0 if cmds and shlex.split(cmds[0]) == want else f"commands {cmds}")
PY
  then ok "the series page's diff command quotes a hostile name as one shell word"; else bad "diff command quoting" "see above"; fi
else
  bad "quoted names" "exit $?: $(cat q.err)"
fi

# names are file names, any byte: a tab, an escape and bytes that are not UTF-8 (\xff, a cut
# sequence). The series page stays valid UTF-8 without control bytes (it held the raw bytes), and
# its diff command, a bash $'...' word, gives back the exact name
mkdir -p nb
nb1=$'x\t\e[1m\xff\xc3-step1' nb2=$'x\t\e[1m\xff\xc3-step2'
cp "${ckpts[0]}" "nb/$nb1.bin"; cp "${ckpts[1]}" "nb/$nb2.bin"
if "$A" analyze "nb/$nb1.bin" "nb/$nb2.bin" --out nbo --probes bos --n 2 --len 16 --ablate-items 0 --quiet >nb.out 2>nb.err; then
  if /usr/bin/python3 - nbo/index.html >nb.cmd <<'PY'
import html, re, sys
raw = open(sys.argv[1], "rb").read()
try:
    page = raw.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit(f"not UTF-8 at byte {e.start}: {raw[max(0, e.start - 30):e.start + 5]!r}")
bad = [c for c in page if (ord(c) < 32 and c not in "\t\n") or 0x7f <= ord(c) < 0xa0]
if bad:
    sys.exit(f"control characters {bad[:5]!r}")
cmds = [html.unescape(c) for c in re.findall(r"<code>(andrea diff [^<]*)</code>", page)]
print(cmds[0] if cmds else "")
PY
  then
    eval "set -- $(cat nb.cmd)"
    [[ $# -eq 9 && $6 == "$nb1" && $8 == "$nb2" ]] && ok "a name with a tab, an escape and non-UTF-8 bytes: the series page is UTF-8, its diff command names it exactly" ||
      bad "non-UTF-8 names in the diff command" "$(cat -A nb.cmd)"
  else
    bad "non-UTF-8 names on the series page" "see above"
  fi
else
  bad "non-UTF-8 names" "exit $?: $(cat nb.err)"
fi

# a copy of a series' checkpoint analysed later under another name keeps the checkpoint in its
# series at its step (the catalog's model is the sha256), and says under which name it is stored
cp "${ckpts[5]}" other-step00500.bin
"$A" dump other-step00500.bin --probes bos --n 2 --len 16 --device cpu --out other.h5 --quiet >/dev/null 2>&1
if "$A" classify other.h5 --db s/catalog.db --ablate-items 0 >cp.out 2>cp.err; then
  row=$("$A" sql s/catalog.db "SELECT name || ' ' || step || ' ' || series FROM models WHERE path LIKE '%other-step00500.bin'" --format csv | tail -1 | tr -d '\r')
  [[ $row == "dyck-step08000 8000 dyck" ]] && grep -q "note: .*other-step00500.bin has the bytes of dyck-step08000 (step 8000) in the catalog" cp.err &&
    "$A" heads --db s/catalog.db --series dyck --pivot step --class induction >cp.piv 2>&1 && grep -q "step 8000" cp.piv &&
    ok "a renamed copy keeps its checkpoint in the series: $row; $(grep note cp.err)" || bad "renamed copy" "$row / $(cat cp.err cp.piv | head -5)"
else
  bad "classify of the copy" "exit $?: $(cat cp.err)"
fi

# the circuit scores of a renamed copy are stored under the model's catalogued name too, so the
# head_weights and head_composition views join models by name
cp "${ckpts[0]}" first.bin
"$A" analyze first.bin --out cn --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>&1
cp first.bin renamed-step00500.bin
"$A" analyze renamed-step00500.bin --out cn --probes bos --n 2 --len 16 --ablate-items 0 --quiet >/dev/null 2>&1
names=$("$A" sql cn/catalog.db "SELECT (SELECT group_concat(DISTINCT model) FROM circuit_runs) || ' ' || (SELECT group_concat(name) FROM models)" --format csv | tail -1 | tr -d '\r')
[[ $names == "first first" ]] && ok "circuit scores of a renamed copy keep the model's name" || bad "circuit model name" "$names"

# a checkpoint without a step is labelled by its name on the series page: escaped for HTML
mkdir -p x
cp "${ckpts[0]}" "x/<img src=x onerror=alert(1)>.bin"
cp "${ckpts[1]}" x/run-step00200.bin
if "$A" analyze x/*.bin --out xo --probes bos --n 2 --len 16 --ablate-items 0 --quiet >x.out 2>x.err; then
  ! grep -q '<img src=x' xo/index.html && grep -q '&lt;img src=x' xo/index.html &&
    ok "a stepless checkpoint's name is escaped on the series page" || bad "series label escaping" "$(grep -o '.\{20\}<img src=x.\{10\}' xo/index.html | head -2)"
else
  bad "hostile stepless name" "exit $?: $(cat x.err)"
fi

# run names are unique however the files are named: p/m.bin, q/m-2.bin, r/m.bin -> m, m-2, m-3
mkdir -p u/p u/q u/r
cp "${ckpts[0]}" u/p/m.bin; cp "${ckpts[1]}" u/q/m-2.bin; cp "${ckpts[2]}" u/r/m.bin
if "$A" analyze u/p/m.bin u/q/m-2.bin u/r/m.bin --out uo --probes bos --n 2 --len 16 --ablate-items 0 --quiet >u.out 2>u.err; then
  [[ -f uo/m/index.html && -f uo/m-2/index.html && -f uo/m-3/index.html ]] && ok "three runs, three report folders: m m-2 m-3" ||
    bad "unique names" "$(ls uo)"
else
  bad "unique names" "exit $?: $(cat u.err)"
fi

# checkpoints of two series are not named after the first one's series
mkdir -p two
cp "${ckpts[0]}" two/run-step00400.bin; cp "${ckpts[1]}" two/other-step5.bin
if "$A" analyze two/run-step00400.bin two/other-step5.bin --out twoo --probes bos --n 2 --len 16 --ablate-items 0 --quiet \
  >two.out 2>two.err; then
  head -1 two.out | grep -q "^series several series (run, other): labelled heads per step" &&
    grep -q "several series (run, other)" twoo/index.html && ok "two series are named as two: $(head -1 two.out)" ||
    bad "two series" "$(head -1 two.out)"
else
  bad "two series" "exit $?: $(cat two.err)"
fi

# with --keep-dumps, m.bin's dump is DIR/m.h5: m.h5.bin's report folder is DIR/m.h5-ckpt, not a
# folder where that file goes (the run failed after its scoring, "is not a folder")
mkdir -p h5c && cp "${ckpts[0]}" h5c/m.bin && cp "${ckpts[1]}" h5c/m.h5.bin
if "$A" analyze h5c/m.bin h5c/m.h5.bin --keep-dumps --out sh5 --probes bos --n 2 --len 16 --ablate-items 0 --quiet \
  >/dev/null 2>h5c.err && [[ -f sh5/m.h5 && -f sh5/m.h5-ckpt/index.html && -f sh5/m.h5-ckpt.h5 ]]; then
  ok "a checkpoint named like another's dump gets a report folder of its own"
else
  bad "dump-like stem" "$(cat h5c.err; ls sh5)"
fi
finish
