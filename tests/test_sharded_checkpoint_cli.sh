#!/usr/bin/env bash
# test_sharded_checkpoint_cli.sh — a Hugging Face sharded checkpoint (model.safetensors.index.json +
# shards, made by tools/shard_safetensors.py from tests/data/tiny_hf) end to end: `info` reads it
# and prints the documented identity (sha256sum of the index and the shards, piped to sha256sum);
# `dump` of the sharded and of the one-file folder write the same maps (with h5py); classify finds the
# sharded checkpoint by that identity when it has moved (--checkpoint FOLDER) and refuses another.
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files tests/data/tiny_hf/model.safetensors tests/data/tiny_hf/config.json
cd "$tmp"
/usr/bin/python3 "$ANDREA_SRC/tools/shard_safetensors.py" "$ANDREA_SRC/tests/data/tiny_hf" sh --shards 3 \
  || bad "shard_safetensors.py" "exit $?"

# info: the identity is sha256sum's lines of the index and the sorted shards, hashed
want=$(cd sh && sha256sum model.safetensors.index.json $(ls model-*-of-*.safetensors | LC_ALL=C sort) | sha256sum | cut -d' ' -f1)
if "$A" info sh >out 2>err; then
  grep -Eq "^sha256 +$want\$" out && ok "info prints the sharded identity" || bad "info sha256" "want $want: $(grep sha256 out)"
  grep -Eq '^format +Hugging Face GPT-2 safetensors$' out && ok "info names the format" || bad "info format" "$(cat out)"
else
  bad "info" "$(cat err)"
fi

# dump: the same attention maps from the shards as from the one file
"$A" dump "$ANDREA_SRC/tests/data/tiny_hf" --probes induction --out one.h5 --device cpu --quiet 2>e1 || bad "dump one" "$(cat e1)"
"$A" dump sh --probes induction --out sh.h5 --device cpu --quiet 2>e2 || bad "dump sharded" "$(cat e2)"
if /usr/bin/python3 -c "import h5py, numpy" 2>/dev/null; then
  /usr/bin/python3 - <<'PY' && ok "dump: sharded and one-file maps and contributions are the same" || bad "dump" "differs"
import sys, h5py, numpy as np
a, b = h5py.File("one.h5", "r"), h5py.File("sh.h5", "r")
for name in ("attention", "head_dla", "head_out_norm", "tokens"):
    if not np.array_equal(a["induction/" + name][()], b["induction/" + name][()], equal_nan=name != "tokens"):
        sys.exit(f"induction/{name} differs")
PY
else
  echo "note: no h5py here: the dumps' values are not compared (test_checkpoint_sharded compares the forwards)"
fi

# classify: the sharded checkpoint moved, found under --checkpoint FOLDER by its identity
mv sh moved
"$A" classify sh.h5 --db c.db --device cpu --quiet --checkpoint moved >out 2>e5 \
  && ok "classify finds a moved sharded checkpoint by its identity" || bad "classify --checkpoint" "$(cat e5)"
"$A" classify sh.h5 --db c.db --device cpu --quiet --checkpoint "$ANDREA_SRC/tests/data/tiny_hf" >out 2>e6; rc=$?
[[ $rc -eq 1 && $(wc -l <e6) -eq 1 ]] && grep -q "differs from the dump's checkpoint" e6 \
  && ok "the one-file folder of the same weights is another identity: refused" || bad "classify other" "rc $rc: $(cat e6)"
"$A" classify sh.h5 --db c.db --device cpu --quiet >out 2>e7; rc=$?
[[ $rc -eq 1 && $(wc -l <e7) -eq 1 ]] && grep -q -- "--checkpoint PATH" e7 \
  && ok "a moved sharded checkpoint nowhere to be found: one line" || bad "classify moved" "rc $rc: $(cat e7)"

# a shard missing: one line naming it
rm moved/model-00002-of-00003.safetensors
"$A" info moved >out 2>e8; rc=$?
[[ $rc -eq 1 && $(wc -l <e8) -eq 1 ]] && grep -q "^andrea: moved/model-00002-of-00003.safetensors: cannot open" e8 \
  && ok "a missing shard: one line naming it" || bad "missing shard" "rc $rc: $(cat e8)"
# an output never replaces the index or a shard the command reads
/usr/bin/python3 "$ANDREA_SRC/tools/shard_safetensors.py" "$ANDREA_SRC/tests/data/tiny_hf" sh2 --shards 2 || bad "shard (2)" "exit $?"
shard=$(ls sh2/model-*-of-*.safetensors | head -1)
before=$(cat sh2/* | sha256sum)
for target in sh2/model.safetensors.index.json "$shard"; do
  "$A" dump sh2 --probes bos --out "$target" --device cpu --quiet >/dev/null 2>e9; rc=$?
  [[ $rc -eq 1 && $(wc -l <e9) -eq 1 ]] && grep -q "which this command reads" e9 \
    && ok "dump --out $(basename "$target") (read by the command) is refused" || bad "dump over $target" "rc $rc: $(cat e9)"
done
[[ $(cat sh2/* | sha256sum) == "$before" ]] && ok "the sharded checkpoint is left as it was" || bad "shards" "changed"
finish
