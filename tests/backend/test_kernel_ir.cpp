// Kernel IR: when a kernel call needs 64-bit index arithmetic.
#include <catch2/catch.hpp>

#include "backend/kernel_ir.h"

namespace thn {

namespace {
// needs_wide_index with one row of strides per tensor, one stride per dim.
bool wide(const std::vector<int64_t>& sizes, const std::vector<std::vector<int64_t>>& rows) {
  std::vector<int64_t> strides;
  for (const auto& r : rows) strides.insert(strides.end(), r.begin(), r.end());
  return needs_wide_index(sizes, strides, sizes.size());
}
}  // namespace

TEST_CASE("kernel index width: 32 bits while every element and offset stays below 2^30") {
  constexpr int64_t k = int64_t(1) << 30;
  CHECK_FALSE(wide({1024, 1024}, {{1024, 1}, {1024, 1}}));
  CHECK_FALSE(wide({k - 1}, {{1}}));
  CHECK(wide({k}, {{1}}));                     // the element count
  CHECK(wide({32768, 32768}, {{32768, 1}}));   // 2^30 elements
  CHECK(wide({2, 4}, {{k, 1}}));               // a far offset in few elements
  CHECK_FALSE(wide({2, 4}, {{k / 2, 1}}));     // the furthest element is below 2^30
  CHECK(wide({3, 4}, {{0, 1}, {k / 2, 1}}));   // any tensor counts
  CHECK_FALSE(wide({1 << 20, 1}, {{0, 0}}));   // broadcast: offset 0
  CHECK_FALSE(wide({0, int64_t(1) << 40}, {{1, 1}}));  // empty
  CHECK(wide({int64_t(1) << 40, int64_t(1) << 40}, {{1, 1}}));  // no overflow in the count
  CHECK(wide({3, 2}, {{int64_t(1) << 62, 1}}));  // nor in an offset
}

}  // namespace thn
