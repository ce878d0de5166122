#!/usr/bin/env python3
"""The GPU benchmark (issue 38): thn jit on CUDA tensors against PyTorch eager
and torch.compile, at sizes that stream a gigabyte or more, with the
device-to-device copy bandwidth as the practical peak, in one run.

For each workload: thn's median of 20 calls (each timed to the end of its
GPU work), its kernels per call and bytes per call against min_bytes
(`--stats`), the same function in PyTorch eager and torch.compile when
`--python` names a Python whose PyTorch has CUDA, and thn's bandwidth
(min_bytes over time) as a share of the copy bandwidth (`y.copy_(x)` of
1 GiB, read and written: 2 GiB moved). Prints one markdown table.

  bench/gpu/run.py --thn build/thn [--python PATH] [--quick]

On the lent GPU machine (no package registry): `bash .gpu/env.sh python3
bench/gpu/run.py --thn build/thn --python python3`. `--quick` runs tiny sizes (a check that the script works, e.g. under the
emulating stand-in driver of tests/cuda); its numbers mean nothing.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

THN = """import cuda
import nn
import optim
import time

reps = 20
manual_seed(0)


def call(f, a):
    if len(a) == 1:
        return f(a[0])
    if len(a) == 2:
        return f(a[0], a[1])
    if len(a) == 3:
        return f(a[0], a[1], a[2])
    return f(a[0], a[1], a[2], a[3])


def median_ms(f, a):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        call(f, a)
        cuda.synchronize()
        ts.append((time.perf_counter() - t0) * 1000)
    return sorted(ts)[len(ts) // 2]


def report(name, f, a):
    j = jit(f)
    call(j, a)  # traced, compiled
    cuda.synchronize()
    print("bench", name, median_ms(j, a))


def copy(x, y):
    y.copy_(x)


def adam(ps, gs, ms, vs):
    optim.adam_step(ps, gs, ms, vs, 3, lr=1e-3)


def chain(x, y, z):
    return ((x * 2.0 + y).sin() * z).tanh() + 1.0


def softmax(x):
    return nn.softmax(x, -1)


def softmax_long(x):
    return nn.softmax(x, -1)


def layer_norm(x, w, b):
    return nn.layer_norm(x, (x.size(-1),), w, b)


def sum_rows(x):
    return x.sum(-1)


def amax_cols(x):
    return x.amax(0)


a = [randn({copy}, device="cuda")]
a.append(empty_like(a[0]))
print("bench copy_eager", median_ms(copy, a))
report("copy_jit", copy, a)
a = [[randn({adam}, device="cuda") for _ in range(10)], [randn({adam}, device="cuda") for _ in range(10)],
     [zeros({adam}, device="cuda") for _ in range(10)], [zeros({adam}, device="cuda") for _ in range(10)]]
report("adam", adam, a)
a = [randn({chain}, device="cuda"), randn({chain}, device="cuda"), randn({chain}, device="cuda")]
report("chain", chain, a)
a = [randn({rows}, {cols}, device="cuda"), randn({cols}, device="cuda"), randn({cols}, device="cuda")]
report("softmax", softmax, [a[0]])
report("layer_norm", layer_norm, a)
a = [randn({rows} // 4, {cols} * 4, device="cuda")]
report("softmax_long", softmax_long, a)
a = [randn({square}, {square}, device="cuda")]
report("sum_rows", sum_rows, a)
report("amax_cols", amax_cols, a)
"""

TORCH = """import math
import sys
import time

try:
    import torch
except ImportError:
    sys.exit(3)
if not torch.cuda.is_available():
    sys.exit(3)
torch.manual_seed(0)
dev = "cuda"


def median_ms(f, *a):
    ts = []
    for _ in range(20):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        f(*a)
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t0) * 1000)
    return sorted(ts)[len(ts) // 2]


def adam(ps, gs, ms, vs, step=3, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    for p, g, m, v in zip(ps, gs, ms, vs):
        m.mul_(beta1).add_(g, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        denom = (v.sqrt() / math.sqrt(1 - beta2 ** step)).add_(eps)
        p.addcdiv_(m, denom, value=-lr / (1 - beta1 ** step))


def chain(x, y, z):
    return ((x * 2.0 + y).sin() * z).tanh() + 1.0


def softmax(x):
    return torch.softmax(x, -1)


def layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.size(-1),), w, b)


def sum_rows(x):
    return x.sum(-1)


def amax_cols(x):
    return x.amax(0)


def report(name, f, *a):
    eager = median_ms(f, *a)
    compiled = float("nan")
    if hasattr(torch, "compile"):
        c = torch.compile(f)
        c(*a)
        compiled = median_ms(c, *a)
    print("bench", name, eager, compiled)


x = torch.randn({copy}, device=dev)
y = torch.empty_like(x)
print("bench copy_torch", median_ms(lambda: y.copy_(x)))
ps = [torch.randn({adam}, device=dev) for _ in range(10)]
gs = [torch.randn({adam}, device=dev) for _ in range(10)]
ms = [torch.zeros({adam}, device=dev) for _ in range(10)]
vs = [torch.zeros({adam}, device=dev) for _ in range(10)]
report("adam", adam, ps, gs, ms, vs)
x, y, z = (torch.randn({chain}, device=dev) for _ in range(3))
report("chain", chain, x, y, z)
x = torch.randn({rows}, {cols}, device=dev)
w, b = torch.randn({cols}, device=dev), torch.randn({cols}, device=dev)
report("softmax", softmax, x)
report("layer_norm", layer_norm, x, w, b)
x = torch.randn({rows} // 4, {cols} * 4, device=dev)
report("softmax_long", softmax, x)
x = torch.randn({square}, {square}, device=dev)
report("sum_rows", sum_rows, x)
report("amax_cols", amax_cols, x)
"""

TITLES = {
    "adam": "Adam step, 10 x 16M",
    "chain": "elementwise chain, 3 x 64M",
    "softmax": "softmax rows, 16384 x 8192",
    "softmax_long": "softmax rows, 4096 x 32768",
    "layer_norm": "layer norm rows, 16384 x 8192",
    "sum_rows": "sum over rows, 16384 x 16384",
    "amax_cols": "amax over columns, 16384 x 16384",
}


def sizes(quick):
    if quick:
        return dict(copy=1 << 16, adam=1 << 12, chain=1 << 14, rows=64, cols=512, square=256)
    return dict(copy=1 << 28, adam=16 << 20, chain=64 << 20, rows=16384, cols=8192, square=16384)


def min_bytes(s):
    """The bytes each workload must move at the sizes `s` (read and written once)."""
    return {"adam": 7 * 10 * s["adam"] * 4, "chain": 4 * s["chain"] * 4, "softmax": 2 * s["rows"] * s["cols"] * 4,
            "softmax_long": 2 * s["rows"] * s["cols"] * 4,
            "layer_norm": 2 * s["rows"] * s["cols"] * 4, "sum_rows": s["square"] ** 2 * 4,
            "amax_cols": s["square"] ** 2 * 4}


def run_thn(thn, quick, tmp):
    path = os.path.join(tmp, "gpu.thn")
    with open(path, "w") as f:
        f.write(THN.format(**sizes(quick)))
    env = dict(os.environ)
    env.setdefault("THN_STDLIB", os.path.join(ROOT, "stdlib"))
    r = subprocess.run([thn, "run", path, "--stats"], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"bench/gpu/run.py: thn failed:\n{r.stdout}{r.stderr}")
    times = {m.group(1): float(m.group(2)) for m in re.finditer(r"^bench (\w+) ([\d.e+-]+)$", r.stdout, re.M)}
    stats = {}
    for m in re.finditer(r"^stats: (\w+) (.*)$", r.stderr, re.M):
        kv = dict(x.split("=") for x in m.group(2).split())  # (per call of the last trace)
        stats[m.group(1)] = (int(kv["kernels"]), int(kv["bytes"]), int(kv["min_bytes"]))
    return times, stats


def run_torch(python, quick, tmp):
    if not python:
        return {}
    path = os.path.join(tmp, "gpu_torch.py")
    with open(path, "w") as f:
        f.write(TORCH.format(**sizes(quick)))
    r = subprocess.run([python, path], capture_output=True, text=True)
    if r.returncode == 3:
        print(f"({python} has no PyTorch with CUDA: no PyTorch columns)", file=sys.stderr)
        return {}
    if r.returncode != 0:
        sys.exit(f"bench/gpu/run.py: {python} failed:\n{r.stdout}{r.stderr}")
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] == "bench":
            out[parts[1]] = [float(x) for x in parts[2:]]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--thn", required=True)
    ap.add_argument("--python", help="a Python whose PyTorch has CUDA (the PyTorch columns)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes: checks the script, measures nothing")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        times, stats = run_thn(a.thn, a.quick, tmp)
        torch = run_torch(a.python, a.quick, tmp)
    copy_bytes = 2 * sizes(a.quick)["copy"] * 4
    peak = copy_bytes / (times["copy_eager"] / 1e3) / 1e9
    print(f"device-to-device copy: {peak:.1f} GB/s (thn, `y.copy_(x)` of {copy_bytes // 2 >> 20} MiB)"
          + (f"; PyTorch {copy_bytes / (torch['copy_torch'][0] / 1e3) / 1e9:.1f} GB/s" if "copy_torch" in torch else "")
          + f"; thn's jit copy kernel {copy_bytes / (times['copy_jit'] / 1e3) / 1e9:.1f} GB/s")
    print()
    print("| workload | thn jit (ms) | kernels | bytes / min_bytes | PyTorch eager (ms) | torch.compile (ms) "
          "| thn GB/s | % of copy |")
    print("|---|---|---|---|---|---|---|---|")
    for name, need in min_bytes(sizes(a.quick)).items():
        ms = times[name]
        kernels, moved, least = stats.get(name, (float("nan"),) * 3)
        gbs = need / (ms / 1e3) / 1e9
        eager, compiled = (torch.get(name, []) + [float("nan"), float("nan")])[:2]
        print(f"| {TITLES[name]}{' (quick)' if a.quick else ''} | {ms:.3f} | {kernels:g} | {moved / least:.2f} "
              f"| {eager:.3f} | {compiled:.3f} | {gbs:.1f} | {gbs / peak:.0%} |")


if __name__ == "__main__":
    main()
