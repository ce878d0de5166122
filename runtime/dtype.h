#pragma once
// The dtypes of LANGUAGE.md, listed once. Every dispatch over dtypes is
// generated from THN_DTYPES.
#include <cstdint>
#include <optional>
#include <string_view>

#include "runtime/half.h"

namespace thn {

//        enum      storage   compute   python name  PyTorch name  short
#define THN_DTYPES(X)                                         \
  X(Bool, bool, bool, "bool", "Bool", "b8")                   \
  X(Int32, int32_t, int32_t, "int32", "Int", "i32")           \
  X(Int64, int64_t, int64_t, "int64", "Long", "i64")          \
  X(Float16, Half, float, "float16", "Half", "f16")           \
  X(BFloat16, BFloat16, float, "bfloat16", "BFloat16", "bf16") \
  X(Float32, float, float, "float32", "Float", "f32")         \
  X(Float64, double, double, "float64", "Double", "f64")

enum class DType : uint8_t {
#define THN_X(E, ...) E,
  THN_DTYPES(THN_X)
#undef THN_X
};
constexpr int kNumDTypes = 7;

enum class Category : uint8_t { Bool, Integer, Floating };

int64_t itemsize(DType t);
std::string_view dtype_name(DType t);        // "float32"
std::string_view dtype_torch_name(DType t);  // "Float", as PyTorch's messages spell it
std::string_view dtype_short(DType t);       // "f32", as traces print it
std::optional<DType> dtype_from_name(std::string_view name);
Category category(DType t);
inline bool is_floating(DType t) { return category(t) == Category::Floating; }
inline bool is_integral(DType t, bool include_bool) {
  return category(t) == Category::Integer || (include_bool && t == DType::Bool);
}
inline bool is_reduced_float(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

constexpr DType kDefaultFloat = DType::Float32;
constexpr DType kDefaultInt = DType::Int64;

// torch.promote_types
DType promote_types(DType a, DType b);
// Whether a value of `from` may be written into `to` by an in-place op
// (PyTorch's canCast: no float->int, no int->bool narrowing across categories).
bool can_cast(DType from, DType to);

template <DType D> struct DTypeTraits;
#define THN_X(E, S, C, ...)                 \
  template <> struct DTypeTraits<DType::E> { \
    using storage = S;                       \
    using compute = C;                       \
  };
THN_DTYPES(THN_X)
#undef THN_X

template <class T> constexpr DType dtype_of();
#define THN_X(E, S, ...) \
  template <> constexpr DType dtype_of<S>() { return DType::E; }
THN_DTYPES(THN_X)
#undef THN_X

// Calls f.template operator()<storage type>() for the runtime dtype.
template <class F>
decltype(auto) dispatch_dtype(DType t, F&& f) {
  switch (t) {
#define THN_X(E, S, ...) \
  case DType::E: return f.template operator()<S>();
    THN_DTYPES(THN_X)
#undef THN_X
  }
  __builtin_unreachable();
}

// The type arithmetic happens in for storage type S (float for Half/BFloat16).
template <class S> using compute_t = typename DTypeTraits<dtype_of<S>()>::compute;

}  // namespace thn
