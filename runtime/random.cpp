// The random ops (manual_seed, rand, randn, randint) on the Philox generator
// of philox.h: element i of a call is drawn from counter offset + i alone.
#include "runtime/random.h"

#include <limits>
#include <mutex>
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
  const PhiloxState st = philox_reserve(uint64_t(t.numel()));
  S* p = t.data<S>();
  for (int64_t i = 0; i < t.numel(); i++) p[i] = S(draw(st.seed, st.offset + uint64_t(i)));
}

// rand / randn: (int... size, *, dtype, device).
Tensor new_random(const Args& a) {
  creation_device(a.opt_device(2));
  return empty(a.dims(0), a.opt_dtype(1).value_or(kDefaultFloat));
}

// PyTorch's error for a dtype its CPU kernel does not dispatch on.
[[noreturn]] void not_implemented(std::string_view kernel, DType d) {
  fail("\"{}\" not implemented for '{}'", kernel, dtype_torch_name(d));
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
    else if constexpr (std::is_integral_v<S>) not_implemented("check_uniform_bounds", t.dtype());
    else fill_random<S>(t, thn_rand_float<kUniformBits<S>>);
  });
  return t;
}

IValue op_randn(const Args& a) {
  Tensor t = new_random(a);
  dispatch_dtype(t.dtype(), [&]<class S>() {
    if constexpr (std::is_same_v<S, double>) fill_random<S>(t, thn_randn_double);
    else if constexpr (std::is_integral_v<S>) not_implemented("normal_kernel_cpu", t.dtype());
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

}  // namespace thn
