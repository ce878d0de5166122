#include "runtime/dtype.h"

#include <array>

#include "runtime/error.h"

namespace thn {

namespace {
struct DTypeInfo {
  int64_t size;
  std::string_view name, torch_name, short_name;
};
constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
#define THN_X(E, S, C, N, T, SH) {int64_t(sizeof(S)), N, T, SH},
    THN_DTYPES(THN_X)
#undef THN_X
}};
const DTypeInfo& info(DType t) { return kInfo[size_t(t)]; }
}  // namespace

int64_t itemsize(DType t) { return info(t).size; }
std::string_view dtype_name(DType t) { return info(t).name; }
std::string_view dtype_torch_name(DType t) { return info(t).torch_name; }
std::string_view dtype_short(DType t) { return info(t).short_name; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (int i = 0; i < kNumDTypes; i++)
    if (kInfo[i].name == name) return DType(i);
  if (name == "float" ) return DType::Float32;
  if (name == "double") return DType::Float64;
  if (name == "half") return DType::Float16;
  if (name == "int") return DType::Int32;
  if (name == "long") return DType::Int64;
  return std::nullopt;
}

Category category(DType t) {
  switch (t) {
    case DType::Bool: return Category::Bool;
    case DType::Int32:
    case DType::Int64: return Category::Integer;
    default: return Category::Floating;
  }
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  Category ca = category(a), cb = category(b);
  if (ca != cb) {
    // The higher category wins, except that mixing a float with a wider
    // float is handled below; bool never wins.
    return ca > cb ? a : b;
  }
  if (ca == Category::Integer) return DType::Int64;  // int32 + int64
  // Floating: f16 + bf16 -> f32; otherwise the wider one.
  if (is_reduced_float(a) && is_reduced_float(b)) return DType::Float32;
  return itemsize(a) >= itemsize(b) ? a : b;
}

bool can_cast(DType from, DType to) {
  return category(from) <= category(to);
}

}  // namespace thn
