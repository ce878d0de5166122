#!/usr/bin/env python3
"""A small MLP training step beside busy neighbour processes (issue 59,
item 7): the interpreter and jit (kernels compiled first) with 0, 1, 2 and
4 processes spinning on the other cores, and jit with a fixed team of one
thread per core (OMP_NUM_THREADS=cores: what thn did before it counted
the idle cores) and of one thread, for comparison. jit must never fall below the interpreter because other
processes run. Medians of 200 steps, ms.

Usage: bench/jit/neighbours.py --thn build/thn [--neighbours 0,1,2,4]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

STEP = """import nn
import time
manual_seed(0)
x = randn(476, 26)
y = randint(0, 27, (476,))
w1 = (randn(26, 26) * 0.3).requires_grad_()
b1 = zeros(26).requires_grad_()
w2 = (randn(26, 27) * 0.3).requires_grad_()
params = [w1, b1, w2]


def step(params, x, y):
    w1, b1, w2 = params
    loss = nn.cross_entropy((x @ w1 + b1).tanh() @ w2, y)
    loss.backward()
    with no_grad():
        for p in params:
            p -= 0.1 * p.grad
            p.grad = None
    return loss


def median(f):
    times = []
    for _ in range(200):
        t0 = time.perf_counter()
        f(params, x, y)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return times[len(times) // 2]


jstep = jit(step, compile="sync")
jstep(params, x, y)
jstep(params, x, y)
print("interp", median(step), "jit", median(jstep))
"""


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("--thn", required=True)
    a.add_argument("--neighbours", default="0,1,2,4")
    o = a.parse_args()
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "mlp.thn")
        with open(script, "w") as f:
            f.write(STEP)
        print(f"{os.cpu_count()} cores; MLP step [476, 26] -> 26 -> 27, cross entropy, SGD; medians of 200 steps")
        cores = os.cpu_count()
        print(f"| busy neighbours | interpreter | jit | jit, OMP_NUM_THREADS={cores} | jit, OMP_NUM_THREADS=1 | "
              "jit vs interpreter |")
        print("|---|---|---|---|---|---|")
        for n in [int(k) for k in o.neighbours.split(",")]:
            spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
            try:
                got = {}
                for label, env in [("default", {}), ("all", {"OMP_NUM_THREADS": str(cores)}),
                                   ("one", {"OMP_NUM_THREADS": "1"})]:
                    r = subprocess.run([o.thn, "run", script], capture_output=True, text=True,
                                       env=dict(os.environ, **env), timeout=600)
                    m = re.search(r"interp (\S+) jit (\S+)", r.stdout)
                    if r.returncode != 0 or not m:
                        sys.exit(f"thn failed ({r.returncode}):\n{r.stdout}{r.stderr}")
                    got[label] = (float(m[1]), float(m[2]))
            finally:
                for p in spinners:
                    p.kill()
            interp, jit = got["default"]
            print(f"| {n} | {interp:.3f} ms | {jit:.3f} ms | {got['all'][1]:.3f} ms | {got['one'][1]:.3f} ms | "
                  f"{interp / jit:.1f}x |")


if __name__ == "__main__":
    main()
