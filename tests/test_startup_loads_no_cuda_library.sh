#!/usr/bin/env bash
# test_startup_loads_no_cuda_library — commands that open no GPU engine load no CUDA library
# (issue 39, 6): a build with CUDA opens cuBLAS only when a CUDA engine is opened
# (kernels/cublas_lazy.c) and links the CUDA runtime statically, so `--version`, `--help`, `heads`,
# `sql` and a CPU `info` map no libcublas, libcublasLt, libcudart or libcuda (each of them cost up
# to a second of start-up without a GPU). Checked with the dynamic loader's own record of the
# files it opens (LD_DEBUG=files), not by timing. A CPU-only build passes trivially.
set -uo pipefail
source "$ANDREA_SRC/tests/lib.sh"
need_files models/andrea-tiny.bin
cd "$tmp"
ldd "$A" >ldd.txt 2>&1 || true
if grep -Eq "libcublas|libcudart|libcuda\.so" ldd.txt; then
  bad "linked" "$(grep -E "libcublas|libcudart|libcuda\.so" ldd.txt | tr '\n' ' ')"
else
  ok "the binary needs no CUDA library at load ($(grep -c "=>" ldd.txt) libraries)"
fi
"$A" analyze "$ANDREA_SRC/models/andrea-tiny.bin" --out o --probes bos --n 2 --len 16 --ablate-items 0 --device cpu --quiet \
  >/dev/null 2>&1 || bad "setup" "analyze failed"
loads() { # NAME CMD...: the command loads no CUDA library
  local name=$1
  shift
  LD_DEBUG=files "$A" "$@" >/dev/null 2>ld.txt
  grep -q "file=libc.so" ld.txt || { bad "$name" "LD_DEBUG recorded no library: the check would see nothing"; return; }
  local cuda
  cuda=$(grep -Eo "file=[^ ]*(libcublas|libcudart|libcuda\.so)[^ ]*" ld.txt | sort -u | tr '\n' ' ')
  [[ -z $cuda ]] && ok "$name loads no CUDA library" || bad "$name" "loaded $cuda"
}
loads "--version" --version
loads "--help" --help
loads "heads" heads --db o/catalog.db
loads "sql" sql --db o/catalog.db "SELECT count(*) FROM head_catalog"
loads "info" info "$ANDREA_SRC/models/andrea-tiny.bin"
loads "analyze --device cpu" analyze "$ANDREA_SRC/models/andrea-tiny.bin" --out o2 --probes bos --n 2 --len 16 \
  --ablate-items 0 --device cpu --quiet
finish
