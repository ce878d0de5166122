#!/usr/bin/env python3
"""Golden test of generated kernel source: `thn kernels codegen.thn --target
TARGET --print` (the kernels of every trace, without the prelude; CUDA for
sm_90) must equal codegen.TARGET.expected, for cpu and cuda (--targets). `--write` regenerates the
expected files (review the diff before committing). Plain python3.
"""
import argparse
import difflib
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--thn", required=True)
    parser.add_argument("--targets", nargs="+", default=["cpu", "cuda"], choices=["cpu", "cuda"])
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    failed = 0
    for target in args.targets:
        cmd = [str(Path(args.thn).resolve()), "kernels", "codegen.thn", "--target", target, "--print"]
        if target == "cuda":
            cmd += ["--arch", "sm_90"]
        r = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, timeout=300)
        got = r.stdout + r.stderr + f"# exit code {r.returncode}\n"
        path = HERE / f"codegen.{target}.expected"
        if args.write:
            path.write_text(got)
            continue
        expected = path.read_text() if path.exists() else ""
        if got != expected:
            failed += 1
            print(f"FAIL {path.name}")
            sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), got.splitlines(True),
                                                       "expected", "actual"))
    n = len(args.targets)
    print(f"kernel source golden tests: {n - failed} passed, {failed} failed (of {n})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
