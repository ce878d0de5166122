// The random ops (manual_seed, rand, randn, randint, multinomial) on the Philox generator
// of philox.h: element i of a call is drawn from counter offset + i alone.
#include "runtime/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <numeric>
#include <utility>

#include "runtime/creation.h"
#include "runtime/elementwise.h"
#include "runtime/error.h"
#include "runtime/philox.h"

namespace thn {

namespace {

struct Generator {
  std::mutex mutex;
  uint64_t seed = 67280421310721;  // PyTorch's default seed
  uint64_t offset = 0;
};
Generator& generator() {
  static Generator g;
  return g;
}

// The significand bits of a float storage type: rand draws that many, so the
// value is exact in S and below 1.
template <class S> constexpr int kUniformBits = std::is_same_v<S, Half> ? 11 : std::is_same_v<S, BFloat16> ? 8 : 24;

// Writes S(draw(seed, offset + i)) into element i of t, a new contiguous tensor.
template <class S, class Draw> void fill_random(const Tensor& t, Draw draw) {
  if (is_meta(t)) return;
  const PhiloxState st = philox_reserve(uint64_t(t.numel()));
  S* p = t.data<S>();
  for (int64_t i = 0; i < t.numel(); i++) p[i] = S(draw(st.seed, st.offset + uint64_t(i)));
}

// rand / randn: (int... size, *, dtype, device).
Tensor new_random(const Args& a) {
  creation_device(a.opt_device(2));
  return empty(a.dims(0), a.opt_dtype(1).value_or(kDefaultFloat));
}

// PyTorch names the C++ type of the dtype in randint's bounds errors.
std::string_view random_type_name(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::Int32: return "int";
    case DType::Int64: return "long int";
    case DType::Float16: return "c10::Half";
    case DType::BFloat16: return "c10::BFloat16";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
  }
  return "?";
}

// The range of values of d that randint may produce.
std::pair<double, double> random_bounds(DType d) {
  switch (d) {
    case DType::Bool: return {0, 1};
    case DType::Int32: return {-2147483648.0, 2147483647.0};
    case DType::Float16: return {-65504.0, 65504.0};
    default: return {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  }
}

[[noreturn]] void randint_type_error(const IValue& high, const IValue& size) {
  fail(ErrorKind::TypeError, "randint() received an invalid combination of arguments - got (int, {}, {})",
       high.type_name(), size.type_name());
}

Dims size_arg(const IValue& high, const IValue& size) {
  if (!size.is_list()) randint_type_error(high, size);
  Dims d;
  for (const IValue& e : size.to_list().items) {
    if (!e.is_int()) randint_type_error(high, size);
    d.push_back(e.to_int());
  }
  return d;
}

}  // namespace

void philox_manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(generator().mutex);
  generator().seed = seed;
  generator().offset = 0;
}

PhiloxState philox_reserve(uint64_t n) {
  std::lock_guard<std::mutex> lock(generator().mutex);
  PhiloxState st{generator().seed, generator().offset};
  generator().offset += n;
  return st;
}

PhiloxState philox_get_state() {
  std::lock_guard<std::mutex> lock(generator().mutex);
  return {generator().seed, generator().offset};
}

void philox_set_state(PhiloxState st) {
  std::lock_guard<std::mutex> lock(generator().mutex);
  generator().seed = st.seed;
  generator().offset = st.offset;
}

IValue op_manual_seed(const Args& a) {
  philox_manual_seed(uint64_t(a.i64(0)));
  return IValue();
}

IValue op_rand(const Args& a) {
  Tensor t = new_random(a);
  dispatch_dtype(t.dtype(), [&]<class S>() {
    if constexpr (std::is_same_v<S, double>) fill_random<S>(t, thn_rand_double);
    else if constexpr (std::is_integral_v<S>) not_implemented("check_uniform_bounds", t.dtype(), kCPU, "check_uniform_bounds");
    else fill_random<S>(t, thn_rand_float<kUniformBits<S>>);
  });
  return t;
}

IValue op_randn(const Args& a) {
  Tensor t = new_random(a);
  dispatch_dtype(t.dtype(), [&]<class S>() {
    if constexpr (std::is_same_v<S, double>) fill_random<S>(t, thn_randn_double);
    else if constexpr (std::is_integral_v<S>) not_implemented("normal_kernel_cpu", t.dtype(), kCPU);
    else fill_random<S>(t, thn_randn_float);
  });
  return t;
}

// randint(low=0, high, size): randint(high, size) shifts its arguments.
IValue op_randint(const Args& a) {
  creation_device(a.opt_device(4));
  const bool shifted = a.is_none(2);
  const IValue& high_v = shifted ? a[0] : a[1];
  const IValue& size_v = shifted ? a[1] : a[2];
  if (!high_v.is_int()) randint_type_error(a[1], a[2]);
  const int64_t low = shifted ? 0 : a.i64(0), high = high_v.to_int();
  Tensor t = empty(size_arg(a[1], size_v), a.opt_dtype(3).value_or(kDefaultInt));
  THN_CHECK(low < high, "random_ expects 'from' to be less than 'to', but got from={} >= to={}", low, high);
  auto [min, max] = random_bounds(t.dtype());
  THN_CHECK(double(low) >= min && double(low) <= max, "from is out of bounds for {}", random_type_name(t.dtype()));
  THN_CHECK(double(high - 1) >= min && double(high - 1) <= max, "to - 1 is out of bounds for {}",
            random_type_name(t.dtype()));
  const uint64_t range = uint64_t(high) - uint64_t(low);
  dispatch_dtype(t.dtype(), [&]<class S>() {
    fill_random<S>(t, [&](uint64_t seed, uint64_t counter) {
      return compute_t<S>(thn_randint(seed, counter, low, range));
    });
  });
  return t;
}

// multinomial(self, num_samples, replacement=False): category indices drawn
// from each row of weights. With replacement each draw inverts the row's
// cumulative sum at a uniform number; without, PyTorch's race of
// exponentials: the num_samples largest w / E (E = -log(1 - u), u uniform),
// largest first, ties (weights 0) in index order. The same seed gives the
// same samples on every path, not PyTorch's samples.
IValue op_multinomial(const Args& a) {
  const Tensor& self = a.tensor(0);
  const int64_t n = a.i64(1);
  const bool replacement = a.boolean(2);
  THN_CHECK(is_floating(self.dtype()), "multinomial only supports floating-point dtypes for input, got: {}",
            dtype_torch_name(self.dtype()));
  THN_CHECK(self.dim() == 1 || self.dim() == 2, "prob_dist must be 1 or 2 dim");
  const int64_t categories = self.sizes().back();
  THN_CHECK(n > 0, "cannot sample n_sample <= 0 samples");
  THN_CHECK(replacement || n <= categories,
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  THN_CHECK(categories <= (int64_t(1) << 24), "number of categories cannot exceed 2^24");
  Dims shape = self.sizes();
  shape.back() = n;
  Tensor out = empty(shape, DType::Int64);
  if (out.numel() == 0 || is_meta(out)) return out;  // (the weights are checked when the trace runs)
  const Tensor weights = contiguous(to_dtype(self, DType::Float64));
  const double* w = weights.data<double>();
  const int64_t rows = self.dim() == 1 ? 1 : self.sizes()[0];
  for (int64_t i = 0; i < rows * categories; ++i)
    THN_CHECK(std::isfinite(w[i]) && w[i] >= 0, "probability tensor contains either `inf`, `nan` or element < 0");
  for (int64_t r = 0; r < rows; ++r)
    THN_CHECK(std::accumulate(w + r * categories, w + (r + 1) * categories, 0.0) > 0,
              "invalid multinomial distribution (sum of probabilities <= 0)");
  int64_t* o = out.data<int64_t>();
  if (replacement) {
    const PhiloxState st = philox_reserve(uint64_t(rows * n));
    std::vector<double> cdf(static_cast<size_t>(categories));
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = w + r * categories;
      std::partial_sum(row, row + categories, cdf.begin());
      int64_t last = categories - 1;  // the last category of weight > 0
      while (row[last] == 0) --last;
      for (int64_t s = 0; s < n; ++s) {
        const double u = thn_rand_double(st.seed, st.offset + uint64_t(r * n + s)) * cdf.back();
        const int64_t k = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
        o[r * n + s] = std::min(k, last);  // (u * total rounded up to the total)
      }
    }
    return out;
  }
  const PhiloxState st = philox_reserve(uint64_t(rows * categories));
  std::vector<std::pair<double, int64_t>> keys(static_cast<size_t>(categories));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < categories; ++c) {
      const double u = thn_rand_double(st.seed, st.offset + uint64_t(r * categories + c));
      const double weight = w[r * categories + c];
      keys[size_t(c)] = {weight == 0 ? 0.0 : weight / -std::log1p(-u), c};
    }
    std::partial_sort(keys.begin(), keys.begin() + n, keys.end(), [](const auto& x, const auto& y) {
      return x.first > y.first || (x.first == y.first && x.second < y.second);
    });
    for (int64_t s = 0; s < n; ++s) o[r * n + s] = keys[size_t(s)].second;
  }
  return out;
}

}  // namespace thn
