#!/usr/bin/python3
"""Runs a .thn file under CPython + PyTorch the way `thn run FILE` does.

    cpython_thn.py run FILE [thn options, ignored]

This is the reference the tests/lang expectations come from (oracle.py), and
a stand-in for thn when testing tests/lang/run.py. The program runs with a
namespace of thn's names only (see thn_builtins):

- Python's builtins that LANGUAGE.md lists (print len range int ...);
- torch.__all__ (tensor, zeros, where, Tensor, device, ...) except the names
  that are Python's or math's (range complex pi e inf nan), plus the dtypes
  float32 float64 float16 bfloat16 int32 int64 and linear
  (torch.nn.functional.linear);
- abs all any max min pow round sum: torch's function when the first
  argument is a Tensor, else Python's;
- jit: the identity, as `jit(f)`, `jit(f, cache=...)`, `@jit` and
  `@jit(cache=...)`; `cache_hits(f)` and `cache_misses(f)` are 0, as under
  `thn run --interpret`;
- `import math` / `import time`: modules holding only the names LANGUAGE.md
  lists; `import NAME` otherwise loads NAME.thn from the script's folder, then
  from stdlib/, with the same namespace.

What thn does differently from CPython is emulated: an int result outside
int64 (of an operator, a call or an augmented assignment) raises
OverflowError, and so does an int literal above int64, before the program
runs; a tab in indentation is a TabError; constructs that are not thn
(global, generators, sets, with, match, ...) are SyntaxErrors with thn's message.

On an error, stderr gets `FILE:LINE: Kind: message` (LINE: the innermost frame
in FILE) and the exit code is 1. With THN_ORACLE_RECORD=PATH the run also
writes, as JSON, the stack of FILE lines behind every print call and the
error, for `oracle.py --write`.
"""
import ast
import builtins
import importlib.abc
import importlib.util
import json
import math
import os
import sys
import time
import struct
import types
from pathlib import Path

import numpy
import torch

STDLIB_DIR = Path(__file__).resolve().parents[2] / "stdlib"
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
PYTHON_BUILTINS = ("print len range min max abs sum int float bool str list tuple "
                   "isinstance zip enumerate round dict type repr format divmod reversed map filter "
                   "hash id callable getattr setattr hasattr delattr dir super staticmethod object "
                   "sorted any all BaseException Exception KeyboardInterrupt ArithmeticError LookupError "
                   "RuntimeError ZeroDivisionError OverflowError IndexError KeyError ValueError TypeError "
                   "NameError UnboundLocalError AttributeError AssertionError NotImplementedError "
                   "RecursionError ImportError ModuleNotFoundError SyntaxError IndentationError TabError "
                   "MemoryError OSError FileNotFoundError issubclass SystemExit iter next StopIteration").split()
NOT_FROM_TORCH = {"range", "complex", "pi", "e", "inf", "nan"}
DTYPES = "float32 float64 float16 bfloat16 int32 int64".split()
MATH_NAMES = "sqrt exp log sin cos tanh floor ceil pi e inf nan isnan isinf".split()
# What thn rejects, with thn's message (docs/language.md, "Not in thn").
NOT_THN = {
    ast.Global: "'global' is not supported in thn; pass values in and return them",
    ast.Nonlocal: "'nonlocal' is not supported in thn; pass values in and return them",
    ast.Yield: "generators ('yield') are not supported in thn",
    ast.YieldFrom: "generators ('yield') are not supported in thn",
    ast.GeneratorExp: "generator expressions are not supported in thn; use a list comprehension",
    ast.Set: "sets are not supported in thn; use a dict or a list",
    ast.SetComp: "sets are not supported in thn; use a dict or a list",
    ast.AsyncFunctionDef: "'async' and 'await' are not supported in thn",
    ast.NamedExpr: "assignment expressions (':=') are not supported in thn",
    ast.Match: "'match' is not supported in thn",
    ast.TryStar: "'except*' (exception groups) is not supported in thn",
}


def int64(value):
    if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
        raise OverflowError("int overflow: the result does not fit in a 64-bit int")
    return value


def torch_or_python(name):
    torch_fn, python_fn = getattr(torch, name), getattr(builtins, name)

    def dispatch(*args, **kwargs):
        fn = torch_fn if args and isinstance(args[0], torch.Tensor) else python_fn
        return fn(*args, **kwargs)
    dispatch.__name__ = name
    return dispatch


def jit(f=None, **options):
    return f if f is not None else (lambda g: g)


def cache_count(f):
    return 0


def save_npy(t, path):
    numpy.save(path, t.detach().cpu().numpy(), allow_pickle=False)


def load_npy(path):
    a = numpy.load(path, allow_pickle=False)
    return torch.from_numpy(numpy.array(a, dtype=a.dtype.newbyteorder("="), order="C"))


class SafetensorsModule(types.ModuleType):
    """safetensors.torch's save_file / load_file, written from the format's
    specification (Debian has no python3-safetensors): an 8-byte
    little-endian header length, a JSON header, the tensors' bytes."""
    DTYPES = {torch.bool: "BOOL", torch.int32: "I32", torch.int64: "I64", torch.float16: "F16",
              torch.bfloat16: "BF16", torch.float32: "F32", torch.float64: "F64"}

    def save_file(self, tensors, filename, metadata=None):
        order = sorted(tensors, key=lambda k: (-tensors[k].element_size(), k))
        header, buffer = {}, b""
        if metadata is not None:
            header["__metadata__"] = dict(sorted(metadata.items()))
        for name in order:
            t = tensors[name].detach().cpu().contiguous()
            data = t.view(torch.uint8).numpy().tobytes() if t.dim() else t.reshape(1).view(torch.uint8).numpy().tobytes()
            header[name] = {"dtype": self.DTYPES[t.dtype], "shape": list(t.shape),
                            "data_offsets": [len(buffer), len(buffer) + len(data)]}
            buffer += data
        text = json.dumps(dict(sorted(header.items(), key=lambda kv: (kv[0] != "__metadata__", kv[0]))),
                          separators=(",", ":"))
        text += " " * ((8 - (8 + len(text)) % 8) % 8)
        Path(filename).write_bytes(struct.pack("<Q", len(text)) + text.encode() + buffer)

    def load_file(self, filename, device="cpu"):
        raw = Path(filename).read_bytes()
        (n,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8:8 + n])
        header.pop("__metadata__", None)
        by_name = {v: k for k, v in self.DTYPES.items()}
        out = {}
        for name in sorted(header):
            info = header[name]
            begin, end = info["data_offsets"]
            data = bytearray(raw[8 + n + begin:8 + n + end])
            t = torch.frombuffer(data, dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)
            out[name] = t.view(by_name[info["dtype"]]).reshape(info["shape"]).to(device)
        return out


def thn_builtins():
    names = {name: getattr(builtins, name) for name in PYTHON_BUILTINS}
    names.update((n, getattr(torch, n)) for n in torch.__all__ if n not in NOT_FROM_TORCH
                 and n not in PYTHON_BUILTINS)
    names.update((n, getattr(torch, n)) for n in DTYPES)
    names["linear"] = torch.nn.functional.linear
    names.update((n, torch_or_python(n)) for n in set(torch.__all__) & set(vars(builtins))
                 if n not in NOT_FROM_TORCH)
    names.update(save_npy=save_npy, load_npy=load_npy)
    # thn's grad is torch.func's (functorch in 1.13); value_and_grad is JAX's order of grad_and_value
    import functorch
    names["grad"] = functorch.grad
    names["value_and_grad"] = lambda f, argnums=0, has_aux=False: (
        lambda *a, **k: tuple(reversed(functorch.grad_and_value(f, argnums, has_aux)(*a, **k))))
    names.update(jit=jit, cache_hits=cache_count, cache_misses=cache_count, __import__=thn_import, __thn_int64__=int64, __build_class__=builtins.__build_class__)
    return names


def builtin_module(name, source, attrs):
    module = types.ModuleType(name)
    for attr in attrs:
        setattr(module, attr, getattr(source, attr))
    return module


BUILTIN_MODULES = {"math": builtin_module("math", math, MATH_NAMES),
                   "time": builtin_module("time", time, ["perf_counter"]),
                   "safetensors": SafetensorsModule("safetensors")}


def thn_import(name, globals=None, locals=None, fromlist=(), level=0):
    if name in BUILTIN_MODULES:
        return BUILTIN_MODULES[name]
    # PyTorch's C++ code imports its own modules through the caller's
    # __import__, which may be this one: let loaded and dotted names through.
    if ThnFinder.find(name) is None and name not in sys.modules and "." not in name:
        raise ModuleNotFoundError(f"No module named '{name}'")
    return builtins.__import__(name, globals, locals, fromlist, level)


class CheckedInts(ast.NodeTransformer):
    """Wraps every operator, call and augmented assignment in an int64 check."""

    def wrap(self, node):
        call = ast.Call(ast.Name("__thn_int64__", ast.Load()), [node], [])
        return ast.copy_location(call, node)

    def visit_BinOp(self, node):
        return self.wrap(self.generic_visit(node))

    visit_UnaryOp = visit_Call = visit_BinOp

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if not isinstance(node.target, ast.Name):
            return node
        check = ast.Expr(self.wrap(ast.Name(node.target.id, ast.Load())))
        return [node, ast.copy_location(check, node)]


def syntax_error(message, path, line, source, kind=SyntaxError):
    text = source.splitlines()[line - 1] if 0 < line <= source.count("\n") + 1 else ""
    return kind(message, (str(path), line, 1, text))


def check_is_thn(tree, path, source):
    for number, text in enumerate(source.splitlines(), start=1):
        if "\t" in text[:len(text) - len(text.lstrip())]:
            raise syntax_error("tab character in indentation", path, number, source, TabError)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value > INT64_MAX:
            error = OverflowError(f"integer literal {node.value} does not fit in a 64-bit int")
            error.thn_lineno = node.lineno  # raised before the program runs: no frame has it
            raise error
        what = NOT_THN.get(type(node))
        if isinstance(node, ast.Constant) and type(node.value) is complex:
            what = "complex numbers are not supported in thn"
        if isinstance(node, ast.With) and any(item.optional_vars for item in node.items):
            what = ("'with ... as' is not supported in thn: the only context managers are no_grad() and "
                    "enable_grad()")
        if what:  # (an except* is placed at its first handler, as thn places it)
            line = node.handlers[0].lineno if isinstance(node, ast.TryStar) else node.lineno
            raise syntax_error(what, path, line, source)


def compile_thn(path):
    source = Path(path).read_text()
    tree = ast.parse(source, str(path))
    check_is_thn(tree, path, source)
    tree = ast.fix_missing_locations(CheckedInts().visit(tree))
    return compile(tree, str(path), "exec")


def run_in(namespace, path):
    namespace["__builtins__"] = THN_BUILTINS
    exec(compile_thn(path), namespace)


class ThnFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `import NAME` as NAME.thn in the script's folder, then in stdlib/."""
    script_dir = Path(".")

    @classmethod
    def find(cls, name):
        for folder in (cls.script_dir, STDLIB_DIR):
            if (folder / f"{name}.thn").is_file():
                return folder / f"{name}.thn"
        return None

    def find_spec(self, name, path=None, target=None):
        found = self.find(name) if path is None else None
        return found and importlib.util.spec_from_file_location(name, found, loader=self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        run_in(module.__dict__, module.__spec__.origin)
        if module.__name__ == "nn":
            use_torch_nn(module.__dict__)
        if module.__name__ == "optim":
            for name in "SGD Adam AdamW".split():
                module.__dict__[name] = getattr(torch.optim, name)


def use_torch_nn(names):
    """nn's module classes are torch.nn's (RMSNorm, which PyTorch 1.13 lacks,
    is a torch.nn.Module over nn's rms_norm)."""
    for name in "Module ModuleList Linear Embedding LayerNorm Dropout GELU ReLU SiLU Parameter".split():
        names[name] = getattr(torch.nn, name)
    rms_norm = names["rms_norm"]

    class RMSNorm(torch.nn.Module):
        def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
            super().__init__()
            shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
            self.normalized_shape, self.eps = shape, eps
            self.weight = torch.nn.Parameter(torch.ones(shape, device=device, dtype=dtype)) if elementwise_affine else None

        def forward(self, input):
            return rms_norm(input, self.normalized_shape, self.weight, self.eps)
    names["RMSNorm"] = RMSNorm


class PrintRecorder:
    """Wraps print to note, per call, the lines of FILE on the stack and the lines printed."""

    def __init__(self, path):
        self.path, self.calls = str(path), []

    def __call__(self, *args, **kwargs):
        frame, stack = sys._getframe(1), []
        while frame:
            if frame.f_code.co_filename == self.path:
                stack.append(frame.f_lineno)
            frame = frame.f_back
        sep, end = kwargs.get("sep"), kwargs.get("end")
        text = (" " if sep is None else sep).join(map(str, args)) + ("\n" if end is None else end)
        self.calls.append([stack, text.count("\n")])
        builtins.print(*args, **kwargs)


def error_line(error, path):
    if isinstance(error, SyntaxError) and error.filename == str(path):
        return error.lineno
    line, tb = getattr(error, "thn_lineno", None), error.__traceback__
    while tb:
        if tb.tb_frame.f_code.co_filename == str(path):
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def describe(error):
    return type(error).__name__, error.msg if isinstance(error, SyntaxError) else str(error)


def thn_traceback(error):
    tb, lines = error.__traceback__, []
    while tb:
        code = tb.tb_frame.f_code
        if code.co_filename.endswith(".thn"):
            lines.append(f"  at {code.co_filename}:{tb.tb_lineno} in {code.co_name}\n")
        tb = tb.tb_next
    return "".join(lines)


THN_BUILTINS = thn_builtins()


def main(argv):
    if len(argv) < 2 or argv[0] != "run":
        print("usage: cpython_thn.py run FILE", file=sys.stderr)
        return 2
    path = argv[1]
    ThnFinder.script_dir = Path(path).resolve().parent
    sys.meta_path.insert(0, ThnFinder())
    torch.set_num_threads(1)  # a reduction's order must not depend on the machine
    # thn's nn modules' parameters do not require grad (PyTorch's do), and
    # thn prints no grad_fn: autograd runs for tests/lang/autograd and examples/.
    torch.set_grad_enabled(Path(path).resolve().parent.name in ("autograd", "examples"))
    record_path = os.environ.get("THN_ORACLE_RECORD")
    recorder = PrintRecorder(path)
    if record_path:
        THN_BUILTINS["print"] = recorder
    error = None
    try:
        run_in({"__name__": "__main__", "__file__": path}, path)
    except Exception as e:
        error = e
    sys.stdout.flush()
    record = {"prints": recorder.calls, "error": None}
    if error is not None:
        kind, message = describe(error)
        line = error_line(error, path)
        first, *rest = message.splitlines() or [""]
        sys.stderr.write(thn_traceback(error))
        sys.stderr.write(f"{path}:{line}: {kind}: {first}\n" + "".join(f"  {r}\n" for r in rest))
        record["error"] = {"line": line, "kind": kind, "message": first}
    if record_path:
        Path(record_path).write_text(json.dumps(record))
    return 1 if error is not None else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
