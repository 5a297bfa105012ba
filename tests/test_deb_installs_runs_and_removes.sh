#!/usr/bin/env bash
# test_deb_installs_runs_and_removes.sh — the .deb of README "Install": `cpack -G DEB` of this
# build makes andrea_VERSION_ARCH.deb whose Depends are Debian runtime libraries (found by
# dpkg-shlibdeps, each one an installed package here); `dpkg -i` installs it into a scratch root
# (dpkg --root: its own package database, nothing of this machine touched); the packaged
# `andrea analyze` runs from a folder in /tmp; `dpkg -r` removes every file it installed.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
: "${ANDREA_BUILD:?run through ctest}"
for t in cpack dpkg dpkg-deb dpkg-shlibdeps; do
  command -v $t >/dev/null || skip "$t not found (Debian: dpkg-dev, cmake)"
done
[[ -f $ANDREA_BUILD/CPackConfig.cmake ]] || skip "no CPackConfig.cmake in $ANDREA_BUILD"

t0=$(date +%s)
if ! cpack --config "$ANDREA_BUILD/CPackConfig.cmake" -G DEB -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1; then
  tail -20 "$tmp/cpack.log"
  bad "cpack -G DEB" "see above"
  finish
fi
deb=$(ls "$tmp"/pkg/andrea_*.deb)
ok "cpack -G DEB made $(basename "$deb") in $(( $(date +%s) - t0 )) s"

deps=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $deps"
missing=""
for p in $(tr ',' '\n' <<<"$deps" | sed -E 's/\(.*\)//; s/\|.*//' | tr -d ' '); do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=" $p"
done
[[ -z $missing ]] && ok "every dependency is an installed Debian package" || bad "dependencies not installed here" "$missing"
# A library this build links from outside any package (the GPU machine's carried libcjson,
# unpacked with dpkg -x) cannot be named in Depends: noted, not failed.
unpackaged() {
  local path
  path=$(ldd "$ANDREA_BUILD/andrea" | awk -v l="$1" 'index($1, l) == 1 { print $3; exit }')
  [[ -n $path ]] && ! dpkg -S "$path" >/dev/null 2>&1 && ! dpkg -S "$(readlink -f "$path")" >/dev/null 2>&1 &&
    echo "$path"
}
for lib in libhdf5 libsqlite3 libpng libopenblas libcjson libpcre2; do
  if grep -q "$lib" <<<"$deps"; then ok "depends on $lib*"
  elif from=$(unpackaged "$lib"); then echo "note: $lib is linked from $from, which no package owns here: not in Depends"
  else bad "Depends lacks $lib" "$deps"; fi
done

# dpkg -i into a scratch root with its own (empty) package database: the libraries are this
# machine's, so dependencies are forced, not installed
root=$tmp/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
dpkg_root=(dpkg --root="$root" --force-depends --force-not-root --force-script-chrootless --log=/dev/null)
"${dpkg_root[@]}" -i "$deb" >"$tmp/dpkg-i.log" 2>&1 && ok "dpkg -i into the scratch root" ||
  bad "dpkg -i" "$(tail -5 "$tmp/dpkg-i.log")"
B=$root/usr/bin/andrea
# what the package holds (dpkg-deb -c), then what dpkg installed: a dpkg configured with
# path-exclude (Ubuntu's minimal images drop /usr/share/doc) installs less than the package holds
contents=$(dpkg-deb -c "$deb" | awk '{ print $NF }')
for f in usr/bin/andrea usr/share/andrea/models/andrea-bundled.bin usr/share/andrea/probes/data/prose.txt usr/share/andrea/probes/data/ordinals.txt \
         usr/share/bash-completion/completions/andrea usr/share/doc/andrea/LICENSE; do
  grep -qx "\./$f" <<<"$contents" && ok "packaged /$f" || bad "packaged /$f" "not in the package"
done
for f in usr/bin/andrea usr/share/andrea/models/andrea-bundled.bin usr/share/andrea/probes/data/prose.txt; do
  [[ -f $root/$f ]] && ok "installed /$f" || bad "installed /$f" "missing"
done

run=$(mktemp -d /tmp/andrea-deb-test.XXXXXX)
trap 'rm -rf "$tmp" "$run"' EXIT
cd "$run"
if out=$("$B" analyze --probes bos --ablate-items 1 --quiet 2>&1); then
  ok "the packaged andrea analyze runs from $run"
else
  bad "packaged andrea analyze" "$out"
fi
[[ -f andrea-out/index.html ]] && ok "report written" || bad "report" "$(ls andrea-out 2>&1)"
grep -q "$root/usr/share/andrea/models/andrea-bundled.bin" <<<"$out" && ok "its model came from the package" ||
  bad "model path" "$out"

"${dpkg_root[@]}" -r andrea >"$tmp/dpkg-r.log" 2>&1 && ok "dpkg -r" || bad "dpkg -r" "$(tail -5 "$tmp/dpkg-r.log")"
left=$(find "$root/usr" -type f 2>/dev/null | head -5 || true)
[[ -z $left ]] && ok "removal leaves no file of the package" || bad "files left after dpkg -r" "$left"
finish
