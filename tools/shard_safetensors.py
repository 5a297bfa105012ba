#!/usr/bin/env python3
"""shard_safetensors.py — cuts a checkpoint folder's model.safetensors into shards the way Hugging
Face's save_pretrained writes a model above its shard size: model-0000K-of-0000N.safetensors plus
model.safetensors.index.json ({"metadata": {"total_size": BYTES}, "weight_map": {tensor: shard}}),
the other files of the folder (config.json, vocab.json, ...) copied beside them. Tensors keep
their bytes and dtype; they are dealt to the shards in file order, about the same count each.
Standard library only; deterministic (a rerun writes the same bytes). For tests and for trying
andrea's sharded reader (docs/checkpoints.md) without transformers.

    python3 tools/shard_safetensors.py SRC_FOLDER DST_FOLDER [--shards N]
"""
import argparse
import json
import os
import shutil
import struct
import sys


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    tensors = [(name, e) for name, e in header.items() if name != "__metadata__"]
    tensors.sort(key=lambda t: tuple(t[1]["data_offsets"]))
    return tensors, data


def write_shard(path, tensors, data):
    header, chunks, at = {}, [], 0
    for name, e in tensors:
        b, end = e["data_offsets"]
        header[name] = {"dtype": e["dtype"], "shape": e["shape"], "data_offsets": [at, at + end - b]}
        chunks.append(data[b:end])
        at += end - b
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # the safetensors library pads its header to 8 bytes
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(chunks))
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--shards", type=int, default=2)
    a = ap.parse_args()
    tensors, data = read_safetensors(os.path.join(a.src, "model.safetensors"))
    if not 1 <= a.shards <= len(tensors):
        sys.exit(f"shard_safetensors: --shards must be 1..{len(tensors)}")
    os.makedirs(a.dst, exist_ok=True)
    for name in sorted(os.listdir(a.src)):
        if name != "model.safetensors" and os.path.isfile(os.path.join(a.src, name)):
            shutil.copyfile(os.path.join(a.src, name), os.path.join(a.dst, name))
    weight_map, i0 = {}, 0
    for k in range(a.shards):
        i1 = len(tensors) * (k + 1) // a.shards
        shard = f"model-{k + 1:05d}-of-{a.shards:05d}.safetensors"
        write_shard(os.path.join(a.dst, shard), tensors[i0:i1], data)
        weight_map.update({name: shard for name, _ in tensors[i0:i1]})
        i0 = i1
    total = sum(e["data_offsets"][1] - e["data_offsets"][0] for _, e in tensors)
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    with open(os.path.join(a.dst, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
