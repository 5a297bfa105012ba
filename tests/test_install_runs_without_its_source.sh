#!/usr/bin/env bash
# test_install_runs_without_its_source.sh — the install of README "Install": the source tree is
# copied, built there (CPU only: the tool and its man pages), installed into a prefix with
# `cmake --install`, and the copy deleted; the installed `andrea analyze` then runs from another
# folder (its model and probe data come from PREFIX/share/andrea, not from a source path), the
# man pages and the bash completion are there, and a missing data folder is one error line
# naming where it looked.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
command -v cmake >/dev/null || skip "cmake not found"

# --version of the build-tree binary names the commit it was built from (in a git checkout)
if [[ -e $ANDREA_SRC/.git ]] && command -v git >/dev/null && head=$(git -C "$ANDREA_SRC" rev-parse --short=12 HEAD 2>/dev/null); then
  [[ $("$A" --version) == *"(git $head"* ]] && ok "--version names the commit: $("$A" --version)" ||
    bad "--version" "$("$A" --version), HEAD $head"
fi

copy=$tmp/src-copy build=$tmp/build-copy prefix=$tmp/prefix
mkdir -p "$copy"
# everything but build trees, VCS data and test fixtures (not needed to build)
tar -C "$ANDREA_SRC" --exclude=./.git --exclude='./build*' --exclude='./.carry*' --exclude=./tests/data \
    --exclude='./andrea-out' -cf - . | tar -C "$copy" -xf -
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
t0=$(date +%s)
# the prefix of unpacked -dev packages this build was configured with (the GPU machine's
# sqlite3.h and cJSON), so the copy finds what the tested build found
extra=()
if [[ -n ${ANDREA_BUILD:-} && -f $ANDREA_BUILD/CMakeCache.txt ]]; then
  p=$(sed -n 's/^ANDREA_EXTRA_PREFIX:PATH=//p' "$ANDREA_BUILD/CMakeCache.txt")
  [[ -n $p ]] && extra=(-DANDREA_EXTRA_PREFIX="$p")
fi
cmake -S "$copy" -B "$build" "${gen[@]}" "${extra[@]}" -DANDREA_CUDA=OFF -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" 2>&1 ||
  { tail -20 "$tmp/configure.log"; bad "configure the copy" "see above"; finish; }
targets=(andrea)
grep -q "help2man not found" "$tmp/configure.log" || targets+=(andrea_man)
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >"$tmp/build.log" 2>&1 ||
  { tail -20 "$tmp/build.log"; bad "build the copy" "see above"; finish; }
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 && ok "cmake --install into a prefix" ||
  bad "cmake --install" "$(tail -3 "$tmp/install.log")"
echo "copy built and installed in $(( $(date +%s) - t0 )) s"
rm -rf "$copy" "$build"
B=$prefix/bin/andrea

for f in share/andrea/models/andrea-bundled.bin share/andrea/probes/data/people.txt \
         share/andrea/probes/data/places.txt share/andrea/probes/data/prose.txt share/andrea/probes/data/ordinals.txt \
         share/doc/andrea/README.md share/doc/andrea/LICENSE share/doc/andrea/CHANGELOG.md \
         share/doc/andrea/docs/dump-format.md share/bash-completion/completions/andrea; do
  [[ -f $prefix/$f ]] && ok "installed $f" || bad "installed $f" "missing"
done
if ((${#targets[@]} == 2)); then
  n=$(ls "$prefix/share/man/man1" | wc -l)
  n_cmds=$("$B" --help | awk '/^commands:/{f=1; next} f && /^  [a-z]/{n++} END{print n}')
  [[ $n -eq $((n_cmds + 1)) ]] && ok "man pages: andrea.1 + one per command ($n)" || bad "man pages" "$n for $n_cmds commands"
  grep -q '^\.TH ANDREA-ANALYZE' "$prefix/share/man/man1/andrea-analyze.1" && ok "andrea-analyze.1 is titled ANDREA-ANALYZE" ||
    bad "andrea-analyze.1" "$(head -5 "$prefix/share/man/man1/andrea-analyze.1")"
else
  echo "help2man not found: man pages skipped (as the build said)"
fi
# the completion offers commands, options and suite names
comp=$(bash -c 'source "$1"; PATH=$2:$PATH; COMP_WORDS=(andrea an); COMP_CWORD=1; _andrea; echo "${COMPREPLY[*]}";
                COMP_WORDS=(andrea dump m.bin --pro); COMP_CWORD=3; _andrea; echo "${COMPREPLY[*]}";
                COMP_WORDS=(andrea dump m.bin --probes ind); COMP_CWORD=4; _andrea; echo "${COMPREPLY[*]}"' \
       _ "$prefix/share/bash-completion/completions/andrea" "$prefix/bin")
[[ $comp == $'analyze\n--probes\ninduction' ]] && ok "bash completion: command, option, suite" || bad "bash completion" "$comp"

# the installed tool runs from another folder, the source copy gone
mkdir -p "$tmp/elsewhere" && cd "$tmp/elsewhere"
if out=$("$B" analyze --probes bos --ablate-items 1 --quiet 2>&1); then
  ok "installed andrea analyze runs from another folder"
else
  bad "installed andrea analyze" "$out"
fi
[[ -f andrea-out/index.html && -f andrea-out/catalog.db ]] && ok "report and catalog written" || bad "analyze output" "$(ls andrea-out 2>&1)"
grep -q "$prefix/share/andrea/models/andrea-bundled.bin" <<<"$out" && ok "the bundled model came from the prefix" ||
  bad "bundled model path" "$out"
"$B" --version | grep -qE '^andrea [0-9]+\.[0-9]+\.[0-9]+' && ok "--version: $("$B" --version)" || bad "--version" "$("$B" --version)"

# bad input: a missing data folder is one line naming where it looked
mv "$prefix/share/andrea/probes/data" "$prefix/share/andrea/probes/data.moved"
set +e
err=$("$B" dump "$prefix/share/andrea/models/andrea-bundled.bin" --probes entity --n 2 --len 32 --quiet --out o2.h5 2>&1)
rc=$?
set -e
[[ $rc -ne 0 && $(wc -l <<<"$err") -eq 1 && $err == *"$prefix/share/andrea/probes/data"* && $err == *ANDREA_PROBE_DATA* ]] &&
  ok "missing probes/data: one line naming where it looked" || bad "missing probes/data (rc $rc)" "$err"
ANDREA_PROBE_DATA=$prefix/share/andrea/probes/data.moved "$B" dump "$prefix/share/andrea/models/andrea-bundled.bin" \
  --probes entity --n 2 --len 32 --quiet --out o3.h5 >/dev/null 2>&1 && ok "ANDREA_PROBE_DATA overrides the install's folder" || bad "ANDREA_PROBE_DATA" "analyze failed"
mv "$prefix/share/andrea/models" "$prefix/share/andrea/models.moved"
set +e
err=$("$B" analyze --quiet --out o4 2>&1)
rc=$?
set -e
[[ $rc -ne 0 && $(wc -l <<<"$err") -eq 1 && $err == *"$prefix/share/andrea/models"* ]] &&
  ok "missing models: one line naming where it looked" || bad "missing models (rc $rc)" "$err"
finish
