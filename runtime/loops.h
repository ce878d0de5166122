#pragma once
// The CPU loop engine of the eager kernels: N operands of one shape (inputs
// already broadcast, strides in elements) are walked in the order of the
// output's memory, with adjacent dims merged, calling a typed inner loop.
// The all-contiguous case is a flat loop the compiler vectorises.
#include <algorithm>
#include <array>
#include <tuple>
#include <utility>

#include "runtime/tensor.h"

namespace thn {

// Strides of `t` broadcast to `shape` (0 for broadcast dims), in elements.
Dims broadcast_strides(const Tensor& t, const Dims& shape);
Dims broadcast_strides(const Dims& sizes, const Dims& strides, const Dims& shape);

template <size_t N>
struct LoopShape {
  Dims sizes;                       // outermost first, after merging
  std::array<Dims, N> strides;      // per operand, elements
};

// Orders dims by the first operand's strides (outermost first) and merges
// dims that are contiguous with their inner neighbour in every operand.
template <size_t N>
LoopShape<N> plan_loop(const Dims& shape, std::array<Dims, N> strides) {
  const size_t nd = shape.size();
  std::vector<size_t> order(nd);
  for (size_t i = 0; i < nd; i++) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    for (size_t k = 0; k < N; k++) {
      int64_t sa = std::abs(strides[k][a]), sb = std::abs(strides[k][b]);
      if (sa != sb) return sa > sb;
    }
    return false;
  });
  LoopShape<N> out;
  for (size_t i : order) {
    if (shape[i] == 1) continue;
    bool merge = !out.sizes.empty();
    for (size_t k = 0; k < N && merge; k++) merge = out.strides[k].back() == strides[k][i] * shape[i];
    if (merge) {
      out.sizes.back() *= shape[i];
      for (size_t k = 0; k < N; k++) out.strides[k].back() = strides[k][i];
    } else {
      out.sizes.push_back(shape[i]);
      for (size_t k = 0; k < N; k++) out.strides[k].push_back(strides[k][i]);
    }
  }
  if (out.sizes.empty()) {  // a single element
    out.sizes.push_back(1);
    for (size_t k = 0; k < N; k++) out.strides[k].push_back(1);
  }
  return out;
}

// Calls inner(ptrs, n, inner_strides) for every innermost row.
template <size_t N, class Inner>
void for_each_row(const LoopShape<N>& ls, std::array<char*, N> base, const std::array<int64_t, N>& elem_size,
                  Inner&& inner) {
  const size_t nd = ls.sizes.size();
  for (int64_t s : ls.sizes)
    if (s == 0) return;
  std::array<int64_t, N> inner_strides;
  for (size_t k = 0; k < N; k++) inner_strides[k] = ls.strides[k][nd - 1];
  const int64_t n = ls.sizes[nd - 1];
  Dims idx(nd, 0);
  std::array<char*, N> ptr = base;
  while (true) {
    inner(ptr, n, inner_strides);
    // odometer over the outer dims
    int64_t d = int64_t(nd) - 2;
    for (; d >= 0; d--) {
      for (size_t k = 0; k < N; k++) ptr[k] += ls.strides[k][d] * elem_size[k];
      if (++idx[d] < ls.sizes[d]) break;
      for (size_t k = 0; k < N; k++) ptr[k] -= ls.strides[k][d] * elem_size[k] * ls.sizes[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// out[i] = f(in[i]...) over tensors of out's shape (inputs broadcast to it).
// Out and In are storage types; f works on compute types.
template <class Out, class... In, class F>
void map_kernel(const Tensor& out, F&& f, const auto&... ins) {
  constexpr size_t N = 1 + sizeof...(In);
  if (is_meta(out)) return;
  const Dims& shape = out.sizes();
  LoopShape<N> ls = plan_loop<N>(shape, {out.strides(), broadcast_strides(ins, shape)...});
  std::array<char*, N> base = {static_cast<char*>(out.raw_data()), static_cast<char*>(ins.raw_data())...};
  std::array<int64_t, N> sizes = {int64_t(sizeof(Out)), int64_t(sizeof(In))...};
  for_each_row<N>(ls, base, sizes, [&](std::array<char*, N> p, int64_t n, const std::array<int64_t, N>& st) {
    [&]<size_t... I>(std::index_sequence<I...>) {
      Out* o = reinterpret_cast<Out*>(p[0]);
      std::tuple<const In*...> in{reinterpret_cast<const In*>(p[I + 1])...};
      bool contiguous = st[0] == 1 && ((st[I + 1] == 1) && ...);
      if (contiguous) {
        for (int64_t i = 0; i < n; i++) o[i] = Out(f(compute_t<In>(std::get<I>(in)[i])...));
        return;
      }
      if constexpr (sizeof...(In) == 2) {  // tensor-scalar: hoist the scalar
        if (st[0] == 1 && st[1] == 1 && st[2] == 0) {
          using A = std::tuple_element_t<0, std::tuple<In...>>;
          using B = std::tuple_element_t<1, std::tuple<In...>>;
          auto b = compute_t<B>(std::get<1>(in)[0]);
          for (int64_t i = 0; i < n; i++) o[i] = Out(f(compute_t<A>(std::get<0>(in)[i]), b));
          return;
        }
      }
      for (int64_t i = 0; i < n; i++)
        o[i * st[0]] = Out(f(compute_t<In>(std::get<I>(in)[i * st[I + 1]])...));
    }(std::index_sequence_for<In...>{});
  });
}

}  // namespace thn
