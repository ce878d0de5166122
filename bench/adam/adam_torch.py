"""PyTorch eager CPU: the Adam step of adam.thn (stdlib optim.adam_step's ops)."""
import math
import sys
import time

import torch

if len(sys.argv) > 1:
    torch.set_num_threads(int(sys.argv[1]))
n, size, reps, step = 10, 1 << 20, 10, 3
lr, beta1, beta2, eps = 1e-3, 0.9, 0.999, 1e-8
torch.manual_seed(0)
params = [torch.randn(size) for _ in range(n)]
grads = [torch.randn(size) for _ in range(n)]
exp_avgs = [torch.zeros(size) for _ in range(n)]
exp_avg_sqs = [torch.zeros(size) for _ in range(n)]


def adam():
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
        m.mul_(beta1).add_(g, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        step_size = lr / (1 - beta1 ** step)
        denom = (v.sqrt() / math.sqrt(1 - beta2 ** step)).add_(eps)
        p.addcdiv_(m, denom, value=-step_size)


adam()
ts = []
for _ in range(reps):
    t0 = time.perf_counter()
    adam()
    ts.append((time.perf_counter() - t0) * 1000)
ts.sort()
print(f"adam torch step (ms): {ts[len(ts) // 2]:.3f} ({torch.get_num_threads()} threads)")
