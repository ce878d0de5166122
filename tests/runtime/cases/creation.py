"""Creation ops (tensor, zeros/ones/empty/full, *_like, arange, linspace, eye)
and introspection (shape, dtype, device, ndim, size, stride, dim, numel,
is_contiguous, storage_offset, item, tolist); multinomial's checks."""
import torch
from torch_cases import case

DTYPES = [torch.bool, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32, torch.float64]
CPU = torch.device("cpu")

# ---- torch.tensor ----

DATA = {
    "bools": [True, False, True],
    "ints": [[1, 2, 3], [4, 5, 6]],
    "floats": [[1.5, -2.0], [0.25, 3.0]],
    "bools and ints": [True, 2, -3],
    "ints and floats": [1, 2.5, -3],
    "bools and floats": [True, 2.5],
    "tuples": ((1, 2), (3, 4)),
    "a list of tuples": [(1.5, 2), (3, 4)],
    "a number": 7,
    "a float": -2.5,
    "a bool": True,
    "an empty list": [],
    "empty rows": [[], []],
    "empty rows after the first are not checked": [[], [1]],
    "3-d": [[[1], [2]], [[3], [4]], [[5], [6]]],
    "size-1 dims": [[1], [2]],
    "large ints": [2 ** 40, -2 ** 50],
    "a large int with a float": [2 ** 62, 1.0],
    "special floats": [float("inf"), float("-inf"), float("nan"), -0.0, 1e-30],
    "floats beyond float32 become inf": [1e300, -1e300],
}
for name, data in DATA.items():
    @case(f"tensor of {name}")
    def _(c, data=data):
        c.fn("tensor", data)

for dt in DTYPES:
    @case(f"tensor with dtype={dt}")
    def _(c, dt=dt):
        c.fn("tensor", [[1.7, -1.7, 0.0], [2.5, 100.0, 1.0]] if dt != torch.bool else [[1.7, 0.0, -0.5]], dtype=dt)
        c.fn("tensor", [[3, -2, 0], [1, 0, 7]], dtype=dt)
        c.fn("tensor", [True, False], dtype=dt)
        c.fn("tensor", 5, dtype=dt)

@case("tensor with device=cpu")
def _(c):
    c.fn("tensor", [1, 2], device=CPU)
    c.fn("tensor", [1.5], dtype=torch.float64, device=CPU)

@case("tensor of 0-dim tensors in a list promotes with them")
def _(c):
    a = c.input(torch.tensor(1.5, dtype=torch.float64))
    b = c.input(torch.tensor(2, dtype=torch.int32))
    h = c.input(torch.tensor(1.5, dtype=torch.float16))
    t = c.input(torch.tensor(True))
    c.fn("tensor", [a, 2])
    c.fn("tensor", [1.5, b])
    c.fn("tensor", [b, 3])
    c.fn("tensor", [h, 2])
    c.fn("tensor", [h, 2.5])
    c.fn("tensor", [t, False])
    c.fn("tensor", [[b], [4]])
    c.fn("tensor", [b], dtype=torch.float16)

@case("tensor of one-element tensors in a list")
def _(c):
    a = c.input(torch.tensor([1.5]))
    b = c.input(torch.tensor([[2.5]]))
    c.fn("tensor", [a, b])
    c.fn("tensor", [a, 3])

@case("tensor of rows that are tensors")
def _(c):
    r = c.input(torch.tensor([3, 4]))
    c.fn("tensor", [[1, 2], r])

@case("tensor of a tensor copies, keeping a dense layout")
def _(c):
    x = c.input(torch.arange(6.).reshape(2, 3))
    xt = c.method(x, "t")
    c.fn("tensor", x)
    c.fn("tensor", xt)
    c.fn("tensor", xt, dtype=torch.int64)
    c.fn("tensor", x, dtype=torch.bool)

@case("tensor of a sliced or expanded tensor is contiguous")
def _(c):
    x = c.input(torch.arange(6.))
    c.fn("tensor", c.method(x, "narrow", 0, 1, 3))
    y = c.input(torch.arange(3.))
    c.fn("tensor", c.method(y, "expand", 2, 3))

@case("tensor of a tensor is a copy, not an alias")
def _(c):
    x = c.input(torch.tensor([1, 2, 3]))
    y = c.fn("tensor", x)
    c.method(y, "fill_", 9)

TENSOR_ERRORS = {
    "ragged at dim 1": [[1, 2], [3, 4, 5]],
    "ragged, shorter": [[1, 2], [3]],
    "ragged at dim 2": [[[1], [2]], [[3], [4, 5]]],
    "ragged, empty after non-empty": [[1], []],
    "a number where a sequence is expected": [[1, 2], 3],
    "a float where a sequence is expected": [[1, 2], 3.5],
    "a list where an int is expected": [1, [2, 3]],
    "a tuple where an int is expected": [1, (2, 3)],
    "a list where a float is expected": [1.5, [2, 3]],
    "a list where a bool is expected": [True, [2, 3]],
    "None": None,
    "None in a list": [1, None],
    "a string": "a",
    "a string in a list": [1, "a"],
}
for name, data in TENSOR_ERRORS.items():
    @case(f"tensor error: {name}")
    def _(c, data=data):
        c.fn("tensor", data)

@case("tensor error: None with a float dtype")
def _(c):
    c.fn("tensor", [1, None], dtype=torch.float32)

@case("tensor error: None with an int dtype")
def _(c):
    c.fn("tensor", [1, None], dtype=torch.int64)

@case("tensor error: a list where a float16 is expected")
def _(c):
    c.fn("tensor", [1, [2, 3]], dtype=torch.float16)

@case("tensor error: int32 overflow")
def _(c):
    c.fn("tensor", [2 ** 40], dtype=torch.int32)

@case("tensor error: int32 overflow, negative")
def _(c):
    c.fn("tensor", [-2 ** 31 - 1], dtype=torch.int32)

@case("tensor error: int32 overflow from a float")
def _(c):
    c.fn("tensor", [2.0 ** 31 - 0.5], dtype=torch.int32)

@case("tensor error: int64 overflow from a float")
def _(c):
    c.fn("tensor", [1e30], dtype=torch.int64)

@case("tensor error: inf to int64")
def _(c):
    c.fn("tensor", [float("inf")], dtype=torch.int64)

@case("tensor error: nan to int32")
def _(c):
    c.fn("tensor", [float("nan")], dtype=torch.int32)

@case("tensor error: a 0-dim tensor overflowing int32")
def _(c):
    t = c.input(torch.tensor(2 ** 40))
    c.fn("tensor", [t], dtype=torch.int32)

@case("tensor: the int32 edges fit")
def _(c):
    c.fn("tensor", [2 ** 31 - 1, -2 ** 31, 2.0 ** 31 - 1], dtype=torch.int32)

@case("tensor: huge values into float16, bfloat16 and bool are not checked")
def _(c):
    c.fn("tensor", [1e10, 2 ** 40], dtype=torch.float16)
    c.fn("tensor", [1e300], dtype=torch.bfloat16)
    c.fn("tensor", [2 ** 40, 0], dtype=torch.bool)

@case("tensor error: a two-element tensor in a list, float")
def _(c):
    t = c.input(torch.tensor([1.0, 2.0]))
    c.fn("tensor", [t])

@case("tensor error: a two-element tensor in a list, int")
def _(c):
    t = c.input(torch.tensor([1, 2]))
    c.fn("tensor", [t])

@case("tensor error: a float tensor where an int is expected")
def _(c):
    t = c.input(torch.tensor(1.5))
    c.fn("tensor", [t], dtype=torch.int64)

@case("tensor error: an empty tensor in a list")
def _(c):
    t = c.input(torch.tensor([]))
    c.fn("tensor", [t])

# ---- zeros, ones, empty, full ----

for op in ["zeros", "ones"]:
    @case(f"{op}: sizes as varargs, tuple, list; every dtype")
    def _(c, op=op):
        c.fn(op, 2, 3)
        c.fn(op, (2, 3))
        c.fn(op, [4])
        c.fn(op, ())
        c.fn(op, [])
        c.fn(op, 3)
        c.fn(op, 2, 0, 3)
        c.fn(op, 1, 1)
        for dt in DTYPES:
            c.fn(op, 2, 2, dtype=dt)
        c.fn(op, (2,), dtype=torch.float64, device=CPU)

    @case(f"{op} error: negative size")
    def _(c, op=op):
        c.fn(op, 2, -3)

@case("empty: shape, dtype and strides (values written afterwards)")
def _(c):
    for dt in DTYPES:
        e = c.fn("empty", 2, 3, dtype=dt)
        c.method(e, "zero_")
    c.fn("empty", 0)
    c.fn("empty", (2, 0))
    e = c.fn("empty", ())
    c.method(e, "fill_", 3)

@case("empty error: negative size")
def _(c):
    c.fn("empty", -1)

@case("full infers its dtype from the value")
def _(c):
    c.fn("full", (2, 3), 1.5)
    c.fn("full", (2,), 7)
    c.fn("full", (2,), True)
    c.fn("full", (), 7.5)
    c.fn("full", [], 2)
    c.fn("full", (2, 0), 1.0)
    c.fn("full", (2,), float("nan"))
    c.fn("full", (2,), float("inf"), dtype=torch.float16)

@case("full with dtype converts the value")
def _(c):
    for dt in DTYPES:
        c.fn("full", (2, 2), 2.75, dtype=dt)
        c.fn("full", (3,), -3, dtype=dt)
    c.fn("full", (2,), 1.5, dtype=torch.bool)
    c.fn("full", (2,), -1, dtype=torch.bool)
    c.fn("full", (2,), 1e300, dtype=torch.bool)
    c.fn("full", (2,), 1e300, dtype=torch.float64)
    c.fn("full", (2,), -2 ** 31, dtype=torch.int32)
    c.fn("full", (2,), 65504.0, dtype=torch.float16)
    c.fn("full", (2,), 2, device=CPU)

FULL_OVERFLOWS = {
    "float32": (1e300, None),
    "float32, negative": (-1e300, None),
    "float32 just above its max": (3.4028235e38, torch.float32),
    "int32": (2 ** 40, torch.int32),
    "int32, below": (-2 ** 31 - 1, torch.int32),
    "int32 from a float": (2.0 ** 31 - 0.5, torch.int32),
    "nan to int32": (float("nan"), torch.int32),
    "int64 from a float": (1e30, torch.int64),
    "inf to int64": (float("inf"), torch.int64),
    "float16": (70000, torch.float16),
    "float16 from a float": (65519.0, torch.float16),
    "bfloat16": (1e39, torch.bfloat16),
}
for name, (v, dt) in FULL_OVERFLOWS.items():
    @case(f"full error: {name} overflow")
    def _(c, v=v, dt=dt):
        if dt is None:
            c.fn("full", (2,), v)
        else:
            c.fn("full", (2,), v, dtype=dt)

@case("full error: negative size before overflow")
def _(c):
    c.fn("full", (-1,), 1e300)

# ---- *_like ----

LIKE_INPUTS = {
    "contiguous": lambda: torch.arange(6.).reshape(2, 3),
    "transposed": lambda: torch.arange(6.).reshape(2, 3).t(),
    "permuted 3-d": lambda: torch.arange(24).reshape(2, 3, 4).permute(2, 0, 1),
    "sliced (not dense)": lambda: torch.arange(24.).reshape(4, 6)[::2, ::3],
    "expanded": lambda: torch.arange(3.).expand(2, 3),
    "size-0": lambda: torch.zeros(2, 0),
    "size-1 dims": lambda: torch.zeros(3, 1).t(),
    "0-dim": lambda: torch.tensor(2.5),
    "int32": lambda: torch.tensor([[1, 2], [3, 4]], dtype=torch.int32).t(),
    "bool": lambda: torch.tensor([True, False]),
    "float16": lambda: torch.tensor([1.5, 2.5], dtype=torch.float16),
    "bfloat16": lambda: torch.tensor([1.5, 2.5], dtype=torch.bfloat16),
}
for name, make in LIKE_INPUTS.items():
    @case(f"zeros_like, ones_like, full_like, empty_like: {name}")
    def _(c, make=make):
        x = c.input(make())
        c.fn("zeros_like", x)
        c.fn("ones_like", x)
        c.fn("full_like", x, 3)
        c.fn("full_like", x, 1.5)
        e = c.fn("empty_like", x)
        c.method(e, "fill_", 4)

@case("*_like with dtype and device")
def _(c):
    x = c.input(torch.arange(6.).reshape(2, 3).t())
    for dt in DTYPES:
        c.fn("zeros_like", x, dtype=dt)
        c.fn("ones_like", x, dtype=dt)
        c.fn("full_like", x, 2.5, dtype=dt)
    e = c.fn("empty_like", x, dtype=torch.int32)
    c.method(e, "fill_", 4)
    c.fn("zeros_like", x, device=CPU)

@case("full_like keeps the input's dtype: an int tensor truncates a float value")
def _(c):
    x = c.input(torch.arange(3))
    c.fn("full_like", x, 1.5)
    c.fn("full_like", x, True)

@case("full_like error: overflow")
def _(c):
    x = c.input(torch.ones(2, 3).t())
    c.fn("full_like", x, 2 ** 40, dtype=torch.int32)

# ---- arange ----

@case("arange: int forms are int64")
def _(c):
    c.fn("arange", 5)
    c.fn("arange", 2, 7)
    c.fn("arange", 5, 1, -2)
    c.fn("arange", 0)
    c.fn("arange", -3, 3, 2)
    c.fn("arange", True)
    c.fn("arange", 0, 10, 3)

@case("arange: any float makes it float32")
def _(c):
    c.fn("arange", 5.0)
    c.fn("arange", 0, 1, 0.1)
    c.fn("arange", 1.0, 4)
    c.fn("arange", 1.5, 0.25, -0.25)
    c.fn("arange", -1, 1, 0.3)
    c.fn("arange", 0, 2.5)

@case("arange with dtype")
def _(c):
    for dt in DTYPES[1:]:
        c.fn("arange", 0, 10, 3, dtype=dt)
        c.fn("arange", 10, 0, -3, dtype=dt)
    c.fn("arange", -1.0, 1.0, 0.3, dtype=torch.float64)
    c.fn("arange", 0.5, 3, dtype=torch.int64)
    c.fn("arange", 0.5, 3, dtype=torch.int32)
    c.fn("arange", 0, 5, 1.5, dtype=torch.int64)
    c.fn("arange", 0, 5, 1.5, dtype=torch.int32)
    c.fn("arange", 4, dtype=torch.float64, device=CPU)
    c.fn("arange", 0, 1, 0.125, dtype=torch.bfloat16)

@case("arange: keyword end and step")
def _(c):
    c.fn("arange", start=1, end=4)
    c.fn("arange", 1, 10, step=4)

ARANGE_ERRORS = {
    "zero step": ((0, 5, 0), {}),
    "step truncated to zero": ((0, 5, 0.5), {"dtype": torch.int64}),
    "wrong sign": ((0, 5, -1), {}),
    "negative end": ((-3,), {}),
    "infinite end": ((0, float("inf")), {}),
    "nan end": ((float("nan"),), {}),
    "too many elements": ((0, 1, 1e-20), {}),
    "bool dtype": ((3,), {"dtype": torch.bool}),
}
for name, (args, kwargs) in ARANGE_ERRORS.items():
    @case(f"arange error: {name}")
    def _(c, args=args, kwargs=kwargs):
        c.fn("arange", *args, **kwargs)

# ---- linspace ----

@case("linspace: float32 by default")
def _(c):
    c.fn("linspace", 0, 10, 5)
    c.fn("linspace", 0, 1, 7)
    c.fn("linspace", -3.3, 7.7, 9)
    c.fn("linspace", 2, 2, 3)
    c.fn("linspace", 0, 1, 2)
    c.fn("linspace", 5, -5, 4)
    c.fn("linspace", 0, 1, 0)
    c.fn("linspace", 3, 1, 1)
    c.fn("linspace", 0, 1, steps=3)

@case("linspace with dtype")
def _(c):
    for dt in DTYPES[1:]:
        c.fn("linspace", -1, 1, 7, dtype=dt)
        c.fn("linspace", 10, 0, 4, dtype=dt)
    c.fn("linspace", -3.3, 7.7, 9, dtype=torch.float64)
    c.fn("linspace", 0.5, 10.5, 4, dtype=torch.int64)
    c.fn("linspace", -5, 5, 3, dtype=torch.int32)
    c.fn("linspace", 0, 10, 4, dtype=torch.int32)
    c.fn("linspace", 1, 2, 1, dtype=torch.bool)
    c.fn("linspace", 1, 2, 0, dtype=torch.bool)
    c.fn("linspace", 0, 1, 3, device=CPU)

@case("linspace error: negative steps")
def _(c):
    c.fn("linspace", 0, 1, -1)

@case("linspace error: bool")
def _(c):
    c.fn("linspace", 0, 1, 3, dtype=torch.bool)

# ---- eye ----

@case("eye")
def _(c):
    c.fn("eye", 3)
    c.fn("eye", 2, 3)
    c.fn("eye", 3, 2)
    c.fn("eye", 0)
    c.fn("eye", 3, 0)
    c.fn("eye", 1)
    c.fn("eye", 2, m=4)
    for dt in DTYPES:
        if dt != torch.bfloat16:  # PyTorch 1.13 lacks it; thn has it
            c.fn("eye", 2, 3, dtype=dt)
    c.fn("eye", 2, device=CPU)

@case("eye error: negative n")
def _(c):
    c.fn("eye", -1)

@case("eye error: negative m")
def _(c):
    c.fn("eye", 2, -1)

# ---- introspection ----

ATTR_INPUTS = {
    "contiguous 2-d": lambda: torch.arange(6.).reshape(2, 3),
    "transposed": lambda: torch.arange(6.).reshape(2, 3).t(),
    "sliced with an offset": lambda: torch.arange(12).reshape(3, 4)[1:, 1:3],
    "expanded": lambda: torch.tensor([1, 2, 3], dtype=torch.int32).expand(2, 3),
    "0-dim": lambda: torch.tensor(2.5, dtype=torch.float16),
    "size-0": lambda: torch.zeros(2, 0, 3, dtype=torch.bool),
    "size-1 dims": lambda: torch.zeros(1, 3, 1, dtype=torch.bfloat16),
    "float64 3-d": lambda: torch.arange(24, dtype=torch.float64).reshape(2, 3, 4).permute(1, 2, 0),
}
for name, make in ATTR_INPUTS.items():
    @case(f"introspection: {name}")
    def _(c, make=make):
        x = c.input(make())
        for attr in ["shape", "dtype", "device", "ndim"]:
            c.attr(x, attr)
        for m in ["size", "stride", "dim", "numel", "is_contiguous", "storage_offset", "tolist"]:
            c.method(x, m)
        c.fn("numel", x)
        if x.value.dim() > 0:
            c.method(x, "size", 0)
            c.method(x, "size", -1)
            c.method(x, "stride", dim=-1)
            c.method(x, "stride", 0)

for dt in DTYPES:
    @case(f"item and tolist: {dt}")
    def _(c, dt=dt):
        vals = [[True, False], [False, True]] if dt == torch.bool else [[1.5, -2.0], [3.25, 0.0]]
        if dt in (torch.int32, torch.int64):
            vals = [[1, -2], [3, 0]]
        x = c.input(torch.tensor(vals, dtype=dt))
        c.method(x, "tolist")
        c.method(c.method(x, "t"), "tolist")
        c.method(c.method(x, "select", 1, 0), "tolist")
        one = c.input(torch.tensor([[vals[0][0]]], dtype=dt))
        c.method(one, "item")
        c.method(one, "tolist")
        zero_dim = c.input(torch.tensor(vals[1][0], dtype=dt))
        c.method(zero_dim, "item")
        c.method(zero_dim, "tolist")

@case("tolist of size-0 tensors")
def _(c):
    c.method(c.input(torch.ones(2, 0)), "tolist")
    c.method(c.input(torch.ones(0, 2)), "tolist")

@case("tolist of an expanded tensor")
def _(c):
    x = c.input(torch.tensor([1, 2]).expand(3, 2))
    c.method(x, "tolist")

@case("item reads through an offset")
def _(c):
    x = c.input(torch.arange(6.))
    c.method(c.method(x, "narrow", 0, 4, 1), "item")

ATTR_ERRORS = {
    "item of two elements": lambda c, x: c.method(x, "item"),
    "size out of range": lambda c, x: c.method(x, "size", 5),
    "stride out of range": lambda c, x: c.method(x, "stride", -4),
}
for name, call in ATTR_ERRORS.items():
    @case(f"introspection error: {name}")
    def _(c, call=call):
        call(c, c.input(torch.ones(2, 3)))

@case("introspection error: item of an empty tensor")
def _(c):
    c.method(c.input(torch.ones(0)), "item")

for m, d in [("size", 0), ("size", -1), ("stride", 0), ("stride", 5)]:
    @case(f"introspection error: {m}({d}) of a 0-dim tensor")
    def _(c, m=m, d=d):
        c.method(c.input(torch.tensor(1.0)), m, d)

# ---- multinomial: its argument checks (the draws are thn's generator's) ----

@case("multinomial error: integer weights")
def _(c):
    c.fn("multinomial", c.input(torch.tensor([1, 2])), 1)

@case("multinomial error: 3-D weights")
def _(c):
    c.fn("multinomial", c.input(torch.ones(2, 2, 2)), 1)

@case("multinomial error: no samples")
def _(c):
    c.fn("multinomial", c.input(torch.ones(3)), 0)

@case("multinomial error: more samples than categories without replacement")
def _(c):
    c.fn("multinomial", c.input(torch.ones(3)), 4)

@case("multinomial error: a NaN weight")
def _(c):
    c.fn("multinomial", c.input(torch.tensor([1.0, float("nan")])), 1)

@case("multinomial error: weights summing to 0")
def _(c):
    c.fn("multinomial", c.input(torch.zeros(2, 3)), 1, True)

# (multinomial of float16: PyTorch 1.13's CPU refuses it, its CUDA kernel and
# thn take it: tests/lang/dtypes_either_device.thn.)
