"""Linear algebra: matmul (dot, mv, mm, bmm, folded and broadcast batched
cases), mm, bmm, linear, outer.

PyTorch 1.13's CPU has no float16 matmul kernels ("not implemented for
'Half'"); thn computes float16 in float32 like bfloat16, so float16 is not
compared here."""
import torch
from torch_cases import case

# torch.linear is not a public function in PyTorch 1.13; thn's linear is
# torch.nn.functional.linear.
torch.linear = torch.nn.functional.linear

DTYPES = [torch.int32, torch.int64, torch.bfloat16, torch.float32, torch.float64]
BLAS_TOL = (1e-5, 1e-5)  # BLAS sums in another order than PyTorch's kernels


def ints(dtype, *shape):
    n = 1
    for s in shape:
        n *= s
    return ((torch.arange(n) * 7) % 11 - 5).to(dtype).reshape(shape)


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=torch.float64).to(dtype)


# ---- the matmul cases, by dtype ----

for dt in DTYPES:
    @case(f"matmul {dt}: dot, mv, vm, mm")
    def _(c, dt=dt):
        v3, v4 = c.input(ints(dt, 3)), c.input(ints(dt, 4))
        m = c.input(ints(dt, 4, 3))
        c.fn("matmul", v3, c.input(ints(dt, 3).flip(0)))
        c.fn("matmul", m, v3)
        c.method(v4, "matmul", m)
        c.fn("matmul", m, c.input(ints(dt, 3, 5)))

    @case(f"matmul {dt}: batched")
    def _(c, dt=dt):
        a = c.input(ints(dt, 2, 3, 4))
        c.fn("matmul", a, c.input(ints(dt, 4, 2)))
        c.fn("matmul", a, c.input(ints(dt, 4)))
        c.fn("matmul", c.input(ints(dt, 3)), a)
        c.fn("matmul", c.input(ints(dt, 5, 3)), a)
        c.fn("matmul", c.input(ints(dt, 2, 1, 3, 4)), c.input(ints(dt, 3, 4, 2)))

    @case(f"mm and bmm {dt}")
    def _(c, dt=dt):
        c.fn("mm", c.input(ints(dt, 2, 3)), c.input(ints(dt, 3, 4)))
        c.method(c.input(ints(dt, 2, 2, 3)), "bmm", c.input(ints(dt, 2, 3, 4)))

@case("matmul float32 of random values", tol=BLAS_TOL)
def _(c):
    a, b = c.input(randn(7, 13)), c.input(randn(13, 5))
    c.fn("matmul", a, b)
    c.fn("mm", a, b)
    c.fn("matmul", c.input(randn(3, 4, 13)), b)
    c.fn("matmul", c.input(randn(13)), c.input(randn(13)))
    c.fn("bmm", c.input(randn(3, 7, 13)), c.input(randn(3, 13, 5)))

@case("matmul float64 and bfloat16 of random values", tol=BLAS_TOL)
def _(c):
    c.fn("matmul", c.input(randn(6, 9, dtype=torch.float64)), c.input(randn(9, 4, dtype=torch.float64)))

@case("matmul bfloat16 of random values")
def _(c):
    c.fn("matmul", c.input(randn(4, 8, dtype=torch.bfloat16)), c.input(randn(8, 3, dtype=torch.bfloat16)))

@case("matmul of a 64x64 float32 product", tol=BLAS_TOL)
def _(c):
    a = c.input(randn(64, 64))
    c.fn("matmul", a, c.method(a, "t"))

# ---- layouts: transposed, sliced, expanded operands ----

@case("mm of transposed operands", tol=BLAS_TOL)
def _(c):
    a, b = c.input(randn(5, 3)), c.input(randn(4, 5))
    at, bt = c.method(a, "t"), c.method(b, "t")
    c.fn("mm", at, bt)
    c.fn("mm", at, c.input(randn(5, 2)))
    c.fn("mm", c.input(randn(2, 5)), bt)
    c.fn("matmul", at, bt)

@case("mm of sliced and expanded operands", tol=BLAS_TOL)
def _(c):
    base = c.input(randn(6, 10))
    s = c.method(base, "narrow", 1, 2, 4)
    c.fn("mm", s, c.input(randn(8, 3)[::2]))
    c.fn("mm", c.input(randn(3, 1).expand(3, 4)), c.input(randn(4, 1).expand(4, 2)))
    c.fn("mm", c.input(randn(12)[::3].reshape(1, 4).expand(2, 4)), c.input(randn(4, 4)))

@case("dot and mv of strided and expanded vectors", tol=BLAS_TOL)
def _(c):
    v = c.input(randn(10)[1::3])
    c.fn("matmul", v, c.input(randn(6)[::2]))
    c.fn("matmul", v, c.input(torch.tensor([2.]).expand(3)))
    c.fn("matmul", c.input(randn(3, 4).t()), v)
    c.fn("matmul", v, c.input(randn(4, 3).t()))

@case("int matmul of transposed and expanded operands")
def _(c):
    c.fn("matmul", c.input(ints(torch.int64, 3, 2).t()), c.input(ints(torch.int64, 4, 3).t()))
    c.fn("matmul", c.input(ints(torch.int32, 2, 1).expand(2, 3)), c.input(ints(torch.int32, 3)))

@case("batched matmul of permuted operands", tol=BLAS_TOL)
def _(c):
    # [3, 2, 4] with its matrices transposed under a dense batch: PyTorch uses bmm, not a fold.
    a = c.input(randn(3, 4, 2).transpose(1, 2))
    c.fn("matmul", a, c.input(randn(4, 5)))
    c.fn("matmul", c.input(randn(3, 2, 4).transpose(0, 1)), c.input(randn(4, 5)))
    c.fn("bmm", a, c.input(randn(3, 5, 4).transpose(1, 2)))
    c.fn("bmm", c.input(randn(4, 3, 2).permute(1, 2, 0)), c.input(randn(1, 4, 5).expand(3, 4, 5)))

@case("batched matmul broadcasts batch dims", tol=BLAS_TOL)
def _(c):
    c.fn("matmul", c.input(randn(2, 1, 3, 4)), c.input(randn(5, 4, 2)))
    c.fn("matmul", c.input(randn(1, 3, 4)), c.input(randn(2, 1, 4, 2)))
    c.fn("matmul", c.input(randn(2, 2, 3, 4)), c.input(randn(4)))
    c.fn("matmul", c.input(randn(4)), c.input(randn(2, 2, 4, 3)))
    c.fn("matmul", c.input(randn(2, 3)), c.input(randn(2, 2, 3, 4)))

# ---- empty operands ----

@case("matmul with size-0 dims")
def _(c):
    c.fn("mm", c.input(torch.ones(2, 0)), c.input(torch.ones(0, 3)))
    c.fn("mm", c.input(torch.ones(0, 3)), c.input(torch.ones(3, 2)))
    c.fn("matmul", c.input(torch.ones(0)), c.input(torch.ones(0)))
    c.fn("matmul", c.input(torch.ones(2, 0)), c.input(torch.ones(0)))
    c.fn("matmul", c.input(torch.ones(3, 2, 0)), c.input(torch.ones(0, 4)))
    c.fn("bmm", c.input(torch.ones(0, 2, 3)), c.input(torch.ones(0, 3, 4)))
    c.fn("bmm", c.input(torch.ones(2, 2, 0, dtype=torch.int64)), c.input(torch.ones(2, 0, 4, dtype=torch.int64)))

@case("mm of bool with an empty inner dim gives zeros")
def _(c):
    c.fn("mm", c.input(torch.ones(2, 0, dtype=torch.bool)), c.input(torch.ones(0, 3, dtype=torch.bool)))

# ---- errors ----

ERRORS = {
    "mm shapes": ("mm", torch.ones(2, 3), torch.ones(4, 5)),
    "mm dtypes": ("mm", torch.ones(2, 3), torch.ones(3, 5, dtype=torch.float64)),
    "mm dtypes, int and float": ("mm", torch.ones(2, 3, dtype=torch.int64), torch.ones(3, 5)),
    "mm of bool": ("mm", torch.ones(2, 3, dtype=torch.bool), torch.ones(3, 5, dtype=torch.bool)),
    "mm of a vector": ("mm", torch.ones(3), torch.ones(3, 5)),
    "mm with a vector": ("mm", torch.ones(2, 3), torch.ones(3)),
    "mm of a 3-D tensor": ("mm", torch.ones(2, 2, 3), torch.ones(3, 5)),
    "bmm sizes": ("bmm", torch.ones(2, 3, 4), torch.ones(2, 5, 6)),
    "bmm batch": ("bmm", torch.ones(2, 3, 4), torch.ones(3, 4, 6)),
    "bmm 2-D batch1": ("bmm", torch.ones(3, 4), torch.ones(3, 4, 6)),
    "bmm 2-D batch2": ("bmm", torch.ones(2, 3, 4), torch.ones(4, 6)),
    "bmm dtypes": ("bmm", torch.ones(2, 3, 4), torch.ones(2, 4, 6, dtype=torch.float64)),
    "bmm of bool": ("bmm", torch.ones(2, 3, 4, dtype=torch.bool), torch.ones(2, 4, 6, dtype=torch.bool)),
    "matmul of a 0-dim tensor": ("matmul", torch.tensor(1.), torch.ones(3)),
    "matmul with a 0-dim tensor": ("matmul", torch.ones(3), torch.tensor(1.)),
    "dot sizes": ("matmul", torch.ones(3), torch.ones(4)),
    "dot dtypes": ("matmul", torch.ones(3), torch.ones(3, dtype=torch.float64)),
    "dot of bool": ("matmul", torch.ones(3, dtype=torch.bool), torch.ones(3, dtype=torch.bool)),
    "dot of empty bool": ("matmul", torch.ones(0, dtype=torch.bool), torch.ones(0, dtype=torch.bool)),
    "mv sizes": ("matmul", torch.ones(2, 3), torch.ones(4)),
    "mv dtypes": ("matmul", torch.ones(2, 3), torch.ones(3, dtype=torch.float64)),
    "mv of bool": ("matmul", torch.ones(2, 3, dtype=torch.bool), torch.ones(3, dtype=torch.bool)),
    "vm sizes": ("matmul", torch.ones(3), torch.ones(4, 5)),
    "vm dtypes": ("matmul", torch.ones(3), torch.ones(3, 4, dtype=torch.float64)),
    "folded sizes": ("matmul", torch.ones(2, 3, 4), torch.ones(5, 6)),
    "folded vector sizes": ("matmul", torch.ones(2, 3, 4), torch.ones(5)),
    "folded dtypes": ("matmul", torch.ones(2, 3, 4), torch.ones(4, 5, dtype=torch.float64)),
    "transposed fold sizes": ("matmul", torch.ones(2, 3), torch.ones(3, 4, 5)),
    "transposed fold vector sizes": ("matmul", torch.ones(3), torch.ones(3, 4, 5)),
    "transposed fold dtypes": ("matmul", torch.ones(2, 3), torch.ones(3, 3, 5, dtype=torch.float64)),
    "unfolded transposed sizes": ("matmul", torch.ones(3, 4, 2).transpose(1, 2), torch.ones(5, 6)),
    "batched sizes": ("matmul", torch.ones(2, 1, 3, 4), torch.ones(3, 5, 5)),
    "batched batch dims": ("matmul", torch.ones(2, 3, 4), torch.ones(3, 4, 5)),
    "batched dtypes": ("matmul", torch.ones(3, 2, 3), torch.ones(3, 3, 5, dtype=torch.float64)),
    "batched bool": ("matmul", torch.ones(3, 2, 3, dtype=torch.bool), torch.ones(3, 3, 5, dtype=torch.bool)),
}
for name, (op, a, b) in ERRORS.items():
    @case(f"{op} error: {name}")
    def _(c, op=op, a=a, b=b):
        c.fn(op, c.input(a), c.input(b))

# ---- linear ----

for dt in DTYPES:
    @case(f"linear {dt}")
    def _(c, dt=dt):
        x, w, b = c.input(ints(dt, 2, 3)), c.input(ints(dt, 4, 3)), c.input(ints(dt, 4))
        c.fn("linear", x, w, b)
        c.fn("linear", x, w)
        c.fn("linear", x, w, bias=None)

@case("linear with 1-D, 3-D and 4-D inputs", tol=BLAS_TOL)
def _(c):
    w, b = c.input(randn(4, 3)), c.input(randn(4))
    c.fn("linear", c.input(randn(3)), w, b)
    c.fn("linear", c.input(randn(5, 2, 3)), w, b)
    c.fn("linear", c.input(randn(5, 2, 3)), w)
    c.fn("linear", c.input(randn(3, 2, 5).transpose(0, 2)), w, b)
    c.fn("linear", c.input(randn(2, 1, 2, 3)), w, b)

@case("linear with a 2-D bias, a transposed weight and a 1-D weight", tol=BLAS_TOL)
def _(c):
    x = c.input(randn(2, 3))
    c.fn("linear", x, c.input(randn(4, 3)), c.input(randn(2, 4)))
    c.fn("linear", x, c.input(randn(3, 4).t()), c.input(randn(1)))
    c.fn("linear", x, c.input(randn(3)))

@case("linear of a 1-D input adds a bias of another dtype in place")
def _(c):
    c.fn("linear", c.input(ints(torch.float32, 3)), c.input(ints(torch.float32, 4, 3)), c.input(ints(torch.float64, 4)))
    c.fn("linear", c.input(ints(torch.float32, 3)), c.input(ints(torch.float32, 4, 3)), c.input(ints(torch.int64, 4)))

@case("linear with an empty inner dim is the bias")
def _(c):
    c.fn("linear", c.input(torch.ones(2, 0)), c.input(torch.ones(3, 0)), c.input(torch.tensor([1., 2., 3.])))

LINEAR_ERRORS = {
    "shapes": (torch.ones(2, 3), torch.ones(4, 5), torch.ones(4)),
    "bias size": (torch.ones(2, 3), torch.ones(4, 3), torch.ones(3)),
    "bias with too many dims": (torch.ones(2, 3), torch.ones(4, 3), torch.ones(2, 4, 1)),
    "bias dtype": (torch.ones(2, 3), torch.ones(4, 3), torch.ones(4, dtype=torch.float64)),
    "bias dtype, 3-D input": (torch.ones(5, 2, 3), torch.ones(4, 3), torch.ones(4, dtype=torch.int64)),
    "input dtype": (torch.ones(2, 3), torch.ones(4, 3, dtype=torch.float64), torch.ones(4, dtype=torch.float64)),
    "weight dtype": (torch.ones(2, 3), torch.ones(4, 3, dtype=torch.float64), None),
    "bias size, 3-D input": (torch.ones(5, 2, 3), torch.ones(4, 3), torch.ones(3)),
    "bias size, 1-D input": (torch.ones(3), torch.ones(4, 3), torch.ones(2, 4)),
    "3-D weight": (torch.ones(5, 2, 3), torch.ones(1, 4, 3), None),
    "1-D weight with a bias": (torch.ones(2, 3), torch.ones(3), torch.tensor(1.)),
    "0-dim input": (torch.tensor(1.), torch.ones(4, 3), None),
    "bool": (torch.ones(2, 3, dtype=torch.bool), torch.ones(4, 3, dtype=torch.bool), None),
}
for name, (x, w, b) in LINEAR_ERRORS.items():
    @case(f"linear error: {name}")
    def _(c, x=x, w=w, b=b):
        c.fn("linear", c.input(x), c.input(w), None if b is None else c.input(b))

# ---- outer ----

for dt in DTYPES + [torch.bool, torch.float16]:
    @case(f"outer {dt}")
    def _(c, dt=dt):
        a = c.input(ints(dt, 3) if dt != torch.bool else torch.tensor([True, False, True]))
        b = c.input(ints(dt, 4) if dt != torch.bool else torch.tensor([True, True, False, False]))
        c.fn("outer", a, b)
        c.method(a, "outer", b)

@case("outer promotes and takes views")
def _(c):
    i, f = c.input(ints(torch.int64, 3)), c.input(randn(8)[::2])
    c.fn("outer", i, f)
    c.fn("outer", f, c.input(torch.tensor([True, False])))
    c.fn("outer", c.input(torch.tensor([2.]).expand(3)), c.input(torch.ones(0)))

@case("outer error: 2-D self")
def _(c):
    c.fn("outer", c.input(torch.ones(3, 1)), c.input(torch.ones(4)))

@case("outer error: 2-D vec2")
def _(c):
    c.fn("outer", c.input(torch.ones(3)), c.input(torch.ones(4, 1)))

@case("outer error: 0-dim self")
def _(c):
    c.fn("outer", c.input(torch.tensor(1.)), c.input(torch.ones(4)))
