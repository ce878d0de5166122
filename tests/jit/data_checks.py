#!/usr/bin/env python3
"""The checks of data (tests/runtime/data_checks.txt: what only values tell)
under jit: tracing runs on meta tensors and cannot see them, so the trace's
run raises them. For each, a first call (traced, then run) and a cached call
(a trace made with good values, run with bad ones) must raise the error that
--interpret raises, with the same message, file, line and column.

Usage: data_checks.py --thn build/thn
"""
import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

# (name, function body over x and i, good arguments, bad arguments)
CHECKS = [
    ("index_select", "return x.index_select(0, i) * 2", "ones(3, 2), tensor([0, 2])", "ones(3, 2), tensor([0, 3])"),
    ("index_select negative", "return x.index_select(1, i) + 1", "ones(2, 3), tensor([1])", "ones(2, 3), tensor([-1])"),
    ("gather", "return x.gather(0, i).sum()", "ones(2, 3), tensor([[0, 1, 1]])", "ones(2, 3), tensor([[0, 5, 1]])"),
    ("index_copy", "return x.index_copy(0, i, ones(1, 3))", "zeros(2, 3), tensor([1])", "zeros(2, 3), tensor([5])"),
    ("index_add", "return x.index_add(0, i, ones(1, 3))", "zeros(2, 3), tensor([1])", "zeros(2, 3), tensor([-3])"),
    ("scatter", "return x.scatter(0, i, 1.0)", "zeros(2, 3), tensor([[1, 0, 1]])", "zeros(2, 3), tensor([[2, 0, 1]])"),
    ("scatter_add", "return x.scatter_add(1, i, ones(1, 2))", "zeros(2, 3), tensor([[1, 2]])", "zeros(2, 3), tensor([[1, -1]])"),
    ("advanced index", "return x[i] + 1", "ones(3), tensor([0, 2])", "ones(3), tensor([0, 7])"),
    ("setitem", "x[i] = 2.0\n    return x", "zeros(3), tensor([1])", "zeros(3), tensor([4])"),
    ("embedding", "return x[i].sum(1)", "ones(4, 2), tensor([[0, 3]])", "ones(4, 2), tensor([[0, 4]])"),
    ("integer division", "return (x // i) + 1", "tensor([4, 6]), tensor([2, 3])", "tensor([4, 6]), tensor([2, 0])"),
    ("integer remainder", "return x % i", "tensor([4, 6]), tensor([2, 3])", "tensor([4, 6]), tensor([0, 3])"),
    ("integer fmod", "return x.fmod(i) * 2", "tensor([4, 6]), tensor([2, 3])", "tensor([4, 6]), tensor([0, 3])"),
    ("multinomial", "manual_seed(0)\n    return multinomial(x + i, 1)", "ones(3), 0.0", "ones(3), -2.0"),
]

ERROR_RE = re.compile(r"^(\S+\.thn):(\d+):(\d+): (\w+: .*)$", re.M)


def program(body, calls):
    lines = ["def f(x, i):", "    " + body, "", "", "g = jit(f)"]
    for args in calls:
        lines.append(f"r = g({args})")
        lines.append("print(cache_misses(g), cache_hits(g))")
    return "\n".join(lines) + "\n"


def run(thn, path, *extra):
    p = subprocess.run([thn, "run", str(path), *extra], capture_output=True, text=True, timeout=120)
    errors = ERROR_RE.findall(p.stderr)
    return p.returncode, p.stdout, errors[-1] if errors else None, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--thn", required=True)
    a = ap.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, body, good, bad in CHECKS:
            first = Path(tmp) / "first.thn"
            cached = Path(tmp) / "cached.thn"
            first.write_text(program(body, [bad]))
            cached.write_text(program(body, [good, bad]))
            rc_ref, _, want, _ = run(a.thn, first, "--interpret")
            rc_first, out_first, got_first, err_first = run(a.thn, first)
            rc_cached, out_cached, got_cached, err_cached = run(a.thn, cached)
            problems = []
            if rc_ref != 1 or want is None:
                problems.append(f"--interpret raised no located error (exit {rc_ref})")
            want_at = want and (want[1], want[2], want[3])
            if rc_first != 1 or not got_first or (got_first[1], got_first[2], got_first[3]) != want_at:
                problems.append(f"first call: {got_first or err_first.strip()}")
            if out_cached != "1 0\n":
                problems.append(f"cached call: the good call printed {out_cached!r}, not '1 0' (one trace)")
            if rc_cached != 1 or not got_cached or (got_cached[1], got_cached[2], got_cached[3]) != want_at:
                problems.append(f"cached call: {got_cached or err_cached.strip()}")
            if problems:
                failed += 1
                print(f"FAIL {name}: want line {want_at and want_at[0]} col {want_at and want_at[1]}: "
                      f"{want_at and want_at[2]}")
                for p in problems:
                    print("  " + p)
            else:
                print(f"ok   {name}: {want_at[2]}")
    print(f"data checks: {len(CHECKS) - failed} passed, {failed} failed (of {len(CHECKS)})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
