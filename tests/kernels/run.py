#!/usr/bin/env python3
"""The CI proof that generated kernels compile: every script of the given
directories (tests/lang, tests/jit, examples) runs under
`thn kernels FILE --target TARGET [--arch ARCH]`, which compiles every
kernel of every trace its jit functions make (CUDA: with NVRTC, no GPU
needed). Scripts that are helper modules (`# helper:`) or that end in an
expected error (`# expect-error:`) are left out, and so is a script with a
line `# kernels: not swept: REASON` (printed). Plain python3, no
dependencies.
"""
import argparse
import concurrent.futures
import subprocess
import sys
from pathlib import Path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--thn", required=True)
    parser.add_argument("--target", required=True, choices=["cpu", "cuda"])
    parser.add_argument("--arch")
    parser.add_argument("dirs", nargs="+")
    args = parser.parse_args()
    scripts = []
    for d in args.dirs:
        for p in sorted(Path(d).rglob("*.thn")):
            text = p.read_text()
            if text.startswith("# helper:") or "expect-error:" in text:
                continue
            reason = next((line.split("not swept:", 1)[1].strip() for line in text.splitlines()
                           if line.startswith("# kernels: not swept:")), None)
            if reason:
                print(f"skip {p}: {reason}")
                continue
            scripts.append(p)

    def compile_one(p):
        cmd = [str(Path(args.thn).resolve()), "kernels", p.name, "--target", args.target]
        if args.arch:
            cmd += ["--arch", args.arch]
        r = subprocess.run(cmd, cwd=p.parent, capture_output=True, text=True, timeout=900)
        last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
        return p, r.returncode, last, r.stderr

    failed, kernels = 0, 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for p, rc, last, err in pool.map(compile_one, scripts):
            if rc != 0 or not last.startswith("kernels:"):
                failed += 1
                print(f"FAIL {p}\n{err}")
            else:
                kernels += int(last.split()[1])
    print(f"kernels ({args.target}{' ' + args.arch if args.arch else ''}): {len(scripts) - failed} scripts "
          f"compiled ({kernels} kernels), {failed} failed (of {len(scripts)})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
