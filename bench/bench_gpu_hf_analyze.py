#!/usr/bin/env python3
"""bench_gpu_hf_analyze.py — what a researcher writes instead of `andrea analyze`, on the same GPU
and the same weights: the Hugging Face side of bench/gpu_analyze.sh (issue 14's baseline).

Usage: bench_gpu_hf_analyze.py MODEL_DIR [--seqs N] [--len T] [--ablate-heads K] [--ablate-seqs S]
MODEL_DIR: a Hugging Face GPT-2 folder (config.json, model.safetensors; vocab.json + merges.txt
are read into a GPT2TokenizerFast the way a notebook would, to count that cost too).

What it does, timed with the process's own clock from its first line (torch's import included,
as a user pays it):
  1. import torch + transformers, load GPT2LMHeadModel (eager attention, fp32, TF32 off) and the
     tokenizer onto the GPU;
  2. maps + scores: N sequences of T tokens (random ids, the second half repeating the first:
     the usual induction probe), forward(output_attentions=True) in batches of 32, and for every
     head the TransformerLens-style scores from the maps on the GPU: previous-token (mean
     attention of query q on key q-1), duplicate-token (q on q-T/2) and induction (q on
     q-T/2+1), over the repeated half;
  3. causal check: for the K heads with the highest score of any kind, the loss on the repeated
     half of S sequences with that head masked (head_mask, one forward per head, S sequences a
     batch), against the unmasked loss.
Prints one line per phase and the total; the scores are not compared with andrea's here (the
probe sequences differ): this measures what the same work costs a script, not its numbers.
"""
import time

T0 = time.time()
import argparse  # noqa: E402
import os  # noqa: E402

import torch  # noqa: E402
from transformers import GPT2LMHeadModel, GPT2TokenizerFast  # noqa: E402

T_IMPORT = time.time() - T0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("--seqs", type=int, default=224)
    ap.add_argument("--len", type=int, default=128)
    ap.add_argument("--ablate-heads", type=int, default=64)
    ap.add_argument("--ablate-seqs", type=int, default=16)
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    t = time.time()
    tok = GPT2TokenizerFast(vocab=os.path.join(a.model_dir, "vocab.json"),
                            merges=os.path.join(a.model_dir, "merges.txt"))
    model = GPT2LMHeadModel.from_pretrained(a.model_dir, attn_implementation="eager").cuda().eval()
    torch.cuda.synchronize()
    t_load = time.time() - t
    L, H = model.config.n_layer, model.config.n_head
    T, half = a.len, a.len // 2
    g = torch.Generator(device="cuda").manual_seed(0)
    first = torch.randint(1000, len(tok) - 1, (a.seqs, half), device="cuda", generator=g)
    ids = torch.cat([first, first], dim=1)

    t = time.time()
    q = torch.arange(half, T, device="cuda")
    sums = torch.zeros(3, L, H, device="cuda", dtype=torch.float64)
    with torch.no_grad():
        for b in range(0, a.seqs, 32):
            out = model(ids[b:b + 32], output_attentions=True)
            for layer, att in enumerate(out.attentions):  # [B, H, T, T]
                sums[0, layer] += att[:, :, q, q - 1].sum(dim=(0, 2)).double()
                sums[1, layer] += att[:, :, q, q - half].sum(dim=(0, 2)).double()
                sums[2, layer] += att[:, :, q[:-1], q[:-1] - half + 1].sum(dim=(0, 2)).double()
    scores = (sums / torch.tensor([a.seqs * half, a.seqs * half, a.seqs * (half - 1)],
                                  device="cuda", dtype=torch.float64).view(3, 1, 1)).cpu()
    t_maps = time.time() - t

    t = time.time()
    best = scores.max(dim=0).values.flatten().argsort(descending=True)[:a.ablate_heads].tolist()
    x = ids[:a.ablate_seqs]

    def loss(mask):
        logits = model(x, head_mask=mask).logits[:, half - 1:-1]
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 x[:, half:].reshape(-1)).item()

    with torch.no_grad():
        base = loss(None)
        deltas = []
        for i in best:
            mask = torch.ones(L, H, device="cuda")
            mask[i // H, i % H] = 0
            deltas.append(loss(mask) - base)
    t_causal = time.time() - t
    top = max(range(len(best)), key=lambda k: deltas[k]) if best else None
    print(f"hf: {L} layers x {H} heads, {a.seqs} sequences of {T}, causal check over {len(best)} heads "
          f"x {a.ablate_seqs} sequences")
    if top is not None:
        print(f"hf: largest loss increase {deltas[top]:.4f} from L{best[top] // H} H{best[top] % H}")
    print(f"hf: time: import torch+transformers {T_IMPORT:.2f} s, load model+tokenizer {t_load:.2f} s, "
          f"maps + scores {t_maps:.2f} s, causal check {t_causal:.2f} s, whole process {time.time() - T0:.2f} s")


if __name__ == "__main__":
    main()
