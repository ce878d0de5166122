// Reductions and the cumsum scan. The associative reductions (sum, prod,
// amax/amin, all/any) share one strided engine with PyTorch's cascade
// summation; the ones that track an index or need two passes (argmax, max(dim),
// var) walk a [kept, reduced] matrix view of the input row by row.
#include "runtime/reduce.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <type_traits>

#include "runtime/cuda.h"
#include "runtime/elementwise.h"
#include "runtime/error.h"
#include "runtime/loops.h"
#include "runtime/scalar_math.h"
#include "runtime/views.h"

namespace thn {
namespace {

// ---- which dims -------------------------------------------------------------

// The dims a reduction covers: every dim when `dims` is absent or empty.
std::vector<bool> reduce_mask(const Tensor& x, const std::optional<Dims>& dims) {
  const int64_t nd = x.dim();
  std::vector<bool> mask(size_t(nd), !dims || dims->empty());
  std::vector<bool> seen(size_t(std::max<int64_t>(nd, 1)), false);  // a 0-dim tensor accepts dim 0
  for (int64_t d : dims.value_or(Dims{})) {
    int64_t w = wrap_dim(d, nd);
    if (seen[size_t(w)]) fail("dim {} appears multiple times in the list of dims", w);
    seen[size_t(w)] = true;
    if (w < nd) mask[size_t(w)] = true;
  }
  return mask;
}

std::vector<bool> single_dim_mask(const Tensor& x, std::optional<int64_t> dim) {
  return reduce_mask(x, dim ? std::optional<Dims>(Dims{*dim}) : std::nullopt);
}

Dims reduced_sizes(const Tensor& x, const std::vector<bool>& mask, bool keepdim) {
  Dims out;
  for (int64_t d = 0; d < x.dim(); d++) {
    if (!mask[size_t(d)]) out.push_back(x.size(d));
    else if (keepdim) out.push_back(1);
  }
  return out;
}

int64_t reduced_numel(const Tensor& x, const std::vector<bool>& mask) {
  int64_t n = 1;
  for (int64_t d = 0; d < x.dim(); d++)
    if (mask[size_t(d)]) n *= x.size(d);
  return n;
}

// A contiguous result computed in keepdim shape, viewed with `sizes`.
Tensor with_sizes(const Tensor& t, const Dims& sizes) { return t.as_strided(sizes, contiguous_strides(sizes), 0); }

// x as a [kept, reduced] matrix: the kept dims (in order) merged into rows and
// the reduced ones into columns; a view when the strides allow.
Tensor as_rows(const Tensor& x, const std::vector<bool>& mask) {
  Dims perm;
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < x.dim(); d++)
    if (!mask[size_t(d)]) perm.push_back(d), rows *= x.size(d);
  for (int64_t d = 0; d < x.dim(); d++)
    if (mask[size_t(d)]) perm.push_back(d), cols *= x.size(d);
  return reshape(permute(x, perm), {rows, cols});
}

// PyTorch's checks before max/argmax-like reductions of an empty tensor.
void check_nonempty(const Tensor& x, const Dims& dims, const char* fn) {
  if (x.numel() != 0) return;
  THN_CHECK(!dims.empty(), "{}: Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.", fn);
  for (int64_t d : dims)
    if (x.size(d) == 0) fail(ErrorKind::IndexError, "{}: Expected reduction dim {} to have non-zero size.", fn, d);
}

// ---- the associative engine -------------------------------------------------

template <class A, class S> A load(S v) { return A(compute_t<S>(v)); }

template <class S> using float_or_i64 = std::conditional_t<std::is_floating_point_v<compute_t<S>>, compute_t<S>, int64_t>;

struct SumOp {
  template <class S> using acc = float_or_i64<S>;
  template <class A> static A identity() { return A(0); }
  template <class A> static A apply(A a, A b) { return A(a + b); }
};
struct ProdOp {
  template <class S> using acc = float_or_i64<S>;
  template <class A> static A identity() { return A(1); }
  template <class A> static A apply(A a, A b) { return A(a * b); }
};
// NaN wins: a NaN b is taken by `b != b`, and a NaN accumulator a stays
// because every comparison with it fails.
struct MaxOp {
  template <class S> using acc = compute_t<S>;
  template <class A> static A identity() {
    return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest();
  }
  template <class A> static bool wins(A b, A a) { return b > a; }
  template <class A> static A apply(A a, A b) { return (wins(b, a) || b != b) ? b : a; }
};
struct MinOp {
  template <class S> using acc = compute_t<S>;
  template <class A> static A identity() {
    return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity() : std::numeric_limits<A>::max();
  }
  template <class A> static bool wins(A b, A a) { return b < a; }
  template <class A> static A apply(A a, A b) { return (wins(b, a) || b != b) ? b : a; }
};
struct AllOp {
  template <class S> using acc = bool;
  template <class A> static A identity() { return true; }
  template <class A> static A apply(A a, A b) { return a && b; }
};
struct AnyOp {
  template <class S> using acc = bool;
  template <class A> static A identity() { return false; }
  template <class A> static A apply(A a, A b) { return a || b; }
};

using Unit = std::integral_constant<int64_t, 1>;
// Output columns the outer cascade accumulates at once: whole rows of a
// [4096, 4096] float32 input, so that it is read front to back.
template <class A> constexpr int64_t kTile = 16384 / sizeof(A);
// PyTorch's vector width in its AVX2 kernels (the CPU capability of the
// reference build): the unit of its summation order.
template <class A> constexpr int64_t kVec = 32 / int64_t(sizeof(A));

int64_t ceil_log2(int64_t x) { return x <= 2 ? 1 : 64 - __builtin_clzll(uint64_t(x - 1)); }

// PyTorch's cascade summation (SumKernel.cpp, multi_row_sum): `rows` rows of
// `width` columns are reduced column-wise into out[0, width). Four levels of
// accumulators: each flushes into the next every 2^level_power rows, so every
// addition combines partial sums of similar size, and the columns are
// independent accumulators the compiler vectorises. The other ops share it:
// their result does not depend on the order.
template <class Op, class A, class S, class Width, class ColStride>
void cascade(const S* x, int64_t row_stride, ColStride col_stride, int64_t rows, Width width, A* out) {
  constexpr int kLevels = 4;
  constexpr int64_t kCap = std::is_same_v<Width, int64_t> ? kTile<A> : int64_t(Width{});
  const int64_t level_power = std::max<int64_t>(4, ceil_log2(rows) / kLevels);
  const int64_t level_step = int64_t(1) << level_power;
  const int64_t level_mask = level_step - 1;
  A acc[kLevels][kCap];
  for (auto& level : acc) std::fill_n(level, int64_t(width), Op::template identity<A>());
  // Adds `count` rows from row i into level 0: the same additions in the same
  // order as one row at a time, with fewer passes over the accumulators.
  auto add_rows = [&](int64_t i, auto count) {
    const S* row = x + i * row_stride;
    for (int64_t k = 0; k < width; k++) {
      A a = acc[0][k];
      for (int64_t r = 0; r < count; r++) a = Op::apply(a, load<A>(row[r * row_stride + k * col_stride]));
      acc[0][k] = a;
    }
  };
  constexpr std::integral_constant<int64_t, 4> kRowsAtOnce;  // divides level_step
  int64_t i = 0;
  while (i + level_step <= rows) {
    for (int64_t j = 0; j < level_step; j += kRowsAtOnce, i += kRowsAtOnce) add_rows(i, kRowsAtOnce);
    for (int l = 1; l < kLevels; l++) {
      for (int64_t k = 0; k < width; k++) {
        acc[l][k] = Op::apply(acc[l][k], acc[l - 1][k]);
        acc[l - 1][k] = Op::template identity<A>();
      }
      if ((i & (level_mask << (l * level_power))) != 0) break;
    }
  }
  for (; i < rows; i++) add_rows(i, Unit{});
  for (int l = 1; l < kLevels; l++)
    for (int64_t k = 0; k < width; k++) acc[0][k] = Op::apply(acc[0][k], acc[l][k]);
  std::copy_n(acc[0], int64_t(width), out);
}

// PyTorch's row_sum: n_units units of U lanes (a vector register, or one
// value) at `stride`, as cascade rows of kIlp units; leftover units join the
// first unit, then the units are combined. U lanes come back.
template <class Op, class A, int64_t U, class S, class Stride>
std::array<A, U> row_units(const S* x, int64_t n_units, Stride stride) {
  constexpr int64_t kIlp = 4;
  A part[kIlp * U];
  const int64_t rows = n_units / kIlp;
  cascade<Op>(x, kIlp * U * stride, stride, rows, std::integral_constant<int64_t, kIlp * U>{}, part);
  for (int64_t i = rows * kIlp * U; i < n_units * U; i++) part[i % U] = Op::apply(part[i % U], load<A>(x[i * stride]));
  for (int64_t j = 1; j < kIlp; j++)
    for (int64_t k = 0; k < U; k++) part[k] = Op::apply(part[k], part[j * U + k]);
  std::array<A, U> lanes;
  std::copy_n(part, U, lanes.begin());
  return lanes;
}

template <class Op, class A>
constexpr bool kFloatExtreme = (std::is_same_v<Op, MaxOp> || std::is_same_v<Op, MinOp>) && std::is_floating_point_v<A>;

// Max/min of a contiguous row, with NaN kept apart from the comparison: per
// lane one vector max/min, one unordered compare and one blend that keeps
// the NaN seen, where the combined select of Op::apply does not vectorise
// (1.8x slower). 32 lanes: GCC 12 leaves 16 unvectorised.
template <class Op, class A, class S>
A extreme_row(const S* x, int64_t n) {
  constexpr int64_t W = 32;
  A best[W], nan[W];
  std::fill_n(best, W, Op::template identity<A>());
  std::fill_n(nan, W, A(0));
  int64_t i = 0;
  for (; i + W <= n; i += W)
    for (int64_t k = 0; k < W; k++) {
      A a = best[k], b = load<A>(x[i + k]);
      best[k] = Op::wins(b, a) ? b : a;
      nan[k] = b != b ? b : nan[k];
    }
  A r = Op::template identity<A>();
  for (; i < n; i++) r = Op::apply(r, load<A>(x[i]));
  for (int64_t k = 0; k < W; k++) r = Op::apply(r, best[k]);
  for (A v : nan)
    if (v != v) return v;
  return r;
}

// Op over the n values x[0], x[stride], ... in PyTorch's order: contiguous
// rows of at least one vector in units of a vector, with the leftover values
// first and then the lanes combined serially; otherwise in units of one value.
template <class Op, class A, class S>
A reduce_row(const S* x, int64_t n, int64_t stride) {
  constexpr int64_t V = kVec<A>;
  if constexpr (kFloatExtreme<Op, A>)
    if (stride == 1) return extreme_row<Op, A>(x, n);
  if (stride != 1) return row_units<Op, A, 1>(x, n, stride)[0];
  if (n < V) return row_units<Op, A, 1>(x, n, Unit{})[0];
  std::array<A, V> lanes = row_units<Op, A, V>(x, n / V, Unit{});
  A r = Op::template identity<A>();
  for (int64_t i = n / V * V; i < n; i++) r = Op::apply(r, load<A>(x[i]));
  for (A v : lanes) r = Op::apply(r, v);
  return r;
}

// o op= v, o being the result buffer: A, or the float16/bfloat16 storage, in
// which case v is rounded to it first (c10::Half's `+=` takes a Half).
template <class Op, class A, class O> void merge_into(O& o, A v) { o = O(Op::apply(load<A>(o), load<A>(O(v)))); }

// out[k * out_stride] op= Op over r of x[r * row_stride + k * col_stride], for
// k < cols: whole rows of outputs at once, vectorised across them. As in
// PyTorch, that covers the columns in groups of four vectors (contiguous) or
// four values (strided); each leftover column is a row_units reduction.
template <class Op, class A, class S, class O>
void reduce_columns(const S* x, int64_t rows, int64_t row_stride, int64_t cols, int64_t col_stride, O* out,
                    int64_t out_stride) {
  const int64_t group = col_stride == 1 && cols >= kVec<A> ? 4 * kVec<A> : 4;
  const int64_t grouped = cols / group * group;
  A part[kTile<A>];
  for (int64_t c = 0; c < grouped; c += kTile<A>) {
    const int64_t w = std::min(kTile<A>, grouped - c);
    if (col_stride == 1) cascade<Op>(x + c, row_stride, Unit{}, rows, w, part);
    else cascade<Op>(x + c * col_stride, row_stride, col_stride, rows, w, part);
    for (int64_t k = 0; k < w; k++) merge_into<Op>(out[(c + k) * out_stride], part[k]);
  }
  for (int64_t c = grouped; c < cols; c++)
    merge_into<Op>(out[c * out_stride], row_units<Op, A, 1>(x + c * col_stride, rows, row_stride)[0]);
}

// Reduces x (storage S) over `mask` in A into buf (keepdim shape, contiguous,
// storage O, holding Op's identity). The dims are ordered by x's strides and merged; the
// innermost one or two are a kernel call, the rest an odometer. The kernel is
// a row reduction when the innermost dim is reduced, a column reduction when
// it is kept and the next is reduced, else an elementwise combine.
template <class Op, class S, class A, class O>
void reduce_into(const Tensor& x, const std::vector<bool>& mask, const Tensor& buf) {
  Dims out_strides = contiguous_strides(reduced_sizes(x, mask, true));
  for (size_t d = 0; d < mask.size(); d++)
    if (mask[d]) out_strides[d] = 0;
  LoopShape<2> ls = plan_loop<2>(x.sizes(), {x.strides(), out_strides});
  const size_t nd = ls.sizes.size();
  const int64_t n = ls.sizes[nd - 1], si = ls.strides[0][nd - 1], so = ls.strides[1][nd - 1];
  const bool columns = so != 0 && nd >= 2 && ls.strides[1][nd - 2] == 0;
  const size_t kernel_dims = columns ? 2 : 1;
  const int64_t rows = columns ? ls.sizes[nd - 2] : 1, row_stride = columns ? ls.strides[0][nd - 2] : 0;
  LoopShape<2> outer;
  for (size_t d = 0; d + kernel_dims < nd; d++) {
    outer.sizes.push_back(ls.sizes[d]);
    for (size_t k = 0; k < 2; k++) outer.strides[k].push_back(ls.strides[k][d]);
  }
  outer.sizes.push_back(1);
  for (auto& s : outer.strides) s.push_back(0);
  for (int64_t s : ls.sizes)
    if (s == 0) return;
  if (is_meta(buf)) return;
  for_each_row<2>(outer, {static_cast<char*>(x.raw_data()), static_cast<char*>(buf.raw_data())},
                  {int64_t(sizeof(S)), int64_t(sizeof(O))}, [&](std::array<char*, 2> p, int64_t, const auto&) {
                    const S* xp = reinterpret_cast<const S*>(p[0]);
                    O* op = reinterpret_cast<O*>(p[1]);
                    if (so == 0) {
                      merge_into<Op>(*op, reduce_row<Op, A>(xp, n, si));
                    } else if (columns) {
                      reduce_columns<Op, A>(xp, rows, row_stride, n, si, op, so);
                    } else {
                      for (int64_t k = 0; k < n; k++) merge_into<Op>(op[k * so], load<A>(xp[k * si]));
                    }
                  });
}

// Op over `mask`: a contiguous keepdim-shaped tensor of Op's accumulator
// dtype, except that float16/bfloat16 partial results are rounded to the
// input dtype between the engine's kernel calls, as PyTorch accumulates them
// into its output (this shows when the reduced dims do not merge).
template <class Op>
Tensor reduce_buffer(const Tensor& x, const std::vector<bool>& mask) {
  return dispatch_dtype(x.dtype(), [&]<class S>() {
    using A = typename Op::template acc<S>;
    using O = std::conditional_t<std::is_same_v<A, compute_t<S>>, S, A>;
    Tensor buf = empty(reduced_sizes(x, mask, true), dtype_of<O>());
    if (is_meta(buf)) return buf;
    std::fill_n(buf.data<O>(), buf.numel(), O(Op::template identity<A>()));
    reduce_into<Op, S, A, O>(x, mask, buf);
    return buf;
  });
}

template <class Op>
Tensor reduce(const Tensor& x, const std::vector<bool>& mask, bool keepdim, DType out_dtype) {
  return with_sizes(to_dtype(reduce_buffer<Op>(x, mask), out_dtype), reduced_sizes(x, mask, keepdim));
}

// sum/prod's input converted to `dtype`, and their result dtype.
std::pair<Tensor, DType> sum_like_input(const Tensor& x, std::optional<DType> dtype) {
  if (dtype) return {to_dtype(x, *dtype), *dtype};
  return {x, is_integral(x.dtype(), true) ? DType::Int64 : x.dtype()};
}

template <class Op>
Tensor extreme(const Tensor& x, const Dims& dim, bool keepdim, const char* fn) {
  std::vector<bool> mask = reduce_mask(x, dim);
  check_nonempty(x, dim, fn);
  return reduce<Op>(x, mask, keepdim, x.dtype());
}

// ---- row-wise reductions ----------------------------------------------------

// Calls f(row, n, stride, r) for each row r of x's [kept, reduced] matrix.
template <class S, class F>
void for_each_reduced_row(const Tensor& x, const std::vector<bool>& mask, F&& f) {
  if (is_meta(x)) return;
  Tensor m = as_rows(x, mask);
  const S* base = m.data<S>();
  const int64_t rows = m.size(0), n = m.size(1), rs = m.stride(0), cs = m.stride(1);
  for (int64_t r = 0; r < rows; r++) f(base + r * rs, n, cs, r);
}

// max(dim)/argmax and friends: the first index where `better` holds; a NaN
// is better than anything and ends the search, as in PyTorch's kernel.
template <bool Max>
std::pair<Tensor, Tensor> arg_extreme(const Tensor& x, std::optional<int64_t> dim, bool keepdim, bool values) {
  std::vector<bool> mask = single_dim_mask(x, dim);
  Dims sizes = reduced_sizes(x, mask, keepdim);
  Tensor vals = values ? empty(sizes, x.dtype(), x.device()) : Tensor(), idx = empty(sizes, DType::Int64, x.device());
  if (x.device().type == DeviceType::CUDA) {  // the backend's library kernel (a thread or a block per line), x read in place
    Dims lanes = x.sizes();
    int64_t serial = 1, stride = 0;
    for (size_t d = 0; d < lanes.size(); d++)
      if (mask[d]) serial = lanes[d], stride = x.strides()[d], lanes[d] = 1;
    const Dims out_strides = contiguous_strides(lanes);  // the results' elements, kept dims in order
    cuda::LineWalk w = cuda::plan_walk(Max ? cuda::LineWalk::Kind::ArgMax : cuda::LineWalk::Kind::ArgMin, x.dtype(),
                                       lanes, {x.strides(), out_strides, out_strides});
    w.serial = serial;
    w.serial_strides = {stride, 0, 0};
    w.plain = x.device_address();
    w.indexed = idx.device_address();
    if (values) w.values = vals.device_address();
    if (idx.numel() > 0) cuda::launch_walk(w);
    return {vals, idx};
  }
  dispatch_dtype(x.dtype(), [&]<class S>() {
    for_each_reduced_row<S>(x, mask, [&](const S* row, int64_t n, int64_t stride, int64_t r) {
      compute_t<S> best = row[0];
      int64_t at = 0;
      for (int64_t i = 0; i < n; i++) {
        compute_t<S> v = row[i * stride];
        if (Max ? !(v <= best) : !(v >= best)) {
          best = v, at = i;
          if (v != v) break;
        }
      }
      if (values) vals.data<S>()[r] = S(best);
      idx.data<int64_t>()[r] = at;
    });
  });
  return {vals, idx};
}

template <bool Max>
std::pair<Tensor, Tensor> extreme_dim(const Tensor& x, int64_t dim, bool keepdim) {
  const char* fn = Max ? "max()" : "min()";
  int64_t d = wrap_dim(dim, x.dim());
  check_nonempty(x, {d}, fn);
  return arg_extreme<Max>(x, d, keepdim, true);
}

template <bool Max>
Tensor arg(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  const char* fn = Max ? "argmax()" : "argmin()";
  if (x.dtype() == DType::Bool) not_implemented(Max ? "argmax_cpu" : "argmin_cpu", x.dtype(), x.device());
  if (dim) {
    int64_t d = wrap_dim(*dim, x.dim());
    check_nonempty(x, {d}, fn);
    return arg_extreme<Max>(x, d, keepdim, false).second;
  }
  if (x.numel() == 0) fail(ErrorKind::IndexError, "{}: Expected reduction dim to be specified for input.numel() == 0.", fn);
  Tensor flat_idx = arg_extreme<Max>(reshape(x, {-1}), 0, false, false).second;
  return keepdim ? with_sizes(flat_idx, Dims(size_t(x.dim()), 1)) : flat_idx;
}

// Two passes in double per row (mean, then squared deviations), as PyTorch's
// CPU kernel; the divisor is max(0, n - correction).
Tensor variance(const Tensor& x, const std::optional<Dims>& dim, double correction, bool keepdim, bool take_sqrt) {
  THN_CHECK(is_floating(x.dtype()), "std and var only support floating point and complex dtypes");
  std::vector<bool> mask = reduce_mask(x, dim);
  Tensor out = empty(reduced_sizes(x, mask, keepdim), x.dtype());
  dispatch_dtype(x.dtype(), [&]<class S>() {
    if constexpr (std::is_floating_point_v<compute_t<S>>) {
      for_each_reduced_row<S>(x, mask, [&](const S* row, int64_t n, int64_t stride, int64_t r) {
        double sum = 0, m2 = 0;
        for (int64_t i = 0; i < n; i++) sum += load<double>(row[i * stride]);
        const double mean = sum / double(n);
        for (int64_t i = 0; i < n; i++) {
          double d = load<double>(row[i * stride]) - mean;
          m2 += d * d;
        }
        double v = m2 / std::max(0.0, double(n) - correction);
        out.data<S>()[r] = S(compute_t<S>(take_sqrt ? std::sqrt(v) : v));
      });
    }
  });
  return out;
}

// ---- scans: cumsum, cumprod, logcumsumexp, cummax, cummin -------------------

// PyTorch's CPU acc_type: double for float32 and float64, float for bfloat16.
template <class S> using scan_acc = std::conditional_t<std::is_floating_point_v<compute_t<S>>,
                                      std::conditional_t<std::is_same_v<S, compute_t<S>>, double, float>, int64_t>;

Tensor at_least_1d(const Tensor& t) { return t.dim() ? t : t.as_strided({1}, {1}, t.offset()); }

cuda::LineWalk::Kind scan_kind(OpId op) {
  using K = cuda::LineWalk::Kind;
  switch (op) {
    case OpId::cumsum: return K::Cumsum;
    case OpId::cumprod: return K::Cumprod;
    case OpId::logcumsumexp: return K::LogCumSumExp;
    case OpId::cummax: return K::CumMax;
    default: return K::CumMin;
  }
}

// out[..., k, ...] = the scan `op` of in[..., :k+1, ...] along dim d, per
// lane, as PyTorch's CPU kernels compute it: sums, products and
// logcumsumexp accumulated in its acc type (double for float32),
// cummax/cummin keeping the last of equal extremes and the last NaN, its
// position in `indices` (which has out's strides). out may alias in exactly.
void scan_kernel(OpId op, const Tensor& out_t, const Tensor& in_t, int64_t d, const Tensor* indices_t = nullptr) {
  Tensor out = at_least_1d(out_t), in = at_least_1d(in_t);
  Tensor indices = indices_t ? at_least_1d(*indices_t) : out;
  const int64_t n = in.size(d), so = out.stride(d), si = in.stride(d);
  Dims lanes = in.sizes();
  lanes[size_t(d)] = 1;
  if (out.device().type == DeviceType::CUDA) {  // the backend's library kernels
    if (out.numel() == 0) return;
    cuda::LineWalk w = cuda::plan_walk(scan_kind(op), in.dtype(), lanes,
                                       {in.strides(), out.strides(), Dims(lanes.size(), 0)});
    w.serial = n;
    w.serial_strides = {si, so, 0};
    w.plain = in.device_address();
    w.indexed = out.device_address();
    if (indices_t) w.values = indices.device_address();
    cuda::launch_walk(w);
    return;
  }
  if (is_meta(out)) return;
  LoopShape<3> ls = plan_loop<3>(lanes, {out.strides(), in.strides(), indices.strides()});
  dispatch_dtype(in.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    using A = scan_acc<S>;
    auto lines = [&](auto&& line) {
      for_each_row<3>(ls, {static_cast<char*>(out.raw_data()), static_cast<char*>(in.raw_data()),
                           static_cast<char*>(indices.raw_data())},
                      {int64_t(sizeof(S)), int64_t(sizeof(S)), int64_t(itemsize(indices.dtype()))},
                      [&](std::array<char*, 3> p, int64_t m, const auto& st) {
                        for (int64_t j = 0; j < m; j++)
                          line(reinterpret_cast<S*>(p[0]) + j * st[0], reinterpret_cast<const S*>(p[1]) + j * st[1],
                               reinterpret_cast<int64_t*>(p[2]) + j * st[2]);
                      });
    };
    switch (op) {
      case OpId::cumsum: case OpId::cumprod: {
        const bool sum = op == OpId::cumsum;
        return lines([&](S* o, const S* x, int64_t*) {
          A acc = sum ? A(0) : A(1);
          for (int64_t k = 0; k < n; k++) {
            acc = sum ? acc + load<A>(x[k * si]) : acc * load<A>(x[k * si]);
            o[k * so] = S(C(acc));
          }
        });
      }
      case OpId::logcumsumexp:
        if constexpr (std::is_floating_point_v<C>) {
          return lines([&](S* o, const S* x, int64_t*) {
            A acc = -std::numeric_limits<A>::infinity();
            for (int64_t k = 0; k < n; k++) {
              acc = thn_log_cum_add(acc, load<A>(x[k * si]));
              o[k * so] = S(C(acc));
            }
          });
        }
        return;
      default: {
        const bool max = op == OpId::cummax;
        return lines([&](S* o, const S* x, int64_t* ix) {
          C best = C(x[0]);
          int64_t at = 0;
          for (int64_t k = 0; k < n; k++) {
            const C v = C(x[k * si]);
            if (v != v || (best == best && (max ? v >= best : v <= best))) {
              best = v;
              at = k;
            }
            o[k * so] = S(best);
            ix[k * so] = at;
          }
        });
      }
    }
  });
}

// The C++ type names PyTorch's in-place dtype check prints.
const char* cpp_type_name(DType t) {
  static constexpr const char* names[kNumDTypes] = {"bool", "int", "long int", "c10::Half", "c10::BFloat16", "float",
                                                    "double"};
  return names[size_t(t)];
}

// The dtypes PyTorch's scan kernels refuse on every device, with its
// message: Bool but for cummax/cummin, and for logcumsumexp every non-float.
// (Its CPU kernels refuse Half too, its CUDA ones take it: README's
// "dtypes either device takes".)
void check_scan_dtype(OpId op, DType t, Device device) {
  const bool extreme = op == OpId::cummax || op == OpId::cummin;
  const bool refused = op == OpId::logcumsumexp ? !is_floating(t) : t == DType::Bool && !extreme;
  if (!refused) return;
  const char* kernel = op == OpId::cumsum ? "cumsum_out_cpu" : op == OpId::cumprod ? "cumprod_out_cpu"
                       : op == OpId::logcumsumexp ? "logcumsumexp_out_cpu" : op == OpId::cummax ? "cummax_cpu"
                                                                                                : "cummin_cpu";
  not_implemented(kernel, t, device);
}

template <bool Max>
IValue max_or_min(const Args& a) {
  const Tensor& x = a.tensor(0);
  const IValue& dim = a[1];
  if (dim.is_none()) return extreme<std::conditional_t<Max, MaxOp, MinOp>>(x, {}, false, Max ? "max()" : "min()");
  if (dim.is_tensor()) return binary(Max ? OpId::maximum : OpId::minimum, x, dim.to_tensor());
  if (dim.is_int()) {
    auto [values, indices] = Max ? max_dim(x, dim.to_int(), a.boolean(2)) : min_dim(x, dim.to_int(), a.boolean(2));
    return IValue::tuple({values, indices});
  }
  fail(ErrorKind::TypeError, "{}() received an invalid combination of arguments - got ({}), but expected one of:",
       Max ? "max" : "min", dim.type_name());
}

// var/std's divisor correction: `correction`, else 1 unless unbiased=False.
double correction_of(const Args& a) {
  std::optional<Scalar> c = a.opt_scalar(4);
  std::optional<bool> unbiased = a.is_none(2) ? std::nullopt : std::optional<bool>(a.boolean(2));
  if (c && unbiased) fail(ErrorKind::TypeError, "{}(): cannot specify both 'unbiased' and 'correction'", a.schema().name);
  return c ? c->to_double() : double(unbiased.value_or(true));
}

}  // namespace

// ---- public functions -------------------------------------------------------

Tensor sum(const Tensor& x, const std::optional<Dims>& dim, bool keepdim, std::optional<DType> dtype) {
  std::vector<bool> mask = reduce_mask(x, dim);
  auto [in, out_dtype] = sum_like_input(x, dtype);
  return reduce<SumOp>(in, mask, keepdim, out_dtype);
}

Tensor mean(const Tensor& x, const std::optional<Dims>& dim, bool keepdim, std::optional<DType> dtype) {
  if (dtype)
    THN_CHECK(is_floating(*dtype), "mean(): could not infer output dtype. Optional dtype must be either a floating "
                                   "point or complex dtype. Got: {}", dtype_torch_name(*dtype));
  else
    THN_CHECK(is_floating(x.dtype()), "mean(): could not infer output dtype. Input dtype must be either a floating "
                                      "point or complex dtype. Got: {}", dtype_torch_name(x.dtype()));
  std::vector<bool> mask = reduce_mask(x, dim);
  Tensor in = dtype ? to_dtype(x, *dtype) : x;
  // PyTorch divides the sum, in the sum's dtype.
  Tensor total = reduce_buffer<SumOp>(in, mask);
  const int64_t count = reduced_numel(x, mask);
  dispatch_dtype(total.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    if constexpr (std::is_floating_point_v<C>)
      if (!is_meta(total))
        for (S& v : std::span(total.data<S>(), size_t(total.numel()))) v = S(C(v) / C(count));
  });
  return with_sizes(total, reduced_sizes(x, mask, keepdim));
}

Tensor prod(const Tensor& x, std::optional<int64_t> dim, bool keepdim, std::optional<DType> dtype) {
  std::vector<bool> mask = single_dim_mask(x, dim);
  auto [in, out_dtype] = sum_like_input(x, dtype);
  return reduce<ProdOp>(in, mask, keepdim, out_dtype);
}

Tensor amax(const Tensor& x, const Dims& dim, bool keepdim) { return extreme<MaxOp>(x, dim, keepdim, "amax()"); }
Tensor amin(const Tensor& x, const Dims& dim, bool keepdim) { return extreme<MinOp>(x, dim, keepdim, "amin()"); }

std::pair<Tensor, Tensor> max_dim(const Tensor& x, int64_t dim, bool keepdim) { return extreme_dim<true>(x, dim, keepdim); }
std::pair<Tensor, Tensor> min_dim(const Tensor& x, int64_t dim, bool keepdim) { return extreme_dim<false>(x, dim, keepdim); }

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) { return arg<true>(x, dim, keepdim); }
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) { return arg<false>(x, dim, keepdim); }

Tensor var(const Tensor& x, const std::optional<Dims>& dim, double correction, bool keepdim) {
  return variance(x, dim, correction, keepdim, false);
}
Tensor std_dev(const Tensor& x, const std::optional<Dims>& dim, double correction, bool keepdim) {
  return variance(x, dim, correction, keepdim, true);
}

Tensor all(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return reduce<AllOp>(x, single_dim_mask(x, dim), keepdim, DType::Bool);
}
Tensor any(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return reduce<AnyOp>(x, single_dim_mask(x, dim), keepdim, DType::Bool);
}

// PyTorch's formulation: maxes that are +-inf are replaced by 0 before being
// subtracted (so an all -inf row gives -inf, an inf row inf), then
// log(sum(exp(x - max))) + max.
Tensor logsumexp(const Tensor& x_in, const Dims& dim, bool keepdim) {
  Tensor x = is_integral(x_in.dtype(), true) ? to_dtype(x_in, kDefaultFloat) : x_in;
  std::vector<bool> mask = reduce_mask(x, dim);
  if (x.numel() == 0) return unary(OpId::log, sum(unary(OpId::exp, x), dim, keepdim));
  // PyTorch reduces every dim for `dim=[]` but then fails to add the [1, ...] maxes in place.
  if (dim.empty() && !keepdim && x.dim() > 0)
    fail("output with shape [] doesn't match the broadcast shape {}", dims_str(Dims(size_t(x.dim()), 1)));
  Tensor maxes = reduce<MaxOp>(x, mask, true, x.dtype());
  if (!is_meta(maxes))
    dispatch_dtype(maxes.dtype(), [&]<class S>() {
    for (S& m : std::span(maxes.data<S>(), size_t(maxes.numel())))
      if (std::isinf(float(compute_t<S>(m)))) m = S(compute_t<S>(0));
  });
  Tensor result = unary(OpId::log, sum(unary(OpId::exp, binary(OpId::sub, x, maxes)), dim, keepdim));
  return binary(OpId::add, result, with_sizes(maxes, reduced_sizes(x, mask, keepdim)));
}

Tensor scan(OpId op, const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  int64_t d = wrap_dim(dim, x.dim());
  DType out_dtype = op == OpId::cumsum || op == OpId::cumprod ? sum_like_input(x, dtype).second : x.dtype();
  check_scan_dtype(op, out_dtype, x.device());
  Tensor out = empty(x.sizes(), out_dtype, x.device());
  scan_kernel(op, out, to_dtype(x, out_dtype), d);
  return out;
}

void scan_inplace(OpId op, const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  int64_t d = wrap_dim(dim, x.dim());
  if (dtype && *dtype != x.dtype())
    fail("Bad in-place call: input tensor dtype {} and output tensor dtype {} should match", cpp_type_name(x.dtype()),
         cpp_type_name(*dtype));
  check_scan_dtype(op, x.dtype(), x.device());
  check_inplace_write(x, {});
  scan_kernel(op, x, x, d);
}

std::pair<Tensor, Tensor> scan_extreme(OpId op, const Tensor& x, int64_t dim) {
  int64_t d = wrap_dim(dim, x.dim());
  check_scan_dtype(op, x.dtype(), x.device());
  Tensor values = empty(x.sizes(), x.dtype(), x.device()), indices = empty(x.sizes(), DType::Int64, x.device());
  scan_kernel(op, values, x, d, &indices);
  return {values, indices};
}

// ---- op table rows ----------------------------------------------------------

IValue op_sum(const Args& a) { return sum(a.tensor(0), a.opt_dims(1), a.boolean(2), a.opt_dtype(3)); }
IValue op_mean(const Args& a) { return mean(a.tensor(0), a.opt_dims(1), a.boolean(2), a.opt_dtype(3)); }
IValue op_prod(const Args& a) { return prod(a.tensor(0), a.opt_i64(1), a.boolean(2), a.opt_dtype(3)); }
IValue op_amax(const Args& a) { return amax(a.tensor(0), a.dims(1), a.boolean(2)); }
IValue op_amin(const Args& a) { return amin(a.tensor(0), a.dims(1), a.boolean(2)); }
IValue op_max(const Args& a) { return max_or_min<true>(a); }
IValue op_min(const Args& a) { return max_or_min<false>(a); }
IValue op_argmax(const Args& a) { return argmax(a.tensor(0), a.opt_i64(1), a.boolean(2)); }
IValue op_argmin(const Args& a) { return argmin(a.tensor(0), a.opt_i64(1), a.boolean(2)); }
IValue op_var(const Args& a) { return var(a.tensor(0), a.opt_dims(1), correction_of(a), a.boolean(3)); }
IValue op_std(const Args& a) { return std_dev(a.tensor(0), a.opt_dims(1), correction_of(a), a.boolean(3)); }
IValue op_all(const Args& a) { return all(a.tensor(0), a.opt_i64(1), a.boolean(2)); }
IValue op_any(const Args& a) { return any(a.tensor(0), a.opt_i64(1), a.boolean(2)); }
IValue op_logsumexp(const Args& a) { return logsumexp(a.tensor(0), a.dims(1), a.boolean(2)); }
// cumsum, cumprod (and in place); cummax, cummin: (values, indices).
#define THN_X(name)                                                          \
  IValue op_##name(const Args& a) {                                          \
    if (!a.inplace()) return scan(OpId::name, a.tensor(0), a.i64(1), a.opt_dtype(2)); \
    scan_inplace(OpId::name, a.tensor(0), a.i64(1), a.opt_dtype(2));         \
    return a.tensor(0);                                                      \
  }
THN_X(cumsum) THN_X(cumprod)
#undef THN_X
IValue op_logcumsumexp(const Args& a) { return scan(OpId::logcumsumexp, a.tensor(0), a.i64(1), std::nullopt); }
#define THN_X(name)                                                   \
  IValue op_##name(const Args& a) {                                   \
    auto [values, indices] = scan_extreme(OpId::name, a.tensor(0), a.i64(1)); \
    return IValue::tuple({values, indices});                          \
  }
THN_X(cummax) THN_X(cummin)
#undef THN_X

}  // namespace thn
