"""PyTorch eager CPU, one thread, the same ops as runtime_bench.cpp."""
import time
import torch

torch.set_num_threads(1)


def median_ms(f, reps):
    for _ in range(3):
        f()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append((time.perf_counter() - t0) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]


for n in (1 << 20, 1 << 24):
    a, b, c = (torch.randn(n // 1024, 1024) for _ in range(3))
    reps = 9 if n > (1 << 20) else 51

    def softmax_rows():
        e = (a - a.amax(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)

    ops = {"add": lambda: a + b, "mul_add": lambda: a * b + c, "sum": lambda: a.sum(), "amax": lambda: a.amax(),
           "softmax_rows": softmax_rows}
    for name, f in ops.items():
        print(f"{name} {n} {median_ms(f, reps):.4f}")
