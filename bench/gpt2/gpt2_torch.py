#!/usr/bin/env python3
"""bench/gpt2's model in PyTorch eager: nanoGPT's GPT-2 classes, the same
checkpoint, data, AdamW and step as gpt2.thn, printing each step's loss and
time in the same format. Reads gpt2.safetensors from the working directory.

  /usr/bin/python3 bench/gpt2/gpt2_torch.py [--device cuda] [--compile]"""
import argparse
import math
import os
import sys
import time

import torch
import torch.nn as nn
from torch.nn import functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checkpoint import load_safetensors  # noqa: E402


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd = n_head, n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if hasattr(F, "scaled_dot_product_attention"):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # (torch 1.13: nanoGPT's slow path)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
            att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
            y = att @ v
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))


class MLP(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Transformer(nn.Module):
    def __init__(self, n_layer, n_head, n_embd, vocab, block):
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(block, n_embd)
        self.h = nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)


class GPT(nn.Module):
    def __init__(self, n_layer, n_head, n_embd, vocab, block):
        super().__init__()
        self.transformer = Transformer(n_layer, n_head, n_embd, vocab, block)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.lm_head.weight = self.transformer.wte.weight

    def forward(self, idx):
        t = self.transformer
        x = t.wte(idx) + t.wpe(torch.arange(idx.size(1), device=idx.device))
        for b in t.h:
            x = b(x)
        return self.lm_head(t.ln_f(x))


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--device", default="cpu")
    a.add_argument("--compile", action="store_true", help="torch.compile the step (torch 2)")
    o = a.parse_args()
    ckpt = load_safetensors("gpt2.safetensors")
    n_layer, n_head, n_embd, vocab, block, steps, batch, seq = ckpt["config"].tolist()
    model = GPT(n_layer, n_head, n_embd, vocab, block).to(o.device)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(ckpt[name])
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, weight_decay=0.1)
    data = ckpt["data"].to(o.device)

    def train_step(idx, targets):
        opt.zero_grad()
        logits = model(idx)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        loss.backward()
        opt.step()
        return loss

    step = torch.compile(train_step) if o.compile else train_step
    print(f"params {sum(p.numel() for p in model.parameters())}")
    for i in range(steps):
        idx, targets = data[i, :, :-1].clone(), data[i, :, 1:].clone()
        start = time.perf_counter()
        loss = step(idx, targets).item()
        print(f"step {i} loss {loss:.6f} ms {(time.perf_counter() - start) * 1000:.1f}", flush=True)


if __name__ == "__main__":
    main()
