#pragma once
// The per-element math of every elementwise op, written once: the eager CPU
// kernels call these functions, and the code generators will emit calls to
// them (this header is included in generated host and CUDA source). T is a
// compute type: bool, int32_t, int64_t, float or double.
#ifndef THN_HD
#define THN_HD
#endif
#ifndef THN_NO_STD_HEADERS
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#endif

namespace thn {

template <class T> inline constexpr bool thn_is_float = std::is_floating_point_v<T>;

// a * b + c, for floats rounded once where the machine has FMA. The ops that
// multiply and add (add/sub with alpha, addcmul, lerp) say so explicitly:
// the compiler would contract them in the eager kernels, and generated
// kernels (compiled without contraction, so that no multiply of one op fuses
// with an add of the next) must round the same way.
//
// Integer add, sub and mul wrap around in two's complement, as PyTorch's do;
// signed overflow is undefined in C++, so they compute in the unsigned type.
template <class T> THN_HD T thn_wrapping(T a, T b, char op) {
  using U = std::make_unsigned_t<T>;
  return T(op == '+' ? U(U(a) + U(b)) : op == '-' ? U(U(a) - U(b)) : U(U(a) * U(b)));
}
template <class T> THN_HD T thn_muladd(T a, T b, T c) {
  if constexpr (thn_is_float<T>) {
#if defined(__FMA__) || defined(__CUDACC_RTC__)
    return std::fma(a, b, c);
#else
    return a * b + c;
#endif
  } else if constexpr (std::is_same_v<T, bool>) {
    return T(a * b + c);
  } else {
    return thn_wrapping(thn_wrapping(a, b, '*'), c, '+');
  }
}

// One input
template <class T> inline constexpr bool thn_is_wrapping_int = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T> THN_HD T thn_neg(T a) {
  if constexpr (thn_is_wrapping_int<T>) return thn_wrapping(T(0), a, '-'); else return -a;
}
// (abs of the most negative int is itself, as PyTorch's: in the unsigned
// type, so that no compiler may assume abs(x) >= 0.)
template <class T> THN_HD T thn_abs(T a) {
  if constexpr (thn_is_float<T>) return std::fabs(a);
  else if constexpr (thn_is_wrapping_int<T>) return a < 0 ? thn_wrapping(T(0), a, '-') : a;
  else return a;
}
// Below `lo` exp rounds to +0 (a causal mask's -inf): such elements get 0
// without a call, so a vectorised loop's lanes stay on the vector
// function's fast path (libmvec computes out-of-range lanes one by one).
// On the host the argument and the result are masked bitwise: written as
// selects, GCC sinks the call into the branch that uses it, where the
// argument is unclamped, and the loop either stays scalar or sends the
// -inf lanes to the slow path.
template <class T> THN_HD T thn_exp(T a) {
  const T lo = sizeof(T) == 4 ? T(-104) : T(-746);
#if !defined(__CUDACC_RTC__) && !defined(__CUDACC__)
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    typedef std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t> U;
    const U keep = U(a < lo) - U(1);  // all ones unless a < lo
    const T y = std::exp(__builtin_bit_cast(T, U(__builtin_bit_cast(U, a) & keep)));
    return __builtin_bit_cast(T, U(__builtin_bit_cast(U, y) & keep));
  }
#endif
  const bool zero = a < lo;
  const T y = std::exp(zero ? T(0) : a);
  return zero ? T(0) : y;
}
template <class T> THN_HD T thn_exp2(T a) { return std::exp2(a); }
template <class T> THN_HD T thn_log(T a) { return std::log(a); }
template <class T> THN_HD T thn_log2(T a) { return std::log2(a); }
template <class T> THN_HD T thn_log10(T a) { return std::log10(a); }
template <class T> THN_HD T thn_log1p(T a) { return std::log1p(a); }
template <class T> THN_HD T thn_expm1(T a) { return std::expm1(a); }
template <class T> THN_HD T thn_sqrt(T a) { return std::sqrt(a); }
template <class T> THN_HD T thn_rsqrt(T a) { return T(1) / std::sqrt(a); }
template <class T> THN_HD T thn_square(T a) {
  if constexpr (thn_is_wrapping_int<T>) return thn_wrapping(a, a, '*'); else return a * a;
}
template <class T> THN_HD T thn_sin(T a) { return std::sin(a); }
template <class T> THN_HD T thn_cos(T a) {
#ifdef THN_VECTOR_COS  // host kernels: see backend/prelude.cpp.in
  return THN_VECTOR_COS(a);
#else
  return std::cos(a);
#endif
}
template <class T> THN_HD T thn_tan(T a) { return std::tan(a); }
template <class T> THN_HD T thn_sinh(T a) { return std::sinh(a); }
template <class T> THN_HD T thn_cosh(T a) { return std::cosh(a); }
template <class T> THN_HD T thn_tanh(T a) { return std::tanh(a); }
template <class T> THN_HD T thn_asin(T a) { return std::asin(a); }
template <class T> THN_HD T thn_acos(T a) { return std::acos(a); }
template <class T> THN_HD T thn_atan(T a) { return std::atan(a); }
template <class T> THN_HD T thn_asinh(T a) { return std::asinh(a); }
template <class T> THN_HD T thn_acosh(T a) { return std::acosh(a); }
template <class T> THN_HD T thn_atanh(T a) { return std::atanh(a); }
template <class T> THN_HD T thn_sigmoid(T a) { return T(1) / (T(1) + std::exp(-a)); }
template <class T> THN_HD T thn_relu(T a) { return a > T(0) ? a : (a != a ? a : T(0)); }
template <class T> THN_HD T thn_erf(T a) { return std::erf(a); }
template <class T> THN_HD T thn_erfc(T a) { return std::erfc(a); }
template <class T> THN_HD T thn_lgamma(T a) { return std::lgamma(a); }
// sin(pi x) / (pi x), 1 at 0 (PyTorch's formula, pi x rounded to T).
template <class T> THN_HD T thn_sinc(T a) {
  if (a == T(0)) return T(1);
  const T p = T(3.14159265358979323846) * a;
  return std::sin(p) / p;
}
template <class T> THN_HD T thn_floor(T a) { if constexpr (thn_is_float<T>) return std::floor(a); else return a; }
template <class T> THN_HD T thn_ceil(T a) { if constexpr (thn_is_float<T>) return std::ceil(a); else return a; }
template <class T> THN_HD T thn_round(T a) { if constexpr (thn_is_float<T>) return std::nearbyint(a); else return a; }
template <class T> THN_HD T thn_trunc(T a) { if constexpr (thn_is_float<T>) return std::trunc(a); else return a; }
template <class T> THN_HD T thn_frac(T a) { return a - std::trunc(a); }
template <class T> THN_HD T thn_sign(T a) {
  if constexpr (std::is_same_v<T, bool>) return a;
  else return T((T(0) < a) - (a < T(0)));
}
template <class T> THN_HD T thn_reciprocal(T a) { return T(1) / a; }
template <class T> THN_HD bool thn_logical_not(T a) { return !a; }
template <class T> THN_HD T thn_bitwise_not(T a) {
  if constexpr (std::is_same_v<T, bool>) return !a; else return ~a;
}
template <class T> THN_HD bool thn_isnan(T a) { if constexpr (thn_is_float<T>) return a != a; else return false; }
template <class T> THN_HD bool thn_isinf(T a) {
  if constexpr (thn_is_float<T>) return std::fabs(a) == std::numeric_limits<T>::infinity(); else return false;
}
template <class T> THN_HD bool thn_isfinite(T a) { return !thn_isnan(a) && !thn_isinf(a); }
template <class T> THN_HD bool thn_isposinf(T a) { return thn_isinf(a) && a > T(0); }
template <class T> THN_HD bool thn_isneginf(T a) { return thn_isinf(a) && a < T(0); }
// The sign bit: set for -0.0 and a negative NaN.
template <class T> THN_HD bool thn_signbit(T a) {
  if constexpr (thn_is_float<T>) return std::copysign(T(1), a) < T(0);
  else if constexpr (std::is_same_v<T, bool>) return false;
  else return a < T(0);
}

// Two inputs
template <class T> THN_HD T thn_add(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a || b;
  else if constexpr (thn_is_float<T>) return a + b;
  else return thn_wrapping(a, b, '+');
}
template <class T> THN_HD T thn_sub(T a, T b) {
  if constexpr (thn_is_float<T> || std::is_same_v<T, bool>) return a - b; else return thn_wrapping(a, b, '-');
}
template <class T> THN_HD T thn_mul(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a && b;
  else if constexpr (thn_is_float<T>) return a * b;
  else return thn_wrapping(a, b, '*');
}
// An integer quotient or remainder by -1 is computed apart: the lowest
// value's quotient wraps (to itself, as PyTorch's result), where the
// processor's division traps.
template <class T> THN_HD T thn_div(T a, T b) {
  if constexpr (!thn_is_float<T> && !std::is_same_v<T, bool>)
    if (b == T(-1)) return thn_sub(T(0), a);
  return a / b;
}
template <class T> THN_HD T thn_div_trunc(T a, T b) {
  if constexpr (thn_is_float<T>) return std::trunc(a / b); else return thn_div(a, b);
}
// Python's floor division, as PyTorch computes it for floats.
template <class T> THN_HD T thn_floor_divide(T a, T b) {
  if constexpr (thn_is_float<T>) {
    if (b == 0) return a / b;
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= T(1);
    if (div == 0) return std::copysign(T(0), a / b);
    T fl = std::floor(div);
    if (div - fl > T(0.5)) fl += T(1);
    return fl;
  } else {
    if (b == T(-1)) return thn_sub(T(0), a);
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
  }
}
// fmod: the remainder of truncated division (the sign of a), C's fmod and %.
template <class T> THN_HD T thn_fmod(T a, T b) {
  if constexpr (thn_is_float<T>) return std::fmod(a, b);
  else return b == T(-1) ? T(0) : a % b;
}
template <class T> THN_HD T thn_remainder(T a, T b) {
  if constexpr (thn_is_float<T>) {
    T m = std::fmod(a, b);
    if (m != 0 && ((b < 0) != (m < 0))) m += b;
    return m;
  } else {
    if (b == T(-1)) return T(0);
    T m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
  }
}
// x ** e for a Python number e, as PyTorch 1.13's pow_tensor_scalar
// computes it in float32, float64 and bfloat16: 0.5, -0.5, -1, 2, 3 and -2
// by their formulas (two roundings for 3, -2, -0.5, the first to the
// storage type R: bfloat16's x * x, computed in float, is rounded to
// bfloat16 before it is used again), other exponents by pow.
template <class T, class R = T> THN_HD T thn_pow_number(T a, double e) {
  if (e == 0.5) return std::sqrt(a);
  if (e == -0.5) return T(1) / std::sqrt(a);
  if (e == -1.0) return T(1) / a;
  if (e == 2.0) return a * a;
  if (e == 3.0) return T(R(a * a)) * a;
  if (e == -2.0) return T(1) / T(R(a * a));
  return std::pow(a, T(e));
}
template <class T> THN_HD T thn_pow(T a, T b) {
  if constexpr (thn_is_float<T>) {
    return std::pow(a, b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || !b;
  } else {
    if (b < 0) return a == 1 ? T(1) : a == -1 ? T(b % 2 == 0 ? 1 : -1) : T(0);
    T r = 1;
    while (b) {
      if (b & 1) r *= a;
      b >>= 1;
      a *= a;
    }
    return r;
  }
}
template <class T> THN_HD T thn_maximum(T a, T b) {
  if constexpr (thn_is_float<T>) { if (a != a) return a; if (b != b) return b; }
  return a > b ? a : b;
}
template <class T> THN_HD T thn_minimum(T a, T b) {
  if constexpr (thn_is_float<T>) { if (a != a) return a; if (b != b) return b; }
  return a < b ? a : b;
}
template <class T> THN_HD T thn_atan2(T a, T b) { return std::atan2(a, b); }
template <class T> THN_HD T thn_hypot(T a, T b) { return std::hypot(a, b); }
template <class T> THN_HD T thn_nextafter(T a, T b) { return std::nextafter(a, b); }
// nextafter on bfloat16's grid, computed in float: a bfloat16 is the upper
// half of a float's bits, so its neighbours lie 1 << 16 apart in them.
THN_HD inline float thn_nextafter_bf16(float a, float b) {
  if (a != a || b != b) return a + b;
  if (a == b) return b;
#ifdef __CUDACC_RTC__
  uint32_t bits = __float_as_uint(a), sign = __float_as_uint(b) & 0x80000000u;
#else
  uint32_t bits = __builtin_bit_cast(uint32_t, a), sign = __builtin_bit_cast(uint32_t, b) & 0x80000000u;
#endif
  if (a == 0) bits = sign | 0x10000u;  // the least subnormal, toward b
  else bits = (b > a) == (a > 0) ? bits + 0x10000u : bits - 0x10000u;  // away from 0, or toward it
#ifdef __CUDACC_RTC__
  return __uint_as_float(bits);
#else
  return __builtin_bit_cast(float, bits);
#endif
}
template <class T> THN_HD T thn_copysign(T a, T b) { return std::copysign(a, b); }
// log(exp(a) + exp(b)) and log2(2^a + 2^b) without overflow, PyTorch's formulas.
template <class T> THN_HD T thn_logaddexp(T a, T b) {
  if (thn_isinf(a) && a == b) return a;
  const T m = a < b ? b : a;
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}
template <class T> THN_HD T thn_logaddexp2(T a, T b) {
  if (thn_isinf(a) && a == b) return a;
  const T m = a < b ? b : a;
  return m + std::log1p(std::exp2(-std::fabs(a - b))) * T(1.4426950408889634);
}
// logcumsumexp's step, PyTorch's log_add_exp_helper: a NaN in b
// propagates, equal infinities (or -inf twice) keep a.
template <class T> THN_HD T thn_log_cum_add(T a, T b) {
  const T lo = b != b ? b : (b < a ? b : a), hi = b != b ? b : (a < b ? b : a);
  if (lo != hi || thn_isfinite(lo)) return std::log1p(std::exp(lo - hi)) + hi;
  return a;
}
// a * log(b), 0 where a is 0 (unless b is NaN).
template <class T> THN_HD T thn_xlogy(T a, T b) {
  if (b != b) return b;
  if (a == T(0)) return T(0);
  return a * std::log(b);
}
// The step function: b where a is 0.
template <class T> THN_HD T thn_heaviside(T a, T b) { return a == T(0) ? b : T(a > T(0)); }
template <class T> THN_HD bool thn_eq(T a, T b) { return a == b; }
template <class T> THN_HD bool thn_ne(T a, T b) { return a != b; }
template <class T> THN_HD bool thn_lt(T a, T b) { return a < b; }
template <class T> THN_HD bool thn_le(T a, T b) { return a <= b; }
template <class T> THN_HD bool thn_gt(T a, T b) { return a > b; }
template <class T> THN_HD bool thn_ge(T a, T b) { return a >= b; }
template <class T> THN_HD bool thn_logical_and(T a, T b) { return bool(a) && bool(b); }
template <class T> THN_HD bool thn_logical_or(T a, T b) { return bool(a) || bool(b); }
template <class T> THN_HD bool thn_logical_xor(T a, T b) { return bool(a) != bool(b); }
template <class T> THN_HD T thn_bitwise_and(T a, T b) { if constexpr (std::is_same_v<T, bool>) return a && b; else return a & b; }
template <class T> THN_HD T thn_bitwise_or(T a, T b) { if constexpr (std::is_same_v<T, bool>) return a || b; else return a | b; }
template <class T> THN_HD T thn_bitwise_xor(T a, T b) { if constexpr (std::is_same_v<T, bool>) return a != b; else return a ^ b; }
// PyTorch 1.13 shifts without a range check: the count wraps at the width,
// as x86's shift instructions do (1 << 65 == 2, 8 << -1 == 0, 8 >> 65 == 4).
template <class T> THN_HD T thn_bitwise_left_shift(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return T(U(a) << (b & T(sizeof(T) * 8 - 1)));
}
template <class T> THN_HD T thn_bitwise_right_shift(T a, T b) { return T(a >> (b & T(sizeof(T) * 8 - 1))); }

// More inputs
template <class T> THN_HD T thn_where(bool c, T a, T b) { return c ? a : b; }
template <class T> THN_HD T thn_clamp(T a, T lo, T hi) {
  if constexpr (thn_is_float<T>) { if (a != a) return a; }
  return thn_minimum(thn_maximum(a, lo), hi);
}
template <class T> THN_HD T thn_clamp_min(T a, T lo) { return thn_maximum(a, lo); }
template <class T> THN_HD T thn_clamp_max(T a, T hi) { return thn_minimum(a, hi); }
// With a Python number as the one bound, PyTorch 1.13 ignores a NaN bound.
template <class T> THN_HD T thn_clamp_min_number(T a, T lo) { return lo != lo ? a : thn_maximum(a, lo); }
template <class T> THN_HD T thn_clamp_max_number(T a, T hi) { return hi != hi ? a : thn_minimum(a, hi); }
// index_add's dst += alpha * src in the storage type S, computed in C: as
// PyTorch 1.13's loop over scalar_t, which rounds the product to S (float16
// and bfloat16; a no-op for the others) before the sum. alpha is taken in S.
template <class S, class C> THN_HD S thn_index_add(S dst, S src, C alpha) {
  return S(C(C(dst) + C(S(C(S(alpha)) * C(src)))));
}
template <class T> THN_HD T thn_lerp(T a, T b, T w) {
  T d = b - a;
  return std::fabs(w) < T(0.5) ? thn_muladd(w, d, a) : thn_muladd(-d, T(1) - w, b);
}

}  // namespace thn
