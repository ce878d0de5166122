#pragma once
// Compares what two runs of one script printed, the way `thn difftest` needs:
// lines are split into numbers and text; text must be identical, numbers
// close. Integers (no `.`, no exponent) must be equal; floats within
// |a - b| <= tol + tol * |a|, tol = 1e-5 (or the caller's), or 1e-2 on a line that mentions
// float16/bfloat16 or belongs to a multi-line tensor(...) print that does
// (half precision keeps about 3 digits, and jit may round at other points);
// `nan` matches `nan`, `inf` only `inf` of the same sign.
#include <optional>
#include <string>
#include <string_view>

namespace thn {

struct OutputDifference {
  size_t line = 0;        // 1-based line number
  std::string reference;  // that line in the reference output, or "<end of output>"
  std::string actual;     // that line in the other output, or "<end of output>"
};

inline constexpr double kOutputTolerance = 1e-5;

// The first line where `actual` does not match `reference`, if any. A
// missing final newline is not a difference.
std::optional<OutputDifference> first_difference(std::string_view reference, std::string_view actual,
                                                 double tolerance = kOutputTolerance);

}  // namespace thn
