#!/bin/bash
# test_exported_symbols_are_prefixed — the libraries of this build export only andrea_ symbols and
# no CUDA kernel outside a namespace (tools/prefix_symbols.py --check, nm is the truth; in a CUDA
# build the kernels' objects are in libandrea_core.a and are checked too). The checker itself: an
# object with one unprefixed global function and one unprefixed global variable fails, naming both;
# main, static functions and andrea_ names pass.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
command -v nm >/dev/null || skip "nm (binutils) not installed"
command -v cc >/dev/null || skip "no C compiler to build the checker's bad object"
check=(python3 "$ANDREA_SRC/tools/prefix_symbols.py" --check)

if out=$("${check[@]}" --build "$ANDREA_BUILD" 2>&1); then
  ok "this build's libraries export only andrea_ symbols"
else
  bad "exported symbols" "$out"
fi

cat > "$tmp/bad.c" <<'C'
static int helper(void) { return 1; }
int andrea_fine(void) { return helper(); }
int catalog_thing(void) { return 2; }
int global_counter = 3;
int main(void) { return andrea_fine() + catalog_thing() + global_counter; }
C
cc -c -o "$tmp/bad.o" "$tmp/bad.c"
set +e
out=$("${check[@]}" "$tmp/bad.o" 2>&1)
rc=$?
set -e
if [[ $rc -eq 1 ]] && grep -q "catalog_thing is exported without the andrea_ prefix" <<<"$out" &&
   grep -q "global_counter is exported" <<<"$out" && ! grep -qw "main\|helper\|andrea_fine" <<<"$out"; then
  ok "an unprefixed function and variable fail the check, named; main/static/andrea_ pass"
else
  bad "checker on a bad object (exit $rc)" "$out"
fi
finish
