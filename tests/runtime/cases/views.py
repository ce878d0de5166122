"""View ops: results share the input's storage, with PyTorch's sizes, strides
and offsets. Cases that write through a view check the base input's final value."""
import torch
from torch_cases import case

DTYPES = [torch.bool, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32, torch.float64]


def ar(*shape, dtype=torch.float32):
    n = 1
    for s in shape:
        n *= s
    return torch.arange(n).to(dtype).reshape(shape)


def transposed():  # a (3, 4) view with strides (1, 3)
    return ar(4, 3).t()


def sliced():  # a (2, 3) view with strides (10, 2) and an offset
    return ar(4, 10)[1:3, 2:8:2]


# ---- view / reshape ----

for dt in DTYPES:
    @case(f"view {dt}")
    def _(c, dt=dt):
        x = c.input(ar(2, 3, dtype=dt))
        c.method(x, "view", 3, 2)
        c.method(x, "view", -1)
        c.method(x, "view", (1, 6, 1))


@case("view variants")
def _(c):
    x = c.input(ar(2, 3, 4))
    c.method(x, "view", 4, -1)
    c.method(x, "view", [2, 12])
    c.method(x, "view", 2, 1, 3, 1, 4)
    c.method(x, "view", size=(24,))


@case("view of a transposed tensor keeps compatible strides")
def _(c):
    x = c.input(ar(2, 3, 4).transpose(0, 1))  # (3, 2, 4) strides (4, 12, 1)
    c.method(x, "view", 3, 2, 2, 2)
    c.method(x, "view", 3, 2, 4, 1)


@case("view of a sliced tensor")
def _(c):
    x = c.input(sliced())
    c.method(x, "view", 2, 3, 1)
    c.method(x, "view", 1, 2, 3)


@case("view of an expanded tensor")
def _(c):
    x = c.input(torch.arange(3.).expand(2, 3))
    c.method(x, "view", 2, 1, 3)


@case("view of 0-dim and size-0 tensors")
def _(c):
    s = c.input(torch.tensor(5.))
    c.method(s, "view", 1)
    c.method(s, "view", 1, 1)
    c.method(s, "view", ())
    c.method(s, "view", -1)
    z = c.input(torch.zeros(0, 3))
    c.method(z, "view", 3, 0)
    c.method(z, "view", -1)
    c.method(z, "view", 0, 3)
    c.method(z, "view", 0, 1, 3)


@case("view then add_ writes through to the base")
def _(c):
    x = c.input(ar(6))
    y = c.method(x, "view", 2, 3)
    c.method(y, "add_", 1)


@case("view errors: incompatible strides")
def _(c):
    c.method(c.input(transposed()), "view", 12)


@case("view errors: wrong numel")
def _(c):
    c.method(c.input(ar(2, 3)), "view", 2, 5)


@case("view errors: two -1")
def _(c):
    c.method(c.input(ar(2, 3)), "view", -1, -1)


@case("view errors: negative size")
def _(c):
    c.method(c.input(ar(2, 3)), "view", -2, 3)


@case("view errors: -1 with zero elements")
def _(c):
    c.method(c.input(torch.zeros(0, 3)), "view", 0, -1)


@case("view errors: 0 with -1 on a non-empty tensor")
def _(c):
    c.method(c.input(ar(2, 3)), "view", 0, -1)


@case("reshape is a view when strides allow")
def _(c):
    x = c.input(ar(2, 3, 4))
    y = c.fn("reshape", x, (6, 4))
    c.method(y, "fill_", 7)


@case("reshape copies when it cannot view")
def _(c):
    x = c.input(transposed())
    y = c.method(x, "reshape", 12)
    c.method(y, "zero_")
    c.method(x, "reshape", 2, -1)
    c.method(x, "reshape", 3, 4, 1)


@case("reshape of sliced and expanded tensors")
def _(c):
    x = c.input(sliced())
    c.method(x, "reshape", -1)
    e = c.input(torch.arange(3.).expand(2, 3))
    c.method(e, "reshape", 6)
    c.method(e, "reshape", 2, 1, 3)


@case("reshape dtypes and edge shapes")
def _(c):
    for dt in DTYPES:
        x = c.input(ar(3, 2, dtype=dt).t())
        c.fn("reshape", x, [-1])
    c.fn("reshape", c.input(torch.tensor(2)), (1, 1))
    c.fn("reshape", c.input(torch.zeros(2, 0, 3).transpose(0, 2)), (0, 5, 2))


@case("reshape errors")
def _(c):
    c.method(c.input(ar(2, 3)), "reshape", 4, -1)


# ---- permute / transpose / t / T / mT ----

@case("permute")
def _(c):
    x = c.input(ar(2, 3, 4))
    c.method(x, "permute", 2, 0, 1)
    c.fn("permute", x, (-1, 0, 1))
    c.method(x, "permute", [1, 0, 2])
    y = c.method(x, "permute", dims=(2, 1, 0))
    c.method(y, "mul_", 2)
    s = c.input(torch.tensor(1.5))
    c.method(s, "permute", ())
    c.method(c.input(sliced()), "permute", 1, 0)


@case("permute errors: length")
def _(c):
    c.method(c.input(ar(2, 3)), "permute", 0)


@case("permute errors: duplicate")
def _(c):
    c.method(c.input(ar(2, 3)), "permute", 0, 0)


@case("permute errors: range")
def _(c):
    c.method(c.input(ar(2, 3)), "permute", 0, 2)


for dt in DTYPES:
    @case(f"transpose {dt}")
    def _(c, dt=dt):
        x = c.input(ar(2, 3, 4, dtype=dt))
        c.method(x, "transpose", 0, 2)
        c.fn("transpose", x, -1, 1)
        c.method(x, "transpose", 1, 1)


@case("transpose 0-dim, size-0 and write-through")
def _(c):
    s = c.input(torch.tensor(3.))
    c.method(s, "transpose", 0, -1)
    c.method(c.input(torch.zeros(0, 2)), "transpose", 0, 1)
    x = c.input(ar(2, 3))
    y = c.method(x, "transpose", dim0=1, dim1=0)
    c.method(y, "copy_", torch.tensor([[10.], [20.], [30.]]))


@case("transpose errors")
def _(c):
    c.method(c.input(ar(2, 3)), "transpose", 0, 2)


@case("t")
def _(c):
    c.method(c.input(ar(2, 3)), "t")
    c.fn("t", c.input(ar(3)))
    c.method(c.input(torch.tensor(1.)), "t")
    c.method(c.input(sliced()), "t")
    x = c.input(ar(2, 2))
    c.method(c.method(x, "t"), "sub_", 1)


@case("t errors")
def _(c):
    c.method(c.input(ar(2, 3, 4)), "t")


@case("T reverses every dim")
def _(c):
    c.attr(c.input(ar(2, 3)), "T")
    c.attr(c.input(ar(2, 3, 4)), "T")
    c.attr(c.input(ar(3)), "T")
    c.attr(c.input(torch.tensor(2.)), "T")


@case("mT swaps the last two dims")
def _(c):
    c.attr(c.input(ar(2, 3)), "mT")
    c.attr(c.input(ar(2, 3, 4)), "mT")
    c.attr(c.input(torch.tensor(2.)), "mT")


@case("mT errors")
def _(c):
    c.attr(c.input(ar(3)), "mT")


# ---- unsqueeze / squeeze ----

@case("unsqueeze strides")
def _(c):
    x = c.input(ar(2, 3))
    for d in (0, 1, 2, -1, -3):
        c.method(x, "unsqueeze", d)
    c.fn("unsqueeze", c.input(transposed()), 1)
    c.fn("unsqueeze", c.input(sliced()), 2)
    c.method(c.input(torch.tensor(True)), "unsqueeze", 0)
    c.method(c.input(torch.tensor(True)), "unsqueeze", dim=-1)
    c.method(c.input(torch.zeros(2, 0)), "unsqueeze", 1)


@case("unsqueeze write-through")
def _(c):
    x = c.input(ar(3, dtype=torch.int32))
    c.method(c.method(x, "unsqueeze", 0), "fill_", 4)


@case("unsqueeze errors")
def _(c):
    c.method(c.input(ar(2, 3)), "unsqueeze", 3)


@case("squeeze")
def _(c):
    x = c.input(ar(1, 3, 1, 2))
    c.method(x, "squeeze")
    c.method(x, "squeeze", 0)
    c.method(x, "squeeze", -2)
    c.method(x, "squeeze", 1)
    c.fn("squeeze", x, dim=2)
    c.fn("squeeze", c.input(ar(1, 1)))
    c.method(c.input(torch.tensor(1.)), "squeeze")
    c.method(c.input(torch.tensor(1.)), "squeeze", 0)
    c.method(c.input(torch.zeros(1, 0, 1)), "squeeze")
    c.method(c.input(ar(4, 1, 3)[:, :, 1:]), "squeeze")
    c.method(c.input(torch.arange(2.).expand(1, 3, 2).transpose(0, 1)), "squeeze", 1)


@case("squeeze write-through")
def _(c):
    x = c.input(ar(1, 3, dtype=torch.float16))
    c.method(c.method(x, "squeeze"), "add_", 1)


@case("squeeze errors")
def _(c):
    c.method(c.input(ar(2, 3)), "squeeze", 2)


# ---- expand / expand_as ----

for dt in DTYPES:
    @case(f"expand {dt}")
    def _(c, dt=dt):
        x = c.input(ar(3, 1, dtype=dt))
        c.method(x, "expand", 3, 4)
        c.method(x, "expand", 2, 3, 2)


@case("expand variants")
def _(c):
    x = c.input(ar(3, 1))
    c.method(x, "expand", -1, 2)
    c.method(x, "expand", (1, 3, 0))
    c.method(x, "expand", size=[3, 1])
    c.method(c.input(torch.tensor(2.)), "expand", 2, 2)
    c.method(c.input(torch.tensor(2.)), "expand", ())
    c.method(c.input(transposed()[:, :1]), "expand", 2, 3, 5)
    c.method(c.input(torch.arange(3.)), "expand", 1, 1, 3)
    c.method(c.input(torch.zeros(0, 1)), "expand", 2, 0, 4)


@case("expand_as")
def _(c):
    x = c.input(ar(1, 3))
    o = c.input(torch.zeros(2, 4, 3))
    c.method(x, "expand_as", o)
    c.method(x, "expand_as", other=c.input(torch.zeros(2, 3, dtype=torch.int64)))


@case("expand errors: size mismatch")
def _(c):
    c.method(c.input(torch.zeros(3)), "expand", 2, 4)


@case("expand errors: fewer sizes")
def _(c):
    c.method(c.input(torch.zeros(2, 3)), "expand", 3)


@case("expand errors: fewer sizes, int64")
def _(c):
    c.method(c.input(torch.zeros(2, 3, dtype=torch.int64)), "expand", 3)


@case("expand errors: -1 in a new dim")
def _(c):
    c.method(c.input(torch.zeros(3)), "expand", -1, 3)


@case("expand errors: negative size")
def _(c):
    c.method(c.input(torch.zeros(3)), "expand", 2, -2)


@case("expand_as errors")
def _(c):
    c.method(c.input(torch.zeros(3)), "expand_as", c.input(torch.zeros(2, 2)))


@case("writing into an expanded view is refused")
def _(c):
    x = c.input(ar(3))
    c.method(c.method(x, "expand", 2, 3), "add_", 1)


# ---- flatten / unflatten ----

@case("flatten")
def _(c):
    x = c.input(ar(2, 3, 4))
    c.method(x, "flatten")
    c.method(x, "flatten", 1)
    c.fn("flatten", x, 0, 1)
    c.fn("flatten", x, start_dim=-2, end_dim=-1)
    c.method(x, "flatten", 1, 1)
    c.method(c.input(torch.tensor(3.)), "flatten")
    c.method(c.input(ar(4, 3).t()), "flatten")
    c.method(c.input(ar(2, 3, 4).transpose(0, 1)), "flatten", 1)
    c.method(c.input(torch.zeros(2, 0, 3)), "flatten")


@case("flatten write-through")
def _(c):
    x = c.input(ar(2, 3, dtype=torch.bfloat16))
    c.method(c.method(x, "flatten"), "mul_", 2)


@case("flatten errors: order")
def _(c):
    c.method(c.input(ar(2, 3)), "flatten", 1, 0)


@case("flatten errors: range")
def _(c):
    c.method(c.input(ar(2, 3)), "flatten", 0, 2)


@case("unflatten")
def _(c):
    x = c.input(ar(2, 6))
    c.method(x, "unflatten", 1, (2, 3))
    c.method(x, "unflatten", -1, (3, -1))
    c.fn("unflatten", x, 0, (1, 2))
    c.fn("unflatten", x, dim=1, sizes=[6, 1])
    c.method(c.input(ar(6, 2).t()), "unflatten", 1, (2, 3))
    c.method(c.input(torch.zeros(2, 0)), "unflatten", 1, (0, 4))


@case("unflatten errors: sizes")
def _(c):
    c.method(c.input(ar(2, 3)), "unflatten", 1, (2, 2))


@case("unflatten errors: 0-dim")
def _(c):
    c.method(c.input(torch.tensor(1.)), "unflatten", -1, (1,))


@case("unflatten errors: empty sizes")
def _(c):
    c.method(c.input(ar(2, 3)), "unflatten", 1, ())


@case("unflatten errors: two -1")
def _(c):
    c.method(c.input(ar(2, 3)), "unflatten", 1, (-1, -1))


@case("unflatten errors: -1 that doesn't divide")
def _(c):
    c.method(c.input(ar(2, 3)), "unflatten", 1, (-1, 2))


@case("unflatten of non-contiguous tensors")
def _(c):
    c.method(c.input(ar(3, 4)[:, :2].t()), "unflatten", 1, (3, 1))
    c.method(c.input(ar(4, 6)[:, ::2].t()), "unflatten", 1, (2, 2))


# ---- narrow / select ----

@case("narrow")
def _(c):
    x = c.input(ar(3, 4))
    c.method(x, "narrow", 1, 1, 2)
    c.fn("narrow", x, 0, -2, 2)
    c.fn("narrow", x, -1, 4, 0)
    c.method(x, "narrow", dim=0, start=0, length=0)
    c.method(c.input(transposed()), "narrow", 0, 1, 2)
    c.method(c.input(sliced()), "narrow", 1, 1, 2)


@case("narrow write-through")
def _(c):
    x = c.input(ar(3, 4, dtype=torch.int64))
    c.method(c.method(x, "narrow", 1, 1, 2), "fill_", -1)


@case("narrow errors: too long")
def _(c):
    c.method(c.input(ar(2, 3)), "narrow", 1, 2, 2)


@case("narrow errors: start out of range")
def _(c):
    c.method(c.input(ar(2, 3)), "narrow", 1, 4, 0)


@case("narrow errors: negative start out of range")
def _(c):
    c.method(c.input(ar(2, 3)), "narrow", 1, -4, 1)


@case("narrow errors: negative length")
def _(c):
    c.method(c.input(ar(2, 3)), "narrow", 1, 0, -1)


@case("narrow errors: 0-dim")
def _(c):
    c.method(c.input(torch.tensor(1.)), "narrow", 0, 0, 1)


@case("select")
def _(c):
    x = c.input(ar(2, 3, 4))
    c.method(x, "select", 0, 1)
    c.method(x, "select", 1, -1)
    c.fn("select", x, -1, 3)
    c.method(x, "select", dim=2, index=0)
    c.method(c.input(transposed()), "select", 1, 2)
    c.method(c.input(sliced()), "select", 0, 1)
    c.method(c.input(ar(3, dtype=torch.bool)), "select", 0, 2)


@case("select write-through")
def _(c):
    x = c.input(ar(2, 3))
    c.method(c.method(x, "select", 1, 1), "copy_", torch.tensor([7., 8.]))


@case("select errors: index")
def _(c):
    c.method(c.input(ar(2, 3)), "select", 0, 2)


@case("select errors: negative index")
def _(c):
    c.method(c.input(ar(2, 3)), "select", 1, -4)


@case("select errors: 0-dim")
def _(c):
    c.method(c.input(torch.tensor(1.)), "select", 0, 0)


@case("select errors: dim")
def _(c):
    c.method(c.input(ar(2, 3)), "select", 2, 0)


# ---- split / chunk / unbind ----

@case("split by size")
def _(c):
    x = c.input(ar(5, 4))
    c.method(x, "split", 2)
    c.fn("split", x, 3, 1)
    c.method(x, "split", 5)
    c.method(x, "split", 10)
    c.fn("split", x, split_size_or_sections=4, dim=-1)
    c.method(c.input(torch.zeros(0)), "split", 0)
    c.method(c.input(torch.zeros(2, 0)), "split", 0, 1)
    c.method(c.input(torch.zeros(2, 0)), "split", 3, 1)
    c.method(c.input(transposed()), "split", 2, 1)


@case("split by sections")
def _(c):
    x = c.input(ar(5, 4))
    c.method(x, "split", [1, 4])
    c.method(x, "split", (2, 0, 2), 1)
    c.fn("split", x, [5], 0)
    c.method(c.input(sliced()), "split", [1, 2], 1)


@case("split errors: negative size")
def _(c):
    c.method(c.input(ar(2, 3)), "split", -1)


@case("split errors: zero size")
def _(c):
    c.method(c.input(ar(2, 3)), "split", 0, 1)


@case("split errors: sections sum")
def _(c):
    c.method(c.input(ar(2, 3)), "split", [1, 1], 1)


@case("split errors: sections too long")
def _(c):
    c.method(c.input(ar(2, 3)), "split", [1, 3], 1)


@case("split errors: negative section")
def _(c):
    c.method(c.input(ar(2, 3)), "split", [-1, 4], 1)


@case("split errors: 0-dim")
def _(c):
    c.method(c.input(torch.tensor(1.)), "split", 1)


@case("split errors: dim")
def _(c):
    c.method(c.input(ar(2, 3)), "split", 1, 2)


@case("chunk")
def _(c):
    x = c.input(ar(5, 4))
    c.method(x, "chunk", 2)
    c.method(x, "chunk", 3)
    c.fn("chunk", x, 4, 1)
    c.method(x, "chunk", 6)
    c.method(x, "chunk", chunks=1, dim=-1)
    c.method(c.input(ar(6)), "chunk", 4)
    c.method(c.input(torch.zeros(2, 0)), "chunk", 3, 1)
    c.method(c.input(transposed()), "chunk", 2, 0)


@case("chunk errors: chunks")
def _(c):
    c.method(c.input(ar(2, 3)), "chunk", 0)


@case("chunk errors: 0-dim")
def _(c):
    c.method(c.input(torch.tensor(1.)), "chunk", 1)


@case("unbind")
def _(c):
    x = c.input(ar(2, 3))
    c.method(x, "unbind")
    c.fn("unbind", x, 1)
    c.method(x, "unbind", dim=-1)
    c.method(c.input(torch.zeros(0, 2)), "unbind")
    c.method(c.input(transposed()), "unbind", 0)


@case("unbind errors: 0-dim")
def _(c):
    c.method(c.input(torch.tensor(1.)), "unbind")


@case("unbind errors: 0-dim, negative dim")
def _(c):
    c.method(c.input(torch.tensor(1.)), "unbind", -1)


@case("unbind errors: dim")
def _(c):
    c.method(c.input(ar(2, 3)), "unbind", 2)


# ---- diagonal ----

@case("diagonal")
def _(c):
    x = c.input(ar(3, 4))
    c.method(x, "diagonal")
    c.method(x, "diagonal", 1)
    c.method(x, "diagonal", -1)
    c.method(x, "diagonal", 3)
    c.method(x, "diagonal", 4)
    c.method(x, "diagonal", -3)
    c.fn("diagonal", x, -5)
    c.method(x, "diagonal", 0, 1, 0)
    c.method(x, "diagonal", offset=1, dim1=-1, dim2=-2)
    y = c.input(ar(2, 3, 4))
    c.method(y, "diagonal", 0, 0, 2)
    c.method(y, "diagonal", 1, 1, 2)
    c.method(y, "diagonal", -1, 2, 0)
    c.method(c.input(transposed()), "diagonal", 1)
    c.method(c.input(sliced()), "diagonal")
    c.method(c.input(torch.zeros(0, 3)), "diagonal")


@case("diagonal write-through")
def _(c):
    x = c.input(torch.zeros(3, 3, dtype=torch.int32))
    c.method(c.method(x, "diagonal"), "fill_", 1)
    c.method(c.method(x, "diagonal", 1), "add_", 5)


@case("diagonal errors: same dims")
def _(c):
    c.method(c.input(ar(2, 3)), "diagonal", 0, 0, -2)


@case("diagonal errors: 1-d")
def _(c):
    c.method(c.input(ar(3)), "diagonal")


# ---- movedim ----

@case("movedim")
def _(c):
    x = c.input(ar(2, 3, 4))
    c.fn("movedim", x, 0, 2)
    c.method(x, "movedim", -1, 0)
    c.method(x, "movedim", (0, 1), (2, 0))
    c.fn("movedim", x, [2, 0], [0, 1])
    c.method(x, "movedim", source=(1,), destination=(1,))
    c.method(c.input(torch.tensor(1.)), "movedim", 0, 0)
    c.method(c.input(sliced()), "movedim", 0, 1)
    y = c.method(x, "movedim", 2, 0)
    c.method(y, "neg_")


@case("movedim errors: lengths")
def _(c):
    c.method(c.input(ar(2, 3)), "movedim", (0, 1), (0,))


@case("movedim errors: repeated source")
def _(c):
    c.method(c.input(ar(2, 3)), "movedim", (0, 0), (0, 1))


@case("movedim errors: repeated destination")
def _(c):
    c.method(c.input(ar(2, 3)), "movedim", (0, 1), (1, 1))


@case("movedim errors: range")
def _(c):
    c.method(c.input(ar(2, 3)), "movedim", 0, 2)
