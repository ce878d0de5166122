#!/usr/bin/env python3
"""Checks the files thn writes against the formats' specifications, with a
reader written here (struct, json and ast only: no NumPy, no thn):

- .npy: the magic string \\x93NUMPY, version 1.0, a little-endian header
  length, a header dict ('descr', 'fortran_order', 'shape') ending in a
  newline with the data 64-byte aligned, then the elements in C order;
- safetensors: an 8-byte little-endian header length, a JSON header whose
  tensors' data_offsets cover the buffer without holes or overlaps,
  `__metadata__` of strings, then the bytes.

    check_written.py --thn build/thn
"""
import argparse
import ast
import json
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

PROGRAM = """
from safetensors import save_file
a = arange(6, dtype=float32).reshape(2, 3) * 0.5
save_npy(a.T, "t.npy")
save_npy(tensor([True, False]), "b.npy")
save_npy(arange(3, dtype=int64) - 1, "i.npy")
save_npy(tensor(2.5, dtype=float64), "s.npy")
save_npy(zeros(2, 0), "e.npy")
save_npy(tensor([1.5, -0.25]).half(), "h.npy")
save_file({"w": a, "i": tensor([1, -2], dtype=int32), "h": tensor([1.5, -2.0]).bfloat16(),
           "x": tensor([0.25]).half(), "m": tensor([False, True])}, "m.safetensors", metadata={"k": "v"})
"""

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)


def read_npy(path):
    raw = path.read_bytes()
    check(raw[:6] == b"\x93NUMPY", f"{path.name}: magic string")
    check(raw[6:8] == b"\x01\x00", f"{path.name}: version 1.0")
    (n,) = struct.unpack("<H", raw[8:10])
    header = raw[10:10 + n].decode("latin1")
    check(header.endswith("\n"), f"{path.name}: header ends in a newline")
    check((10 + n) % 64 == 0, f"{path.name}: data 64-byte aligned")
    d = ast.literal_eval(header)
    check(set(d) == {"descr", "fortran_order", "shape"}, f"{path.name}: header keys {sorted(d)}")
    check(d["fortran_order"] is False, f"{path.name}: C order")
    return d["descr"], d["shape"], raw[10 + n:]


def unpack(fmt, data):
    return list(struct.unpack("<" + fmt * (len(data) // struct.calcsize(fmt)), data))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--thn", required=True)
    args = parser.parse_args()
    thn = str(Path(args.thn).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "w.thn").write_text(PROGRAM)
        r = subprocess.run([thn, "run", "w.thn"], cwd=tmp, capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stderr)
            return 1
        expect = {"t.npy": ("<f4", (3, 2), "f", [0.0, 1.5, 0.5, 2.0, 1.0, 2.5]),
                  "b.npy": ("|b1", (2,), "?", [True, False]),
                  "i.npy": ("<i8", (3,), "q", [-1, 0, 1]),
                  "s.npy": ("<f8", (), "d", [2.5]),
                  "e.npy": ("<f4", (2, 0), "f", []),
                  "h.npy": ("<f2", (2,), "e", [1.5, -0.25])}
        for name, (descr, shape, fmt, values) in expect.items():
            got_descr, got_shape, data = read_npy(tmp / name)
            check(got_descr == descr, f"{name}: descr {got_descr!r}, expected {descr!r}")
            check(got_shape == shape, f"{name}: shape {got_shape}, expected {shape}")
            check(unpack(fmt, data) == values, f"{name}: values {unpack(fmt, data)}, expected {values}")
        raw = (tmp / "m.safetensors").read_bytes()
        (n,) = struct.unpack("<Q", raw[:8])
        check((8 + n) % 8 == 0, "safetensors: buffer 8-byte aligned")
        header = json.loads(raw[8:8 + n])
        buffer = raw[8 + n:]
        check(header.pop("__metadata__", None) == {"k": "v"}, "safetensors: __metadata__")
        spans = sorted(tuple(v["data_offsets"]) for v in header.values())
        check(spans[0][0] == 0 and spans[-1][1] == len(buffer) and
              all(a[1] == b[0] for a, b in zip(spans, spans[1:])), f"safetensors: offsets {spans} cover the buffer")
        expect = {"w": ("F32", [2, 3], "f", [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]),
                  "i": ("I32", [2], "i", [1, -2]),
                  "h": ("BF16", [2], "H", [0x3FC0, 0xC000]),
                  "x": ("F16", [1], "e", [0.25]),
                  "m": ("BOOL", [2], "?", [False, True])}
        for name, (dtype, shape, fmt, values) in expect.items():
            info = header.get(name, {})
            check(info.get("dtype") == dtype, f"safetensors {name}: dtype {info.get('dtype')}")
            check(info.get("shape") == shape, f"safetensors {name}: shape {info.get('shape')}")
            begin, end = info.get("data_offsets", [0, 0])
            check(unpack(fmt, buffer[begin:end]) == values, f"safetensors {name}: values {unpack(fmt, buffer[begin:end])}")
    for f in FAILURES:
        print("FAIL", f)
    print(f"file formats: {'ok' if not FAILURES else f'{len(FAILURES)} failed'}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
