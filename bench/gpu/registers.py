#!/usr/bin/env python3
"""Registers per thread of thn's CUDA kernels, without a GPU (issue 38).

Compiles a script's kernels with NVRTC for an arch (`thn kernels FILE
--target cuda --arch sm_NN`, into an empty kernel cache), reads each
cubin's EIATTR_REGCOUNT attributes (the `.nv.info` section of the ELF that
ptxas writes: per function, the registers a thread uses) and prints them
per entry, with the occupancy the registers allow for thn's 256-thread
blocks (65536 registers and 2048 threads per SM on sm_80 and sm_90).

  bench/gpu/registers.py --thn build/thn [--arch sm_90] [--stand-in LIB] [FILE]

Without FILE: a row sum, a column amax, softmax and layer norm, one
script each, on CUDA tensors (the fusion pass groups a CUDA trace's prims
as the GPU runs them: softmax one kernel). Without a GPU, `--stand-in
build/tests/libthn_fake_cuda.so` runs them on the emulating driver.
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

# The default scripts: one reduction each (a module each, named by it).
REDUCTIONS = {
    "row sum": "x = randn(64, 256, device='cuda')\njit(lambda x: x.sum(-1))(x)\n",
    "column amax": "x = randn(64, 256, device='cuda')\njit(lambda x: x.amax(0))(x)\n",
    "softmax": "import nn\nx = randn(64, 256, device='cuda')\njit(lambda x: nn.softmax(x, -1))(x)\n",
    "layer norm": "import nn\nx = randn(64, 256, device='cuda')\n"
                  "jit(lambda x: nn.layer_norm(x, (256,), ones(256, device='cuda'), zeros(256, device='cuda')))(x)\n",
}

EIATTR_REGCOUNT = 0x2F
EIFMT_NVAL, EIFMT_HVAL, EIFMT_SVAL = 0x01, 0x03, 0x04


def cubin_registers(data):
    """{function name: registers} from a cubin's .nv.info section."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError("not a 64-bit ELF cubin")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]

    def string(table, at):
        start = sections[table][4] + at
        return data[start:data.index(b"\0", start)].decode()

    names = [string(shstrndx, s[0]) for s in sections]
    symtab = names.index(".symtab")
    symbols = [string(sections[symtab][6], struct.unpack_from("<I", data, sections[symtab][4] + i * 24)[0])
               for i in range(sections[symtab][5] // 24)]
    registers = {}
    for s, name in zip(sections, names):
        if name != ".nv.info":
            continue
        at, end = s[4], s[4] + s[5]
        while at < end:
            fmt, attr, size = struct.unpack_from("<BBH", data, at)
            if fmt == EIFMT_SVAL:
                if attr == EIATTR_REGCOUNT:
                    symbol, count = struct.unpack_from("<II", data, at + 4)
                    registers[symbols[symbol]] = count
                at += 4 + size
            elif fmt in (EIFMT_NVAL, EIFMT_HVAL):
                at += 4 if fmt == EIFMT_HVAL else 2
            else:
                raise ValueError(f"unknown .nv.info attribute format {fmt:#x}")
    return registers


def occupancy(registers, block=256):
    per_block = registers * block  # (allocated in units of 256 per warp: close enough at these counts)
    blocks = min(65536 // per_block, 2048 // block) if per_block else 2048 // block
    return blocks * block / 2048


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--thn", required=True)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--stand-in", help="the emulating CUDA driver, for a machine without a GPU")
    ap.add_argument("file", nargs="?")
    args = ap.parse_args()
    print(f"| script | module | entry | registers | occupancy ({args.arch}, 256 threads) |")
    print("|---|---|---|---|---|")
    scripts = {Path(args.file).name: None} if args.file else REDUCTIONS
    for label, text in scripts.items():
        with tempfile.TemporaryDirectory() as cache:
            script = Path(args.file).resolve() if args.file else Path(cache) / "script.thn"
            if not args.file:
                script.write_text(text)
            env = dict(os.environ, XDG_CACHE_HOME=cache)
            if args.stand_in:
                lib = str(Path(args.stand_in).resolve())
                env.update(THN_LIBCUDA=lib, THN_LIBCUBLAS=lib, LD_PRELOAD=lib)
            r = subprocess.run([str(Path(args.thn).resolve()), "kernels", script.name, "--target", "cuda", "--arch", args.arch],
                               cwd=script.parent, env=env, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"thn kernels {label} failed:\n{r.stderr}")
            cubins = sorted((Path(cache) / "thn" / "kernels").glob("*.cubin"), key=lambda p: p.stat().st_mtime)
            if not cubins:
                sys.exit(f"no cubins: NVRTC compiled PTX for {args.arch}? ({r.stdout.strip()})")
            for i, cubin in enumerate(cubins):
                for name, count in sorted(cubin_registers(cubin.read_bytes()).items()):
                    print(f"| {label} | {i} | {name} | {count} | {occupancy(count):.0%} |")

if __name__ == "__main__":
    main()
