#pragma once
// float16 and bfloat16 storage types. Arithmetic happens in float, as in
// PyTorch's CPU kernels; conversions round to nearest even.
// Also compiled into generated kernels (backend/codegen.h): THN_HD marks
// the functions for the device, THN_NO_STD_HEADERS leaves out std headers
// (NVRTC has none).
#ifndef THN_HD
#define THN_HD
#endif
#ifndef THN_NO_STD_HEADERS
#include <cstdint>
#include <cstring>
#endif

namespace thn {

#ifdef __CUDACC_RTC__
__device__ inline uint32_t float_bits(float f) { return __float_as_uint(f); }
__device__ inline float bits_float(uint32_t u) { return __uint_as_float(u); }
#else
inline uint32_t float_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
#endif

struct Half {
  uint16_t x = 0;
  Half() = default;
  THN_HD Half(float f) : x(from_float(f)) {}
  THN_HD operator float() const { return to_float(x); }

  THN_HD static uint16_t from_float(float f) {
    uint32_t u = float_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    u &= 0x7fffffffu;
    if (u >= 0x47800000u) return uint16_t(sign | (u > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (u < 0x38800000u) {                                  // subnormal or zero in half
      float a = bits_float(u) + 0.5f;                       // align to 2^-24 units, RNE by FPU
      return uint16_t(sign | (float_bits(a) - float_bits(0.5f)));
    }
    uint32_t mant_odd = (u >> 13) & 1u;
    u += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
    return uint16_t(sign | (u >> 13));
  }
  THN_HD static float to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
      float v = float(mant) * 5.9604644775390625e-08f;  // mant * 2^-24
      return sign ? -v : v;
    }
    return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
  }
};

struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  THN_HD BFloat16(float f) : x(from_float(f)) {}
  THN_HD operator float() const { return bits_float(uint32_t(x) << 16); }

  THN_HD static uint16_t from_float(float f) {
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN
    return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
};

}  // namespace thn
