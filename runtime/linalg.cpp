// Linear algebra: matmul with all of PyTorch's cases (dot, mv, mm, bmm, the
// folded and the broadcast batched forms), linear and outer. Each entry
// point makes PyTorch 1.13's checks in PyTorch's order, then calls
// batched_gemm: float32/float64 through CBLAS, reading transposed operands in
// place; float16 and bfloat16 computed in float32; integers by loops. On
// CUDA tensors, cuBLAS for every floating dtype (runtime/cublas.cpp); as in
// PyTorch, no integer kernel.
#include <cblas.h>

#include <omp.h>

#include <algorithm>
#include <optional>

#include "runtime/cuda.h"
#include "runtime/elementwise.h"
#include "runtime/error.h"
#include "runtime/views.h"

namespace thn {

namespace {

// How row-major CBLAS reads a [rows, cols] matrix with strides (rs, cs)
// without a copy: as it is, or as the transpose of what it stores. A size-1
// dim may have any stride.
struct BlasLayout {
  CBLAS_TRANSPOSE trans;
  int64_t ld;
};
std::optional<BlasLayout> blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if ((cols == 1 || cs == 1) && (rows == 1 || rs >= std::max<int64_t>(cols, 1)))
    return BlasLayout{CblasNoTrans, rows == 1 ? std::max<int64_t>(cols, 1) : rs};
  if ((rows == 1 || rs == 1) && (cols == 1 || cs >= std::max<int64_t>(rows, 1)))
    return BlasLayout{CblasTrans, cols == 1 ? std::max<int64_t>(rows, 1) : cs};
  return std::nullopt;
}

// The layout of t's matrices [..., rows, cols]; t is made contiguous first
// when CBLAS cannot read it (overlapping or gapped strides).
BlasLayout blas_operand(Tensor& t) {
  const int64_t d = t.dim();
  auto layout = [&] { return blas_layout(t.sizes()[d - 2], t.sizes()[d - 1], t.strides()[d - 2], t.strides()[d - 1]); };
  if (auto l = layout()) return *l;
  t = contiguous(t);
  return *layout();
}

// How a product's work is shared among the OpenMP threads, in pieces of at
// least about 2^17 multiply-adds (a parallel region costs about a
// microsecond), each one single-threaded CBLAS call inside the region (the
// OpenMP OpenBLAS runs serially inside a parallel region). A batch shares
// out its matrices. One matrix of fewer than 2^24 multiply-adds is cut into
// row blocks (column blocks, when it is wider than tall), as many as its
// shape alone says (one per 2^17 multiply-adds, at most 8): OpenBLAS rounds
// a block as it rounds a matrix of that shape, so the thread count must not
// choose the blocks. Larger products are one call each, shared by
// OpenBLAS's own threads (which share them well). OpenBLAS's threads share
// a small product badly: on 2 cores, [256, 64] @ [64, 64] took 30 us on its
// two threads, 17 us on one, and 8 us as two row blocks (bench/README.md,
// session 39).
struct GemmSplit {
  int64_t pieces = 1;   // per matrix
  int64_t threads = 1;  // of the parallel region (1: none)
  bool by_rows = true;
};
GemmSplit gemm_split(int64_t count, int64_t m, int64_t n, int64_t k) {
  static const bool serial_blas = [] {
    // The pthread OpenBLAS would start its own threads inside the region.
    if (openblas_get_parallel() != 2) openblas_set_num_threads(1);
    return true;
  }();
  (void)serial_blas;
  const int64_t threads = omp_get_max_threads();  // (adapt_threads' count)
  constexpr int64_t kLarge = int64_t(1) << 24;
  const int64_t each = m * n * k, work = (count * each) >> 17;
  GemmSplit s;
  if (work < 2) return s;
  if (count > 1) {
    if (each < kLarge || count >= threads) s.threads = std::min({threads, count, work});
    return s;
  }
  if (each >= kLarge) return s;
  s.by_rows = m >= n;
  s.pieces = std::min({work, int64_t(8), s.by_rows ? m : (n + 15) / 16});
  s.threads = std::min(threads, s.pieces);
  return s;
}

// out[i] = a[i] @ b[i] (+ out[i] when accumulating) for T = float or double,
// over the batch dims [0, dim - 2) of out (new and contiguous), a and b (any
// strides: a broadcast batch, or a permuted one that does not flatten).
template <class T>
void gemm_blas(const Tensor& out, Tensor a, Tensor b, bool accumulate) {
  const int64_t d = out.dim();
  const int64_t m = out.sizes()[d - 2], n = out.sizes()[d - 1], k = a.sizes()[d - 1];
  const BlasLayout la = blas_operand(a), lb = blas_operand(b);
  const T beta = accumulate ? T(1) : T(0);
  const int64_t count = out.numel() / (m * n);
  const GemmSplit split = gemm_split(count, m, n, k);
  // Piece p: matrix p / pieces, rows (or columns) [lo, hi) of it.
  auto piece = [&](int64_t p) {
    const int64_t i = p / split.pieces, part = p % split.pieces;
    int64_t oa = 0, ob = 0;
    for (int64_t r = i, j = d - 3; j >= 0; --j) {
      const int64_t c = r % out.sizes()[size_t(j)];
      r /= out.sizes()[size_t(j)];
      oa += c * a.strides()[size_t(j)];
      ob += c * b.strides()[size_t(j)];
    }
    int64_t oc = i * m * n, rows = m, cols = n;
    if (split.pieces > 1) {
      // Column blocks in multiples of 16: whole vectors for the kernels.
      const int64_t len = split.by_rows ? m : n;
      const int64_t step = split.by_rows ? (len + split.pieces - 1) / split.pieces
                                         : (len + 16 * split.pieces - 1) / (16 * split.pieces) * 16;
      const int64_t lo = std::min(len, part * step), hi = std::min(len, lo + step);
      if (lo == hi) return;
      if (split.by_rows) {
        rows = hi - lo;
        oa += la.trans == CblasNoTrans ? lo * la.ld : lo;
        oc += lo * n;
      } else {
        cols = hi - lo;
        ob += lb.trans == CblasNoTrans ? lo : lo * lb.ld;
        oc += lo;
      }
    }
    const T* pa = a.data<T>() + oa;
    const T* pb = b.data<T>() + ob;
    T* pc = out.data<T>() + oc;
    if constexpr (std::is_same_v<T, float>)
      cblas_sgemm(CblasRowMajor, la.trans, lb.trans, int(rows), int(cols), int(k), 1.f, pa, int(la.ld), pb,
                  int(lb.ld), beta, pc, int(n));
    else
      cblas_dgemm(CblasRowMajor, la.trans, lb.trans, int(rows), int(cols), int(k), 1.0, pa, int(la.ld), pb,
                  int(lb.ld), beta, pc, int(n));
  };
  const int64_t pieces = count * split.pieces;
#pragma omp parallel for if (split.threads > 1) num_threads(int(split.threads)) schedule(static)
  for (int64_t p = 0; p < pieces; p++) piece(p);
}

// The integer product. It accumulates in uint64 so that overflow wraps, as
// PyTorch's integer kernels do, without undefined behaviour.
template <class S>
void gemm_loops(const Tensor& out, const Tensor& a, const Tensor& b, bool accumulate) {
  const Dims &sa = a.strides(), &sb = b.strides();
  const int64_t batches = out.sizes()[0], m = out.sizes()[1], n = out.sizes()[2], k = a.sizes()[2];
  S* c = out.data<S>();
  for (int64_t bi = 0; bi < batches; bi++) {
    const S* pa = a.data<S>() + bi * sa[0];
    const S* pb = b.data<S>() + bi * sb[0];
    for (int64_t i = 0; i < m; i++) {
      for (int64_t j = 0; j < n; j++, c++) {
        uint64_t acc = accumulate ? uint64_t(int64_t(*c)) : 0;
        for (int64_t p = 0; p < k; p++)
          acc += uint64_t(int64_t(pa[i * sa[1] + p * sa[2]])) * uint64_t(int64_t(pb[p * sb[1] + j * sb[2]]));
        *c = S(int64_t(acc));
      }
    }
  }
}

// PyTorch's CPU matmul kernels have no bool instantiation. (Nor float16:
// thn computes float16 in float32 as it does bfloat16, as the elementwise ops
// do where PyTorch 1.13 lacks a float16 kernel.) Its CUDA kernels (named
// after the CPU ones here; dot's keeps its name) are cuBLAS's: floating
// types only.
void check_implemented(std::string_view kernel, DType dtype, Device device) {
  if (dtype == DType::Bool || (KernelDeviceScope::of(device).type == DeviceType::CUDA && !is_floating(dtype)))
    not_implemented(kernel, dtype, device, kernel == "dot" ? "dot" : "");
}

// The product on CUDA: cuBLAS reads the operands as CBLAS would.
void gemm_cuda(const Tensor& out, Tensor a, Tensor b, bool accumulate) {
  const BlasLayout la = blas_operand(a), lb = blas_operand(b);
  auto operand = [](const Tensor& t, const BlasLayout& l) {
    return cuda::Gemm::Operand{t.device_address(), l.trans == CblasTrans, l.ld, t.strides()[0]};
  };
  cuda::gemm({out.dtype(), out.sizes()[0], out.sizes()[1], out.sizes()[2], a.sizes()[2], operand(a, la), operand(b, lb),
              out.device_address(), accumulate});
}

// out = a @ b (+ out when accumulating) over a batch: a [B, m, k], b [B, k,
// n], out [B, m, n] new and contiguous; shapes already checked. Like
// PyTorch, an empty product is handled before the dtypes are looked at;
// then the kernel (named `kernel` in errors) reads a and b as out's dtype.
void batched_gemm(const Tensor& out, const Tensor& a, const Tensor& b, const char* kernel, bool accumulate = false) {
  if (out.numel() == 0) return;
  if (a.sizes().back() == 0) {
    if (!accumulate) fill(out, Scalar(int64_t(0)));
    return;
  }
  check_implemented(kernel, out.dtype(), out.device());
  for (const Tensor* t : {&b, &a})
    THN_CHECK(t->dtype() == out.dtype(), "expected scalar type {} but found {}", dtype_torch_name(out.dtype()),
              dtype_torch_name(t->dtype()));
  if (is_meta(out)) return;
  if (out.device().type == DeviceType::CUDA) return gemm_cuda(out, a, b, accumulate);
  switch (out.dtype()) {
    case DType::Float32: return gemm_blas<float>(out, a, b, accumulate);
    case DType::Float64: return gemm_blas<double>(out, a, b, accumulate);
    case DType::Float16:
    case DType::BFloat16: {
      Tensor out32 = to_dtype(out, DType::Float32);
      gemm_blas<float>(out32, to_dtype(a, DType::Float32), to_dtype(b, DType::Float32), accumulate);
      return copy_into(out, out32);
    }
    case DType::Int32: return gemm_loops<int32_t>(out, a, b, accumulate);
    case DType::Int64: return gemm_loops<int64_t>(out, a, b, accumulate);
    default: fail("batched_gemm: unexpected dtype {}", dtype_name(out.dtype()));
  }
}

// A vector as a batch of one row [1, 1, k] or one column [1, k, 1].
Tensor as_row(const Tensor& v) { return unsqueeze(unsqueeze(v, 0), 0); }
Tensor as_column(const Tensor& v) { return unsqueeze(unsqueeze(v, 1), 0); }

void check_mm_shapes(const Tensor& a, const Tensor& b) {
  THN_CHECK(a.sizes()[1] == b.sizes()[0], "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", a.sizes()[0],
            a.sizes()[1], b.sizes()[0], b.sizes()[1]);
}

Tensor dot(const Tensor& a, const Tensor& b) {
  THN_CHECK(a.dim() == 1 && b.dim() == 1, "1D tensors expected, but got {}D and {}D tensors", a.dim(), b.dim());
  THN_CHECK(a.dtype() == b.dtype(), "dot : expected both vectors to have same dtype, but found {} and {}",
            dtype_torch_name(a.dtype()), dtype_torch_name(b.dtype()));
  THN_CHECK(a.numel() == b.numel(),
            "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got "
            "{} and {} elements respectively",
            a.numel(), b.numel(), a.numel(), b.numel());
  check_implemented("dot", a.dtype(), a.device());  // before the empty case, unlike mm
  Tensor out = empty({}, a.dtype(), a.device());
  batched_gemm(view(out, {1, 1, 1}), as_row(a), as_column(b), "dot");
  return out;
}

// matmul's matrix @ vector.
Tensor mv(const Tensor& mat, const Tensor& vec) {
  const int64_t m = mat.sizes()[0];
  THN_CHECK(mat.sizes()[1] == vec.sizes()[0], "size mismatch, got {}, {}x{},{}", m, m, mat.sizes()[1], vec.sizes()[0]);
  Tensor out = empty({m}, mat.dtype(), mat.device());
  batched_gemm(view(out, {1, m, 1}), unsqueeze(mat, 0), as_column(vec), "addmv_impl_cpu");
  return out;
}

Tensor mm(const Tensor& a, const Tensor& b) {
  THN_CHECK(a.dim() == 2, "self must be a matrix");
  THN_CHECK(b.dim() == 2, "mat2 must be a matrix");
  check_mm_shapes(a, b);
  Tensor out = empty({a.sizes()[0], b.sizes()[1]}, a.dtype(), a.device());
  batched_gemm(unsqueeze(out, 0), unsqueeze(a, 0), unsqueeze(b, 0), "addmm_impl_cpu_");
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  THN_CHECK(a.dim() == 3, "batch1 must be a 3D tensor");
  THN_CHECK(b.dim() == 3, "batch2 must be a 3D tensor");
  const Dims &sa = a.sizes(), &sb = b.sizes();
  THN_CHECK(sb[0] == sa[0] && sb[1] == sa[2],
            "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].", sa[0], sa[2],
            sb[0], sb[1]);
  Tensor out = empty({sa[0], sa[1], sb[2]}, a.dtype(), a.device());
  batched_gemm(out, a, b, "bmm");
  return out;
}

Tensor mT(const Tensor& t) { return transpose(t, -2, -1); }

// PyTorch's should_fold: t1 has a batch that can be folded into the rows of
// one mm/mv with the other operand. Not when t1's matrices are transposed
// under a dense batch dim: folding would copy, bmm reads them in place.
bool should_fold(const Tensor& t1, int64_t dim2) {
  if (t1.dim() < 3 || (dim2 != 1 && dim2 != 2)) return false;
  return !(t1.dim() == 3 && dim2 == 2 && t1.strides()[2] != 1 && t1.strides()[0] == t1.sizes()[1] * t1.sizes()[2]);
}

// The folded case: (t1 @ t2)^T = t2^T @ t1^T lets the operand with the
// batch go first when it is the right one.
Tensor folded_matmul(const Tensor& tensor1, const Tensor& tensor2) {
  const bool transposed = tensor2.dim() > tensor1.dim();
  const Tensor t1 = transposed ? mT(tensor2) : tensor1;
  const Tensor t2 = !transposed ? tensor2 : tensor1.dim() == 2 ? mT(tensor1) : tensor1;
  Dims out_shape(t1.sizes().begin(), t1.sizes().end() - 1);
  Tensor folded = reshape(t1, {numel_of(out_shape), t1.sizes().back()});
  if (t2.dim() == 1) return view(mv(folded, t2), out_shape);
  out_shape.push_back(t2.sizes()[1]);
  Tensor out = view(mm(folded, t2), out_shape);
  return transposed ? contiguous(mT(out)) : out;
}

// The general case: batch dims broadcast, flattened into one bmm.
Tensor broadcast_matmul(const Tensor& t1, const Tensor& t2) {
  const int64_t d1 = t1.dim(), d2 = t2.dim();
  const int64_t n = d1 > 1 ? t1.size(-2) : 1, m1 = t1.size(-1);
  const int64_t m2 = d2 > 1 ? t2.size(-2) : t2.size(0), p = d2 > 1 ? t2.size(-1) : 1;
  const Dims batch = broadcast_shapes(Dims(t1.sizes().begin(), t1.sizes().end() - std::min<int64_t>(d1, 2)),
                                      Dims(t2.sizes().begin(), t2.sizes().end() - std::min<int64_t>(d2, 2)));
  const int64_t nb = numel_of(batch);
  auto batch_and = [&batch](std::initializer_list<int64_t> tail) {
    Dims s = batch;
    s.insert(s.end(), tail);
    return s;
  };
  Tensor a = expand(t1, batch_and({n, m1}));
  Tensor b = d2 == 1 ? unsqueeze(expand(t2, batch_and({m2})), -1) : expand(t2, batch_and({m2, p}));
  Dims out_shape = batch;
  if (d1 > 1) out_shape.push_back(n);
  if (d2 > 1) out_shape.push_back(p);
  const DType dt = t1.dtype();
  if (t1.device().type == DeviceType::CPU && t1.dtype() == t2.dtype() && (dt == DType::Float32 || dt == DType::Float64)) {
    // CBLAS per matrix wherever the batch dims put it: no copy of an
    // operand whose batch does not flatten (attention's heads of a qkv).
    THN_CHECK(m2 == m1, "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
              nb, m1, nb, m2);
    Tensor out = empty(batch_and({n, p}), dt, t1.device());
    batched_gemm(out, a, b, "bmm");
    return view(out, out_shape);
  }
  return view(bmm(reshape(a, {nb, n, m1}), reshape(b, {nb, m2, p})), out_shape);
}

Tensor matmul(const Tensor& t1, const Tensor& t2) {
  const int64_t d1 = t1.dim(), d2 = t2.dim();
  THN_CHECK(d1 != 0 && d2 != 0, "both arguments to matmul need to be at least 1D, but they are {}D and {}D", d1, d2);
  if (d1 == 1 && d2 == 1) return dot(t1, t2);
  if (d1 == 2 && d2 == 1) return mv(t1, t2);
  if (d1 == 1 && d2 == 2) return squeeze(mm(unsqueeze(t1, 0), t2), 0);
  if (d1 == 2 && d2 == 2) return mm(t1, t2);
  if (should_fold(t1, d2) || should_fold(t2, d1)) return folded_matmul(t1, t2);
  return broadcast_matmul(t1, t2);
}

// bias + m1 @ m2 (PyTorch's addmm with beta = alpha = 1); the result has
// bias's dtype.
Tensor addmm(const Tensor& bias, const Tensor& m1, const Tensor& m2) {
  THN_CHECK(bias.dtype() == m2.dtype(), "self and mat2 must have the same dtype");
  THN_CHECK(m1.dtype() == m2.dtype(), "mat1 and mat2 must have the same dtype");
  THN_CHECK(m1.dim() == 2, "mat1 must be a matrix, got {}-D tensor", m1.dim());
  THN_CHECK(m2.dim() == 2, "mat2 must be a matrix, got {}-D tensor", m2.dim());
  check_mm_shapes(m1, m2);
  Tensor expanded = expand(bias, {m1.sizes()[0], m2.sizes()[1]});
  Tensor out = empty(expanded.sizes(), bias.dtype(), bias.device());
  copy_into(out, expanded);
  batched_gemm(unsqueeze(out, 0), unsqueeze(m1, 0), unsqueeze(m2, 0), "addmm_impl_cpu_", /*accumulate=*/true);
  return out;
}

Tensor weight_t(const Tensor& w) {
  THN_CHECK(w.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is {}D", w.dim());
  return w.dim() < 2 ? w : transpose(w, 0, 1);
}

// PyTorch 1.13's linear: addmm for 2-D input (and contiguous 3-D input,
// folded) with a bias; otherwise matmul then an in-place add of the bias.
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  const Tensor wt = weight_t(weight);
  if (bias && input.dim() == 2) return addmm(*bias, input, wt);
  if (bias && input.dim() == 3 && input.is_contiguous()) {
    const Dims& s = input.sizes();
    Tensor out = addmm(*bias, view(input, {s[0] * s[1], s[2]}), wt);
    return view(out, {s[0], s[1], out.sizes()[1]});
  }
  Tensor out = matmul(input, wt);
  if (bias) call_method(out, "add_", {IValue(*bias)});  // on CUDA, the device's add
  return out;
}

Tensor outer(const Tensor& a, const Tensor& b) {
  THN_CHECK(a.dim() == 1, "outer: Expected 1-D argument self, but got {}-D", a.dim());
  THN_CHECK(b.dim() == 1, "outer: Expected 1-D argument vec2, but got {}-D", b.dim());
  return call("mul", {IValue(reshape(a, {a.numel(), 1})), IValue(b)}).to_tensor();
}

}  // namespace

IValue op_matmul(const Args& a) { return matmul(a.tensor(0), a.tensor(1)); }
IValue op_mm(const Args& a) { return mm(a.tensor(0), a.tensor(1)); }
IValue op_bmm(const Args& a) { return bmm(a.tensor(0), a.tensor(1)); }
IValue op_linear(const Args& a) { return linear(a.tensor(0), a.tensor(1), a.opt_tensor(2)); }
IValue op_outer(const Args& a) { return outer(a.tensor(0), a.tensor(1)); }

}  // namespace thn
