// Elementwise ops with one input.
#include "runtime/elementwise_impl.h"
#include "runtime/error.h"
#include "runtime/scalar_math.h"

namespace thn {

namespace {

// Ops computed in floating point: integer and bool inputs become the default float.
#define THN_UNARY_FLOAT(X) \
  X(exp) X(exp2) X(log) X(log2) X(log10) X(log1p) X(expm1) X(sqrt) X(rsqrt) X(sin) X(cos) X(tan) X(sinh) \
  X(cosh) X(tanh) X(asin) X(acos) X(atan) X(asinh) X(acosh) X(atanh) X(sigmoid) X(erf) X(erfc) X(lgamma) X(sinc) X(reciprocal)
// Ops that keep the input's dtype.
#define THN_UNARY_SAME(X) X(neg) X(abs) X(square) X(relu) X(floor) X(ceil) X(round) X(trunc) X(frac) X(sign) X(bitwise_not)

enum class Rule { Float, Same, Bool };
Rule rule(OpId op) {
  switch (op) {
#define THN_X(name) case OpId::name:
    THN_UNARY_FLOAT(THN_X) return Rule::Float;
    THN_UNARY_SAME(THN_X) return Rule::Same;
#undef THN_X
    default: return Rule::Bool;
  }
}

// PyTorch's dtype restrictions, with its messages.
void check_dtype(OpId op, DType d, Device device) {
  std::string_view name = op_def(op).name;
  if (d == DType::Bool) {
    if (op == OpId::neg)
      fail("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the "
           "`~` or `logical_not()` operator instead.");
    if (op == OpId::relu) fail("Boolean inputs not supported for relu");
    // (abs: PyTorch's CPU kernel refuses Bool, its CUDA one takes it.)
    if (op == OpId::floor || op == OpId::ceil || op == OpId::round || op == OpId::trunc)
      not_implemented(fmt::format("{}_vml_cpu", name), d, device);
  }
  if (op == OpId::frac && !is_floating(d)) not_implemented("frac_cpu", d, device);
  if (op == OpId::bitwise_not && is_floating(d)) not_implemented("bitwise_not_cpu", d, device);
}

template <class S>
void run(OpId op, const Tensor& o, const Tensor& x) {
  switch (op) {
#define THN_X(name)                                                                    \
  case OpId::name:                                                                     \
    if constexpr (is_float_storage<S>) map_kernel<S, S>(o, [](auto v) { return thn_##name(v); }, x); \
    return;
    THN_UNARY_FLOAT(THN_X)
    THN_X(frac)
#undef THN_X
#define THN_X(name)                                                                     \
  case OpId::name:                                                                      \
    if constexpr (!std::is_same_v<S, bool>) map_kernel<S, S>(o, [](auto v) { return thn_##name(v); }, x); \
    return;
    THN_X(neg) THN_X(square) THN_X(relu) THN_X(floor) THN_X(ceil) THN_X(round) THN_X(trunc)
#undef THN_X
    case OpId::abs:  // (of bool: the identity)
      if constexpr (std::is_same_v<S, bool>) map_kernel<S, S>(o, [](auto v) { return v; }, x);
      else map_kernel<S, S>(o, [](auto v) { return thn_abs(v); }, x);
      return;
    case OpId::sign: map_kernel<S, S>(o, [](auto v) { return thn_sign(v); }, x); return;
    case OpId::bitwise_not:
      if constexpr (std::is_integral_v<S>) map_kernel<S, S>(o, [](auto v) { return thn_bitwise_not(v); }, x);
      return;
#define THN_X(name) \
  case OpId::name: map_kernel<bool, S>(o, [](auto v) { return thn_##name(v); }, x); return;
    THN_UNARY_BOOL(THN_X)
#undef THN_X
    default: fail("{} is not a unary op", op_def(op).name);
  }
}

}  // namespace

DType unary_result_dtype(OpId op, DType in, Device device) {
  check_dtype(op, in, device);
  switch (rule(op)) {
    case Rule::Float: return is_floating(in) ? in : kDefaultFloat;
    case Rule::Same: return op == OpId::square && in == DType::Bool ? kDefaultInt : in;
    case Rule::Bool: return DType::Bool;
  }
  return in;
}

Tensor unary(OpId op, const Tensor& x, const Tensor* out) {
  DType rd = unary_result_dtype(op, x.dtype(), x.device());
  // logical_not_ keeps the target's dtype: its result is cast back, like PyTorch.
  DType compute = rule(op) == Rule::Bool ? x.dtype() : rd;
  Tensor o = elementwise_output(x.sizes(), rd, {x}, out);
  Tensor xin = to_dtype(x, compute);
  dispatch_dtype(compute, [&]<class S>() { run<S>(op, o, xin); });
  return finish_inplace(o, out);
}

// round(x, decimals=d): PyTorch scales by 10^|d| in the tensor's own precision.
IValue round_decimals(const Args& a) {
  const Tensor& x = a.tensor(0);
  const Tensor* out = a.target();
  int64_t decimals = a.i64(1);
  if (decimals == 0) return unary(OpId::round, x, out);
  check_dtype(OpId::round, x.dtype(), x.device());
  if (!is_floating(x.dtype())) not_implemented("round_decimals_cpu", x.dtype(), x.device(), "round_cuda");
  Tensor o = elementwise_output(x.sizes(), x.dtype(), {x}, out);
  dispatch_dtype(x.dtype(), [&]<class S>() {
    if constexpr (is_float_storage<S>) {
      map_kernel<S, S>(o, [decimals](auto v) {
        using T = decltype(v);
        T p = T(std::pow(10.0, double(decimals > 0 ? decimals : -decimals)));
        return decimals > 0 ? T(std::nearbyint(v * p) / p) : T(std::nearbyint(v / p) * p);
      }, x);
    }
  });
  return finish_inplace(o, out);
}

#define THN_X(name)                                                                               \
  IValue op_##name(const Args& a) {                                                               \
    if (OpId::name != OpId::round) return unary(OpId::name, a.tensor(0), a.target()); \
    return round_decimals(a);                                                                     \
  }
THN_UNARY_FLOAT(THN_X)
THN_UNARY_SAME(THN_X)
THN_UNARY_BOOL(THN_X)
#undef THN_X

}  // namespace thn
