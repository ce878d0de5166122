#!/usr/bin/env python3
"""Writes a GPT-2 checkpoint for bench/gpt2: nanoGPT's GPT-2 initialisation
(normal(0, 0.02) weights and embeddings, c_proj weights scaled by
1/sqrt(2 * layers), zero biases, unit LayerNorm weights; lm_head tied to
wte, so stored once) with a fixed seed, plus the run's token batches, in a
safetensors file (written by hand: the format is a JSON header and raw
little-endian bytes).

  /usr/bin/python3 bench/gpt2/checkpoint.py --layers 12 --width 768 --heads 12 \
      --vocab 50304 --block 1024 --steps 10 --batch 4 --seq 64 --out gpt2.safetensors

Entries: nanoGPT's state-dict names (transformer.wte.weight, ...), "config"
(int64: layers, heads, width, vocab, block, steps, batch, seq) and "data"
(int64 [steps, batch, seq + 1]: each step's inputs and, shifted by one,
its targets)."""
import argparse
import json
import math
import struct

import torch


def gpt2_state(layers, width, heads, vocab, block, gen):
    def normal(*shape, std=0.02):
        return torch.empty(*shape).normal_(0.0, std, generator=gen)

    sd = {"transformer.wte.weight": normal(vocab, width), "transformer.wpe.weight": normal(block, width)}
    proj_std = 0.02 / math.sqrt(2 * layers)
    for i in range(layers):
        p = f"transformer.h.{i}."
        sd[p + "ln_1.weight"], sd[p + "ln_1.bias"] = torch.ones(width), torch.zeros(width)
        sd[p + "attn.c_attn.weight"], sd[p + "attn.c_attn.bias"] = normal(3 * width, width), torch.zeros(3 * width)
        sd[p + "attn.c_proj.weight"], sd[p + "attn.c_proj.bias"] = normal(width, width, std=proj_std), torch.zeros(width)
        sd[p + "ln_2.weight"], sd[p + "ln_2.bias"] = torch.ones(width), torch.zeros(width)
        sd[p + "mlp.c_fc.weight"], sd[p + "mlp.c_fc.bias"] = normal(4 * width, width), torch.zeros(4 * width)
        sd[p + "mlp.c_proj.weight"], sd[p + "mlp.c_proj.bias"] = normal(width, 4 * width, std=proj_std), torch.zeros(width)
    sd["transformer.ln_f.weight"], sd["transformer.ln_f.bias"] = torch.ones(width), torch.zeros(width)
    return sd


DTYPES = {torch.float32: "F32", torch.int64: "I64"}


def save_safetensors(tensors, path):
    header, offset, blobs = {}, 0, []
    for name, t in tensors.items():
        data = t.contiguous().numpy().tobytes() if hasattr(t, "numpy") else bytes(t)
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def load_safetensors(path):
    """The tensors of a safetensors file (F32 and I64 entries)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for name, e in header.items():
            if name == "__metadata__":
                continue
            start, end = e["data_offsets"]
            f.seek(base + start)
            dtype = {"F32": torch.float32, "I64": torch.int64}[e["dtype"]]
            buf = bytearray(f.read(end - start))
            out[name] = torch.frombuffer(buf, dtype=dtype).reshape(e["shape"]) if end > start else torch.zeros(e["shape"], dtype=dtype)
        return out


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name, default in [("layers", 12), ("width", 768), ("heads", 12), ("vocab", 50304), ("block", 1024),
                          ("steps", 10), ("batch", 4), ("seq", 64), ("seed", 0)]:
        a.add_argument("--" + name, type=int, default=default)
    a.add_argument("--out", required=True)
    o = a.parse_args()
    gen = torch.Generator().manual_seed(o.seed)
    sd = gpt2_state(o.layers, o.width, o.heads, o.vocab, o.block, gen)
    sd["config"] = torch.tensor([o.layers, o.heads, o.width, o.vocab, o.block, o.steps, o.batch, o.seq])
    sd["data"] = torch.randint(0, o.vocab, (o.steps, o.batch, o.seq + 1), generator=gen)
    save_safetensors(sd, o.out)
    params = sum(t.numel() for k, t in sd.items() if k not in ("config", "data"))
    print(f"{o.out}: {params / 1e6:.1f}M parameters, {o.steps} steps of {o.batch} x {o.seq} tokens")


if __name__ == "__main__":
    main()
