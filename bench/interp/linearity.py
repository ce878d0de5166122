#!/usr/bin/env python3
"""Inputs whose cost must grow linearly with their size (issue 40, item 9;
issue 60, item 6): an if/elif chain, a jit call whose argument is a nested
list (its prologue, names and output links), and a loop of 40n `s += "x"`
appends (in place while only the name holds the str). (str() of a nested list is linear too,
but past 1000 levels it is Python's RecursionError.) Each is run at n and
4n; the table gives the seconds (best of 3) and their ratio, about 4 when
linear (16 when quadratic). Plain python3.

Usage: linearity.py --thn build/thn [--n 8000]
"""
import argparse
import os
import subprocess
import tempfile
import time


def elif_chain(n):
    lines = ["def f(x):", "    if x == 0:", "        return 0"]
    for i in range(1, n):
        lines += [f"    elif x == {i}:", f"        return {i}"]
    return "\n".join(lines + [f"print(f({n - 1}))"]) + "\n"


def nested_argument(n):
    return (f"def f(x, l):\n    return x + 1\nl = []\nfor i in range({n}):\n    l = [l]\n"
            "j = jit(f)\nprint(j(ones(2), l), j(ones(2), l))\n")


def string_appends(n):
    return f's = ""\nfor i in range({40 * n}):\n    s += "x"\nprint(len(s))\n'


def seconds(thn, code):
    with tempfile.NamedTemporaryFile("w", suffix=".thn", delete=False) as f:
        f.write(code)
    try:
        best = None
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run([thn, "run", f.name], check=True, capture_output=True, timeout=600)
            t = time.perf_counter() - start
            best = t if best is None else min(best, t)
        return best
    finally:
        os.unlink(f.name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--thn", required=True)
    ap.add_argument("--n", type=int, default=8000)
    a = ap.parse_args()
    print(f"| input | n = {a.n} (s) | n = {4 * a.n} (s) | ratio |")
    print("|---|---|---|---|")
    for name, make in [("if/elif chain of n branches", elif_chain), ("jit call, argument a list nested n deep", nested_argument),
                       ("40n appends `s += \"x\"`", string_appends)]:
        t1, t4 = seconds(a.thn, make(a.n)), seconds(a.thn, make(4 * a.n))
        print(f"| {name} | {t1:.3f} | {t4:.3f} | {t4 / t1:.1f} |")


if __name__ == "__main__":
    main()
