#!/usr/bin/env bash
# test_readme_shows_relative_paths.sh — the README's example output shows no machine path, and
# `andrea analyze` prints a checkpoint below the working folder relative to it (the bundled model,
# found by an absolute path, prints as models/andrea-bundled.bin from the source tree).
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
hits=$(grep -nE '(^|[ (])/(work|home|tmp|root|usr/src)/' "$ANDREA_SRC/README.md")
[[ -z $hits ]] && ok "README shows no machine path" || bad "README" "$hits"
need_files models/andrea-tiny.bin
cd "$tmp"
mkdir -p models
cp "$ANDREA_SRC/models/andrea-tiny.bin" models/t.bin
"$A" analyze "$tmp/models/t.bin" --out o --probes bos --device cpu --quiet >out.txt 2>err.txt || bad "analyze" "$(cat err.txt)"
head -1 out.txt | grep -qx 'models/t.bin' && ok "analyze prints the checkpoint relative to the working folder" \
  || bad "analyze path" "$(head -1 out.txt)"
finish
