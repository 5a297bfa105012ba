#!/usr/bin/env bash
# andrea show of a checkpoint whose finite weights overflow float32 in the forward is one line
# "andrea: CKPT: the forward overflows float32 ..." and exit 1, with no page written, on every
# device. The CPU engine refuses such a forward itself; the CUDA engine does not scan what it
# computes, and show wrote its NaN maps into the page with exit 0. The model is written with the
# standard library alone (the GPU machine's /usr/bin/python3 has no numpy): small random weights,
# then layer 0's attention-projection and MLP output biases of element 0 set to 3e38 each, whose
# sum in the residual stream is Inf, so every map of layer 1 is NaN.
set -euo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_built show

/usr/bin/python3 - "$tmp/m.bin" "$tmp/ok.bin" <<'PY'
import random, struct, sys
L, H, C, V, T = 2, 2, 8, 257, 16
sizes = [("wte", V * C), ("wpe", T * C), ("ln1w", L * C), ("ln1b", L * C), ("qkvw", L * 3 * C * C),
         ("qkvb", L * 3 * C), ("attprojw", L * C * C), ("attprojb", L * C), ("ln2w", L * C), ("ln2b", L * C),
         ("fcw", L * 4 * C * C), ("fcb", L * 4 * C), ("fcprojw", L * C * 4 * C), ("fcprojb", L * C),
         ("lnfw", C), ("lnfb", C)]
for path, huge in ((sys.argv[1], True), (sys.argv[2], False)):
    rng = random.Random(7)
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", 20240326, 3, T, V, L, H, C, V, *([0] * 248)))
        for name, n in sizes:
            p = [1.0] * n if name in ("ln1w", "ln2w", "lnfw") else [rng.gauss(0, 0.1) for _ in range(n)]
            if huge and name in ("attprojb", "fcprojb"):
                p[0] = 3e38  # layer 0, element 0
            f.write(struct.pack("<%df" % n, *p))
PY

# show_refuses DEVICE: the overflowing model is refused on DEVICE, the page not written
show_refuses() {
  local out rc=0
  out=$("$A" show "$tmp/m.bin" "hello ((x))" --device "$1" --out "$tmp/page-$1" --quiet 2>&1) || rc=$?
  if [[ $rc -eq 1 && $(printf '%s\n' "$out" | wc -l) -eq 1 && $out == "andrea: $tmp/m.bin: the forward overflows float32"* ]]; then
    ok "show --device $1 refuses the overflowing forward with one line"
  else
    bad "show --device $1" "exit $rc, output: $out"
  fi
  if [[ -e $tmp/page-$1/index.html ]]; then bad "show --device $1" "wrote $tmp/page-$1/index.html"; else ok "no page written"; fi
}

show_refuses cpu
# the same model without the two biases is shown: the refusal is about the numbers, not the shape
if "$A" show "$tmp/ok.bin" "hello ((x))" --device cpu --out "$tmp/good" --quiet >/dev/null; then ok "the healthy twin is shown"
else bad "healthy twin" "show failed"; fi

if ! "$A" show "$tmp/ok.bin" "hello" --device cuda --out "$tmp/probe" --quiet >/dev/null 2>&1; then
  finish >/dev/null || exit 1
  skip "no usable CUDA device: the --device cuda case (the one this test is for) was not run; the CPU checks passed"
fi
show_refuses cuda
finish
