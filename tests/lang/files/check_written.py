#!/usr/bin/env python3
"""Checks the files thn writes against the formats' specifications, with a
reader written here (struct, json and ast only: no NumPy, no thn):

- .npy: the magic string \\x93NUMPY, version 1.0, a little-endian header
  length, a header dict ('descr', 'fortran_order', 'shape') ending in a
  newline with the data 64-byte aligned, then the elements in C order;
- safetensors: an 8-byte little-endian header length, a JSON header whose
  tensors' data_offsets cover the buffer without holes or overlaps,
  `__metadata__` of strings, then the bytes;
- a save replaces its destination whole or not at all: one that fails for
  want of room (a file size limit, EFBIG, standing in for a full disk)
  leaves the old file byte for byte and no temporary beside it; a saved
  file keeps the mode of the one it replaced; a save through a symbolic
  link replaces the link's target; a FIFO is written in place.

    check_written.py --thn build/thn
"""
import argparse
import ast
import json
import os
import resource
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
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


def limited(size):
    """A child's file size limit, its SIGXFSZ ignored (a write past it is EFBIG)."""
    def setup():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return setup


def check_replacing(thn, tmp):
    def save(code, **kw):
        (tmp / "s.thn").write_text("from safetensors import save_file\n" + code)
        return subprocess.run([thn, "run", "s.thn"], cwd=tmp, capture_output=True, text=True, timeout=120, **kw)

    r = save('save_npy(arange(4.0), "old.npy")\nsave_file({"w": arange(4.0)}, "old.safetensors")\n')
    check(r.returncode == 0, f"saving the old files: {r.stderr}")
    os.chmod(tmp / "old.npy", 0o640)
    before = {p.name: p.read_bytes() for p in tmp.iterdir() if p.is_file()}
    for code in ['save_npy(zeros(100000), "old.npy")', 'save_file({"w": zeros(100000)}, "old.safetensors")']:
        r = save(code + "\n", preexec_fn=limited(64 * 1024))
        check(r.returncode == 1 and "OSError" in r.stderr and "File too large" in r.stderr,
              f"{code} past the size limit: exit {r.returncode}, {r.stderr.strip()!r}")
        after = {p.name: p.read_bytes() for p in tmp.iterdir() if p.is_file() and p.name != "s.thn"}
        check(sorted(after) == sorted(n for n in before if n != "s.thn"),
              f"{code} past the size limit: the folder holds {sorted(after)}")
        for name in ("old.npy", "old.safetensors"):
            check(after.get(name) == before[name], f"{code} past the size limit changed {name}")
    r = save('save_npy(arange(3.0), "old.npy")\n')
    check(r.returncode == 0 and read_npy(tmp / "old.npy")[1] == (3,), f"replacing old.npy: {r.stderr}")
    check(stat.S_IMODE(os.stat(tmp / "old.npy").st_mode) == 0o640, "a replaced file keeps its mode")
    os.symlink("old.npy", tmp / "link.npy")
    r = save('save_npy(arange(5.0), "link.npy")\n')
    check(r.returncode == 0 and (tmp / "link.npy").is_symlink() and read_npy(tmp / "old.npy")[1] == (5,),
          f"saving through a link replaces its target: {r.stderr}")
    os.mkfifo(tmp / "pipe.npy")
    got = []
    reader = threading.Thread(target=lambda: got.append((tmp / "pipe.npy").read_bytes()), daemon=True)
    reader.start()
    r = save('save_npy(arange(2.0), "pipe.npy")\n')
    reader.join(60)
    check(r.returncode == 0 and got and got[0][:6] == b"\x93NUMPY" and stat.S_ISFIFO(os.stat(tmp / "pipe.npy").st_mode),
          f"saving to a FIFO writes it in place: {r.stderr}")


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
    with tempfile.TemporaryDirectory() as tmp:
        check_replacing(thn, Path(tmp))
    for f in FAILURES:
        print("FAIL", f)
    print(f"file formats: {'ok' if not FAILURES else f'{len(FAILURES)} failed'}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
