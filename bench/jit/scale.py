#!/usr/bin/env python3
"""What a first jit call costs as the data and the program grow (issue 37).

Tracing runs on meta tensors, so its cost must grow with the number of ops,
never with the size of the data. For an Adam step over 10 parameters and for
bench/suite's elementwise chain, at three sizes, this prints the tracing
time and trace + passes (--time-passes), the first call with a warm kernel
cache, and the peak RSS of that run against a run that only makes the
inputs ("added": what the call holds beyond the inputs and its result,
against the inputs' bytes). Then trace + passes for Adam over 10 to 1000 parameters of 1K
floats, per parameter (the median of 5 runs). Each script runs once first to
warm the kernel cache.

Usage: bench/jit/scale.py --thn build/thn [--quick]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ADAM = """import optim
import time
n = {n}
size = {size}
manual_seed(0)
ps = [randn(size) for _ in range(n)]
gs = [randn(size) for _ in range(n)]
ms = [zeros(size) for _ in range(n)]
vs = [zeros(size) for _ in range(n)]
def step(params, grads, exp_avgs, exp_avg_sqs, k):
    optim.adam_step(params, grads, exp_avgs, exp_avg_sqs, k, lr=1e-3)
if {call}:
    f = jit(step)
    t0 = time.perf_counter()
    f(ps, gs, ms, vs, 1)
    print("first", (time.perf_counter() - t0) * 1000)
"""

CHAIN = """import time
size = {size}
manual_seed(0)
x, y, z = randn(size), randn(size), randn(size)
def chain(x, y, z):
    return ((x * 2.0 + y).sin() * z).tanh() + 1.0
if {call}:
    f = jit(chain)
    t0 = time.perf_counter()
    r = f(x, y, z)
    print("first", (time.perf_counter() - t0) * 1000)
"""


def run(thn, source, tmp):
    """(stdout+stderr, peak RSS in bytes) of `thn run` on source."""
    path = os.path.join(tmp, "bench.thn")
    with open(path, "w") as f:
        f.write(source)
    env = dict(os.environ, THN_STDLIB=os.path.join(ROOT, "stdlib"))
    p = subprocess.Popen([thn, "run", path, "--time-passes"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    out = p.stdout.read().decode()
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"bench/jit/scale.py: thn failed:\n{out}")
    return out, usage.ru_maxrss * 1024


def passes(out):
    """(tracing ms, trace + passes ms) from --time-passes."""
    m = re.search(r"time-passes: \w+: (.*)", out)
    times = [float(t) for t in re.findall(r"([\d.]+) ms", m.group(1))]
    return times[0], sum(times)


def measure(thn, template, tmp, **kw):
    run(thn, template.format(call=True, **kw), tmp)  # warms the kernel cache
    out, rss = run(thn, template.format(call=True, **kw), tmp)
    _, rss_inputs = run(thn, template.format(call=False, **kw), tmp)
    tracing, total = passes(out)
    first = float(re.search(r"first ([\d.]+)", out).group(1))
    return tracing, total, first, rss, rss_inputs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--thn", required=True)
    ap.add_argument("--quick", action="store_true", help="sizes up to 1M and 300 parameters")
    a = ap.parse_args()
    sizes = [1 << 10, 1 << 20] + ([] if a.quick else [1 << 24])
    with tempfile.TemporaryDirectory() as tmp:
        print("| workload | floats per tensor | input MB | tracing (ms) | trace + passes (ms) "
              "| first call, warm cache (ms) | peak RSS (MB) | inputs alone (MB) | result (MB) | added |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        # (tensors in, tensors returned: Adam updates its inputs in place)
        for name, template, tensors, results, kw in [("Adam step, 10 params", ADAM, 40, 0, {"n": 10}),
                                                     ("elementwise chain", CHAIN, 3, 1, {})]:
            for size in sizes:
                tracing, total, first, rss, base = measure(a.thn, template, tmp, size=size, **kw)
                inputs, result = tensors * size * 4, results * size * 4
                print(f"| {name} | {size:,} | {inputs / 1e6:.1f} | {tracing:.2f} | {total:.2f} | {first:.1f} "
                      f"| {rss / 1e6:.0f} | {base / 1e6:.0f} | {result / 1e6:.1f} "
                      f"| {(rss - base - result) / inputs:.1%} |")
        print()
        print("| Adam step, params of 1K floats | tracing (ms) | trace + passes (ms) | per parameter (ms) |")
        print("|---|---|---|---|")
        for n in [10, 100, 300] + ([] if a.quick else [1000]):
            runs = sorted((passes(run(a.thn, ADAM.format(call=True, n=n, size=1000), tmp)[0]) for _ in range(5)),
                          key=lambda r: r[1])
            tracing, total = runs[len(runs) // 2]  # the median run by trace + passes
            print(f"| {n} | {tracing:.1f} | {total:.1f} | {total / n:.3f} |")


if __name__ == "__main__":
    main()
