// Kernel IR: when a kernel call needs 64-bit index arithmetic.
#include <catch2/catch.hpp>

#include "backend/kernel_ir.h"

namespace thn {

TEST_CASE("kernel index width: 32 bits while every element and offset stays below 2^30") {
  constexpr int64_t k = int64_t(1) << 30;
  CHECK_FALSE(needs_wide_index({1024, 1024}, {{1024, 1}, {1024, 1}}));
  CHECK_FALSE(needs_wide_index({k - 1}, {{1}}));
  CHECK(needs_wide_index({k}, {{1}}));                     // the element count
  CHECK(needs_wide_index({32768, 32768}, {{32768, 1}}));   // 2^30 elements
  CHECK(needs_wide_index({2, 4}, {{k, 1}}));               // a far offset in few elements
  CHECK_FALSE(needs_wide_index({2, 4}, {{k / 2, 1}}));     // the furthest element is below 2^30
  CHECK(needs_wide_index({3, 4}, {{0, 1}, {k / 2, 1}}));   // any tensor counts
  CHECK_FALSE(needs_wide_index({1 << 20, 1}, {{0, 0}}));   // broadcast: offset 0
  CHECK_FALSE(needs_wide_index({0, int64_t(1) << 40}, {{1, 1}}));  // empty
  CHECK(needs_wide_index({int64_t(1) << 40, int64_t(1) << 40}, {{1, 1}}));  // no overflow in the count
  CHECK(needs_wide_index({3, 2}, {{int64_t(1) << 62, 1}}));  // nor in an offset
}

}  // namespace thn
