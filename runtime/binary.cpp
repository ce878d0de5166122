// Elementwise ops with two inputs: broadcasting and type promotion.
#include "runtime/elementwise_impl.h"
#include "runtime/error.h"
#include "runtime/scalar_math.h"

namespace thn {

namespace {

#define THN_BINARY_ARITH(X) X(add) X(sub) X(mul) X(div) X(floor_divide) X(remainder) X(fmod) X(pow) X(maximum) X(minimum) X(atan2) \
  X(hypot) X(logaddexp) X(logaddexp2) X(nextafter) X(copysign) X(xlogy) X(heaviside)
#define THN_BINARY_BITS(X) X(bitwise_and) X(bitwise_or) X(bitwise_xor) X(bitwise_left_shift) X(bitwise_right_shift)

enum class Rounding { None, Trunc, Floor };

struct Options {
  Scalar alpha = Scalar(int64_t(1));
  Rounding rounding = Rounding::None;
};

// The dtype the kernel computes in (inputs are cast to it).
DType compute_dtype(OpId op, DType common, Rounding rounding) {
  bool to_float = op == OpId::atan2 || op == OpId::copysign || op == OpId::xlogy ||
                  (op == OpId::div && rounding == Rounding::None);
  return to_float && !is_floating(common) ? kDefaultFloat : common;
}

void check(OpId op, const Tensor& a, const Tensor& b, DType common, const Options& opt) {
  const Device device = a.is_wrapped_number() ? b.device() : a.device();
  switch (op) {
    case OpId::sub:
      if (a.dtype() == DType::Bool && b.dtype() == DType::Bool)
        fail("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
             "operator instead.");
      if (a.dtype() == DType::Bool || b.dtype() == DType::Bool)
        fail("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
             "use the `~` or `logical_not()` operator instead.");
      [[fallthrough]];
    case OpId::add:
      if (is_integral(common, true) && opt.alpha.is_float())
        fail("For integral input tensors, argument alpha must not be a floating point number.");
      if (common != DType::Bool && opt.alpha.is_bool()) fail("Boolean alpha only supported for Boolean results.");
      check_fits(opt.alpha, common);
      break;
    case OpId::floor_divide:
      if (common == DType::Bool) not_implemented("div_floor_cpu", common, device);
      break;
    case OpId::div:
      if (common == DType::Bool && opt.rounding != Rounding::None)
        not_implemented(opt.rounding == Rounding::Trunc ? "div_trunc_cpu" : "div_floor_cpu", common, device);
      break;
    case OpId::remainder:
    case OpId::fmod:
      if (common == DType::Bool) not_implemented(fmt::format("{}_cpu", op_def(op).name), common, device);
      break;
    case OpId::pow:
      if (common == DType::Bool) not_implemented("pow", common, device);
      if (is_integral(common, false) && b.is_wrapped_number() && b.item().to_int() < 0)
        fail("Integers to negative integer powers are not allowed.");
      break;
    case OpId::hypot:
    case OpId::logaddexp:
    case OpId::logaddexp2:
    case OpId::nextafter:
      // (nextafter of float16: neither PyTorch's CPU nor its CUDA kernel)
      if (!is_floating(common) || (op == OpId::nextafter && common == DType::Float16))
        not_implemented(fmt::format("{}_cpu", op_def(op).name), common, device);
      break;
    case OpId::heaviside:
      if (a.dtype() != b.dtype()) fail("heaviside is not yet implemented for tensors with different dtypes.");
      break;
    case OpId::bitwise_and:
    case OpId::bitwise_or:
    case OpId::bitwise_xor:
      if (is_floating(common)) not_implemented(fmt::format("{}_cpu", op_def(op).name), common, device);
      break;
    case OpId::bitwise_left_shift:
    case OpId::bitwise_right_shift:
      if (!is_integral(common, false))
        not_implemented(op == OpId::bitwise_left_shift ? "lshift_cpu" : "rshift_cpu", common, device);
      break;
    default: break;
  }
}

template <class C>
C checked_divisor(C b) {
  if constexpr (std::is_integral_v<C>) {
    if (b == 0) fail("ZeroDivisionError");
  }
  return b;
}

template <class S>
void run(OpId op, const Tensor& o, const Tensor& a, const Tensor& b, const Options& opt) {
  using C = compute_t<S>;
  constexpr bool is_bool = std::is_same_v<S, bool>;
  constexpr bool is_int = std::is_integral_v<S> && !is_bool;
  auto map = [&](auto f) { map_kernel<S, S, S>(o, f, a, b); };
  switch (op) {
    case OpId::add:
    case OpId::sub: {
      C alpha = opt.alpha.to<C>();
      if constexpr (is_bool) {
        map([alpha](C x, C y) { return thn_add(x, C(alpha && y)); });
      } else {
        // float16 and bfloat16 take alpha rounded to their dtype; float16
        // (PyTorch 1.13's scalar Half loop) rounds alpha * y too, bfloat16
        // (its vectorized fmadd) rounds once.
        if constexpr (!std::is_same_v<S, C>) alpha = C(S(alpha));
        if (op == OpId::sub) alpha = C(-alpha);
        if (alpha == C(1)) map([](C x, C y) { return thn_add(x, y); });
        else if constexpr (std::is_same_v<S, Half>) map([alpha](C x, C y) { return thn_add(x, C(S(alpha * y))); });
        else map([alpha](C x, C y) { return thn_muladd(alpha, y, x); });
      }
      return;
    }
    case OpId::mul: map([](C x, C y) { return thn_mul(x, y); }); return;
    case OpId::div:
      if constexpr (!is_bool) {
        if (opt.rounding == Rounding::None) map([](C x, C y) { return thn_div(x, y); });
        else if (opt.rounding == Rounding::Trunc) map([](C x, C y) { return thn_div_trunc(x, checked_divisor(y)); });
        else map([](C x, C y) { return thn_floor_divide(x, checked_divisor(y)); });
      }
      return;
    case OpId::floor_divide:
      if constexpr (!is_bool) map([](C x, C y) { return thn_floor_divide(x, checked_divisor(y)); });
      return;
    case OpId::remainder:
      if constexpr (!is_bool) map([](C x, C y) { return thn_remainder(x, checked_divisor(y)); });
      return;
    case OpId::fmod:
      if constexpr (!is_bool) map([](C x, C y) { return thn_fmod(x, checked_divisor(y)); });
      return;
    case OpId::pow: map([](C x, C y) { return thn_pow(x, y); }); return;
    case OpId::maximum: map([](C x, C y) { return thn_maximum(x, y); }); return;
    case OpId::minimum: map([](C x, C y) { return thn_minimum(x, y); }); return;
    case OpId::heaviside: map([](C x, C y) { return thn_heaviside(x, y); }); return;
    case OpId::nextafter:
      if constexpr (std::is_same_v<S, BFloat16>) map([](C x, C y) { return thn_nextafter_bf16(x, y); });
      else if constexpr (!is_int && !is_bool) map([](C x, C y) { return thn_nextafter(x, y); });
      return;
#define THN_X(name)                                                        \
  case OpId::name:                                                         \
    if constexpr (!is_int && !is_bool) map([](C x, C y) { return thn_##name(x, y); }); \
    return;
      THN_X(atan2) THN_X(hypot) THN_X(logaddexp) THN_X(logaddexp2) THN_X(copysign) THN_X(xlogy)
#undef THN_X
#define THN_X(name)                                                  \
  case OpId::name:                                                   \
    if constexpr (is_int || is_bool) map([](C x, C y) { return thn_##name(x, y); }); \
    return;
      THN_X(bitwise_and) THN_X(bitwise_or) THN_X(bitwise_xor)
#undef THN_X
#define THN_X(name)                                             \
  case OpId::name:                                              \
    if constexpr (is_int) map([](C x, C y) { return thn_##name(x, y); }); \
    return;
      THN_X(bitwise_left_shift) THN_X(bitwise_right_shift)
#undef THN_X
#define THN_X(name) \
  case OpId::name: map_kernel<bool, S, S>(o, [](C x, C y) { return thn_##name(x, y); }, a, b); return;
      THN_BINARY_BOOL(THN_X)
#undef THN_X
    default: fail("{} is not a binary op", op_def(op).name);
  }
}

Tensor binary_impl(OpId op, const Tensor& a, const Tensor& b, const Options& opt, const Tensor* out) {
  DType common = result_type({a, b});
  check(op, a, b, common, opt);
  DType compute = compute_dtype(op, common, opt.rounding);
  DType rd = is_predicate(op) ? DType::Bool : compute;
  Dims shape = broadcast_shapes(a.sizes(), b.sizes());
  Tensor o = elementwise_output(shape, rd, {a, b}, out);
  Tensor ac = to_dtype(a, compute), bc = to_dtype(b, compute);
  if (op == OpId::pow && b.is_wrapped_number() &&
      (common == DType::Float32 || common == DType::Float64 || common == DType::BFloat16)) {
    // x ** 3.0: PyTorch's pow with a number exponent, which bfloat16 takes
    // rounded to bfloat16 (float16 has no formulas: one pow, rounded once).
    // (of b itself, a number: under a MetaScope bc has no bytes)
    const double e = common == DType::BFloat16 ? scalar_tensor(b.item(), DType::BFloat16).item().to_double()
                                               : b.item().to_double();
    dispatch_dtype(compute, [&]<class S>() {
      using C = compute_t<S>;
      if constexpr (thn_is_float<C>) map_kernel<S, S>(o, [e](C x) { return thn_pow_number<C, S>(x, e); }, ac);
    });
    return finish_inplace(o, out);
  }
  dispatch_dtype(compute, [&]<class S>() { run<S>(op, o, ac, bc, opt); });
  return finish_inplace(o, out);
}

}  // namespace

bool is_predicate(OpId op) {
  switch (op) {
#define THN_X(name) case OpId::name:
    THN_UNARY_BOOL(THN_X) THN_BINARY_BOOL(THN_X) return true;
#undef THN_X
    default: return false;
  }
}

DType binary_result_dtype(OpId op, const Tensor& a, const Tensor& b) {
  DType common = result_type({a, b});
  return is_predicate(op) ? DType::Bool : compute_dtype(op, common, Rounding::None);
}

Tensor binary(OpId op, const Tensor& a, const Tensor& b, const Tensor* out) { return binary_impl(op, a, b, {}, out); }

IValue op_add(const Args& a) { return binary_impl(OpId::add, a.tensor(0), a.tensor(1), {a.scalar(2)}, a.target()); }
IValue op_sub(const Args& a) { return binary_impl(OpId::sub, a.tensor(0), a.tensor(1), {a.scalar(2)}, a.target()); }

IValue op_div(const Args& a) {
  Options opt;
  if (auto mode = a.opt_str(2)) {
    if (*mode == "trunc") opt.rounding = Rounding::Trunc;
    else if (*mode == "floor") opt.rounding = Rounding::Floor;
    else fail("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{}'", *mode);
  }
  return binary_impl(OpId::div, a.tensor(0), a.tensor(1), opt, a.target());
}

#define THN_X(name) \
  IValue op_##name(const Args& a) { return binary(OpId::name, a.tensor(0), a.tensor(1), a.target()); }
THN_X(mul) THN_X(floor_divide) THN_X(remainder) THN_X(fmod) THN_X(pow) THN_X(maximum) THN_X(minimum) THN_X(atan2)
THN_X(hypot) THN_X(logaddexp) THN_X(logaddexp2) THN_X(nextafter) THN_X(copysign) THN_X(xlogy) THN_X(heaviside)
THN_BINARY_BITS(THN_X)
THN_BINARY_BOOL(THN_X)
#undef THN_X

}  // namespace thn
