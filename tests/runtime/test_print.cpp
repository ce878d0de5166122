// repr_float and tensor_repr against what Python and PyTorch 1.13 print
// (tests/runtime/expected/print.golden, written by gen_print.py).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/format.h"

using namespace thn;

namespace {

std::filesystem::path golden_path() {
  return std::filesystem::path(THN_TEST_DIR) / "runtime" / "expected" / "print.golden";
}

Dims read_dims(std::istream& in, int64_t n) {
  Dims d(size_t(n), 0);
  for (auto& x : d) in >> x;
  return d;
}

// tensor <name> <dtype> <ndim> <sizes> <strides> <offset> <n> <storage values> <k>
Tensor read_tensor(std::istream& in, const std::string& dtype_word) {
  DType dtype = *dtype_from_name(dtype_word);
  int64_t ndim = 0;
  in >> ndim;
  Dims sizes = read_dims(in, ndim), strides = read_dims(in, ndim);
  int64_t offset = 0, n = 0;
  in >> offset >> n;
  Tensor storage = empty({n}, dtype);
  dispatch_dtype(dtype, [&]<class S>() {
    S* p = storage.data<S>();
    std::string w;
    for (int64_t i = 0; i < n; i++) {
      in >> w;
      if constexpr (std::is_integral_v<S>) p[i] = S(std::stoll(w));
      else p[i] = S(compute_t<S>(std::strtod(w.c_str(), nullptr)));
    }
  });
  return storage.as_strided(sizes, strides, offset);
}

// Calls check(fields, file) for each record of `kind`: `fields` holds the rest
// of its line and `file` stands just after it. Returns how many there were.
template <class F>
int for_each_record(const std::string& kind, F&& check) {
  std::ifstream file(golden_path());
  REQUIRE(file.good());
  std::string line;
  int count = 0;
  while (std::getline(file, line)) {
    std::istringstream fields(line);
    std::string k;
    fields >> k;
    if (k != kind) continue;
    check(fields, file);
    count++;
  }
  return count;
}

}  // namespace

TEST_CASE("repr_float spells floats as Python does", "[print]") {
  CHECK(repr_float(1e-5) == "1e-05");
  CHECK(repr_float(1e-4) == "0.0001");
  CHECK(repr_float(1e16) == "1e+16");
  CHECK(repr_float(1234567890123456.0) == "1234567890123456.0");
  CHECK(repr_float(-0.0) == "-0.0");
  CHECK(repr_float(1.5e300) == "1.5e+300");
  int checked = for_each_record("float", [](std::istream& fields, std::istream&) {
    std::string hex, want;
    fields >> hex >> want;
    INFO(hex);
    CHECK(repr_float(std::strtod(hex.c_str(), nullptr)) == want);
  });
  CHECK(checked > 100);
}

TEST_CASE("tensor_repr prints tensors as PyTorch does", "[print]") {
  int checked = for_each_record("tensor", [](std::istream& fields, std::istream& file) {
    std::string name, dtype;
    fields >> name >> dtype;
    Tensor t = read_tensor(fields, dtype);
    int lines = 0;
    fields >> lines;
    std::string want, line;
    for (int i = 0; i < lines && std::getline(file, line); i++) want += (i ? "\n" : "") + line;
    INFO(name);
    CHECK(tensor_repr(t) == want);
  });
  CHECK(checked > 100);
}
