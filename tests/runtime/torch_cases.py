"""A tiny DSL for runtime test cases whose expected values come from PyTorch.

A case is a short sequence of op calls on inputs. Each call runs in PyTorch at
once; the steps, the inputs and the final value of every variable (inputs
included, so in-place writes through views are checked) are written to a text
file that tests/runtime/test_cases.cpp replays through thn's op table.

    @case("view then add_ writes through to the base")
    def _(c):
        x = c.input(torch.arange(6.))
        y = c.method(x, "view", 2, 3)
        c.method(y, "add_", 1)

If a call raises, the case records the error (type and message) and the later
calls are skipped; thn must raise the same error.
"""
import math
import torch

CASES = []


def case(name, tol=None):
    def register(fn):
        CASES.append((name, fn, tol))
        return fn
    return register


class Var:
    def __init__(self, idx, value):
        self.idx, self.value = idx, value


class Skip(Exception):
    pass


def fmt_float(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(float(v))


def fmt_scalar(dtype, v):
    if dtype == torch.bool:
        return "1" if v else "0"
    if dtype in (torch.int32, torch.int64):
        return str(int(v))
    return fmt_float(float(v))


DTYPES = {torch.bool: "bool", torch.int32: "int32", torch.int64: "int64", torch.float16: "float16",
          torch.bfloat16: "bfloat16", torch.float32: "float32", torch.float64: "float64"}


def enc_str(s):
    return f"s{len(s.encode())}:{s}"


def enc_tensor_input(t):
    st = t.storage()
    n = len(st)
    base = torch.empty(0, dtype=t.dtype).set_(st, 0, (n,), (1,)) if n else torch.empty(0, dtype=t.dtype)
    vals = " ".join(fmt_scalar(t.dtype, v) for v in base.tolist())
    return (f"S {DTYPES[t.dtype]} {t.dim()} {' '.join(map(str, t.shape))} {' '.join(map(str, t.stride()))} "
            f"{t.storage_offset()} {n} {vals}").replace("  ", " ")


def enc_tensor_expect(t):
    flat = t.reshape(-1).tolist() if t.numel() else []
    vals = " ".join(fmt_scalar(t.dtype, v) for v in flat)
    return (f"T {DTYPES[t.dtype]} {t.dim()} {' '.join(map(str, t.shape))} {' '.join(map(str, t.stride()))} "
            f"{len(flat)} {vals}").replace("  ", " ")


def enc(v, expect=True, refs=None):
    if refs is not None and isinstance(v, Var):
        return f"@v{v.idx}"
    if isinstance(v, Var):
        v = v.value
    if v is None:
        return "N"
    if isinstance(v, bool):
        return "b1" if v else "b0"
    if isinstance(v, int):
        return f"i{v}"
    if isinstance(v, float):
        return "f" + fmt_float(v)
    if isinstance(v, str):
        return enc_str(v)
    if isinstance(v, torch.dtype):
        return "d" + DTYPES[v]
    if isinstance(v, torch.device):
        return "D" + v.type
    if isinstance(v, torch.Tensor):
        return enc_tensor_expect(v) if expect else enc_tensor_input(v)
    if isinstance(v, (list, tuple)):  # torch.Size and return_types are tuples
        tag = "L" if isinstance(v, list) else "U"
        return " ".join([f"{tag}{len(v)}"] + [enc(e, expect, refs) for e in v])
    raise TypeError(f"cannot encode {type(v)}")


class Case:
    def __init__(self):
        self.vars, self.lines, self.failed, self.nostrides = [], [], False, set()

    def _new(self, value):
        v = Var(len(self.vars), value)
        self.vars.append(v)
        return v

    def input(self, t):
        v = self._new(t)
        self.lines.append(f"input v{v.idx} {enc_tensor_input(t)}")
        return v

    def _call(self, kind, name, target, args, kwargs, strides):
        if self.failed:
            return Var(-1, None)
        unwrap = lambda a: a.value if isinstance(a, Var) else ([unwrap(e) for e in a] if isinstance(a, list) else a)
        pargs = [unwrap(a) for a in args]
        pkw = {k: unwrap(a) for k, a in kwargs.items()}
        enc_args = " ".join([str(len(args))] + [enc(a, False, refs=True) for a in args])
        enc_kw = " ".join([str(len(kwargs))] + [f"{enc_str(k)} {enc(a, False, refs=True)}" for k, a in kwargs.items()])
        idx = len(self.vars)
        self.lines.append(f"step v{idx} {kind} {enc_str(name)} {enc_args} {enc_kw}")
        try:
            if kind == "F":
                out = getattr(torch, name)(*pargs, **pkw)
            elif kind == "A":
                out = getattr(target.value, name)
            else:
                out = getattr(target.value, name)(*pargs[1:], **pkw)
        except Exception as e:  # noqa: BLE001 - the error is the expectation
            kind_name = type(e).__name__
            msg = str(e).split("\n")[0]
            self.lines.append(f"error {kind_name} {enc_str(msg)}")
            self.failed = True
            return Var(-1, None)
        if isinstance(out, torch.Size):
            out = tuple(out)
        elif type(out).__module__ == "torch.return_types":
            out = tuple(out)
        v = self._new(out)
        if not strides:
            self.nostrides.add(v.idx)
        return v

    def fn(self, name, *args, strides=True, **kwargs):
        return self._call("F", name, None, args, kwargs, strides)

    def method(self, target, name, *args, strides=True, **kwargs):
        return self._call("M", name, target, [target] + list(args), kwargs, strides)

    def attr(self, target, name):
        return self._call("A", name, target, [target], {}, True)


def write(path, cases):
    out = []
    for name, fn, tol in cases:
        c = Case()
        fn(c)
        out.append(f"case {enc_str(name)}")
        if tol:
            out.append(f"tol {tol[0]!r} {tol[1]!r}")
        out += c.lines
        for v in c.vars:
            flag = "nostrides" if v.idx in c.nostrides else "strides"
            out.append(f"expect v{v.idx} {flag} {enc(v.value)}")
        out.append("end")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
