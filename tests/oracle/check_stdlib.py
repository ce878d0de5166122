#!/usr/bin/python3
"""Checks stdlib/nn.thn and stdlib/optim.thn against PyTorch.

    /usr/bin/python3 tests/oracle/check_stdlib.py [-v] [--seed N]

The .thn modules run under CPython with thn's names (cpython_thn.py) and are
compared with torch.nn.functional and torch.optim (PyTorch 1.13, Debian's
python3-torch) on random inputs in float32 and float64, and with float16 /
bfloat16 where PyTorch's CPU kernels take them. Where 1.13 has no such
function (rms_norm, public scaled_dot_product_attention), the reference is a
transcription of PyTorch 2.x's definition, below. Errors are reported in
units of the dtype's machine epsilon, relative to max(|expected|, 1). The
optimizers must match bit for bit. Also checks that every stdlib file stays
inside the thn language (subset.py). Exit status 1 on any mismatch.
"""
import math
import sys

import torch
import torch.nn.functional as F

import cpython_thn
from subset import STDLIB, check_file

cpython_thn.ThnFinder.script_dir = STDLIB
sys.meta_path.insert(0, cpython_thn.ThnFinder())
import nn  # noqa: E402  (stdlib/nn.thn)
import optim  # noqa: E402  (stdlib/optim.thn)

# Tolerances in epsilons. The nn kernels of PyTorch sum in another order
# (and use vectorised exp / erf / tanh), so a few epsilons apart is expected.
TOL_NN = 16
TOL_LOW = 1      # float16 / bfloat16: one rounding of a float32 result
TOL_LOW_113 = 4  # PyTorch 1.13's bfloat16 layer_norm rounds intermediates to bfloat16
VERBOSE = "-v" in sys.argv
SEED = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 0


class Report:
    def __init__(self):
        self.rows = []  # (group, case, dtype, error in eps, tolerance)
        self.failures = []

    def fail(self, group, case, why):
        self.failures.append(f"{group} {case}: {why}")

    def compare(self, group, case, ours, ref, tol):
        if not isinstance(ours, torch.Tensor):
            return self.fail(group, case, f"returned {type(ours).__name__}")
        if ours.dtype != ref.dtype or ours.shape != ref.shape:
            return self.fail(group, case, f"got {ours.dtype} {tuple(ours.shape)}, "
                             f"expected {ref.dtype} {tuple(ref.shape)}")
        a, b = ours.double(), ref.double()
        same_special = torch.equal(a.isnan(), b.isnan()) and torch.equal(
            a.isinf() & (a > 0), b.isinf() & (b > 0)) and torch.equal(
            a.isinf() & (a < 0), b.isinf() & (b < 0))
        if not same_special:
            return self.fail(group, case, "nan / inf in different places")
        finite = b.isfinite()
        diff = (a - b).abs()[finite] / b.abs()[finite].clamp(min=1.0)
        eps = torch.finfo(ref.dtype).eps if ref.dtype.is_floating_point else 1.0  # integers: exact or not
        err = diff.max().item() / eps if diff.numel() else 0.0
        self.rows.append((group, case, ref.dtype, err, tol))
        if VERBOSE:
            print(f"  {group:30s} {case:44s} {str(ref.dtype):15s} {err:7.2f} eps")
        if err > tol:
            self.fail(group, case, f"{str(ref.dtype)} error {err:.2f} eps > {tol}")

    def expect(self, group, case, condition, why):
        self.rows.append((group, case, None, 0.0, 0))
        if not condition:
            self.fail(group, case, why)

    def summary(self):
        print(f"{'function':30s} {'dtype':16s} {'cases':>5s} {'max error':>12s} {'tolerance':>10s}")
        groups = {}
        for group, _, dtype, err, tol in self.rows:
            key = (group, str(dtype).replace("torch.", "") if dtype else "-", tol)
            n, worst = groups.get(key, (0, 0.0))
            groups[key] = (n + 1, max(worst, err))
        for (group, dtype, tol), (n, worst) in groups.items():
            shown = f"{worst:8.2f} eps" if dtype != "-" else "checks"
            print(f"{group:30s} {dtype:16s} {n:5d} {shown:>12s} {tol:>10}")
        print(f"{len(self.rows)} checks, {len(self.failures)} failed")
        for failure in self.failures:
            print("FAIL " + failure)


def low_precision_cases(report, group, ours_fn, ref_fn, x, *extras, exact_113=False):
    """float16 and bfloat16 against the float32 result rounded once (what
    PyTorch 2.x's CPU kernels compute), and bfloat16 against PyTorch 1.13's
    own bfloat16 kernel, which rounds some intermediates to bfloat16. With
    exact_113 (silu, gelu tanh, log_softmax over the last dim, layer_norm:
    nn rounds where that kernel rounds) bfloat16 must equal 1.13's kernel
    bit for bit, and only float16 is compared with the float32 result.
    extras (weights) are rounded to the dtype like x."""
    for dt in (torch.float16,) if exact_113 else (torch.bfloat16, torch.float16):
        low = [t.to(dt) for t in (x,) + extras]
        report.compare(group, f"{dt} vs float32 rounded once", ours_fn(*low),
                       ref_fn(*[t.float() for t in low]).to(dt), TOL_LOW)
    low = [t.bfloat16() for t in (x,) + extras]
    report.compare(group, "vs torch 1.13 bfloat16 kernel" + (", bit for bit" if exact_113 else ""),
                   ours_fn(*low), ref_fn(*low), 0 if exact_113 else TOL_LOW_113)


def check_softmax(report, dtype):
    for shape, dim in [((5, 7), -1), ((5, 7), 0), ((4, 6, 9), 1), ((3, 4, 33), -1), ((8,), 0)]:
        x = torch.randn(shape, dtype=dtype) * 4
        for scale in (1.0, 60.0):
            case = f"{shape} dim={dim} x{scale:g}"
            report.compare("softmax", case, nn.softmax(x * scale, dim), F.softmax(x * scale, dim), TOL_NN)
            report.compare("log_softmax", case, nn.log_softmax(x * scale, dim),
                           F.log_softmax(x * scale, dim), TOL_NN)
    masked = torch.randn(4, 6, dtype=dtype).masked_fill(torch.rand(4, 6) < 0.3, -math.inf)
    report.compare("softmax", "-inf entries", nn.softmax(masked, -1), F.softmax(masked, -1), TOL_NN)
    report.compare("log_softmax", "-inf entries", nn.log_softmax(masked, -1), F.log_softmax(masked, -1), TOL_NN)
    x = torch.randn(3, 5, dtype=torch.float32)
    report.compare("softmax", "dtype=float64", nn.softmax(x, 1, dtype=torch.float64),
                   F.softmax(x, 1, dtype=torch.float64), TOL_NN)
    report.compare("log_softmax", "dtype=float64", nn.log_softmax(x, 1, dtype=torch.float64),
                   F.log_softmax(x, 1, dtype=torch.float64), TOL_NN)


def check_layer_norm(report, dtype):
    x = torch.randn(6, 5, 16, dtype=dtype) * 3 + 2
    for shape in [16, (16,), (5, 16), [6, 5, 16]]:
        ns = (shape,) if isinstance(shape, int) else tuple(shape)
        w, b = torch.randn(ns, dtype=dtype), torch.randn(ns, dtype=dtype)
        report.compare("layer_norm", f"{shape} plain", nn.layer_norm(x, shape), F.layer_norm(x, ns), TOL_NN)
        report.compare("layer_norm", f"{shape} weight, bias, eps=1e-3",
                       nn.layer_norm(x, shape, w, b, 1e-3), F.layer_norm(x, ns, w, b, 1e-3), TOL_NN)
        report.compare("layer_norm", f"{shape} weight only",
                       nn.layer_norm(x, shape, weight=w), F.layer_norm(x, ns, weight=w), TOL_NN)
    try:
        nn.layer_norm(x, (4, 16))
        report.expect("layer_norm", "wrong normalized_shape rejected", False, "accepted (4, 16)")
    except AssertionError as e:
        report.expect("layer_norm", "wrong normalized_shape rejected",
                      "expected input with shape [*, 4, 16], but got input of size[6, 5, 16]" in str(e), str(e))


def rms_norm_reference(x, normalized_shape, weight=None, eps=None):
    """PyTorch 2.x's F.rms_norm (aten/src/ATen/native/layer_norm.cpp,
    rms_norm_symint): upcast, x * rsqrt(mean(x^2) + eps), type_as, * weight."""
    dims = tuple(range(-len(normalized_shape), 0))
    opmath = torch.float64 if x.dtype == torch.float64 else torch.float32
    if eps is None:
        eps = torch.finfo(opmath).eps
    up = x.to(opmath)
    result = up.mul(torch.rsqrt(up.pow(2).mean(dims, keepdim=True).add_(eps))).type_as(x)
    return result if weight is None else result.mul(weight)


def check_rms_norm(report, dtype):
    x = torch.randn(4, 3, 32, dtype=dtype) * 2
    for ns in [(32,), (3, 32)]:
        w = torch.randn(ns, dtype=dtype)
        report.compare("rms_norm", f"{ns}", nn.rms_norm(x, ns), rms_norm_reference(x, ns), TOL_NN)
        report.compare("rms_norm", f"{ns} weight, eps=1e-6", nn.rms_norm(x, ns, w, 1e-6),
                       rms_norm_reference(x, ns, w, 1e-6), TOL_NN)
    tiny = torch.full((2, 8), 1e-30, dtype=dtype)  # where the default eps shows
    report.compare("rms_norm", "tiny input, default eps", nn.rms_norm(tiny, (8,)),
                   rms_norm_reference(tiny, (8,)), TOL_NN)


def check_activations(report, dtype):
    x = torch.cat([torch.randn(2000, dtype=dtype) * 3, torch.linspace(-12, 12, 97, dtype=dtype)])
    report.compare("gelu", "none", nn.gelu(x), F.gelu(x), TOL_NN)
    report.compare("gelu", "tanh", nn.gelu(x, approximate="tanh"), F.gelu(x, approximate="tanh"), TOL_NN)
    report.compare("silu", "", nn.silu(x), F.silu(x), TOL_NN)
    report.compare("relu", "", nn.relu(x), F.relu(x), 0)
    report.compare("leaky_relu", "", nn.leaky_relu(x), F.leaky_relu(x), 0)
    report.compare("leaky_relu", "slope 0.2", nn.leaky_relu(x, 0.2), F.leaky_relu(x, 0.2), 0)
    report.compare("softplus", "", nn.softplus(x), F.softplus(x), TOL_NN)
    report.compare("softplus", "beta 2, threshold 5", nn.softplus(x, 2, 5), F.softplus(x, 2, 5), TOL_NN)
    y = x.clone()
    report.expect("relu", "inplace returns input", nn.relu(y, inplace=True) is y and torch.equal(y, F.relu(x)),
                  "not the input, or not updated")
    y = x.clone()
    report.expect("leaky_relu", "inplace returns input",
                  nn.leaky_relu(y, 0.3, inplace=True) is y and torch.equal(y, F.leaky_relu(x, 0.3)),
                  "not the input, or not updated")


def check_layers(report, dtype):
    x, w, b = torch.randn(5, 7, dtype=dtype), torch.randn(3, 7, dtype=dtype), torch.randn(3, dtype=dtype)
    report.compare("linear", "", nn.linear(x, w), F.linear(x, w), TOL_NN)
    report.compare("linear", "bias", nn.linear(x, w, b), F.linear(x, w, b), TOL_NN)
    report.compare("linear", "3-D input", nn.linear(x.view(5, 7, 1).expand(5, 7, 2).transpose(1, 2), w, b),
                   F.linear(x.view(5, 7, 1).expand(5, 7, 2).transpose(1, 2), w, b), TOL_NN)
    table = torch.randn(10, 4, dtype=dtype)
    idx = torch.randint(0, 10, (3, 5))
    report.compare("embedding", "(3, 5) indices", nn.embedding(idx, table), F.embedding(idx, table), 0)
    report.compare("embedding", "int32, padding_idx", nn.embedding(idx.int(), table, padding_idx=0),
                   F.embedding(idx.int(), table, padding_idx=0), 0)
    report.compare("embedding", "0-dim index", nn.embedding(idx[0, 0], table), F.embedding(idx[0, 0], table), 0)
    report.compare("one_hot", "inferred", nn.one_hot(idx), F.one_hot(idx), 0)
    report.compare("one_hot", "num_classes", nn.one_hot(idx, 12), F.one_hot(idx, 12), 0)
    report.compare("one_hot", "0-dim", nn.one_hot(idx[1, 1], 10), F.one_hot(idx[1, 1], 10), 0)
    v = torch.randn(4, 6, 3, dtype=dtype)
    v[1, :, 2] = 0
    for p, dim in [(2.0, 1), (1.0, 0), (3.0, -1), (math.inf, 1)]:
        report.compare("normalize", f"p={p} dim={dim}", nn.normalize(v, p, dim), F.normalize(v, p, dim), TOL_NN)
    report.compare("normalize", "eps", nn.normalize(v * 1e-3, eps=0.5), F.normalize(v * 1e-3, eps=0.5), TOL_NN)


def check_losses(report, dtype):
    a, t = torch.randn(6, 5, dtype=dtype), torch.randn(6, 5, dtype=dtype)
    logp = torch.log_softmax(torch.randn(6, 5, dtype=dtype), 1)
    target = torch.randint(0, 5, (6,))
    target[2] = -100
    weight = torch.rand(5, dtype=dtype) + 0.5
    for reduction in ("mean", "sum", "none"):
        report.compare("mse_loss", reduction, nn.mse_loss(a, t, reduction), F.mse_loss(a, t, reduction=reduction), TOL_NN)
        report.compare("mse_loss", reduction + " broadcast", nn.mse_loss(a, t[0], reduction),
                       F.mse_loss(a, t[0].expand_as(a), reduction=reduction), TOL_NN)
        report.compare("l1_loss", reduction, nn.l1_loss(a, t, reduction), F.l1_loss(a, t, reduction=reduction), TOL_NN)
        report.compare("nll_loss", reduction, nn.nll_loss(logp, target, reduction=reduction),
                       F.nll_loss(logp, target, reduction=reduction), TOL_NN)
        report.compare("nll_loss", reduction + " weight", nn.nll_loss(logp, target, weight, reduction=reduction),
                       F.nll_loss(logp, target, weight, reduction=reduction), TOL_NN)
        report.compare("nll_loss", reduction + " (C,)", nn.nll_loss(logp[0], target[0], reduction=reduction),
                       F.nll_loss(logp[0], target[0], reduction=reduction), TOL_NN)


def check_low_precision(report):
    x = torch.randn(6, 40) * 3
    w, b = torch.randn(40), torch.randn(40)
    low_precision_cases(report, "softmax", lambda t: nn.softmax(t, -1), lambda t: F.softmax(t, -1), x)
    low_precision_cases(report, "log_softmax", lambda t: nn.log_softmax(t, -1),
                        lambda t: F.log_softmax(t, -1), x, exact_113=True)
    low_precision_cases(report, "layer_norm", lambda t: nn.layer_norm(t, (40,)),
                        lambda t: F.layer_norm(t, (40,)), x, exact_113=True)
    low_precision_cases(report, "layer_norm", lambda t, w, b: nn.layer_norm(t, (40,), w, b),
                        lambda t, w, b: F.layer_norm(t, (40,), w, b), x, w, b, exact_113=True)
    low_precision_cases(report, "gelu", nn.gelu, F.gelu, x)
    low_precision_cases(report, "gelu", lambda t: nn.gelu(t, approximate="tanh"),
                        lambda t: F.gelu(t, approximate="tanh"), x, exact_113=True)
    low_precision_cases(report, "silu", nn.silu, F.silu, x, exact_113=True)
    # 64-wide rows, and other widths (the lane order of the sums and moments).
    for n in (64, 7, 16, 17, 33, 200):
        y = torch.randn(6, n) * 3
        wy, by = torch.randn(n), torch.randn(n)
        low_precision_cases(report, "log_softmax", lambda t: nn.log_softmax(t, -1),
                            lambda t: F.log_softmax(t, -1), y, exact_113=True)
        low_precision_cases(report, "layer_norm", lambda t, w, b: nn.layer_norm(t, (n,), w, b),
                            lambda t, w, b: F.layer_norm(t, (n,), w, b), y, wy, by, exact_113=True)
        low_precision_cases(report, "silu", nn.silu, F.silu, y, exact_113=True)
    for dt in (torch.bfloat16,):  # (PyTorch 1.13 has no float16 leaky_relu/softplus on the CPU)
        report.compare("leaky_relu", str(dt), nn.leaky_relu(x.to(dt)), F.leaky_relu(x.to(dt)), 0)
        report.compare("softplus", str(dt), nn.softplus(x.to(dt)), F.softplus(x.to(dt)), TOL_LOW_113)
    for dt in (torch.bfloat16, torch.float16):
        report.compare("rms_norm", str(dt), nn.rms_norm(x.to(dt), (40,)),
                       rms_norm_reference(x.to(dt), (40,)), TOL_LOW)


def log_softmax_113_other_dim(x, dim, neighbour_max):
    """PyTorch 1.13's bfloat16 log_softmax over a dim other than the last
    (aten/src/ATen/native/cpu/SoftMaxKernel.cpp, _vec_logsoftmax<BFloat16>),
    as a model: per (outer, inner) column the float32 max, the exp-sum in
    float32 in dim order, its log, then (x - max) - log rounded once. With
    AVX2, 16 inner columns form a vector of two 8-float halves; the kernel
    stores the first half's running max over the second half too, so with
    neighbour_max those columns are shifted by the max of the column 8 to
    their left (in the vectorised part of the row only)."""
    B, HALF = 16, 8
    outer = math.prod(x.shape[:dim])
    n = x.shape[dim]
    inner = x.numel() // max(outer * n, 1)
    v = x.float().reshape(outer, n, inner)
    m = v.amax(1, keepdim=True)
    if neighbour_max:
        m = m.clone()
        for c in range(0, inner - inner % B, B):
            m[:, :, c + HALF:c + B] = m[:, :, c:c + HALF]
    s = torch.zeros_like(m)
    for i in range(n):
        s = s + torch.exp(v[:, i:i + 1] - m)
    return (v - m - torch.log(s)).bfloat16().reshape(x.shape)


def check_bf16_log_softmax_other_dims(report):
    """1.13's kernel shifts some columns by another column's max (model
    above). That only changes rounding, or, where exp of the wrong shift
    overflows, gives -inf for a finite answer. thn shifts every column by its
    own max: it must equal the model without the mistake bit for bit, and so
    equal PyTorch wherever PyTorch used the right max."""
    gen = torch.Generator().manual_seed(SEED)
    for case in range(120):
        nd = 2 + case % 3
        shape = [int(s) for s in torch.randint(1, 10, (nd,), generator=gen)]
        if case % 3 == 0:
            shape[-1] = int(torch.randint(10, 41, (1,), generator=gen))
        dim = case % (nd - 1)
        x = (torch.randn(shape, generator=gen) * (1, 3, 10)[case % 3]).bfloat16()
        torch_out = F.log_softmax(x, dim)
        name = f"{tuple(shape)} dim={dim}"
        report.expect("log_softmax bf16 other dim", name + " model of 1.13's kernel",
                      torch.equal(log_softmax_113_other_dim(x, dim, True), torch_out),
                      "the model does not reproduce torch 1.13")
        ours = nn.log_softmax(x, dim)
        report.compare("log_softmax bf16 other dim", name + " vs the kernel, right max",
                       ours, log_softmax_113_other_dim(x, dim, False), 0)
        right = log_softmax_113_other_dim(x, dim, False) == log_softmax_113_other_dim(x, dim, True)
        report.compare("log_softmax bf16 other dim", name + " vs torch 1.13 where its max is right",
                       ours[right], torch_out[right], 0)
    x = torch.zeros(3, 16)
    x[:, 0], x[:, 8] = -100.0, 100.0
    x = x.bfloat16()
    ours, torch_out = nn.log_softmax(x, 0), F.log_softmax(x, 0)
    report.expect("log_softmax bf16 other dim", "1.13 overflows on a shifted column",
                  bool(torch_out[:, 8].isinf().all()), f"torch gave {torch_out[:, 8]}")
    report.compare("log_softmax bf16 other dim", "thn gives log(1/3) there", ours,
                   F.log_softmax(x.float(), 0).bfloat16(), 0)


def check_dropout(report, dtype):
    x = torch.randn(200, 500, dtype=dtype)
    report.expect("dropout", "p=0 returns input", nn.dropout(x, 0.0) is x, "not the same tensor")
    report.expect("dropout", "training=False returns input", nn.dropout(x, 0.5, False) is x,
                  "not the same tensor")
    report.compare("dropout", "p=1", nn.dropout(x, 1.0), F.dropout(x, 1.0), 0)
    for p in (0.1, 0.5, 0.8):
        y = nn.dropout(x, p)
        kept = y != 0
        fraction = kept.double().mean().item()
        report.expect("dropout", f"p={p} keeps 1-p", abs(fraction - (1 - p)) < 0.01,
                      f"kept {fraction:.4f}")
        scaled = torch.where(kept, x * torch.tensor(1 / (1 - p), dtype=dtype), torch.zeros_like(x))
        report.compare("dropout", f"p={p} survivors scaled", y, scaled, TOL_NN)
    try:
        nn.dropout(x, 1.5)
        report.expect("dropout", "p=1.5 rejected", False, "accepted p=1.5")
    except AssertionError as e:
        report.expect("dropout", "p=1.5 rejected", "between 0 and 1" in str(e), str(e))


def sdpa_reference(query, key, value, attn_mask=None, is_causal=False, scale=None):
    """The definition in PyTorch 2.x's F.scaled_dot_product_attention docs,
    with the masks applied out of place so that they may broadcast."""
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    attn_bias = torch.zeros(L, S, dtype=query.dtype)
    if is_causal:
        temp_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
        attn_bias.masked_fill_(temp_mask.logical_not(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            attn_bias = attn_bias.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            attn_bias = attn_bias + attn_mask
    attn_weight = query @ key.transpose(-2, -1) * scale_factor
    attn_weight += attn_bias
    attn_weight = torch.softmax(attn_weight, dim=-1)
    return attn_weight @ value


def check_sdpa(report, dtype):
    q = torch.randn(2, 3, 5, 8, dtype=dtype)
    k = torch.randn(2, 3, 7, 8, dtype=dtype)
    v = torch.randn(2, 3, 7, 4, dtype=dtype)
    bool_mask = torch.rand(5, 7) < 0.7
    bool_mask[:, 0] = True  # no row fully masked
    batch_mask = torch.rand(2, 1, 5, 7) < 0.7
    batch_mask[..., 0] = True
    float_mask = torch.randn(5, 7, dtype=dtype)
    cases = [
        ("no mask", {}),
        ("bool mask (L, S)", {"attn_mask": bool_mask}),
        ("bool mask (N, 1, L, S)", {"attn_mask": batch_mask}),
        ("float mask", {"attn_mask": float_mask}),
        ("is_causal, L < S", {"is_causal": True}),
        ("scale=0.3", {"scale": 0.3}),
        ("float mask, scale=2.0", {"attn_mask": float_mask, "scale": 2.0}),
    ]
    for name, kw in cases:
        report.compare("scaled_dot_product_attention", name + " vs 2.x definition",
                       nn.scaled_dot_product_attention(q, k, v, **kw), sdpa_reference(q, k, v, **kw), TOL_NN)
    qs, ks, vs = q, k[:, :, :5], v[:, :, :5]
    report.compare("scaled_dot_product_attention", "is_causal, L == S vs 2.x definition",
                   nn.scaled_dot_product_attention(qs, ks, vs, is_causal=True),
                   sdpa_reference(qs, ks, vs, is_causal=True), TOL_NN)
    # PyTorch 1.13's private kernel takes bool masks and the default scale.
    for name, mask, causal in [("no mask", None, False), ("bool mask", bool_mask, False),
                               ("is_causal", None, True)]:
        ref, _ = torch._C._nn._scaled_dot_product_attention(q, k, v, mask, 0.0, False, causal)
        report.compare("scaled_dot_product_attention", name + " vs torch 1.13 kernel",
                       nn.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal), ref, TOL_NN)
    out = nn.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    report.compare("scaled_dot_product_attention", "dropout_p=1", out, torch.zeros_like(out), 0)


def check_cross_entropy(report, dtype):
    logits = torch.randn(6, 5, dtype=dtype) * 2
    target = torch.randint(0, 5, (6,))
    ignored = target.clone()
    ignored[1] = -100
    ignored[4] = -100
    weight = torch.rand(5, dtype=dtype) + 0.5
    spatial = torch.randn(3, 4, 2, 5, dtype=dtype)
    spatial_target = torch.randint(0, 4, (3, 2, 5))
    probs = torch.softmax(torch.randn(6, 5, dtype=dtype), 1)
    spatial_probs = torch.softmax(torch.randn(3, 4, 2, 5, dtype=dtype), 1)
    cases = [
        ("(N, C)", logits, target, {}),
        ("(C,) with () target", logits[0], target[0], {}),
        ("(N, C, d1, d2)", spatial, spatial_target, {}),
        ("ignore_index=-100 entries", logits, ignored, {}),
        ("ignore_index=2", logits, target, {"ignore_index": 2}),
        ("weight", logits, target, {"weight": weight}),
        ("weight + ignored", logits, ignored, {"weight": weight}),
        ("(N, C, d1, d2) weight", spatial, spatial_target, {"weight": weight[:4]}),
        ("probabilities", logits, probs, {}),
        ("probabilities, weight", logits, probs, {"weight": weight}),
        ("probabilities (N, C, d1, d2)", spatial, spatial_probs, {}),
        ("probabilities (C,)", logits[0], probs[0], {}),
    ]
    for name, x, t, kw in cases:
        for reduction in ("mean", "sum", "none"):
            report.compare("cross_entropy", f"{name} {reduction}",
                           nn.cross_entropy(x, t, reduction=reduction, **kw),
                           F.cross_entropy(x, t, reduction=reduction, **kw), TOL_NN)


def run_optimizer(torch_opt_class, torch_kw, thn_step, steps=6):
    """Runs `steps` updates of torch.optim and of a stdlib step function from
    the same parameters with the same gradients; returns both parameter lists
    after every step."""
    dtype = torch_kw.pop("dtype")
    shapes = [(4, 3), (3,), (2, 2, 2)]
    init = [torch.randn(s, dtype=dtype) for s in shapes]
    grads = [[torch.randn(s, dtype=dtype) for s in shapes] for _ in range(steps)]
    ref = [p.clone().requires_grad_(True) for p in init]
    opt = torch_opt_class(ref, foreach=False, **torch_kw)
    ours = [p.clone() for p in init]
    state = [[torch.zeros_like(p) for p in init] for _ in range(3)]
    history = []
    for t in range(steps):
        for p, g in zip(ref, grads[t]):
            p.grad = g.clone()
        opt.step()
        thn_step(ours, [g.clone() for g in grads[t]], state, t + 1)
        history.append((t + 1, [p.detach().clone() for p in ref], [p.clone() for p in ours]))
    return history


def check_optim(report, dtype):
    sgd = [
        {"lr": 0.1},
        {"lr": 0.1, "momentum": 0.9},
        {"lr": 0.05, "momentum": 0.9, "dampening": 0.3},
        {"lr": 0.05, "momentum": 0.8, "nesterov": True},
        {"lr": 0.1, "momentum": 0.5, "weight_decay": 0.01},
        {"lr": 0.1, "weight_decay": 0.1, "maximize": True},
    ]
    adam = [
        {},
        {"lr": 1e-2, "betas": (0.8, 0.99), "eps": 1e-6},
        {"lr": 1e-2, "weight_decay": 0.1},
        {"lr": 1e-2, "amsgrad": True},
        {"lr": 1e-2, "maximize": True},
    ]
    for kw in sgd:
        compare_history(report, "sgd_step", kw,
                        run_optimizer(torch.optim.SGD, dict(kw, dtype=dtype), sgd_stepper(kw)))
    for name, torch_class, thn_fn in [("adam_step", torch.optim.Adam, optim.adam_step),
                                      ("adamw_step", torch.optim.AdamW, optim.adamw_step)]:
        for kw in adam + ([{"lr": 1e-2, "weight_decay": 0.3}] if name == "adamw_step" else []):
            compare_history(report, name, kw,
                            run_optimizer(torch_class, dict(kw, dtype=dtype), adam_stepper(thn_fn, kw)))


def sgd_stepper(kw):
    """torch.optim.SGD's options as a call of optim.sgd_step."""
    def step(params, grads, state, t):
        optim.sgd_step(params, grads, momentum_buffers=state[0], step=t, **kw)
    return step


def adam_stepper(thn_fn, kw):
    """torch.optim.Adam(W)'s options as a call of optim.adam(w)_step."""
    thn_kw = {k: v for k, v in kw.items() if k != "betas"}
    if "betas" in kw:
        thn_kw["beta1"], thn_kw["beta2"] = kw["betas"]

    def step(params, grads, state, t):
        max_sqs = {"max_exp_avg_sqs": state[2]} if kw.get("amsgrad") else {}
        thn_fn(params, grads, state[0], state[1], t, **thn_kw, **max_sqs)
    return step


def compare_history(report, group, kw, history):
    options = ", ".join(f"{k}={v}" for k, v in kw.items()) or "defaults"
    for t, ref, ours in history:
        for i, (r, o) in enumerate(zip(ref, ours)):
            report.compare(group, f"{options} step {t} param {i}", o, r, 0)


def check_language(report):
    for path in sorted(STDLIB.glob("*.thn")):
        problems = check_file(path)
        report.expect("thn language subset", path.name, not problems, "; ".join(problems))


def main():
    report = Report()
    check_language(report)
    for dtype in (torch.float32, torch.float64):
        torch.manual_seed(SEED)
        for check in (check_softmax, check_layer_norm, check_rms_norm, check_activations, check_layers,
                      check_losses, check_dropout, check_sdpa, check_cross_entropy, check_optim):
            check(report, dtype)
    torch.manual_seed(SEED + 1)
    check_low_precision(report)
    check_bf16_log_softmax_other_dims(report)
    report.summary()
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
