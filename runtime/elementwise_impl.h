#pragma once
// Internal to the elementwise files (elementwise.cpp, unary.cpp, binary.cpp).
#include <initializer_list>
#include <type_traits>

#include "runtime/elementwise.h"
#include "runtime/loops.h"

// The predicates: ops with bool results (is_predicate).
#define THN_UNARY_BOOL(X) X(logical_not) X(isnan) X(isinf) X(isfinite) X(isposinf) X(isneginf) X(signbit)
#define THN_BINARY_BOOL(X) X(eq) X(ne) X(lt) X(le) X(gt) X(ge) X(logical_and) X(logical_or) X(logical_xor)

namespace thn {

// Where an elementwise op over `inputs` writes: the in-place target `out`
// after PyTorch's checks (shape, castability, overlap), or a new tensor of
// `dtype` laid out like the inputs (TensorIterator's stride order).
Tensor elementwise_output(const Dims& shape, DType dtype, std::initializer_list<Tensor> inputs, const Tensor* out);
// When the in-place target's dtype differs from the computed one: the
// kernel writes a temporary, then this casts it into `out`.
Tensor finish_inplace(const Tensor& computed, const Tensor* out);

template <class S> inline constexpr bool is_float_storage = !std::is_integral_v<S>;

// Calls f.template operator()<S>() for the floating dtypes only.
template <class F>
void dispatch_floating(DType t, F&& f) {
  dispatch_dtype(t, [&]<class S>() {
    if constexpr (is_float_storage<S>) f.template operator()<S>();
  });
}

}  // namespace thn
