#!/usr/bin/python3
"""Regenerates tests/runtime/expected/print.golden: what Python prints for
repr(float) and what PyTorch 1.13 prints for print(tensor).

Run with /usr/bin/python3 (the Debian interpreter that has torch):
    /usr/bin/python3 tests/runtime/gen_print.py
The output is committed; test_print.cpp reads it and never needs PyTorch.

Format, one record per line:
    float <float.hex(v)> <repr(v)>
    tensor <name> <dtype> <ndim> <sizes...> <strides...> <offset> <n> <storage values...> <k>
followed by the k lines of repr(t). The tensor is the strided view (sizes,
strides, offset) of a storage of n elements; values are repr() of floats or
decimal integers (bools as 0/1).
"""
import math
import pathlib
import random
import struct

import torch

OUT = pathlib.Path(__file__).parent / "expected" / "print.golden"
F16, BF16, F32, F64 = torch.float16, torch.bfloat16, torch.float32, torch.float64
I32, I64, B = torch.int32, torch.int64, torch.bool
ALL_DTYPES = [B, I32, I64, F16, BF16, F32, F64]
FLOATS = [F16, BF16, F32, F64]
inf, nan = math.inf, math.nan


def float_cases():
    vals = [0.0, -0.0, inf, -inf, nan, 1.0, -1.0, 0.1, 0.2, 0.3, 0.1 + 0.2, 1 / 3, 2 / 3, 1.5, 100.0,
            1e-5, 1e-4, 0.0001234, 0.00009999999999999999, 1e16, 1e15, 1e17, 1e22, 1e23, 1e100,
            1234567890123456.0, 12345678901234567.0, 9999999999999998.0, 9999999999999999.0,
            9007199254740993.0, 2.0 ** 53, 2.0 ** 63, 2.0 ** 64, 5e-324, 2.2250738585072014e-308,
            2.225073858507201e-308, 1.7976931348623157e308, 1.5e300, -1.5e-300, 123.456, 3.14159,
            math.pi, math.e, math.tau, 0.5, 0.25, 0.125, 1e-7, 4.35, 2.675, 1.0000000000000002,
            0.9999999999999999, 299792458.0, 6.02214076e23, 1.602176634e-19]
    vals += [math.nextafter(x, d) for x in (1e16, 1e-4, 1e-5, 0.1, 1.0) for d in (0, inf)]
    vals += [10.0 ** k for k in range(-25, 26)]
    vals += [-(2.0 ** k) for k in range(-30, 70, 7)]
    vals += [struct.unpack("f", struct.pack("f", x))[0] for x in (0.1, 0.2, 1e-5, 3.14159, 1e10, 65504.0)]
    rng = random.Random(1)
    for _ in range(60):
        vals.append(rng.uniform(-1, 1) * 10.0 ** rng.randint(-30, 30))
    for _ in range(20):
        vals.append(struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0])
    return vals


def t(values, dtype=F32):
    return torch.tensor(values, dtype=dtype)


def randn(*shape, dtype=F32, scale=1.0):
    return (torch.randn(*shape, dtype=F64) * scale).to(dtype)


def tensor_cases():
    torch.manual_seed(0)
    cases = []

    def add(name, x):
        cases.append((name, x))

    # Zero-dim tensors.
    for v in (3.0, -0.0, 0.0, nan, -inf, 1e-5, 1e10, 123456789.0, 0.5, 2.0 ** 70):
        for dt in FLOATS:
            add(f"scalar_{v}_{dt}", t(v, dt))
    for dt in (I32, I64):
        add(f"scalar_int_{dt}", t(-7, dt))
    add("scalar_true", t(True, B))
    add("scalar_false", t(False, B))

    # Small vectors exercising each notation.
    vectors = {
        "ints": [1.0, 2.0], "halves": [1.5, 2.25], "sci_spread": [1e-5, 1e5], "zeros": [0.0, 0.0],
        "nan": [nan], "nan_one": [nan, 1.0], "nonfinite": [inf, -inf, nan, 1.0], "negzero": [-0.0, 0.0],
        "one_negzero": [1.0, -0.0], "int_ratio_1000": [1.0, 1000.0], "int_ratio_1001": [1.0, 1001.0],
        "int_big": [1.0, 1e10], "int_1e8": [1e8, 1.0], "int_over_1e8": [123456789.0],
        "small_min": [0.0001, 1.0], "min_ok": [0.00011, 0.1], "rounding": [0.12345, 0.5, 0.125, 2.5],
        "neg_sci": [-1e10, 1.0, 0.5], "sci_nan": [1e-5, nan, 1e5, -inf], "tiny": [1e-30, 3e-31],
        "huge": [3e38, -1e38], "mixed": [-1.5, 0.0, 2.25, -1000.0], "neg_ints": [-1.0, -20.0, 300.0],
        "fraction_big": [1e7 + 0.5, 1.0], "all_nonfinite": [nan, inf], "int_negzero_nan": [-0.0, nan, 5.0],
    }
    for name, vals in vectors.items():
        for dt in FLOATS:
            add(f"{name}_{dt}", t(vals, dt))
    add("f64_extremes", t([1e300, 1.0, -1e-300, 5e-324], F64))
    add("f64_precise", t([1 / 3, 2 / 3, 0.1], F64))
    add("f16_limits", t([65504.0, 0.1, 6e-8, inf], F16))
    add("bf16_values", t([0.1, 3.14159, 1e30, -2.5], BF16))
    for dt in (I32, I64):
        add(f"ints_neg_{dt}", t([-5, 12, 0, -300, 7], dt))
        add(f"arange_{dt}", torch.arange(-40, 40, dtype=dt))
    add("int64_extremes", t([-2 ** 63, 2 ** 63 - 1, 0], I64))
    add("int32_extremes", t([-2 ** 31, 2 ** 31 - 1], I32))
    add("bools", t([True, False, True], B))
    add("bools_long", torch.arange(50) % 3 == 0)

    # Wide rows that wrap, with and without a dtype suffix that may wrap too.
    for dt in ALL_DTYPES:
        wide = randn(60, scale=100.0) if dt.is_floating_point else torch.randint(-999, 999, (60,))
        add(f"wide_{dt}", wide.to(dt))
    for n in range(1, 40, 3):
        for dt in (F64, I32, F16):
            add(f"suffix_wrap_{n}_{dt}", (torch.arange(n, dtype=F64) * 1.5 - 3).to(dt))
    add("wide_sci", randn(30, scale=1e6) ** 3)
    for k in range(0, 19, 2):  # every element width, to hit each line-filling boundary
        add(f"width_{k}", torch.tensor([10 ** k] * 24) * torch.tensor([1, -1] * 12))
        add(f"width_f64_{k}", torch.full((20,), 10.0 ** min(k, 8), dtype=F64) / 7)
    add("4d_wide", randn(2, 2, 2, 20))
    add("f64_round", t([0.12345, 1.00005, 0.99995, 0.33335], F64))

    # Multi-dimensional.
    for dt in ALL_DTYPES:
        base = randn(2, 3, 4, scale=10.0) if dt.is_floating_point else torch.randint(-50, 50, (2, 3, 4))
        add(f"3d_{dt}", base.to(dt))
        add(f"2d_{dt}", base[0].to(dt))
        add(f"4d_{dt}", base.reshape(2, 1, 3, 4).to(dt))
    add("2d_sci", t([[1e-5, 1.0], [2.0, 3.0]]))
    add("2d_int_mode", t([[1.0, -2.0], [300.0, 4.0]]))
    add("2d_wide", randn(3, 25))
    add("3d_wide", randn(2, 2, 30, dtype=F64))
    add("4d_small", torch.arange(16.0).reshape(2, 2, 2, 2))
    add("single", t([[[5.0]]]))
    add("ones_row", torch.ones(1, 7, dtype=I32))

    # Summarized (more than 1000 elements).
    add("arange_2000", torch.arange(2000.0))
    add("arange_2000_int", torch.arange(2000))
    add("arange_2000_f64", torch.arange(2000, dtype=F64) * 0.25)
    add("randn_2000_sci", randn(2000, scale=1e6))
    add("summ_1001", torch.arange(1001, dtype=I32))
    add("summ_2d", randn(40, 30))
    add("summ_2d_short_rows", torch.arange(1500).reshape(5, 300))
    add("summ_2d_short_cols", torch.arange(1500.0).reshape(300, 5))
    add("summ_3d", randn(10, 10, 20, dtype=F16))
    add("summ_4d", randn(8, 8, 4, 5, scale=1e-6))
    add("summ_bool", torch.rand(1200) > 0.5)
    big = torch.arange(3000.0)
    big[1500] = 1e-9  # hidden in the middle: does not affect the notation
    add("summ_hidden", big)
    edge = torch.arange(3000.0)
    edge[-1] = 1e-9
    add("summ_edge", edge)
    add("summ_nan", torch.where(torch.arange(1100) % 2 == 0, torch.tensor(nan), torch.arange(1100.0)))

    # Empty tensors.
    for dt in ALL_DTYPES:
        add(f"empty_{dt}", torch.zeros(0, dtype=dt))
        add(f"empty_0x3_{dt}", torch.zeros(0, 3, dtype=dt))
    add("empty_2x0x3", torch.zeros(2, 0, 3))
    add("empty_3x0", torch.zeros(3, 0, dtype=I64))

    # Non-contiguous views.
    m = torch.arange(12.0).reshape(3, 4) * 1.25
    add("transpose", m.t())
    add("step_slice", torch.arange(20.0)[::3])
    add("offset_slice", torch.arange(20)[5:9])
    add("col_slice", m[:, 1:3])
    add("expand", t([1.0, 2.0]).expand(3, 2))
    add("permute", randn(2, 3, 4).permute(2, 0, 1))
    add("select_col", m[:, 2])
    add("summ_transpose", torch.arange(2400.0).reshape(40, 60).t())
    add("summ_step", torch.arange(5000)[::2])
    return cases


def storage_values(x):
    n = x.storage().size()
    flat = x.as_strided((n,), (1,), 0).tolist()
    if x.dtype.is_floating_point:
        return [repr(float(v)) for v in flat]
    return [str(int(v)) for v in flat]


def main():
    lines = []
    for v in float_cases():
        lines.append(f"float {v.hex()} {repr(v)}")
    for name, x in tensor_cases():
        name = name.replace(" ", "").replace("torch.", "")
        text = repr(x).split("\n")
        values = storage_values(x)
        head = [name, str(x.dtype).replace("torch.", ""), str(x.dim()), *map(str, x.shape),
                *map(str, x.stride()), str(x.storage_offset()), str(len(values)), *values, str(len(text))]
        lines.append("tensor " + " ".join(head))
        lines.extend(text)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}: {len(float_cases())} floats, {len(tensor_cases())} tensors")


if __name__ == "__main__":
    main()
