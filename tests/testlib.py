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
