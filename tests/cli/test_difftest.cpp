// How `thn difftest` compares the output of --interpret with that of jit.
#include <catch2/catch.hpp>

#include "cli/output_compare.h"

using namespace thn;

namespace {

struct Case {
  const char* what;
  std::string_view reference, actual;
  bool match;
};

// The dtype is printed after a tensor's last row only; its first row is half too.
constexpr std::string_view kHalfRows = "tensor([[1.0000, 2.0000],\n        [3.0000, 4.0000]], dtype=torch.float16)\n";
constexpr std::string_view kHalfRowsClose = "tensor([[1.0010, 2.0000],\n        [3.0000, 4.0000]], dtype=torch.float16)\n";

const Case kCases[] = {
    {"empty", "", "", true},
    {"identical", "hello\n1 2 3\n", "hello\n1 2 3\n", true},
    {"missing final newline", "no newline at end", "no newline at end\n", true},
    {"float within 1e-5", "0.1234567\n", "0.1234568\n", true},
    {"tensor element within 1e-5", "tensor([1.0000, 2.0000])\n", "tensor([1.0000, 2.0000001])\n", true},
    {"exponent within 1e-5", "x = -3.5e-05\n", "x = -3.50000001e-05\n", true},
    {"float off by 1e-3", "0.123\n", "0.124\n", false},
    {"float32 tensor off by 1e-3", "tensor([1.0000, 2.0000])\n", "tensor([1.0000, 2.0010])\n", false},
    {"integers exactly", "100000\n", "100001\n", false},
    {"int is not float", "1\n", "1.0\n", false},
    {"float16 tensor off by 1e-3",
     "tensor([1.0000, 2.0000], dtype=torch.float16)\n", "tensor([1.0000, 2.0010], dtype=torch.float16)\n", true},
    {"bfloat16 tensor off by 4e-3", "tensor(0.5000, dtype=torch.bfloat16)\n", "tensor(0.5040, dtype=torch.bfloat16)\n", true},
    {"float32 tensor off by 3e-2", "tensor([1.0000, 2.0000])\n", "tensor([1.0000, 2.0300])\n", false},
    {"first row of a float16 tensor", kHalfRows, kHalfRowsClose, true},
    {"text", "True\n", "False\n", false},
    {"digits inside a word", "dtype=torch.float32\n", "dtype=torch.float64\n", false},
    {"names in a trace", "t0 = add(x, y)\n", "t1 = add(x, y)\n", false},
    {"spaces between words", "a b\n", "a  b\n", false},
    {"padding next to numbers", "tensor([ 0.0000,  1.0000])\n", "tensor([-0.0000,  1.0000])\n", true},
    {"nan is nan", "nan\n", "nan\n", true},
    {"nan, inf, -inf in a tensor", "tensor([nan, inf, -inf])\n", "tensor([nan, inf, -inf])\n", true},
    {"nan is not a number", "nan\n", "0.0\n", false},
    {"a number is not nan", "1.0\n", "nan\n", false},
    {"inf is not -inf", "inf\n", "-inf\n", false},
    {"inf is not a large number", "inf\n", "1e+308\n", false},
    {"extra line", "a\n", "a\nb\n", false},
};

}  // namespace

TEST_CASE("difftest: what matches") {
  for (const Case& c : kCases) {
    INFO(c.what);
    CHECK(!first_difference(c.reference, c.actual).has_value() == c.match);
  }
}

TEST_CASE("difftest: reports the first differing line") {
  struct Difference {
    std::string reference, actual;
    size_t line;
    std::string_view reference_line, actual_line;
  };
  const Difference differences[] = {
      {"a\nb 1.0\nc\n", "a\nb 2.0\nd\n", 2, "b 1.0", "b 2.0"},
      {"a\nb\n", "a\n", 2, "b", "<end of output>"},
      {std::string(kHalfRows) + "after 1.0\n", std::string(kHalfRows) + "after 1.001\n", 3, "after 1.0", "after 1.001"},
  };
  for (const Difference& want : differences) {
    auto got = first_difference(want.reference, want.actual);
    REQUIRE(got.has_value());
    CHECK(got->line == want.line);
    CHECK(got->reference == want.reference_line);
    CHECK(got->actual == want.actual_line);
  }
}
