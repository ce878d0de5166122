#!/usr/bin/python3
"""Runs every examples/*.thn under CPython + PyTorch (cpython_thn.py).

    /usr/bin/python3 tests/oracle/check_examples.py [-v] [FILES...]

Each example must exit with 0 and stay inside the thn language (subset.py).
-v prints each example's output. Exit status 1 if any fails.
"""
import subprocess
import sys
import time
from pathlib import Path

from subset import REPO, check_file

CPYTHON_THN = Path(__file__).resolve().parent / "cpython_thn.py"


def main(argv):
    verbose = "-v" in argv
    paths = [Path(a) for a in argv if a != "-v"] or sorted((REPO / "examples").glob("*.thn"))
    failed = 0
    for path in paths:
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, str(CPYTHON_THN), "run", str(path)],
                              capture_output=True, text=True, timeout=300)
        seconds = time.perf_counter() - start
        problems = check_file(path)
        ok = proc.returncode == 0 and not problems
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {path.name:28s} exit {proc.returncode}  {seconds:5.2f} s "
              f"(with interpreter start)")
        if verbose or proc.returncode != 0:
            print(proc.stdout + proc.stderr)
        for problem in problems:
            print("  " + problem)
    print(f"{len(paths)} examples, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
