// Eager CPU runtime benchmark: times the ops of bench/README.md on 1M- and
// 16M-element float32 tensors through the op table, one thread. Prints one
// line per op: "name size median_ms". bench/run puts it beside PyTorch.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "runtime/op_registry.h"

using namespace thn;

namespace {

double median_ms(const std::function<void()>& f, int reps) {
  for (int i = 0; i < 3; i++) f();  // warm up: the allocator's first blocks fault their pages in
  std::vector<double> t;
  for (int i = 0; i < reps; i++) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

Tensor randn(int64_t rows, int64_t cols) {
  return call("randn", {IValue(rows), IValue(cols)}).to_tensor();
}

IValue m(const IValue& self, const char* name, std::vector<IValue> args = {}, const Kwargs& kw = {}) {
  return call_method(self.to_tensor(), name, std::move(args), kw);
}

}  // namespace

int main() {
  for (int64_t n : {int64_t(1) << 20, int64_t(1) << 24}) {
    int64_t cols = 1024, rows = n / cols;
    IValue a = randn(rows, cols), b = randn(rows, cols), c = randn(rows, cols);
    int reps = n > (1 << 20) ? 9 : 51;
    auto report = [&](const char* name, const std::function<void()>& f) {
      std::printf("%s %lld %.4f\n", name, (long long)n, median_ms(f, reps));
    };
    report("add", [&] { m(a, "add", {b}); });
    report("mul_add", [&] { m(m(a, "mul", {b}), "add", {c}); });
    report("sum", [&] { m(a, "sum"); });
    report("amax", [&] { m(a, "amax"); });
    report("softmax_rows", [&] {
      IValue mx = m(a, "amax", {IValue(int64_t(-1))}, {{"keepdim", IValue(true)}});
      IValue e = m(m(a, "sub", {mx}), "exp");
      m(e, "div", {m(e, "sum", {IValue(int64_t(-1))}, {{"keepdim", IValue(true)}})});
    });
  }
}
