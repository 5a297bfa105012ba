#!/usr/bin/env bash
# test_docs_cite_no_internal_spec.sh — users see only README.md and docs/: no source file, doc,
# model card, tool or output of `andrea info` cites a specification file outside the repository.
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
name="SPEC""\.md" # spelled apart so this file does not find itself
hits=$(cd "$ANDREA_SRC" && grep -rlE "$name" --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' \
  --include='*.py' --include='*.sh' --include='*.md' --include='*.txt' --include='*.js' \
  analyzer bench cli common docs dump engine kernels models probes reports tests tokenizer tools README.md CMakeLists.txt \
  2>/dev/null | grep -v '^tests/data/')
[[ -z $hits ]] && ok "no file cites the internal specification" || bad "citations" "$(echo $hits)"
need_files models/andrea-tiny.bin
out=$("$A" info "$ANDREA_SRC/models/andrea-tiny.bin" 2>&1)
grep -qE "$name" <<<"$out" && bad "info" "$(grep -E "$name" <<<"$out")" || ok "andrea info cites docs/ only"
grep -q "docs/checkpoints.md" <<<"$out" && ok "andrea info points at docs/checkpoints.md for the family table" \
  || bad "info family" "$(grep family <<<"$out")"
finish
