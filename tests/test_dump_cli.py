#!/usr/bin/python3
"""test_dump_cli — `andrea dump` as a user meets it: exit codes, one-line errors naming the file,
nothing left behind on failure or SIGINT, token-id probe files without a tokenizer."""
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import BIN, FAILED, check  # noqa: E402  (after the skip checks above)
from tiny_ckpt import write_bin  # noqa: E402  (weights N(0, 0.1^2), L2 H2 C16 by default)


def run(*args, cwd=None):
    return subprocess.run([BIN, "dump", *args], capture_output=True, text=True, cwd=cwd)


def leftovers(d):
    return [p for p in os.listdir(d) if ".tmp-" in p]


def test_default_output_is_dump_h5_with_every_builtin_suite(d, ckpt):
    r = run(ckpt, "--n", "2", "--len", "24", "--quiet", cwd=d)
    check(r.returncode == 0, f"default dump: {r.stderr}")
    check(os.path.exists(os.path.join(d, "dump.h5")), "dump.h5 written in the working directory")
    check(r.stdout == "" and r.stderr == "", "--quiet prints nothing")


def test_malformed_probe_file_exits_1_names_the_line_and_writes_nothing(d, ckpt):
    pf = os.path.join(d, "bad.jsonl")
    with open(pf, "w") as f:
        f.write('{"suite": "bos", "text": "fine"}\n{"suite": "bos", "tokens": [1, 999]}\n')
    out = os.path.join(d, "bad.h5")
    r = run(ckpt, "--probes", pf, "--out", out)
    check(r.returncode == 1, f"exit code {r.returncode}")
    check(f"andrea: {pf}:2: " in r.stderr and r.stderr.count("\n") == 1, f"one-line error: {r.stderr!r}")
    check(not os.path.exists(out) and not leftovers(d), "nothing written")


def test_usage_errors_exit_2(d, ckpt):
    for args in (["--maps", "fp8"], ["--contrib", "all"], ["--batch", "0"], ["--heads", "9.9"], ["--precision", "bf16"], [],
                 ["--heads", " 0.1"], ["--heads", "0.+1"], ["--heads", "0.0,0.0"], ["--heads", "0.0,"], ["--heads", ",0.1"],
                 ["--heads", "4294967296.0"]):
        r = run(*( [ckpt] if args != [] else []), *args, "--out", os.path.join(d, "u.h5"))
        check(r.returncode == 2, f"{args}: exit {r.returncode} {r.stderr}")
        check(r.stderr.startswith("andrea dump: "), f"{args}: message {r.stderr!r}")


def test_missing_checkpoint_is_a_one_line_error(d):
    r = run(os.path.join(d, "nope.bin"), "--out", os.path.join(d, "x.h5"))
    check(r.returncode == 1 and "nope.bin" in r.stderr, f"missing checkpoint: {r.stderr}")


def test_token_id_probe_file_works_without_a_tokenizer(d):
    ckpt = os.path.join(d, "bpe.bin")
    write_bin(ckpt, V=1000)  # not byte-level, and no vocab.json beside it
    pf = os.path.join(d, "ids.jsonl")
    with open(pf, "w") as f:
        f.write('{"suite": "induction", "tokens": [5, 6, 7, 5, 6, 7]}\n'
                '{"suite": "mine", "tokens": [9, 8], "targets": [[1, [0]]]}\n')
    out = os.path.join(d, "ids.h5")
    r = run(ckpt, "--probes", pf, "--out", out, "--quiet")
    check(r.returncode == 0 and os.path.exists(out), f"token-id probes: {r.stderr}")
    r = run(ckpt, "--out", out + "2")
    check(r.returncode == 1 and "no GPT-2 tokenizer" in r.stderr, f"built-in suites need a tokenizer: {r.stderr}")


def test_sigint_leaves_no_file_under_the_final_name(d, ckpt):
    out = os.path.join(d, "big.h5")
    p = subprocess.Popen([BIN, "dump", ckpt, "--n", "20000", "--len", "64", "--batch", "4", "--quiet",
                          "--probes", "prev_token", "--out", out], stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and not leftovers(d) and p.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)  # well inside the batch loop
    started = bool(leftovers(d))
    p.send_signal(signal.SIGINT)
    p.wait(timeout=60)
    check(started, "the dump was running (temporary file seen) when interrupted")
    check(p.returncode != 0, f"interrupted dump exits non-zero ({p.returncode})")
    check(not os.path.exists(out), "no file under the final name")
    check(not leftovers(d), f"temporary removed: {leftovers(d)}")


def test_out_naming_a_folder_is_refused_before_the_work(d, ckpt):
    folder = os.path.join(d, "afolder")
    os.mkdir(folder)
    r = run(ckpt, "--n", "2", "--len", "16", "--quiet", "--out", folder)
    check(r.returncode == 1 and f"andrea: {folder}: is a folder" in r.stderr, f"--out a folder: {r.stderr!r}")
    check(os.listdir(folder) == [] and not leftovers(d), "nothing written")
    os.rmdir(folder)


def test_weights_that_overflow_float32_are_refused_not_dumped_as_nan(d):
    ckpt = os.path.join(d, "huge.bin")
    write_bin(ckpt, scale=1e17)  # finite weights; Q.K and the MLP overflow float32 in layer 0
    out = os.path.join(d, "huge.h5")
    r = run(ckpt, "--n", "2", "--len", "16", "--quiet", "--out", out, "--device", "cpu")
    check(r.returncode == 1 and "overflows float32 in layer 0" in r.stderr and r.stderr.count("\n") == 1,
          f"overflowing model: {r.returncode} {r.stderr!r}")
    check(not os.path.exists(out) and not leftovers(d), "nothing written")


def main():
    d = tempfile.mkdtemp(prefix="andrea-dumpcli-")
    ckpt = os.path.join(d, "tiny.bin")
    write_bin(ckpt)
    for t in (test_default_output_is_dump_h5_with_every_builtin_suite,
              test_malformed_probe_file_exits_1_names_the_line_and_writes_nothing,
              test_usage_errors_exit_2, test_sigint_leaves_no_file_under_the_final_name,
              test_out_naming_a_folder_is_refused_before_the_work):
        before = len(FAILED)
        t(d, ckpt)
        print("ok  " if len(FAILED) == before else "FAIL", t.__name__)
    for t in (test_missing_checkpoint_is_a_one_line_error, test_token_id_probe_file_works_without_a_tokenizer,
              test_weights_that_overflow_float32_are_refused_not_dumped_as_nan):
        before = len(FAILED)
        t(d)
        print("ok  " if len(FAILED) == before else "FAIL", t.__name__)
    for p in glob.glob(os.path.join(d, "*")):
        os.remove(p)
    os.rmdir(d)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
