"""PyTorch on the workloads of suite.thn (the same ops as thn's stdlib:
nn.softmax, nn.layer_norm, scaled_dot_product_attention as matmul, scale,
softmax, matmul; optim.adam_step's in-place ops). Prints `bench NAME torch
MS` per workload: medians of 10 calls, eager CPU by default.

  --device cuda  on the GPU (timed with torch.cuda.synchronize); exit 3
                 when this PyTorch has no CUDA (Debian's 1.13 has none)
  --compile      torch.compile of each workload (PyTorch 2 or newer; exit 3
                 without it), its first call (the compile) not timed"""
import argparse
import math
import sys
import time

import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
parser.add_argument("--compile", action="store_true")
opts = parser.parse_args()
if opts.device == "cuda" and not torch.cuda.is_available():
    sys.exit(3)
if opts.compile and not hasattr(torch, "compile"):
    sys.exit(3)
if hasattr(torch, "set_default_device"):  # PyTorch 2
    torch.set_default_device(opts.device)
elif opts.device == "cuda":
    torch.set_default_tensor_type(torch.cuda.FloatTensor)
torch.manual_seed(0)
reps = 10


def sync():
    if opts.device == "cuda":
        torch.cuda.synchronize()


def adam(params, grads, exp_avgs, exp_avg_sqs, step=3, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
        m.mul_(beta1).add_(g, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        denom = (v.sqrt() / math.sqrt(1 - beta2 ** step)).add_(eps)
        p.addcdiv_(m, denom, value=-lr / (1 - beta1 ** step))


def kv_decode(q, k, v, idx, k_new, v_new):
    k.index_copy_(2, idx, k_new)
    v.index_copy_(2, idx, v_new)
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))
    return torch.matmul(torch.softmax(scores, -1), v)


def mlp_loss(p, x, y):
    h = F.gelu(x @ p["w1"] + p["b1"])
    return F.cross_entropy(h @ p["w2"] + p["b2"], y)


def block_loss(p, x, y):
    B, T, C = x.shape
    H = 4
    h = F.layer_norm(x, (C,), p["ln1_w"], p["ln1_b"])
    qkv = h @ p["attn_w"] + p["attn_b"]
    q, k, v = (qkv[:, :, i * C:(i + 1) * C].reshape(B, T, H, C // H).transpose(1, 2) for i in range(3))
    # (scaled_dot_product_attention as thn's stdlib computes it: PyTorch 1.13 has none)
    s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // H))
    s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    x = x + (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, C) @ p["proj_w"] + p["proj_b"]
    h = F.layer_norm(x, (C,), p["ln2_w"], p["ln2_b"])
    x = x + F.gelu(h @ p["fc_w"] + p["fc_b"]) @ p["fc2_w"] + p["fc2_b"]
    return F.cross_entropy((x @ p["head_w"]).reshape(B * T, -1), y.reshape(B * T))


def train(loss_fn, shapes, x, y):
    """A training step as PyTorch users write it: backward(), then torch.optim.AdamW."""
    p = {}
    for name, shape in shapes.items():
        if name.startswith("ln") and name.endswith("_w"):
            p[name] = torch.ones(shape)
        elif name.startswith("b") or name.endswith("_b"):
            p[name] = torch.zeros(shape)
        else:
            p[name] = torch.randn(shape) / math.sqrt(shape[0])
        p[name].requires_grad_()
    opt = torch.optim.AdamW(p.values(), lr=1e-3)

    def step(x, y):
        opt.zero_grad()
        loss_fn(p, x, y).backward()
        opt.step()
    return step, (x, y)


n = 10
workloads = [
    ("adam", adam, ([torch.randn(1 << 20) for _ in range(n)], [torch.randn(1 << 20) for _ in range(n)],
                    [torch.zeros(1 << 20) for _ in range(n)], [torch.zeros(1 << 20) for _ in range(n)])),
    ("kv_decode", kv_decode, (torch.randn(1, 8, 1, 64), torch.randn(1, 8, 1024, 64), torch.randn(1, 8, 1024, 64),
                              torch.tensor([700], device=opts.device), torch.randn(1, 8, 1, 64), torch.randn(1, 8, 1, 64))),
    ("softmax", lambda x: torch.softmax(x, -1), (torch.randn(4096, 1024),)),
    ("layer_norm", lambda x, w, b: torch.nn.functional.layer_norm(x, (x.size(-1),), w, b),
     (torch.randn(4096, 1024), torch.randn(1024), torch.randn(1024))),
    ("sum_rows", lambda x: x.sum(-1), (torch.randn(4096, 4096),)),
    ("amax_cols", lambda x: x.amax(0), (torch.randn(4096, 4096),)),
    ("chain", lambda x, y, z: ((x * 2.0 + y).sin() * z).tanh() + 1.0,
     (torch.randn(2048, 2048), torch.randn(2048, 2048), torch.randn(2048, 2048))),
    ("mlp_train", *train(mlp_loss, {"w1": (256, 512), "b1": (512,), "w2": (512, 10), "b2": (10,)},
                         torch.randn(64, 256), torch.randint(0, 10, (64,)))),
    ("block_train", *train(block_loss, {"ln1_w": (64,), "ln1_b": (64,), "attn_w": (64, 192), "attn_b": (192,),
                                        "proj_w": (64, 64), "proj_b": (64,), "ln2_w": (64,), "ln2_b": (64,),
                                        "fc_w": (64, 256), "fc_b": (256,), "fc2_w": (256, 64), "fc2_b": (64,),
                                        "head_w": (64, 96)}, torch.randn(8, 32, 64), torch.randint(0, 96, (8, 32)))),
]
for name, f, a in workloads:
    if opts.compile:
        f = torch.compile(f)
    f(*a)
    sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f(*a)
        sync()
        ts.append((time.perf_counter() - t0) * 1000)
    print("bench", name, "torch", round(sorted(ts)[len(ts) // 2], 3))
