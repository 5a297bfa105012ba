"""test_function_length_names_kernels — tools/function_length.py reports a CUDA kernel declared
`__global__ void __launch_bounds__(...) name(...)` by its name, not by the attribute, whether the
name is on the attribute's line or the next one, and counts its lines as before; plain functions
are unchanged. Also: the attention kernels v2 and v3 are within the 120-line limit."""
import importlib.util
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import FAILED, check  # noqa: E402

SRC = os.environ["ANDREA_SRC"]
spec = importlib.util.spec_from_file_location("function_length", os.path.join(SRC, "tools", "function_length.py"))
fl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fl)

CU = """template <int HD>
__global__ void __launch_bounds__(V2_WARPS * 32) one_line_kernel(andrea_attn_args a) {
    int x = 0;
}

template <int HD, int SPLIT>
__global__ void __launch_bounds__(V3_WARPS * 32, SPLIT == 1 || (SPLIT == 2 && HD > 64) ? 1 : 2)
    next_line_kernel(andrea_attn_args a) {
    int x = 0;
    int y = 1;
}

static int plain(int a) {
    return a;
}
"""
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "k.cu")
    with open(path, "w") as f:
        f.write(CU)
    got = list(fl.functions(path))
check(got == [("one_line_kernel", 2, 3), ("next_line_kernel", 7, 5), ("plain", 13, 3)],
      "kernel names after __launch_bounds__, lines as before (got %r)" % (got,))

for rel, kernel in (("kernels/attention_v2.cu", "attention_v2_kernel"), ("kernels/attention_v3.cu", "attention_v3_kernel")):
    found = [(name, n) for name, _, n in fl.functions(os.path.join(SRC, rel)) if name == kernel]
    check(len(found) == 1, "%s found once in %s (got %r)" % (kernel, rel, found))
    check(all(n <= 120 for _, n in found), "%s within 120 lines (got %r)" % (kernel, found))
    names = [name for name, _, n in fl.functions(os.path.join(SRC, rel))]
    check("__launch_bounds__" not in names, "no function named __launch_bounds__ in %s" % rel)

sys.exit(1 if FAILED else 0)
