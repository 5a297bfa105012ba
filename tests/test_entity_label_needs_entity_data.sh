#!/usr/bin/env bash
# test_entity_label_needs_entity_data — a model whose training data holds no entities earns no
# entity label (issue 38, item 6): every checkpoint of the dyck series (byte-level, trained on
# brackets alone; some of its heads attend to the most recent capital letter, which every
# built-in mention starts with) gets none with the built-in suite, while the bundled model keeps
# its entity head 0.5. Also: the rule's min_extra is stored per suite, and `--rules` with
# {"entity": {"min_extra": 0}} restores the three-condition rule, under which the step-1000
# checkpoint labels heads again (so the test sees the extra condition at work, not an empty suite).
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-bundled.bin tests/data/series/dyck-step01000.bin
cd "$tmp"
for f in "$ANDREA_SRC"/tests/data/series/dyck-step*.bin; do
  s=$(basename "$f" .bin)
  "$A" analyze "$f" --out "o-$s" --probes entity --ablate-items 0 --quiet >/dev/null 2>"$s.err" || bad "analyze $s" "$(cat "$s.err")"
  n=$(sql_rows "o-$s/catalog.db" "SELECT count(*) FROM head_catalog WHERE class = 'entity' AND label AND current")
  [[ $n == 0 ]] && ok "$s: no entity label" || bad "$s: entity labels" "$n"
done
"$A" analyze "$ANDREA_SRC/models/andrea-bundled.bin" --out bundled --probes entity --ablate-items 0 --quiet >/dev/null 2>b.err ||
  bad "analyze bundled" "$(cat b.err)"
got=$(sql_rows bundled/catalog.db "SELECT group_concat(layer || '.' || head) FROM head_catalog WHERE class = 'entity' AND label AND current")
[[ $got == 0.5 ]] && ok "bundled model: entity head 0.5 labelled, no other" || bad "bundled entity labels" "$got"
got=$(sql_rows bundled/catalog.db "SELECT min_extra FROM suites WHERE class = 'entity'")
[[ $got == 0.75 ]] && ok "the suite records min_extra 0.75" || bad "suites.min_extra" "$got"
echo '{"entity": {"min_extra": 0}}' >three.json
"$A" analyze "$ANDREA_SRC/tests/data/series/dyck-step01000.bin" --out three --probes entity --ablate-items 0 --rules three.json \
  --quiet >/dev/null 2>t.err || bad "analyze --rules" "$(cat t.err)"
n=$(sql_rows three/catalog.db "SELECT count(*) FROM head_catalog WHERE class = 'entity' AND label AND current")
[[ $n -ge 1 ]] && ok "three-condition rule (min_extra 0): step 1000 labels $n entity heads" || bad "min_extra 0 labels none" "$n"
finish
