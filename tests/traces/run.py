#!/usr/bin/env python3
"""Golden trace tests: each tests/traces/NAME.thn is run with
`thn run --print-traces`; what it prints (the prologue and the trace after
every pass on stderr, then the program's output) must equal NAME.expected,
with the times in `# Constructed by ... (took N ms)` lines left out.
`--write` regenerates the .expected files (review the diff before committing).
"""
import argparse
import difflib
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOK = re.compile(r"\(took [0-9.]+ ms\)")


def output(thn, script):
    r = subprocess.run([str(Path(thn).resolve()), "run", "--print-traces", script.name], cwd=HERE,
                       capture_output=True, text=True, timeout=120)
    return TOOK.sub("(took N ms)", r.stderr + r.stdout) + f"# exit code {r.returncode}\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--thn", required=True)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    failed = 0
    scripts = sorted(HERE.glob("*.thn"))
    for script in scripts:
        got = output(args.thn, script)
        expected_path = script.with_suffix(".expected")
        if args.write:
            expected_path.write_text(got)
            continue
        expected = expected_path.read_text() if expected_path.exists() else ""
        if got != expected:
            failed += 1
            print(f"FAIL {script.name}")
            sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), got.splitlines(True),
                                                       "expected", "actual"))
    print(f"trace golden tests: {len(scripts) - failed} passed, {failed} failed (of {len(scripts)})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
