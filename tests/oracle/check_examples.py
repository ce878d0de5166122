#!/usr/bin/python3
"""Runs every examples/*.thn under CPython + PyTorch (cpython_thn.py).

    /usr/bin/python3 tests/oracle/check_examples.py [-v] [--thn BUILD/thn] [FILES...]

Each example must exit with 0 and stay inside the thn language (subset.py).
With --thn, each also runs under `thn run` and must exit with 0 there too;
the line says whether both printed the same (examples that print random
values differ: thn's generator is not PyTorch's). -v prints the outputs.
Exit status 1 if any fails.
"""
import subprocess
import sys
import time
from pathlib import Path

from subset import REPO, check_file

CPYTHON_THN = Path(__file__).resolve().parent / "cpython_thn.py"


def run(command):
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
    return proc, time.perf_counter() - start


def main(argv):
    verbose = "-v" in argv
    thn = argv[argv.index("--thn") + 1] if "--thn" in argv else None
    files = [a for a in argv if a not in ("-v", "--thn", thn)]
    paths = [Path(f) for f in files] or sorted((REPO / "examples").glob("*.thn"))
    failed = 0
    for path in paths:
        oracle, seconds = run([sys.executable, str(CPYTHON_THN), "run", str(path)])
        problems = check_file(path)
        ok = oracle.returncode == 0 and not problems
        line = f"{path.name:24s} cpython: exit {oracle.returncode} {seconds:5.2f} s"
        if thn:
            ours, seconds = run([thn, "run", str(path)])
            ok = ok and ours.returncode == 0
            same = "same output" if ours.stdout == oracle.stdout else "output differs"
            line += f"  thn: exit {ours.returncode} {seconds:5.2f} s, {same}"
        failed += not ok
        print(("ok   " if ok else "FAIL ") + line)
        for proc in [oracle] + ([ours] if thn else []):
            if verbose or proc.returncode != 0:
                print(proc.stdout + proc.stderr)
        for problem in problems:
            print("  " + problem)
    print(f"{len(paths)} examples, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
