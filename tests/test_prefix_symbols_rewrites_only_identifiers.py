"""test_prefix_symbols_rewrites_only_identifiers — tools/prefix_symbols.py --apply renames a symbol
as a C identifier only: calls, declarations and comments are renamed; string literals (messages,
SQL, #include names), struct members of the same name (after . or ->) and file names
(`catalog_diff.c`) are left alone; markdown is renamed inside code spans only; an old spelling of
the prefix (`ae_`, `ANDREA_`, `Andrea`) is replaced rather than stacked, unless that name is
taken; a CUDA kernel is made static; a second run over its own output changes nothing; and the
renames made are kept in a map that --replay reads back."""
import importlib.util
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import FAILED, check  # noqa: E402

SRC = os.environ["ANDREA_SRC"]
spec = importlib.util.spec_from_file_location("prefix_symbols", os.path.join(SRC, "tools", "prefix_symbols.py"))
ps = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ps)

check(ps.new_names(["ANDREA_Count", "Andrea_x", "andreaSize"], taken=set()) ==
      {"ANDREA_Count": "andrea_Count", "Andrea_x": "andrea_x", "andreaSize": "andrea_Size"},
      "a differently-cased andrea prefix is replaced, not stacked")
mapping = ps.new_names(["catalog_diff", "ae_fail", "ae_taken"], taken={"andrea_taken"})
check(mapping == {"catalog_diff": "andrea_catalog_diff", "ae_fail": "andrea_fail", "ae_taken": "andrea_ae_taken"},
      "new names: prefix added, ae_ replaced unless taken (got %r)" % (mapping,))

C = '''#include "catalog_diff.h"
/* catalog_diff: see analyzer/catalog_diff.c */
int catalog_diff(int x); // catalog_diff()
int f(struct s *p) {
    if (p->catalog_diff || p[0].catalog_diff) return ae_fail(0, "catalog_diff: bad");
    const char *sql = "SELECT catalog_diff FROM t", c = 'x';
    return catalog_diff(1) + ae_taken;
}
'''
WANT = '''#include "catalog_diff.h"
/* andrea_catalog_diff: see analyzer/catalog_diff.c */
int andrea_catalog_diff(int x); // andrea_catalog_diff()
int f(struct s *p) {
    if (p->catalog_diff || p[0].catalog_diff) return andrea_fail(0, "catalog_diff: bad");
    const char *sql = "SELECT catalog_diff FROM t", c = 'x';
    return andrea_catalog_diff(1) + andrea_ae_taken;
}
'''
left = []
got = ps.rewrite_c(C, mapping, [], left, "t.c")
check(got == WANT, "C rewrite renames identifiers only:\n%s" % got)
check(len(left) == 2 and all("in a string" in x for x in left), "strings naming the symbol are listed (%r)" % (left,))
check(ps.rewrite_c(got, mapping, [], [], "t.c") == got, "a second run changes nothing")

CU = '''template <int HD> __global__ void __launch_bounds__(V3_WARPS * 32, (HD > 64) ? 1 : 2)
    k3(andrea_attn_args a) {}
__global__ void k1(float *x) {}
static __global__ void k2(float *x) {}
'''
got = ps.rewrite_c(CU, {}, ["k1", "k2", "k3"], [], "k.cu")
check(got.count("static __global__") == 3 and "static static" not in got, "kernels made static once:\n%s" % got)
check(ps.rewrite_c(got, {}, ["k1", "k2", "k3"], [], "k.cu") == got, "kernels: a second run changes nothing")

MD = "The rule (`catalog_diff`, in `analyzer/catalog_diff.c`) and catalog_diff as a word.\n"
check(ps.rewrite_md(MD, mapping) == "The rule (`andrea_catalog_diff`, in `analyzer/catalog_diff.c`) and catalog_diff as a word.\n",
      "markdown: code spans only, file names kept (got %r)" % ps.rewrite_md(MD, mapping))

with tempfile.TemporaryDirectory() as tmp:  # --apply records its renames, --replay reads them back
    ps.MAP_FILE = os.path.join(tmp, "prefix_symbols.map")
    check(ps.read_map() == {}, "no map: nothing to replay")
    ps.write_map({**ps.read_map(), "b_x": "andrea_b_x"})
    ps.write_map({**ps.read_map(), **mapping})
    check(ps.read_map() == {**mapping, "b_x": "andrea_b_x"}, "the map keeps every rename made (%r)" % ps.read_map())

check(ps.global_cxx_name("_Z19attention_v1_kernel16andrea_attn_args") == "attention_v1_kernel", "mangled global name")
check(ps.global_cxx_name("_ZN6andrea3fooEv") is None, "namespaced names are not global")
sys.exit(1 if FAILED else 0)
