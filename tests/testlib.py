"""testlib — what the Python script tests (tests/test_*.py) share: BIN, the andrea binary named by
ctest's environment (outside ctest the test skips: exit 77), and check(), which prints a failed
check and records it in FAILED (the test's exit code comes from FAILED)."""
import os
import sys

BIN = os.environ.get("ANDREA_BIN")
if not BIN:
    print("SKIP: ANDREA_BIN not set (run through ctest)")
    sys.exit(77)

FAILED = []


def check(cond, what):
    if not cond:
        FAILED.append(what)
        print("CHECK failed:", what)


# Rounding bounds, as tests/check.h's CHECK_FP32_TOL (issue 39: the tests hold on every x86-64 CPU):
# two fp32 computations of one value (or one against float64) differ by the rounding of each, which
# grows with the magnitude of the terms summed and the length of the sums, never a fixed absolute
# number. Higham & Mary 2019 (Thm 2.4), lambda = 6, unit roundoff FLT_EPSILON / 2, two computations:
# 6 sqrt(n) FLT_EPSILON scale; n the roundings along the value's chain, scale the magnitude.
FLT_EPSILON = 2.0 ** -23
DBL_EPSILON = 2.0 ** -52


def fp32_tol(n, scale):
    return 6.0 * (n ** 0.5) * FLT_EPSILON * scale


def fp64_tol(n, scale):
    """The same for float64 computations (unit roundoff DBL_EPSILON / 2)."""
    return 6.0 * (n ** 0.5) * DBL_EPSILON * scale


def forward_roundings(L, C, hd, T):
    """The roundings along a logit's chain in an fp32 forward, the n of fp32_tol: per layer QKV (C),
    a score (hd), P.V (up to T), W_O (C), the MLP's two (C, 4C); then the unembedding (C). Every
    output of the forward is at most this far down the chain (tests/test_forward_cpu.c)."""
    return L * (7.0 * C + hd + T) + C
