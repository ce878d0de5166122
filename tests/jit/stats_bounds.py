#!/usr/bin/env python3
"""min_bytes is a lower bound (issue 39): every script of tests/jit runs
with --stats, and for every jit function the bytes its last call moved
(kernels, library ops and copies) must be at least the min_bytes of that
call (what any plan must read of each input and write into it, and the
returned tensors). A stats line that says otherwise fails the test; so does
a run without any stats line (nothing was checked).

Usage: stats_bounds.py --thn build/thn
"""
import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--thn", required=True)
    a = ap.parse_args()
    env = dict(os.environ, THN_STDLIB=str(HERE.parent.parent / "stdlib"))
    checked, bad = 0, []
    for p in sorted(HERE.glob("*.thn")):
        r = subprocess.run([str(Path(a.thn).resolve()), "run", p.name, "--stats"], cwd=HERE, capture_output=True,
                           text=True, env=env, timeout=300)
        for m in re.finditer(r"^stats: (\S+) (.*)$", r.stderr, re.M):
            kv = dict(x.split("=", 1) for x in m.group(2).split())
            if int(kv["calls"]) == 0:
                continue
            checked += 1
            if int(kv["bytes"]) < int(kv["min_bytes"]):
                bad.append(f"{p.name}: {m.group(1)} moved {kv['bytes']} bytes < min_bytes {kv['min_bytes']}")
    for b in bad:
        print("FAIL", b)
    print(f"stats bounds: {checked} jit functions of tests/jit checked, {len(bad)} with bytes < min_bytes")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
