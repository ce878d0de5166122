// sort, argsort and topk: each line along `dim` ordered by a stable sort
// (PyTorch's order for distinct values; NaN sorts above every number, as in
// PyTorch). Ties keep their index order, as sort(stable=True) does;
// PyTorch's default unstable sort and its topk may order ties otherwise.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/dtype.h"
#include "runtime/elementwise.h"
#include "runtime/error.h"
#include "runtime/op_registry.h"
#include "runtime/tensor.h"
#include "runtime/views.h"

namespace thn {

namespace {

struct Sorted {
  Tensor values, indices;
};

// The first k of each line of x along dim, in sorted order (descending:
// largest first), as contiguous tensors of x's shape with k along dim.
Sorted sorted_lines(const Tensor& x, int64_t dim, bool descending, std::optional<int64_t> k = std::nullopt) {
  const bool scalar = x.dim() == 0;
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1));
  const Tensor lines = contiguous(scalar ? x.as_strided({1}, {1}, x.offset()) : movedim(x, {d}, {-1}));
  const int64_t n = lines.dim() ? lines.sizes().back() : 1, keep = k.value_or(n);
  const int64_t count = n ? lines.numel() / n : 0;
  Dims moved = lines.sizes();
  moved.back() = keep;
  Tensor values = empty(moved, x.dtype()), indices = empty(moved, DType::Int64);
  if (!is_meta(values)) dispatch_dtype(x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    const S* in = lines.data<S>();
    S* out = values.data<S>();
    int64_t* at = indices.data<int64_t>();
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t line = 0; line < count; ++line) {
      const S* v = in + line * n;
      auto key = [&](int64_t i) { return C(v[i]); };
      // NaN above every number; equal keys keep their order.
      auto before = [&](int64_t a, int64_t b) {
        const C p = key(a), q = key(b);
        if constexpr (std::is_floating_point_v<C>) {
          if (std::isnan(p) || std::isnan(q)) return descending ? std::isnan(p) && !std::isnan(q) : !std::isnan(p) && std::isnan(q);
        }
        return descending ? q < p : p < q;
      };
      std::iota(order.begin(), order.end(), int64_t(0));
      std::stable_sort(order.begin(), order.end(), before);
      for (int64_t j = 0; j < keep; ++j) {
        out[line * keep + j] = v[order[size_t(j)]];
        at[line * keep + j] = order[size_t(j)];
      }
    }
  });
  // Contiguous in x's dim order (strides of size-1 dims included, as PyTorch's).
  auto back = [&](const Tensor& t) {
    if (scalar) return t.as_strided({}, {}, t.offset());
    const Tensor moved_back = movedim(t, {-1}, {d});
    Tensor out = empty(moved_back.sizes(), t.dtype());
    copy_into(out, moved_back);
    return out;
  };
  return {back(values), back(indices)};
}

}  // namespace

IValue op_sort(const Args& a) {
  Sorted s = sorted_lines(a.tensor(0), a.i64(1), a.boolean(2));
  return IValue::tuple({s.values, s.indices});
}

IValue op_argsort(const Args& a) { return sorted_lines(a.tensor(0), a.i64(1), a.boolean(2)).indices; }

IValue op_topk(const Args& a) {
  const Tensor& x = a.tensor(0);
  const int64_t k = a.i64(1), dim = a.i64(2);
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1));  // a 0-dim tensor: one element along dim 0 or -1
  const int64_t n = x.dim() ? x.sizes()[size_t(d)] : 1;
  THN_CHECK(k >= 0 && k <= n, "selected index k out of range");
  if (x.dtype() == DType::Bool) not_implemented("topk_cpu", x.dtype(), x.device(), "topk_out_cuda");
  Sorted s = sorted_lines(x, dim, a.boolean(3), k);  // sorted=False: sorted all the same
  return IValue::tuple({s.values, s.indices});
}

}  // namespace thn
