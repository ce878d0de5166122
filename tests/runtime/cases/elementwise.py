"""Elementwise ops: unary, binary, where/clamp/lerp/addc*/masked_fill,
conversions, copy_/fill_/zero_, type promotion, broadcasting, in-place rules."""
import torch
from torch_cases import case

UNARY = ("neg abs exp exp2 log log2 log10 log1p expm1 sqrt rsqrt square sin cos tan sinh cosh tanh asin acos atan "
         "asinh acosh atanh sigmoid relu erf floor ceil round trunc frac sign reciprocal logical_not bitwise_not "
         "isnan isinf").split()
DTYPES = [torch.bool, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32, torch.float64]
# PyTorch 1.13's CPU lacks many float16 kernels; thn computes them in float32 (like its bfloat16 path).
HALF_MISSING_IN_TORCH = set("exp log log2 log10 log1p expm1 sqrt rsqrt sin cos tan sinh cosh tanh asin acos atan "
                            "asinh acosh atanh sigmoid relu erf floor ceil round trunc atan2".split())


def values(dtype):
    if dtype == torch.bool:
        return torch.tensor([True, False, True, True, False, False])
    if dtype in (torch.int32, torch.int64):
        return torch.tensor([-3, -1, 0, 1, 2, 7], dtype=dtype)
    return torch.tensor([-2.5, -0.5, 0.0, 0.25, 0.5, 3.0], dtype=dtype)


for op in UNARY:
    for dt in DTYPES:
        if dt == torch.float16 and op in HALF_MISSING_IN_TORCH:
            continue
        if dt == torch.bool and op == "abs":  # CPU refuses it, CUDA and thn take it (tests/lang/dtypes_either_device.thn)
            continue
        @case(f"{op} {dt}")
        def _(c, op=op, dt=dt):
            x = c.input(values(dt).reshape(2, 3))
            c.fn(op, x)
            c.method(x, op)

for op in ["exp", "neg", "abs", "floor", "logical_not", "sign", "sqrt"]:
    @case(f"{op}_ in place, through a transposed view")
    def _(c, op=op):
        base = c.input(torch.tensor([[0.5, -1.5, 2.0], [4.0, -0.25, 9.0]]))
        v = c.method(base, "t")
        c.method(v, op + "_")

@case("exp_ on an int tensor cannot cast the float result")
def _(c):
    x = c.input(torch.tensor([1, 2, 3]))
    c.method(x, "exp_")

@case("special values: nan, inf, -0.0")
def _(c):
    x = c.input(torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1e-30]))
    for op in ["sign", "relu", "isnan", "isinf", "exp", "log", "round", "floor", "sigmoid", "reciprocal", "abs"]:
        c.fn(op, x)

@case("round is half to even")
def _(c):
    x = c.input(torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999]))
    c.fn("round", x)

BINARY = ("add sub mul div floor_divide remainder fmod pow maximum minimum atan2 eq ne lt le gt ge logical_and logical_or "
          "logical_xor bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift").split()


def bvalues(dtype, second):
    if dtype == torch.bool:
        return torch.tensor([True, False, True, False] if not second else [True, True, False, False])
    if dtype in (torch.int32, torch.int64):
        return torch.tensor([7, -7, 3, 0] if not second else [2, 2, -3, 5], dtype=dtype)
    return torch.tensor([7.5, -7.5, 3.0, 0.0] if not second else [2.0, 2.5, -3.0, 5.0], dtype=dtype)


for op in BINARY:
    for dt in DTYPES:
        if dt == torch.float16 and op in HALF_MISSING_IN_TORCH:
            continue
        @case(f"{op} {dt}")
        def _(c, op=op, dt=dt):
            a = c.input(bvalues(dt, False))
            b = c.input(bvalues(dt, True))
            c.fn(op, a, b)

for op in ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "eq", "lt", "bitwise_and", "atan2"]:
    @case(f"{op} broadcasting a row, a column and a scalar")
    def _(c, op=op):
        a = c.input(torch.tensor([[1, 2, 3], [4, 5, 6]]).float())
        b = c.input(torch.tensor([[2.0], [-3.0]]))
        r = c.input(torch.tensor([0.5, -1.5, 4.0]))
        if op == "bitwise_and":
            a, b, r = [c.method(t, "long") for t in (a, b, r)]
        c.fn(op, a, b)
        c.fn(op, a, r)
        c.fn(op, b, r)
        c.fn(op, a, 3)

@case("in-place add_ through views of one base")
def _(c):
    base = c.input(torch.arange(12.0).reshape(3, 4))
    col = c.method(base, "select", 1, 2)
    c.method(col, "add_", 100)
    row = c.method(base, "select", 0, 1)
    c.method(row, "mul_", -1)
    c.method(base, "sub_", c.input(torch.tensor([1.0, 2.0, 3.0, 4.0])), alpha=2)

@case("add with alpha, int and float")
def _(c):
    a = c.input(torch.tensor([1, 2, 3]))
    b = c.input(torch.tensor([10, 20, 30]))
    c.fn("add", a, b, alpha=3)
    c.fn("sub", a, b, alpha=-2)
    c.fn("add", c.method(a, "float"), b, alpha=0.5)

for expr in ["add alpha float int", "add alpha bool float", "sub bools", "sub bool int"]:
    @case(f"error: {expr}")
    def _(c, expr=expr):
        i = c.input(torch.tensor([1, 2]))
        f = c.input(torch.tensor([1.0, 2.0]))
        bb = c.input(torch.tensor([True, False]))
        if expr == "add alpha float int":
            c.fn("add", i, i, alpha=1.5)
        elif expr == "add alpha bool float":
            c.fn("add", f, f, alpha=True)
        elif expr == "sub bools":
            c.fn("sub", bb, bb)
        else:
            c.fn("sub", bb, i)

@case("error: shapes that do not broadcast")
def _(c):
    c.fn("add", c.input(torch.ones(2, 3)), c.input(torch.ones(4)))

@case("error: in-place result shape must equal the broadcast shape")
def _(c):
    c.method(c.input(torch.ones(3)), "add_", c.input(torch.ones(2, 3)))

@case("error: writing into an expanded tensor")
def _(c):
    x = c.input(torch.ones(3))
    e = c.method(x, "expand", 2, 3)
    c.method(e, "add_", 1)

@case("error: partially overlapping in-place input")
def _(c):
    x = c.input(torch.arange(5.0))
    a = c.method(x, "narrow", 0, 1, 4)
    b = c.method(x, "narrow", 0, 0, 4)
    c.method(a, "add_", b)

@case("error: partially overlapping copy_")
def _(c):
    x = c.input(torch.arange(5.0))
    a = c.method(x, "narrow", 0, 1, 4)
    b = c.method(x, "narrow", 0, 0, 4)
    c.method(a, "copy_", b)

@case("in-place with itself is allowed")
def _(c):
    x = c.input(torch.arange(5.0))
    c.method(x, "mul_", x)

@case("error: in-place result type cannot be cast")
def _(c):
    c.method(c.input(torch.tensor([1, 2])), "add_", 1.5)

@case("error: bool in-place from int")
def _(c):
    c.method(c.input(torch.tensor([True])), "add_", 1)

@case("integer division by zero")
def _(c):
    c.fn("floor_divide", c.input(torch.tensor([5, 2])), 0)

@case("integer remainder by zero")
def _(c):
    c.fn("remainder", c.input(torch.tensor([5, 2])), 0)

@case("integer fmod by zero")
def _(c):
    c.fn("fmod", c.input(torch.tensor([5, 2])), c.input(torch.tensor([1, 0])))

@case("fmod takes the dividend's sign; a float divisor of 0 gives NaN; in place")
def _(c):
    x = c.input(torch.tensor([5.5, -5.5, 3.0, -0.0]))
    c.fn("fmod", x, -1.5)
    c.method(x, "fmod", 0.0)
    c.method(c.input(torch.tensor([7, -7], dtype=torch.int32)), "fmod", 2.5)
    c.method(x, "fmod_", c.input(torch.tensor([2.0, 2.0, -2.0, 3.0])))

@case("div rounding modes")
def _(c):
    a = c.input(torch.tensor([7, -7, 7, -7]))
    b = c.input(torch.tensor([2, 2, -2, -2]))
    af = c.method(a, "double")
    for mode in ["trunc", "floor"]:
        c.fn("div", a, b, rounding_mode=mode)
        c.fn("div", af, b, rounding_mode=mode)
    c.fn("div", a, b)

@case("error: div with a bad rounding mode")
def _(c):
    c.fn("div", c.input(torch.tensor([5, 2])), 2, rounding_mode="x")

@case("error: integer to a negative scalar power")
def _(c):
    c.fn("pow", c.input(torch.tensor([5, 2])), -1)

@case("pow: scalar base, tensor exponent, float exponent")
def _(c):
    i = c.input(torch.tensor([1, 2, 3]))
    c.fn("pow", 2, i)
    c.fn("pow", 2.5, i)
    c.fn("pow", i, 2.5)
    c.fn("pow", i, c.input(torch.tensor([-1, 0, 2])))
    c.fn("pow", c.input(torch.tensor([True, False])), 2)
    c.fn("pow", c.input(torch.tensor([4.0, 9.0])), 0.5)

@case("shifts")
def _(c):
    a = c.input(torch.tensor([3, -3, 1, 5]))
    b = c.input(torch.tensor([1, 70, 62, 0]))
    c.fn("bitwise_left_shift", a, b)
    c.fn("bitwise_right_shift", a, b)

@case("error: shift of floats")
def _(c):
    c.fn("bitwise_left_shift", c.input(torch.tensor([1.0])), 1)

PROMO = [torch.bool, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32, torch.float64]
for da in PROMO:
    for db in PROMO:
        @case(f"promotion {da} + {db}, 0-dim and scalars")
        def _(c, da=da, db=db):
            a = c.input(torch.ones(2, dtype=da))
            b = c.input(torch.ones(2, dtype=db))
            z = c.input(torch.tensor(1, dtype=db))
            c.fn("mul", a, b)
            c.fn("mul", a, z)

for s in [True, 2, 2.5]:
    for dt in PROMO:
        @case(f"promotion {dt} with Python {type(s).__name__}")
        def _(c, s=s, dt=dt):
            c.fn("mul", c.input(torch.ones(2, dtype=dt)), s)
            c.fn("mul", c.input(torch.tensor(1, dtype=dt)), s)

@case("where")
def _(c):
    cond = c.input(torch.tensor([[True, False, True], [False, False, True]]))
    x = c.input(torch.arange(6).reshape(2, 3))
    y = c.input(torch.tensor([-1.5, -2.5, -3.5]))
    c.fn("where", cond, x, y)
    c.fn("where", cond, x, 0)
    c.fn("where", cond, 1.0, 2)
    c.method(x, "where", cond, y)

@case("error: where with an int condition")
def _(c):
    c.fn("where", c.input(torch.tensor([1, 0])), 1.0, 2.0)

@case("clamp")
def _(c):
    x = c.input(torch.tensor([-2.0, -0.5, 0.5, 2.0, float("nan")]))
    c.fn("clamp", x, -1, 1)
    c.fn("clamp", x, min=0)
    c.fn("clamp", x, max=0.25)
    c.fn("clamp", x, min=c.input(torch.tensor([0.0, 0.0, 1.0, 1.0, 0.0])), max=c.input(torch.tensor(1.5)))
    i = c.input(torch.tensor([1, 5, 9]))
    c.fn("clamp", i, 2, 6)
    c.fn("clamp", i, 0.5)
    c.method(i, "clamp_", 3, 4)
    c.method(x, "clamp_", max=1.0)

@case("isclose")
def _(c):
    inf, nan = float("inf"), float("nan")
    x = c.input(torch.tensor([1.0, 2.0, inf, nan, 1e10, -0.0, 1e-9, -inf]))
    y = c.input(torch.tensor([1.0 + 1e-6, 2.1, inf, nan, 1.00001e10, 0.0, 0.0, inf]))
    c.fn("isclose", x, y)
    c.fn("isclose", x, y, equal_nan=True)
    c.fn("isclose", x, y, rtol=0.1, atol=1e-3)
    c.fn("isclose", x, y, rtol=0.0, atol=0.0)
    c.fn("isclose", x, y, atol=inf)
    h = c.input(torch.tensor([1000.0, 0.1, 3.0], dtype=torch.float16))
    c.fn("isclose", h, c.input(torch.tensor([1000.5, 0.6, 3.001], dtype=torch.float16)), rtol=1e-3)
    c.fn("isclose", c.input(torch.tensor([1, 2, 5])), c.input(torch.tensor([1, 3, 3])), atol=1)
    c.fn("isclose", c.input(torch.tensor([True, False])), c.input(torch.tensor([True, True])))
    c.fn("isclose", c.input(torch.zeros(2, 1)), c.input(torch.zeros(3)))

@case("error: isclose of two dtypes")
def _(c):
    c.fn("isclose", c.input(torch.tensor([1.0])), c.input(torch.tensor([1])))

@case("error: isclose with a negative rtol")
def _(c):
    c.fn("isclose", c.input(torch.tensor([1.0])), c.input(torch.tensor([1.0])), rtol=-0.5)

@case("error: clamp_ of ints with a float bound")
def _(c):
    c.method(c.input(torch.tensor([1, 2])), "clamp_", 0.5)

@case("error: clamp with no bounds")
def _(c):
    c.fn("clamp", c.input(torch.tensor([1, 2])))

@case("lerp")
def _(c):
    a = c.input(torch.tensor([0.0, 1.0, 2.0, 3.0]))
    b = c.input(torch.tensor([10.0, 10.0, -10.0, 3.0]))
    c.fn("lerp", a, b, 0.25)
    c.fn("lerp", a, b, 0.75)
    c.fn("lerp", a, b, c.input(torch.tensor([0.0, 0.5, 1.0, 2.0])))
    c.method(a, "lerp_", b, 0.5)

@case("error: lerp of ints")
def _(c):
    c.fn("lerp", c.input(torch.tensor([1, 2])), c.input(torch.tensor([3, 4])), 0.5)

@case("addcmul and addcdiv")
def _(c):
    s = c.input(torch.tensor([1.0, 2.0, 3.0]))
    t1 = c.input(torch.tensor([[1.0], [2.0]]))
    t2 = c.input(torch.tensor([4.0, 5.0, 6.0]))
    c.fn("addcmul", s, t1, t2, value=0.5)
    c.fn("addcdiv", s, t1, t2, value=-2)
    c.fn("addcmul", c.input(torch.tensor([1, 2])), c.input(torch.tensor([3, 4])), c.input(torch.tensor([5, 6])), value=2)
    m = c.input(torch.zeros(3))
    c.method(m, "addcmul_", t2, t2, value=0.1)
    c.method(m, "addcdiv_", t2, c.input(torch.tensor([2.0, 4.0, 8.0])))

@case("error: addcdiv of integers")
def _(c):
    i = c.input(torch.tensor([1, 2]))
    c.fn("addcdiv", i, i, i)

@case("masked_fill")
def _(c):
    x = c.input(torch.arange(6.0).reshape(2, 3))
    m = c.input(torch.tensor([True, False, True]))
    c.fn("masked_fill", x, m, -1.0)
    c.method(x, "masked_fill", m, c.input(torch.tensor(7.0)))
    c.method(x, "masked_fill_", c.input(torch.tensor([[False], [True]])), 0.5)

@case("error: masked_fill with a 1-d value")
def _(c):
    c.method(c.input(torch.ones(2)), "masked_fill", c.input(torch.tensor([True, False])), c.input(torch.tensor([2.0, 3.0])))

@case("conversions")
def _(c):
    x = c.input(torch.tensor([-1.7, -0.5, 0.0, 0.5, 2.9, 300.25]))
    for m in ["float", "double", "half", "bfloat16", "int", "long", "bool"]:
        c.method(x, m)
    c.method(x, "to", torch.int32)
    c.method(x, "to", dtype=torch.float64)
    c.method(x, "to", torch.float32)
    b = c.input(torch.tensor([True, False]))
    c.method(b, "float")
    c.method(b, "long")

@case("copy_, fill_ and zero_ with broadcasting and casts")
def _(c):
    x = c.input(torch.zeros(2, 3))
    c.method(x, "copy_", c.input(torch.tensor([1, 2, 3])))
    y = c.input(torch.zeros(2, 3, dtype=torch.int64))
    c.method(y, "copy_", c.input(torch.tensor([[1.9], [-2.9]])))
    t = c.method(x, "t")
    c.method(t, "fill_", 4)
    z = c.input(torch.ones(4))
    c.method(c.method(z, "narrow", 0, 1, 2), "zero_")

@case("error: copy_ from a larger shape")
def _(c):
    c.method(c.input(torch.zeros(3)), "copy_", c.input(torch.ones(2, 3)))

@case("layout: results follow the inputs' memory order")
def _(c):
    x = c.input(torch.arange(6.0).reshape(2, 3))
    t = c.method(x, "t")
    c.fn("exp", t)
    c.fn("add", t, 1)
    c.fn("add", t, c.input(torch.ones(3, 2)))
    c.fn("mul", c.input(torch.ones(3, 1)), c.input(torch.ones(1, 4)))
    e = c.method(c.input(torch.ones(3, 1)), "expand", 3, 4)
    c.fn("neg", e)
    s = c.method(c.input(torch.arange(12.0).reshape(3, 4)), "narrow", 1, 1, 2)
    c.fn("neg", s)

@case("size-0 and 0-dim operands")
def _(c):
    e = c.input(torch.ones(0, 3))
    c.fn("add", e, c.input(torch.ones(3)))
    z = c.input(torch.tensor(2.5))
    c.fn("mul", z, z)
    c.fn("sqrt", z)
