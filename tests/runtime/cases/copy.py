"""Copies and gathers: clone, contiguous, cat, stack, index_select, gather,
index_copy(_), index_add(_), scatter(_), scatter_add(_), masked_select, nonzero, tril(_), triu(_), flip,
roll, repeat."""
import torch
from torch_cases import case

DTYPES = [torch.bool, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32, torch.float64]
L = torch.long


def values(dtype, *shape):
    n = 1
    for s in shape:
        n *= s
    t = torch.arange(n) - n // 3
    return (t % 2 == 0 if dtype == torch.bool else t.to(dtype) * (1.5 if dtype.is_floating_point else 1)).reshape(shape)


def transposed():  # a [3, 2] view with strides (1, 3)
    return torch.arange(6.).reshape(2, 3).t()


def sliced():  # a [2, 3] view with strides (8, 2) and an offset
    return torch.arange(24.).reshape(3, 8)[1:, 1:7:2]


def expanded():  # a [3, 4] view with strides (1, 0)
    return torch.tensor([1., 2., 3.]).reshape(3, 1).expand(3, 4)


# ---- clone, contiguous ----

for dt in DTYPES:
    @case(f"clone and contiguous {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt, 2, 3))
        c.fn("clone", x)
        c.method(x, "clone")
        c.method(x, "contiguous")

for name, make in [("transposed", transposed), ("sliced", sliced), ("expanded", expanded)]:
    @case(f"clone and contiguous of a {name} view")
    def _(c, make=make):
        x = c.input(make())
        c.fn("clone", x)
        c.method(x, "contiguous")

@case("clone of a 0-dim and an empty tensor")
def _(c):
    c.fn("clone", c.input(torch.tensor(2.5)))
    c.fn("clone", c.input(torch.ones(0, 3)))

# ---- cat ----

for dt in DTYPES:
    @case(f"cat {dt}")
    def _(c, dt=dt):
        a, b = c.input(values(dt, 2, 3)), c.input(values(dt, 1, 3))
        c.fn("cat", [a, b])
        c.fn("cat", [a, a], 1)

@case("cat along a negative dim, with keyword dim")
def _(c):
    a, b = c.input(values(torch.float32, 2, 2, 1)), c.input(values(torch.float32, 2, 2, 3))
    c.fn("cat", [a, b], -1)
    c.fn("cat", [a, b, a], dim=2)

@case("cat promotes dtypes")
def _(c):
    i, f = c.input(values(torch.int32, 2, 2)), c.input(values(torch.float16, 2, 2))
    b = c.input(values(torch.bool, 2, 2))
    d = c.input(values(torch.float64, 1, 2))
    c.fn("cat", [i, b])
    c.fn("cat", [b, f])
    c.fn("cat", [i, f, d])

@case("cat of non-contiguous views")
def _(c):
    t, s = c.input(transposed()), c.input(sliced())
    e = c.input(expanded())
    c.fn("cat", [t, t], 0)
    c.fn("cat", [s, s.value.t().contiguous().t()], 1)
    c.fn("cat", [e, e], 1)

@case("cat skips 1-D empty tensors, which still take part in promotion")
def _(c):
    a = c.input(values(torch.int32, 2, 2))
    e = c.input(torch.ones(0))
    c.fn("cat", [a, e, a], 1)
    c.fn("cat", [e, a], -1)

@case("cat of only 1-D empty tensors")
def _(c):
    e, f = c.input(torch.ones(0, dtype=torch.int32)), c.input(torch.ones(0))
    c.fn("cat", [e, f])
    c.fn("cat", [e, f], 5)

@case("cat of empty tensors of other shapes")
def _(c):
    a, b = c.input(torch.ones(0, 3)), c.input(values(torch.float32, 2, 3))
    c.fn("cat", [a, b])
    c.fn("cat", [a, a])

@case("cat of one tensor")
def _(c):
    c.fn("cat", [c.input(values(torch.float32, 2, 3))], 1)

@case("cat error: empty list")
def _(c):
    c.fn("cat", [])

@case("cat error: sizes differ outside dim")
def _(c):
    c.fn("cat", [c.input(torch.ones(2, 2)), c.input(torch.ones(3, 2))], 1)

@case("cat error: sizes differ, with an empty tensor")
def _(c):
    c.fn("cat", [c.input(torch.ones(0, 2)), c.input(torch.ones(2, 3))])

@case("cat error: different numbers of dims")
def _(c):
    c.fn("cat", [c.input(torch.ones(2, 2)), c.input(torch.ones(2))], 1)

@case("cat error: 0-dim tensor")
def _(c):
    c.fn("cat", [c.input(torch.ones(0)), c.input(torch.tensor(1.))])

@case("cat error: dim out of range")
def _(c):
    c.fn("cat", [c.input(torch.ones(2, 2))], 2)

# ---- stack ----

for dt in DTYPES:
    @case(f"stack {dt}")
    def _(c, dt=dt):
        a, b = c.input(values(dt, 2, 3)), c.input(values(dt, 2, 3).flip(0))
        c.fn("stack", [a, b])
        c.fn("stack", [a, b], 1)
        c.fn("stack", [a, b], dim=-1)

@case("stack of 0-dim tensors promotes")
def _(c):
    c.fn("stack", [c.input(torch.tensor(1)), c.input(torch.tensor(2.5))])

@case("stack of views and empty tensors")
def _(c):
    t = c.input(transposed())
    c.fn("stack", [t, t], 1)
    e = c.input(torch.ones(0))
    c.fn("stack", [e, e], 1)

@case("stack error: sizes differ")
def _(c):
    c.fn("stack", [c.input(torch.ones(2)), c.input(torch.ones(3))])

@case("stack error: numbers of dims differ")
def _(c):
    c.fn("stack", [c.input(torch.ones(2, 1)), c.input(torch.ones(2))])

@case("stack error: empty list")
def _(c):
    c.fn("stack", [])

@case("stack error: dim out of range")
def _(c):
    c.fn("stack", [c.input(torch.ones(2)), c.input(torch.ones(2))], 2)

# ---- index_select ----

for dt in DTYPES:
    @case(f"index_select {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt, 3, 4))
        c.fn("index_select", x, 0, c.input(torch.tensor([2, 0, 2])))
        c.method(x, "index_select", -1, c.input(torch.tensor([3, 1], dtype=torch.int32)))

@case("index_select of views, with a strided index")
def _(c):
    idx = c.input(torch.tensor([2, 9, 0, 9, 1])[::2])
    c.fn("index_select", c.input(transposed()), 0, idx)
    c.fn("index_select", c.input(sliced()), 1, idx)
    c.fn("index_select", c.input(expanded()), 1, idx)

@case("index_select with a 0-dim index, an empty index and a 3-D input")
def _(c):
    x = c.input(values(torch.float32, 2, 3, 4))
    c.fn("index_select", x, 1, c.input(torch.tensor(1)))
    c.fn("index_select", x, 2, c.input(torch.tensor([], dtype=L)))
    c.fn("index_select", x, dim=1, index=c.input(torch.tensor([2, 2, 0, 1])))

@case("index_select of 1-D and 0-dim inputs")
def _(c):
    c.fn("index_select", c.input(values(torch.int64, 5)), 0, c.input(torch.tensor([4, 0])))
    c.fn("index_select", c.input(torch.tensor(3.)), 0, c.input(torch.tensor([0])))

@case("index_select of an input with an empty dim")
def _(c):
    c.fn("index_select", c.input(torch.ones(2, 0)), 0, c.input(torch.tensor([1, 0])))

@case("index_select error: index out of range")
def _(c):
    c.fn("index_select", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([0, 2])))

@case("index_select error: negative index")
def _(c):
    c.fn("index_select", c.input(torch.ones(2, 3)), 1, c.input(torch.tensor([-1])))

@case("index_select error: index out of range along dim 1")
def _(c):
    c.fn("index_select", c.input(torch.ones(3, 2).t()), 1, c.input(torch.tensor([5])))

@case("index_select error: index out of range along dim 2")
def _(c):
    c.fn("index_select", c.input(torch.ones(2, 3, 4)), 2, c.input(torch.tensor([0, 4])))

@case("index_select error: negative index along dim 0")
def _(c):
    c.fn("index_select", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([-1], dtype=torch.int32)))

@case("index_select error: out of range on a 1-D input")
def _(c):
    c.fn("index_select", c.input(torch.ones(0)), 0, c.input(torch.tensor([0])))

@case("index_select error: out of range on an empty input")
def _(c):
    c.fn("index_select", c.input(torch.ones(2, 0)), 0, c.input(torch.tensor([3])))

@case("index_select error: indexed dim of size 0")
def _(c):
    c.fn("index_select", c.input(torch.ones(0, 3)), 0, c.input(torch.tensor([0])))

@case("index_select error: 2-D index")
def _(c):
    c.fn("index_select", c.input(torch.ones(2, 3)), 0, c.input(torch.zeros(1, 1)))

@case("index_select error: float index")
def _(c):
    c.fn("index_select", c.input(torch.ones(2, 3)), 0, c.input(torch.zeros(1)))

@case("index_select error: dim out of range")
def _(c):
    c.fn("index_select", c.input(torch.ones(2, 3)), 2, c.input(torch.tensor([0])))

# ---- gather ----

for dt in DTYPES:
    @case(f"gather {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt, 3, 4))
        c.fn("gather", x, 0, c.input(torch.tensor([[2, 0, 1, 1], [0, 0, 2, 1]])))
        c.method(x, "gather", -1, c.input(torch.tensor([[3], [0], [1]])))

@case("gather of views with a transposed index")
def _(c):
    idx = c.input(torch.tensor([[0, 1, 0], [1, 1, 0]]).t())
    c.fn("gather", c.input(transposed()), 1, idx)
    c.fn("gather", c.input(sliced()), 0, c.input(torch.tensor([[1, 0], [0, 0]])))
    c.fn("gather", c.input(expanded()), 1, c.input(torch.tensor([[3, 1, 1]]).expand(2, 3)))

@case("gather with an index smaller than the input, keyword args")
def _(c):
    x = c.input(values(torch.float64, 3, 4, 2))
    c.fn("gather", x, dim=1, index=c.input(torch.tensor([[[3], [0], [3]]])))

@case("gather of 0-dim and 1-D inputs")
def _(c):
    c.fn("gather", c.input(torch.tensor(2.)), 0, c.input(torch.tensor(0)))
    c.fn("gather", c.input(torch.tensor(2.)), 0, c.input(torch.tensor([0, 0])))
    c.fn("gather", c.input(torch.tensor([2., 3.])), 0, c.input(torch.tensor(1)))

@case("gather with an empty index skips the shape checks")
def _(c):
    c.fn("gather", c.input(torch.ones(2, 3)), 0, c.input(torch.zeros(0, 5, dtype=L)))

@case("gather error: index out of bounds")
def _(c):
    c.fn("gather", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([[5, 0]])))

@case("gather error: negative index")
def _(c):
    c.fn("gather", c.input(torch.ones(2, 3)), 1, c.input(torch.tensor([[-1]])))

@case("gather error: index larger than the input")
def _(c):
    c.fn("gather", c.input(torch.ones(2, 3)), 0, c.input(torch.zeros(1, 4, dtype=L)))

@case("gather error: numbers of dims differ")
def _(c):
    c.fn("gather", c.input(torch.ones(2, 3)), 0, c.input(torch.zeros(1, dtype=L)))

@case("gather error: int32 index")
def _(c):
    c.fn("gather", c.input(torch.ones(2, 3)), 0, c.input(torch.zeros(1, 1, dtype=torch.int32)))

# ---- index_copy ----

for dt in DTYPES:
    @case(f"index_copy {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt, 3, 2))
        src = c.input(values(dt, 2, 2).flip(0))
        c.fn("index_copy", x, 0, c.input(torch.tensor([2, 0])), src)
        c.method(x, "index_copy_", 1, c.input(torch.tensor([1, 0])), c.input(values(dt, 3, 2)))

@case("index_copy_ into a transposed view writes the base")
def _(c):
    base = c.input(torch.zeros(2, 3))
    t = c.method(base, "t")
    c.method(t, "index_copy_", 0, c.input(torch.tensor([2, 0])), c.input(torch.tensor([[1., 2.], [3., 4.]])))

@case("index_copy of a transposed input gives a contiguous result")
def _(c):
    c.fn("index_copy", c.input(transposed()), 0, c.input(torch.tensor([1, 0])), c.input(torch.ones(2, 2)))

@case("index_copy with a sliced source, a 0-dim index and 0-dim self")
def _(c):
    x = c.input(torch.zeros(2, 3))
    c.fn("index_copy", x, 1, c.input(torch.tensor(2)), c.input(torch.arange(24.).reshape(3, 8)[:2, 1:2]))
    c.fn("index_copy", c.input(torch.ones(3)), 0, c.input(torch.tensor(2)), c.input(torch.tensor(7.)))
    c.fn("index_copy", c.input(torch.tensor(1.)), 0, c.input(torch.tensor([0])), c.input(torch.tensor([5.])))

@case("index_copy error: index out of bounds")
def _(c):
    c.fn("index_copy", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([1, 5])), c.input(torch.ones(2, 3)))

@case("index_copy error: negative index")
def _(c):
    c.fn("index_copy", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([1, -1])), c.input(torch.ones(2, 3)))

@case("index_copy error: 2-D index")
def _(c):
    c.fn("index_copy", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([[1, 0]])), c.input(torch.ones(2, 3)))

@case("index_copy error: int32 index")
def _(c):
    c.fn("index_copy", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([1, 0], dtype=torch.int32)),
         c.input(torch.ones(2, 3)))

@case("index_copy error: dtypes differ")
def _(c):
    c.fn("index_copy", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([1, 0])), c.input(torch.ones(2, 3).double()))

@case("index_copy error: number of indices")
def _(c):
    c.fn("index_copy", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([1, 0, 1])), c.input(torch.ones(2, 3)))

@case("index_copy error: numbers of dims differ")
def _(c):
    c.fn("index_copy", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([1, 0])), c.input(torch.ones(2)))

@case("index_copy error: slice shapes differ")
def _(c):
    c.fn("index_copy", c.input(torch.ones(2, 3, 4)), 0, c.input(torch.tensor([1, 0])), c.input(torch.ones(2, 3, 5)))

@case("index_copy error: scalar source with two indices")
def _(c):
    c.fn("index_copy", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([1, 0])), c.input(torch.tensor(1.)))

@case("index_copy_ error: expanded self")
def _(c):
    x = c.input(torch.ones(1, 3).expand(2, 3))
    c.method(x, "index_copy_", 0, c.input(torch.tensor([1, 0])), c.input(torch.ones(2, 3)))

# ---- index_add ----

for dt in DTYPES:
    @case(f"index_add {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt, 3, 2))
        src = c.input(values(dt, 4, 2))
        c.fn("index_add", x, 0, c.input(torch.tensor([2, 0, 2, 1])), src)
        c.method(x, "index_add_", -1, c.input(torch.tensor([1, 1], dtype=torch.int32)), c.input(values(dt, 3, 2)))

for dt in [torch.int64, torch.float32, torch.bfloat16]:
    @case(f"index_add with alpha {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt, 3, 2))
        c.fn("index_add", x, 0, c.input(torch.tensor([1, 1])), c.input(values(dt, 2, 2)), alpha=3)
        c.method(x, "index_add_", 0, c.input(torch.tensor([0])), c.input(values(dt, 1, 2)), alpha=-2)

@case("index_add with a float alpha on floats and ints")
def _(c):
    c.fn("index_add", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([1, 0])), c.input(torch.ones(2, 3)), alpha=1.5)
    c.fn("index_add", c.input(torch.ones(2, 3, dtype=L)), 0, c.input(torch.tensor([1, 0])),
         c.input(torch.ones(2, 3, dtype=L)), alpha=1.5)
    c.fn("index_add", c.input(torch.ones(3, dtype=L)), 0, c.input(torch.tensor([1, 0])),
         c.input(torch.ones(2, dtype=L)), alpha=1.5)

@case("index_add_ into a sliced view writes the base")
def _(c):
    base = c.input(torch.zeros(3, 8))
    s = c.method(base, "narrow", 1, 2, 3)
    c.method(s, "index_add_", 1, c.input(torch.tensor([2, 0, 2])), c.input(torch.arange(9.).reshape(3, 3).t()))

@case("index_add of views")
def _(c):
    c.fn("index_add", c.input(transposed()), 0, c.input(torch.tensor([1, 0])), c.input(torch.ones(2, 2)))
    c.fn("index_add", c.input(torch.zeros(2, 4)), 1, c.input(torch.tensor([3, 3, 0])), c.input(expanded()[:, :2].t()))

@case("index_add broadcasts source slices as PyTorch 1.13 does")
def _(c):
    x = c.input(values(torch.float32, 2, 3))
    c.fn("index_add", x, 0, c.input(torch.tensor([1, 0])), c.input(torch.tensor([10., 20.])))
    c.fn("index_add", x, 0, c.input(torch.tensor([1])), c.input(torch.tensor([[10.]])))

@case("index_add of 1-D and 0-dim tensors")
def _(c):
    c.fn("index_add", c.input(torch.ones(3)), 0, c.input(torch.tensor([1])), c.input(torch.tensor(4.)))
    c.fn("index_add", c.input(torch.tensor(1.)), 0, c.input(torch.tensor([0, 0])), c.input(torch.tensor([5., 6.])))

@case("index_add with an empty index")
def _(c):
    c.fn("index_add", c.input(values(torch.float32, 2, 3)), 0, c.input(torch.tensor([], dtype=L)),
         c.input(torch.ones(0, 3)))

@case("index_add error: index out of range")
def _(c):
    c.fn("index_add", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([1, 5])), c.input(torch.ones(2, 3)))

@case("index_add error: negative index on a 1-D tensor")
def _(c):
    c.fn("index_add", c.input(torch.ones(3)), 0, c.input(torch.tensor([-1])), c.input(torch.ones(1)))

@case("index_add error: 2-D index")
def _(c):
    c.fn("index_add", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([[1, 0]])), c.input(torch.ones(2, 3)))

@case("index_add error: float index")
def _(c):
    c.fn("index_add", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([1., 0.])), c.input(torch.ones(2, 3)))

@case("index_add error: dtypes differ")
def _(c):
    c.fn("index_add", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([1, 0])), c.input(torch.ones(2, 3).double()))

@case("index_add error: number of indices")
def _(c):
    c.fn("index_add", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([1, 0, 1])), c.input(torch.ones(2, 3)))

@case("index_add error: number of indices with a 0-dim source")
def _(c):
    c.fn("index_add", c.input(torch.tensor(1.)), 0, c.input(torch.tensor([0, 0])), c.input(torch.tensor(5.)))

@case("index_add error: slices do not broadcast")
def _(c):
    c.fn("index_add", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([1, 0])), c.input(torch.ones(2, 2)))

@case("index_add error: source slice broadcasts beyond self's")
def _(c):
    c.fn("index_add", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([1, 0])), c.input(torch.ones(2, 2, 3)))

@case("index_add error: dim beyond the source")
def _(c):
    c.fn("index_add", c.input(torch.ones(2, 3)), 1, c.input(torch.tensor([1, 0])), c.input(torch.ones(2)))

@case("index_add error: 2-D source for a 1-D self")
def _(c):
    c.fn("index_add", c.input(torch.ones(3)), 0, c.input(torch.tensor([1, 0])), c.input(torch.ones(2, 2)))

@case("index_add_ error: source is self")
def _(c):
    x = c.input(torch.ones(2, 3))
    c.method(x, "index_add_", 0, c.input(torch.tensor([1, 0])), x)

@case("index_add_ error: expanded self")
def _(c):
    x = c.input(torch.ones(1, 3).expand(2, 3))
    c.method(x, "index_add_", 0, c.input(torch.tensor([1, 0])), c.input(torch.ones(2, 3)))

# ---- scatter, scatter_add ----

for dt in DTYPES:
    @case(f"scatter and scatter_add {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt, 3, 4))
        idx = c.input(torch.tensor([[2, 0, 1, 2], [0, 0, 2, 1]]))
        src = c.input(values(dt, 2, 5).flip(1))
        c.fn("scatter", x, 0, idx, src)
        c.method(x, "scatter_add", 0, idx, src)
        c.method(x, "scatter_", -1, c.input(torch.tensor([[3], [0], [3]])), c.input(values(dt, 3, 1)))
        c.method(x, "scatter_add_", 1, c.input(torch.tensor([[1, 1, 1], [0, 3, 0], [2, 2, 2]])), c.input(values(dt, 3, 4)))

@case("scatter of a number: positional, value=, converted to self's dtype")
def _(c):
    idx = c.input(torch.tensor([[1, 0, 1]]))
    c.fn("scatter", c.input(torch.zeros(2, 3)), 0, idx, 2.5)
    c.method(c.input(torch.zeros(2, 3, dtype=L)), "scatter", 0, idx, value=2.7)
    c.method(c.input(torch.zeros(2, 3, dtype=torch.bool)), "scatter", 1, idx, 3)
    c.method(c.input(torch.ones(2, 3, dtype=torch.float16)), "scatter_", 0, idx, value=-1)

@case("scatter duplicate indices: the last wins, additions in index order")
def _(c):
    c.fn("scatter", c.input(torch.zeros(3)), 0, c.input(torch.tensor([1, 1, 1, 0])), c.input(torch.tensor([1., 2., 3., 4.])))
    c.fn("scatter_add", c.input(torch.zeros(2)), 0, c.input(torch.tensor([0, 0, 0])),
         c.input(torch.tensor([1e8, 1., -1e8])))
    c.fn("scatter_add", c.input(torch.zeros(2, dtype=torch.float16)), 0, c.input(torch.tensor([1, 1, 1])),
         c.input(torch.tensor([2048., 1., 1.], dtype=torch.float16)))

@case("scatter of views: a transposed index, a sliced source, an expanded index")
def _(c):
    idx = c.input(torch.tensor([[0, 1, 0], [1, 1, 0]]).t())
    c.fn("scatter", c.input(transposed()), 1, idx, c.input(sliced().t()))
    c.fn("scatter_add", c.input(torch.zeros(3, 4)), 0, c.input(torch.tensor([[2, 0, 0, 1]]).expand(3, 4)), c.input(expanded()))
    c.fn("scatter", c.input(torch.zeros(2, 5)), 1, c.input(torch.tensor([[4, 1]]).expand(2, 2)), c.input(sliced()))

@case("scatter_ into a sliced view writes the base")
def _(c):
    base = c.input(torch.zeros(3, 8))
    s = c.method(base, "narrow", 1, 2, 3)
    c.method(s, "scatter_", 1, c.input(torch.tensor([[2, 0], [1, 1], [0, 2]])), c.input(torch.arange(9.).reshape(3, 3)))
    c.method(s, "scatter_add_", 0, c.input(torch.tensor([[2, 2, 0]])), c.input(torch.ones(1, 3)))

@case("scatter of 0-dim and 1-D tensors, an empty index")
def _(c):
    c.fn("scatter", c.input(torch.tensor(1.)), 0, c.input(torch.tensor(0)), c.input(torch.tensor(5.)))
    c.fn("scatter", c.input(torch.tensor(1.)), 0, c.input(torch.tensor([0])), c.input(torch.tensor([5.])))
    c.fn("scatter", c.input(torch.zeros(3)), 0, c.input(torch.tensor(1)), c.input(torch.tensor([7., 8.])))
    c.fn("scatter_add", c.input(torch.zeros(3)), -1, c.input(torch.tensor([2])), c.input(torch.tensor(7.)))
    c.fn("scatter", c.input(torch.ones(2, 3)), 0, c.input(torch.zeros(0, 1, dtype=L)), c.input(torch.ones(3)))

@case("scatter error: int32 index")
def _(c):
    c.fn("scatter", c.input(torch.ones(2, 3)), 0, c.input(torch.zeros(1, 1, dtype=torch.int32)), c.input(torch.ones(2, 3)))

@case("scatter_add error: dtypes differ")
def _(c):
    c.fn("scatter_add", c.input(torch.ones(2, 3)), 0, c.input(torch.zeros(1, 1, dtype=L)), c.input(torch.ones(2, 3, dtype=L)))

@case("scatter error: index out of bounds")
def _(c):
    c.fn("scatter", c.input(torch.ones(2, 3)), 0, c.input(torch.tensor([[1, 2]])), c.input(torch.ones(2, 3)))

@case("scatter_add error: negative index")
def _(c):
    c.fn("scatter_add", c.input(torch.ones(2, 3)), 1, c.input(torch.tensor([[-1]])), c.input(torch.ones(2, 3)))

@case("scatter error: index larger than src")
def _(c):
    c.fn("scatter", c.input(torch.ones(3, 4)), 0, c.input(torch.zeros(2, 4, dtype=L)), c.input(torch.ones(1, 4)))

@case("scatter error: index larger than self apart from dim, a number")
def _(c):
    c.fn("scatter", c.input(torch.ones(3, 4)), 1, c.input(torch.zeros(4, 1, dtype=L)), 1.0)

@case("scatter error: index and self dims differ")
def _(c):
    c.fn("scatter", c.input(torch.ones(3)), 0, c.input(torch.tensor([[0]])), c.input(torch.tensor([5.])))

@case("scatter error: src has fewer dims")
def _(c):
    c.fn("scatter", c.input(torch.ones(3, 4)), 0, c.input(torch.zeros(1, 1, dtype=L)), c.input(torch.ones(4)))

@case("scatter error: src has more dims")
def _(c):
    c.fn("scatter", c.input(torch.ones(3, 4)), 0, c.input(torch.zeros(1, 1, dtype=L)), c.input(torch.ones(3, 4, 2)))

@case("scatter error: a 0-dim tensor src is not a number")
def _(c):
    c.fn("scatter", c.input(torch.ones(3, 4)), 0, c.input(torch.zeros(1, 1, dtype=L)), c.input(torch.tensor(1.)))

@case("scatter error: value out of range for the dtype")
def _(c):
    c.fn("scatter", c.input(torch.ones(3, dtype=torch.int32)), 0, c.input(torch.tensor([1])), 2 ** 40)

@case("scatter_ error: src overlaps self")
def _(c):
    x = c.input(torch.arange(6.))
    c.method(x, "scatter_", 0, c.input(torch.tensor([1, 0])), c.method(x, "narrow", 0, 1, 5))

@case("scatter_add_ error: src is self")
def _(c):
    x = c.input(torch.arange(6.))
    c.method(x, "scatter_add_", 0, c.input(torch.tensor([1, 0])), x)

@case("scatter_ error: expanded self")
def _(c):
    x = c.input(torch.zeros(1, 3).expand(2, 3))
    c.method(x, "scatter_", 0, c.input(torch.tensor([[1]])), 1.0)

# ---- masked_select, nonzero ----

for dt in DTYPES:
    @case(f"masked_select and nonzero {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt, 2, 3))
        m = c.input(torch.tensor([[True, False, True], [False, True, True]]))
        c.fn("masked_select", x, m)
        c.method(x, "masked_select", m)
        c.fn("nonzero", x)
        c.method(x, "nonzero")

@case("masked_select broadcasts self and mask")
def _(c):
    x = c.input(values(torch.float32, 2, 3))
    c.fn("masked_select", x, c.input(torch.tensor([True, False, True])))
    c.fn("masked_select", c.input(torch.tensor([1., 2., 3.])), c.input(torch.tensor([[True], [False], [True]])))
    c.fn("masked_select", c.input(torch.tensor(2.)), c.input(torch.tensor(True)))

@case("masked_select follows the logical order of views")
def _(c):
    c.fn("masked_select", c.input(transposed()), c.input(torch.tensor([[True, False, True], [True, True, False]]).t()))
    c.fn("masked_select", c.input(expanded()), c.input(torch.tensor([False, True, True, False])))

@case("masked_select error: non-bool mask")
def _(c):
    c.fn("masked_select", c.input(torch.ones(2, 3)), c.input(torch.ones(2, 3, dtype=torch.int32)))

@case("masked_select error: shapes do not broadcast")
def _(c):
    c.fn("masked_select", c.input(torch.ones(2, 3)), c.input(torch.tensor([True, False])))

@case("nonzero of views, 0-dim, empty and 3-D tensors")
def _(c):
    c.fn("nonzero", c.input(transposed()))
    c.fn("nonzero", c.input(torch.tensor([[0., 1.], [2., 0.]]).t()))
    c.fn("nonzero", c.input(torch.tensor(2.)))
    c.fn("nonzero", c.input(torch.tensor(0.)))
    c.fn("nonzero", c.input(torch.ones(0, 3)))
    c.fn("nonzero", c.input(torch.tensor([[[0, 1], [2, 0]], [[0, 0], [3, 4]]])))
    c.fn("nonzero", c.input(torch.tensor([0., float("nan"), -0.0, 1e-30])))

# ---- tril, triu ----

for op in ["tril", "triu"]:
    for dt in DTYPES:
        @case(f"{op} {dt}")
        def _(c, op=op, dt=dt):
            x = c.input(values(dt, 3, 4))
            c.fn(op, x)
            c.method(x, op, 1)
            c.fn(op, x, diagonal=-1)
            c.method(x, op + "_", 2)

    @case(f"{op} with large diagonals, batches and views")
    def _(c, op=op):
        x = c.input(values(torch.float32, 2, 3, 4))
        c.fn(op, x, 5)
        c.fn(op, x, -5)
        c.fn(op, c.input(values(torch.float32, 4, 3, 2).transpose(0, 2)), 0)
        c.fn(op, c.input(transposed()))
        c.fn(op, c.input(torch.ones(0, 3)))

    @case(f"{op}_ through a transposed view writes the base")
    def _(c, op=op):
        base = c.input(values(torch.float32, 3, 3))
        t = c.method(base, "t")
        c.method(t, op + "_", -1)

    @case(f"{op} error: 1-D input")
    def _(c, op=op):
        c.fn(op, c.input(torch.ones(3)))

# ---- flip ----

for dt in DTYPES:
    @case(f"flip {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt, 2, 3))
        c.fn("flip", x, [0])
        c.method(x, "flip", 0, 1)
        c.fn("flip", x, dims=(-1,))

@case("flip of views keeps a dense layout")
def _(c):
    c.fn("flip", c.input(transposed()), [0])
    c.fn("flip", c.input(sliced()), [1])
    c.fn("flip", c.input(expanded()), [0])
    c.fn("flip", c.input(values(torch.int64, 2, 3, 4).permute(2, 0, 1)), [0, 2])

@case("flip of 0-dim and empty tensors, and no dims")
def _(c):
    c.fn("flip", c.input(torch.tensor(1.)), [0])
    c.fn("flip", c.input(torch.ones(0, 3)), [0, 1])
    c.fn("flip", c.input(values(torch.float32, 2, 3)), [])

@case("flip error: repeated dim")
def _(c):
    c.fn("flip", c.input(torch.ones(2, 3)), [0, -2])

@case("flip error: dim out of range")
def _(c):
    c.fn("flip", c.input(torch.ones(2, 3)), [2])

# ---- roll ----

for dt in DTYPES:
    @case(f"roll {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt, 3, 4))
        c.fn("roll", x, 1, 0)
        c.method(x, "roll", -3, -1)
        c.fn("roll", x, shifts=(1, 6), dims=(0, 1))
        c.fn("roll", x, 5)

@case("roll of views")
def _(c):
    c.fn("roll", c.input(transposed()), 1, 0)
    c.fn("roll", c.input(transposed()), 1)
    c.fn("roll", c.input(sliced()), [-1, 2], [1, 0])
    c.fn("roll", c.input(expanded()), 1, 1)

@case("roll of 0-dim and empty tensors")
def _(c):
    c.fn("roll", c.input(torch.tensor(1.)), 1)
    c.fn("roll", c.input(torch.ones(0, 3)), 1, 0)
    c.fn("roll", c.input(torch.ones(0, 3)), 1)
    c.fn("roll", c.input(torch.ones(0, 3)), 1, 5)
    c.fn("roll", c.input(torch.ones(3)), 0, 0)

@case("roll error: shifts and dims differ in length")
def _(c):
    c.fn("roll", c.input(torch.ones(2, 3)), [1, 2], [0])

@case("roll error: several shifts without dims")
def _(c):
    c.fn("roll", c.input(torch.ones(2, 3)), [1, 2])

@case("roll error: no shifts")
def _(c):
    c.fn("roll", c.input(torch.ones(2, 3)), [], [])

@case("roll error: dim of a 0-dim tensor")
def _(c):
    c.fn("roll", c.input(torch.tensor(1.)), 1, 0)

@case("roll error: dim out of range")
def _(c):
    c.fn("roll", c.input(torch.ones(2, 3)), 1, 2)

# ---- repeat ----

for dt in DTYPES:
    @case(f"repeat {dt}")
    def _(c, dt=dt):
        x = c.input(values(dt, 2, 3))
        c.method(x, "repeat", 2, 1)
        c.method(x, "repeat", (1, 2, 2))

@case("repeat of views, 0-dim tensors and zero repeats")
def _(c):
    c.method(c.input(transposed()), "repeat", 2, 1, 2)
    c.method(c.input(expanded()), "repeat", 1, 2)
    c.method(c.input(torch.tensor(1.5)), "repeat", 2, 3)
    c.method(c.input(values(torch.float32, 2, 3)), "repeat", 0, 2)
    c.method(c.input(torch.ones(0, 2)), "repeat", 2, 2)

@case("repeat error: fewer repeats than dims")
def _(c):
    c.method(c.input(torch.ones(2, 3)), "repeat", 2)

@case("repeat error: negative repeat")
def _(c):
    c.method(c.input(torch.ones(2, 3)), "repeat", -1, 2)


@case("sort argsort topk")
def _(c):
    inf, nan = float("inf"), float("nan")
    x = c.input(torch.tensor([[2.0, nan, 1.0, -3.5], [0.25, inf, -inf, 7.0], [1.5, -1.0, 0.0, 2.5]]))
    c.fn("sort", x)
    c.fn("sort", x, 0, True)
    c.method(x, "sort", dim=1, descending=True)
    c.fn("argsort", x, 0)
    c.method(x, "argsort", descending=True)
    c.fn("topk", x, 2)
    c.fn("topk", x, 1, 0, False)
    c.method(x, "topk", 3, largest=False)
    i = c.input(torch.tensor([5, -2, 9, 0, 3], dtype=torch.int32))
    c.fn("sort", i)
    c.fn("topk", i, 3)
    c.fn("sort", c.input(torch.tensor(4.0)))
    c.fn("topk", c.input(torch.zeros(0)), 0)

@case("error: topk k out of range")
def _(c):
    c.fn("topk", c.input(torch.tensor([1.0, 2.0])), 3)

@case("error: sort dim out of range")
def _(c):
    c.fn("sort", c.input(torch.tensor([1.0, 2.0])), 1)
