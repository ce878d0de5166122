#pragma once
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel Random Numbers: As
// Easy as 1, 2, 3", SC'11) and the per-element formulas of rand, randn and
// randint. Element i of a call draws from counter (offset + i) under key
// seed alone, so every path and device (the eager loops here, generated host
// and CUDA kernels later) computes the same number for it. Like
// scalar_math.h, this header is included in generated source, which defines
// THN_HD (e.g. __host__ __device__) and the standard names itself.
#ifndef THN_HD
#define THN_HD
// The same host prelude as scalar_math.h, so either header may come first.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#endif

namespace thn {

// The round multipliers and the Weyl key increments of Random123.
constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;

struct Philox4 {
  uint32_t x[4];
};

THN_HD inline Philox4 philox_round(Philox4 c, uint32_t k0, uint32_t k1) {
  uint64_t p0 = uint64_t(kPhiloxM0) * c.x[0];
  uint64_t p1 = uint64_t(kPhiloxM1) * c.x[2];
  return Philox4{{uint32_t(p1 >> 32) ^ c.x[1] ^ k0, uint32_t(p1), uint32_t(p0 >> 32) ^ c.x[3] ^ k1, uint32_t(p0)}};
}

// Ten rounds; the key is bumped between rounds.
THN_HD inline Philox4 philox4x32_10(Philox4 c, uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; r++) {
    if (r > 0) k0 += kPhiloxW0, k1 += kPhiloxW1;
    c = philox_round(c, k0, k1);
  }
  return c;
}

// The four words of one element: counter (offset + i) in the low two words.
THN_HD inline Philox4 philox_draw(uint64_t seed, uint64_t counter) {
  return philox4x32_10(Philox4{{uint32_t(counter), uint32_t(counter >> 32), 0u, 0u}}, uint32_t(seed),
                       uint32_t(seed >> 32));
}

// [0, 1) from the top Bits bits of x. A float type with at least Bits
// significand bits (24: float, 11: float16, 8: bfloat16) holds every value
// exactly, so storing the result never rounds up to 1.
template <int Bits> THN_HD float philox_unit_float(uint32_t x) {
  return float(x >> (32 - Bits)) * (1.0f / float(1u << Bits));
}
// [0, 1) with 53 random bits from two words.
THN_HD inline double philox_unit_double(uint32_t hi, uint32_t lo) {
  return double(((uint64_t(hi) << 32) | lo) >> 11) * (1.0 / 9007199254740992.0);
}

// rand: uniform on [0, 1).
template <int Bits = 24> THN_HD float thn_rand_float(uint64_t seed, uint64_t counter) {
  return philox_unit_float<Bits>(philox_draw(seed, counter).x[0]);
}
THN_HD inline double thn_rand_double(uint64_t seed, uint64_t counter) {
  Philox4 r = philox_draw(seed, counter);
  return philox_unit_double(r.x[0], r.x[1]);
}

// randn: Box-Muller on two uniforms of one draw; the first is taken from
// (0, 1] so the logarithm is finite.
THN_HD inline float thn_randn_float(uint64_t seed, uint64_t counter) {
  Philox4 r = philox_draw(seed, counter);
  float u1 = 1.0f - philox_unit_float<24>(r.x[0]);
  float u2 = philox_unit_float<24>(r.x[1]);
  return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.28318530717958647692f * u2);
}
THN_HD inline double thn_randn_double(uint64_t seed, uint64_t counter) {
  Philox4 r = philox_draw(seed, counter);
  double u1 = 1.0 - philox_unit_double(r.x[0], r.x[1]);
  double u2 = philox_unit_double(r.x[2], r.x[3]);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.28318530717958647692 * u2);
}

// randint: low + (bits mod range) for range = high - low > 0, with 64 random
// bits when the range needs more than 32 (as PyTorch's random_from_to).
THN_HD inline int64_t thn_randint(uint64_t seed, uint64_t counter, int64_t low, uint64_t range) {
  Philox4 r = philox_draw(seed, counter);
  uint64_t bits = range <= (uint64_t(1) << 32) ? uint64_t(r.x[0]) : (uint64_t(r.x[0]) << 32) | r.x[1];
  return int64_t(uint64_t(low) + bits % range);
}

}  // namespace thn
