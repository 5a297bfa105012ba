#!/usr/bin/env bash
# test_series_refuses_linked_checkpoint_folders — a series writes each checkpoint's report into
# DIR/NAME; where that name was a link, it wrote through it: `ln -s . S/dyck-step00030` made the
# series page replace that checkpoint's report, two names linked to one folder made one report
# replace the other, and two series whose folders were linked into each other waited on each
# other's folder lock forever. A checkpoint folder must be a folder of its own inside DIR (or not
# exist yet): anything else is refused with one line and exit 1, before any work (no catalog).
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files tests/data/series/dyck-step00030.bin tests/data/series/dyck-step00100.bin
cd "$tmp"
S="$ANDREA_SRC/tests/data/series"
series=("$S/dyck-step00030.bin" "$S/dyck-step00100.bin")
opts=(--probes bos --ablate-items 0 --quiet)
# refused DIR REGEX WHAT: the series into DIR exits 1 with one line matching REGEX, no catalog in DIR
refused() {
  local dir=$1 re=$2 what=$3 rc=0
  timeout 60 "$A" analyze "${series[@]}" --out "$dir" "${opts[@]}" >"$dir.out" 2>"$dir.err" || rc=$?
  if [[ $rc == 1 && $(wc -l <"$dir.err") == 1 ]] && grep -Eq -- "$re" "$dir.err" && [[ ! -e $dir/catalog.db ]]; then
    ok "$what: $(cat "$dir.err")"
  else
    bad "$what" "exit $rc, catalog $([[ -e $dir/catalog.db ]] && echo written || echo absent), stderr: $(cat "$dir.err")"
  fi
}
mkdir s1 && ln -s . s1/dyck-step00030
refused s1 "^andrea: s1/dyck-step00030: leads to the series folder s1 itself" "a checkpoint folder linked to the series folder"
mkdir -p s2/x && ln -s x s2/dyck-step00030 && ln -s x s2/dyck-step00100
refused s2 "^andrea: s2/dyck-step00030 and s2/dyck-step00100: lead to one folder" "two checkpoint folders linked to one"
mkdir -p s3 elsewhere && ln -s ../elsewhere s3/dyck-step00100
refused s3 "^andrea: s3/dyck-step00100: is a link to .*/elsewhere; a series writes each checkpoint's report into a folder of its own in s3" \
  "a checkpoint folder linked outside the series folder"
mkdir -p s4 && ln -s ../nowhere s4/dyck-step00030
refused s4 "^andrea: s4/dyck-step00030: is a link to ../nowhere" "a checkpoint folder that is a dangling link"
mkdir -p s5 && echo x >s5/dyck-step00100
refused s5 "^andrea: s5/dyck-step00100: is not a folder" "a checkpoint folder that is a file"
[[ $(readlink s1/dyck-step00030) == . && -z $(ls -A elsewhere) ]] && ok "the links and what they lead to are left as they were" ||
  bad "left alone" "$(ls -la s1 elsewhere)"
# two series whose folders are linked into each other: each would hold its own folder's lock and
# wait for the other's (they hung forever); both are refused at once
mkdir -p p q && ln -s ../q p/dyck-step00030 && ln -s ../p q/dyck-step00030
start=$SECONDS
timeout 60 "$A" analyze "${series[@]}" --out p "${opts[@]}" >p.out 2>p.err &
pa=$!
timeout 60 "$A" analyze "${series[@]}" --out q "${opts[@]}" >q.out 2>q.err &
pb=$!
wait $pa
ra=$?
wait $pb
rb=$?
if [[ $ra == 1 && $rb == 1 ]] && grep -q "^andrea: p/dyck-step00030: is a link to" p.err &&
  grep -q "^andrea: q/dyck-step00030: is a link to" q.err && ((SECONDS - start < 50)); then
  ok "two series linked into each other are both refused ($((SECONDS - start)) s), no deadlock"
else
  bad "linked into each other" "exit $ra and $rb after $((SECONDS - start)) s: $(cat p.err q.err)"
fi
# a series folder that is itself a link, and checkpoint folders a run left there, are fine
mkdir real && ln -s real via
"$A" analyze "${series[@]}" --out via "${opts[@]}" >v.out 2>v.err && [[ -f real/dyck-step00030/index.html ]] &&
  "$A" analyze "${series[@]}" --out via "${opts[@]}" >v.out 2>v.err && [[ -f real/index.html ]] &&
  ok "a series into a linked --out, twice" || bad "linked --out" "$(cat v.err)"
finish
