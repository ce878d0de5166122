// Unit tests of the runtime's building blocks (dtypes, promotion, layout).
#include <catch2/catch.hpp>

#include "runtime/elementwise.h"
#include "runtime/half.h"

using namespace thn;

TEST_CASE("float16 and bfloat16 round to nearest even", "[runtime]") {
  CHECK(float(Half(1.0f)) == 1.0f);
  CHECK(float(Half(65504.0f)) == 65504.0f);
  CHECK(std::isinf(float(Half(65520.0f))));
  CHECK(float(Half(1.0f + 1.0f / 2048)) == 1.0f);                 // tie, to even
  CHECK(float(Half(1.0f + 3.0f / 2048)) == 1.0f + 2.0f / 1024);   // tie, to even (up)
  CHECK(float(Half(5.96046448e-08f)) == 5.96046448e-08f);         // smallest subnormal
  CHECK(float(BFloat16(1.0f + 1.0f / 256)) == 1.0f);
  CHECK(std::isnan(float(BFloat16(std::nanf("")))));
}
