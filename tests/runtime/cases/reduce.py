"""Reductions: sum mean prod amax amin max min argmax argmin var std all any
logsumexp, and the cumsum scan (cumsum_ in place)."""
import torch
from torch_cases import case

DTYPES = [torch.bool, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32, torch.float64]
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
NAN, INF = float("nan"), float("inf")


def values(dtype, shape=(2, 3, 4)):
    n = 1
    for s in shape:
        n *= s
    if dtype == torch.bool:
        return (torch.arange(n) % 3 == 1).reshape(shape)
    if dtype in (torch.int32, torch.int64):
        return ((torch.arange(n) * 7) % 11 - 4).to(dtype).reshape(shape)
    return (torch.randn(n) * 2).to(dtype).reshape(shape)


def non_contiguous(c, dtype):
    """A transposed, a sliced and an expanded view of small inputs."""
    t = c.method(c.input(values(dtype, (3, 4))), "t")
    s = c.input(values(dtype, (4, 6)).as_strided((4, 3), (6, 2), 1))
    e = c.input(values(dtype, (3, 1)).expand(3, 4))
    return t, s, e


# ---- sum / mean / prod ---------------------------------------------------------

for dt in DTYPES:
    @case(f"sum {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt))
        c.fn("sum", x)
        c.fn("sum", x, 1)
        c.method(x, "sum", -1, True)
        c.fn("sum", x, (0, 2))
        c.fn("sum", x, dim=[2, -3], keepdim=True)
        c.fn("sum", x, ())
        c.method(x, "sum", (0, 1, 2))

    @case(f"sum {dt}: non-contiguous inputs")
    def _(c, dt=dt):
        for v in non_contiguous(c, dt):
            c.fn("sum", v)
            c.fn("sum", v, 0)
            c.fn("sum", v, 1, True)

    @case(f"amax amin {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt))
        for op in ["amax", "amin"]:
            c.fn(op, x)
            c.fn(op, x, 1)
            c.method(x, op, (0, -1), True)
            c.fn(op, x, dim=[])

    @case(f"max min {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt, (3, 4)))
        for op in ["max", "min"]:
            c.fn(op, x)
            c.fn(op, x, 1)
            c.method(x, op, 0, True)
            c.fn(op, x, dim=-1, keepdim=True)

    @case(f"all any {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt, (3, 4)))
        for op in ["all", "any"]:
            c.fn(op, x)
            c.fn(op, x, 1)
            c.method(x, op, -2, True)

# PyTorch 1.13 has no CPU prod for float16/bfloat16 (thn takes them, as its
# CUDA kernel does: tests/lang/dtypes_either_device.thn).
for dt in [torch.bool, torch.int32, torch.int64, torch.float32, torch.float64]:
    @case(f"prod {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt, (2, 3)) if dt.is_floating_point or dt == torch.bool
                    else torch.tensor([[1, -2, 3], [2, 2, -1]], dtype=dt))
        c.fn("prod", x, 1)
        c.method(x, "prod", -2, True)
        c.fn("prod", x)

for dt in [torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32, torch.float64]:
    @case(f"argmax argmin {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt, (3, 4)))
        for op in ["argmax", "argmin"]:
            c.fn(op, x)
            c.fn(op, x, 1)
            c.method(x, op, 0, True)
            c.fn(op, x, keepdim=True)
            c.method(x, op, dim=-1)

for dt in FLOATS:
    @case(f"mean {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt))
        c.fn("mean", x)
        c.fn("mean", x, 1)
        c.method(x, "mean", (0, 2), True)
        c.fn("mean", x, dim=-1)

    @case(f"var std {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt))
        for op in ["var", "std"]:
            c.fn(op, x)
            c.fn(op, x, 1)
            c.fn(op, x, (0, 2), False, True)
            c.method(x, op, -1, unbiased=False)
            c.fn(op, x, [0, 1], keepdim=True)
            c.fn(op, x, 2, correction=0)
            c.fn(op, x, None, correction=2)

# PyTorch 1.13 has no CPU cumsum (thn's: tests/lang/dtypes_either_device.thn) or exp for float16.
for dt in [torch.int32, torch.int64, torch.bfloat16, torch.float32, torch.float64]:
    @case(f"cumsum {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt))
        c.fn("cumsum", x, 0)
        c.fn("cumsum", x, 1)
        c.method(x, "cumsum", -1)

    if not dt.is_floating_point:
        continue

    @case(f"logsumexp {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt))
        c.fn("logsumexp", x, 1)
        c.method(x, "logsumexp", (0, 2), True)
        c.fn("logsumexp", x, dim=-1)
        c.fn("logsumexp", x, [], True)

for dt in [torch.float32, torch.float64, torch.int32, torch.int64]:
    @case(f"mean prod cumsum var argmax {dt}: non-contiguous inputs")
    def _(c, dt=dt):
        for v in non_contiguous(c, dt):
            c.fn("prod", v, 0)
            c.fn("cumsum", v, 0)
            c.fn("cumsum", v, 1)
            c.fn("argmax", v, 1)
            c.fn("max", v, 0)
            c.fn("amin", v, 1)
            c.fn("any", v, 0)
            if dt.is_floating_point:
                c.fn("mean", v, 1)
                c.fn("var", v, 0)
                c.fn("logsumexp", v, 1)


@case("sum, mean, amax over many values (cascade summation, vectorised paths)")
def _(c):
    x = c.input(torch.randn(24, 40) + 0.5)
    for op in ["sum", "mean", "amax", "amin"]:
        c.fn(op, x)
        c.fn(op, x, 0)
        c.fn(op, x, 1)
    t = c.input(torch.randn(40, 24).t())
    c.fn("sum", t, 0)
    c.fn("sum", t, 1)
    c.fn("amax", t, 1)
    y = c.input((torch.randn(2, 600) * 64).round() / 64)  # rows long enough to flush the cascade's levels
    c.fn("sum", y, 1)
    c.fn("sum", y)
    c.fn("var", y, 1)
    c.fn("logsumexp", y, 1)


@case("sum over dims that do not merge: middle, outer and inner")
def _(c):
    x = c.input(torch.randn(3, 4, 5, 2))
    for dims in [(1,), (0, 2), (1, 3), (0, 1, 3), (2,), (0, 3)]:
        c.fn("sum", x, dims)
        c.fn("amax", x, dims)
        c.fn("mean", x, dims, True)
        c.fn("var", x, dims)
    p = c.method(x, "permute", 2, 0, 3, 1)
    for dims in [(0,), (1, 3), (2,), (0, 2)]:
        c.fn("sum", p, dims)
        c.fn("amin", p, dims, True)


@case("sum dtype= converts first; integer and bool sums are int64")
def _(c):
    x = c.input(torch.tensor([[0.5, 1.5, 2.5], [3.25, -1.0, 0.0]]))
    i = c.input(torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int32))
    b = c.input(torch.tensor([True, False, True]))
    c.fn("sum", x, dtype=torch.int32)
    c.fn("sum", x, 0, dtype=torch.float64)
    c.fn("sum", x, 1, dtype=torch.bool)
    c.fn("sum", i)
    c.fn("sum", i, dtype=torch.int32)
    c.fn("sum", i, 0, dtype=torch.float16)
    c.fn("sum", b)
    c.fn("sum", b, dtype=torch.bool)
    c.fn("prod", i, 1, dtype=torch.int32)
    c.fn("prod", x, 0, dtype=torch.int64)
    c.fn("prod", b, dtype=torch.bool)
    c.fn("mean", i, dtype=torch.float64)
    c.fn("mean", i, 1, dtype=torch.bfloat16)
    c.fn("mean", x, 1, dtype=torch.float64)
    c.fn("cumsum", i, 1, dtype=torch.float64)
    c.fn("cumsum", x, 0, dtype=torch.int32)


@case("reductions of 0-dim tensors")
def _(c):
    x = c.input(torch.tensor(2.5))
    i = c.input(torch.tensor(-3))
    for op in ["sum", "mean", "amax", "logsumexp"]:
        c.fn(op, x, 0)
        c.fn(op, x, -1, True)
    c.fn("sum", i)
    c.fn("prod", x, 0)
    c.fn("max", x, 0)
    c.fn("min", i, -1, True)
    c.fn("argmax", x, 0)
    c.fn("argmin", i)
    c.fn("all", x, 0)
    c.fn("any", i)
    c.fn("cumsum", x, 0)
    c.fn("cumsum", i, -1)
    c.fn("var", x)
    c.fn("std", x, 0, correction=0)


@case("reductions over size-0 and size-1 dims")
def _(c):
    e = c.input(torch.zeros(0, 3))
    ei = c.input(torch.zeros(2, 0, dtype=torch.int32))
    one = c.input(torch.tensor([[1.5], [-2.0], [4.0]]))
    c.fn("sum", e)
    c.fn("sum", e, 0)
    c.fn("sum", e, 1, True)
    c.fn("sum", ei, 1)
    c.fn("prod", e, 0)
    c.fn("prod", ei)
    c.fn("mean", e)
    c.fn("mean", e, 0)
    c.fn("amax", e, 1)
    c.fn("max", ei, 0)
    c.fn("argmin", e, 1)
    c.fn("all", e)
    c.fn("any", e, 0)
    c.fn("all", ei, 1, True)
    c.fn("var", e)
    c.fn("std", e, 0)
    c.fn("logsumexp", e, 0)
    c.fn("logsumexp", e, 1)
    c.fn("cumsum", e, 0)
    c.fn("cumsum", ei, 1)
    for op in ["sum", "prod", "amax", "argmax", "all", "cumsum", "logsumexp"]:
        c.fn(op, one, 1)
    c.fn("max", one, 1)
    c.fn("var", one, 1)
    c.fn("var", one, 1, correction=0)
    c.fn("std", one, 0, keepdim=True)


@case("NaN: propagates through amax/max, counts as the extreme for argmax/argmin")
def _(c):
    x = c.input(torch.tensor([[1.0, NAN, 3.0, NAN], [2.0, 5.0, -1.0, 0.0], [NAN, 1.0, 9.0, 2.0]]))
    for op in ["amax", "amin", "argmax", "argmin", "sum", "prod", "all", "any"]:
        c.fn(op, x, 1)
    c.fn("max", x, 1)
    c.fn("min", x, 0)
    c.fn("max", x)
    c.fn("min", x)
    c.fn("argmax", x)
    c.fn("argmin", x)
    c.fn("logsumexp", x, 1)
    c.fn("var", x, 0)


@case("ties: max/min(dim) and argmax/argmin give the first index")
def _(c):
    x = c.input(torch.tensor([[3, 1, 3, 1], [2, 2, 2, 2], [0, 5, 5, 0]]))
    b = c.input(torch.tensor([[False, True, True], [False, False, False]]))
    for op in ["argmax", "argmin"]:
        c.fn(op, x, 1)
        c.fn(op, x, 0)
        c.fn(op, x)
    c.fn("max", x, 1)
    c.fn("min", x, 1)
    c.fn("max", b, 1)
    c.fn("min", b, 0)


@case("NaN in long rows: the vector lanes of amax/amin and the tail after them")
def _(c):
    for dtype in FLOATS:
        x = torch.randn(4, 100).to(dtype)
        x[1, 37] = NAN  # a vector lane
        x[2, 99] = NAN  # the tail after the lanes
        x[3, 0] = INF
        x[3, 64] = -INF
        t = c.input(x)
        for op in ["amax", "amin"]:
            c.fn(op, t, 1)
            c.fn(op, t)
        c.fn("max", t, 1)
        c.fn("min", c.input(x[3].clone()))


@case("max/min with a tensor argument are maximum/minimum")
def _(c):
    x = c.input(torch.tensor([[1.0, -2.0, NAN], [4.0, 0.5, 6.0]]))
    y = c.input(torch.tensor([0.0, 3.0, 1.0]))
    c.fn("max", x, y)
    c.method(x, "min", y)
    i = c.input(torch.tensor([1, 5, -2], dtype=torch.int32))
    c.fn("max", y, i)


@case("logsumexp: infinite rows, integer inputs")
def _(c):
    x = c.input(torch.tensor([[INF, 1.0], [-INF, -INF], [INF, INF], [NAN, 1.0], [-INF, 2.0], [1000.0, 1000.0]]))
    c.fn("logsumexp", x, 1)
    c.fn("logsumexp", x, 0, True)
    i = c.input(torch.tensor([[1, 2, 3], [4, 5, 6]]))
    b = c.input(torch.tensor([True, False]))
    c.fn("logsumexp", i, 1)
    c.fn("logsumexp", b, 0)


@case("var/std: correction larger than the count, negative correction")
def _(c):
    x = c.input(torch.tensor([[1.0, 2.0, 4.0], [0.5, 0.5, 8.0]]))
    c.fn("var", x, 0, correction=2)
    c.fn("var", x, 1, correction=-1)
    c.fn("std", x, 1, correction=5)
    c.fn("var", x, 1, True, True)
    c.fn("std", x, None, False)


@case("cumsum: int promotion, in place through views, errors")
def _(c):
    i = c.input(torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int32))
    c.fn("cumsum", i, 1)
    c.method(i, "cumsum_", 1)
    base = c.input(torch.tensor([[0.5, 1.0, 2.0], [4.0, -1.0, 3.0]]))
    t = c.method(base, "t")
    c.method(t, "cumsum_", 0)
    c.method(t, "cumsum_", dim=-1)
    b = c.input(torch.tensor([[True, False], [True, True]]))
    c.fn("cumsum", b, 0)
    bf = c.input(torch.tensor([1.0, 2.5, 3.25, 100.0], dtype=torch.bfloat16))
    c.fn("cumsum", bf, 0)
    c.method(bf, "cumsum_", 0)


@case("cumsum_ rejects another dtype")
def _(c):
    x = c.input(torch.tensor([1.0, 2.0]))
    c.method(x, "cumsum_", 0, dtype=torch.float64)


@case("cumsum_ rejects an int64 tensor with dtype int32")
def _(c):
    x = c.input(torch.tensor([1, 2]))
    c.method(x, "cumsum_", 0, dtype=torch.int32)


@case("cumsum_ rejects an expanded tensor")
def _(c):
    x = c.input(torch.tensor([1.0, 2.0, 3.0]).expand(2, 3))
    c.method(x, "cumsum_", 0)


# ---- errors --------------------------------------------------------------------

def error_case(name, build):
    @case(name)
    def _(c):
        build(c)


ERRORS = {
    "sum: duplicate dims": lambda c: c.fn("sum", c.input(torch.ones(2, 3)), (0, -2)),
    "sum: dim out of range": lambda c: c.fn("sum", c.input(torch.ones(2, 3)), 2),
    "sum: negative dim out of range": lambda c: c.method(c.input(torch.ones(2, 3)), "sum", -3),
    "sum: 0-dim tensor, dim 1": lambda c: c.fn("sum", c.input(torch.tensor(1.0)), 1),
    "sum: 0-dim tensor, duplicate dims": lambda c: c.fn("amax", c.input(torch.tensor(1.0)), (0, 0)),
    "mean: duplicate dims": lambda c: c.fn("mean", c.input(torch.ones(2, 3)), (1, 1)),
    "mean of int64": lambda c: c.fn("mean", c.input(torch.tensor([1, 2]))),
    "mean of bool": lambda c: c.method(c.input(torch.tensor([True])), "mean"),
    "mean with an int dtype": lambda c: c.fn("mean", c.input(torch.ones(2)), dtype=torch.int64),
    "prod: dim out of range": lambda c: c.fn("prod", c.input(torch.ones(2, 3)), 5),
    "amax: duplicate dims": lambda c: c.fn("amax", c.input(torch.ones(2, 3)), (1, 1)),
    "amin: duplicate dims": lambda c: c.fn("amin", c.input(torch.ones(2, 3)), (0, 0)),
    "amax of an empty tensor without dims": lambda c: c.fn("amax", c.input(torch.zeros(0, 3))),
    "amax over a size-0 dim": lambda c: c.fn("amax", c.input(torch.zeros(0, 3)), 0),
    "amin over a size-0 dim, negative": lambda c: c.fn("amin", c.input(torch.zeros(2, 0)), -1),
    "amax over size-0 dims in a tuple": lambda c: c.fn("amax", c.input(torch.zeros(2, 0)), (0, 1)),
    "max of an empty tensor": lambda c: c.fn("max", c.input(torch.zeros(0, 3))),
    "min of an empty tensor": lambda c: c.method(c.input(torch.zeros(0)), "min"),
    "max over a size-0 dim": lambda c: c.fn("max", c.input(torch.zeros(2, 0)), -1),
    "min over a size-0 dim": lambda c: c.fn("min", c.input(torch.zeros(0, 2)), 0),
    "max: dim out of range": lambda c: c.fn("max", c.input(torch.ones(2, 3)), 5),
    "max of a 0-dim tensor, dim 1": lambda c: c.fn("max", c.input(torch.tensor(1.0)), 1),
    "argmax of an empty tensor": lambda c: c.fn("argmax", c.input(torch.zeros(0, 3))),
    "argmax over a size-0 dim": lambda c: c.fn("argmax", c.input(torch.zeros(2, 0)), -1),
    "argmin over a size-0 dim": lambda c: c.fn("argmin", c.input(torch.zeros(0, 2)), 0),
    "argmax: dim out of range": lambda c: c.fn("argmax", c.input(torch.ones(2, 3)), 5),
    "argmax of bool": lambda c: c.fn("argmax", c.input(torch.tensor([True, False]))),
    "argmin of bool": lambda c: c.method(c.input(torch.tensor([True, False])), "argmin", 0),
    "var of int64": lambda c: c.fn("var", c.input(torch.tensor([1, 2]))),
    "std of int32": lambda c: c.fn("std", c.input(torch.tensor([1, 2], dtype=torch.int32)), 0),
    "var of bool": lambda c: c.method(c.input(torch.tensor([True])), "var"),
    "var: duplicate dims": lambda c: c.fn("var", c.input(torch.ones(2, 3)), (0, 0)),
    "all: dim out of range": lambda c: c.fn("all", c.input(torch.ones(2, 3)), 5),
    "any: dim out of range": lambda c: c.fn("any", c.input(torch.ones(2, 3)), -3),
    "logsumexp: duplicate dims": lambda c: c.fn("logsumexp", c.input(torch.ones(2, 3)), (0, 0)),
    "logsumexp: dim out of range": lambda c: c.fn("logsumexp", c.input(torch.ones(2, 3)), 5),
    "logsumexp: empty dim list without keepdim": lambda c: c.fn("logsumexp", c.input(torch.ones(2, 3)), ()),
    "cumsum: dim out of range": lambda c: c.fn("cumsum", c.input(torch.ones(2, 3)), 2),
    "cumsum to bool": lambda c: c.fn("cumsum", c.input(torch.ones(2)), 0, dtype=torch.bool),
    "cumsum_ of bool": lambda c: c.method(c.input(torch.tensor([True, False])), "cumsum_", 0),
}
for name, build in ERRORS.items():
    error_case(name, build)
