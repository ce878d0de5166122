#pragma once
// The op table: every tensor op of LANGUAGE.md, listed once in ops.def with
// its family, how it is offered (function / method / in-place method /
// attribute) and its PyTorch-style signature. Binding arguments to a
// signature, the name tables, docs/ops.md and (later) the tracer and the code
// generators all read this table.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/ivalue.h"

namespace thn {

enum class ParamType { Tensor, Operand, Scalar, Int, IntList, Float, Bool, Str, DType, Device, TensorList, Any };

struct Param {
  std::string name;
  ParamType type = ParamType::Any;
  bool optional = false;    // "T?": None is accepted
  bool varargs = false;     // "int... size": zeros(2, 3) as well as zeros((2, 3))
  bool kwarg_only = false;  // after "*"
  bool has_default = false;
  IValue default_value;
};

struct Schema {
  std::string name;
  std::vector<Param> params;
  std::string returns;
  int self_index = -1;  // the parameter a method's receiver binds to
};
Schema parse_schema(std::string_view name, std::string_view signature);

// One id per row of ops.def.
enum class OpId : uint16_t {
#define THN_OP(name, family, flags, sig) name,
#include "runtime/ops.def"
#undef THN_OP
};

enum class OpFamily { Creation, Random, Attribute, Unary, Binary, Pointwise, Conversion, Reduction, View, Copy, LinAlg };
std::string_view family_name(OpFamily f);

// Arguments bound to a schema, in parameter order, defaults filled in.
class Args {
 public:
  Args(const Schema& s, std::vector<IValue> v, bool inplace) : schema_(&s), v_(std::move(v)), inplace_(inplace) {}
  const IValue& operator[](size_t i) const { return v_[i]; }
  size_t size() const { return v_.size(); }
  bool inplace() const { return inplace_; }
  // Where an elementwise op writes its result: `out` when the caller gave
  // one (the trace executor, writing into a planned buffer), self for the
  // in-place form, else null (a new tensor).
  const Tensor* target() const { return out_ ? out_ : inplace_ ? &tensor(0) : nullptr; }
  void set_out(const Tensor* out) { out_ = out; }
  const Tensor* out() const { return out_; }
  const Schema& schema() const { return *schema_; }

  bool is_none(size_t i) const { return v_[i].is_none(); }
  const Tensor& tensor(size_t i) const { return v_[i].to_tensor(); }
  std::optional<Tensor> opt_tensor(size_t i) const;
  Scalar scalar(size_t i) const { return v_[i].to_scalar(); }
  std::optional<Scalar> opt_scalar(size_t i) const;
  int64_t i64(size_t i) const { return v_[i].to_int(); }
  std::optional<int64_t> opt_i64(size_t i) const;
  double f64(size_t i) const { return v_[i].to_scalar().to_double(); }
  bool boolean(size_t i) const { return v_[i].to_bool(); }
  Dims dims(size_t i) const;
  std::optional<Dims> opt_dims(size_t i) const;
  const std::string& str(size_t i) const { return v_[i].to_string(); }
  std::optional<std::string> opt_str(size_t i) const;
  std::optional<DType> opt_dtype(size_t i) const;
  std::optional<Device> opt_device(size_t i) const;
  std::vector<Tensor> tensors(size_t i) const;

 private:
  const Schema* schema_;
  std::vector<IValue> v_;
  bool inplace_;
  const Tensor* out_ = nullptr;
};

using OpImpl = IValue (*)(const Args&);

struct OpDef {
  OpId id;
  std::string_view name;
  OpFamily family;
  std::string_view flags;  // F: torch function, M: method, I: also `name_` in place, A: attribute
  std::string_view signature;
  OpImpl impl;
  Schema schema;
  bool has(char flag) const { return flags.find(flag) != std::string_view::npos; }
};

// Whether `result` of op is its tensor argument `arg` itself: a conversion
// to what it already is (x.float() of a float32 x, x.contiguous() of a
// contiguous one) returns the same object, as PyTorch's does.
inline bool same_view(const Tensor& a, const Tensor& b) {
  return a.storage() == b.storage() && a.offset() == b.offset() && a.dtype() == b.dtype() && a.sizes() == b.sizes() &&
         a.strides() == b.strides();
}
inline bool returns_input(const OpDef& op, const Tensor& arg, const Tensor& result) {
  return (op.family == OpFamily::Conversion || op.id == OpId::contiguous) && same_view(arg, result);
}

const std::vector<OpDef>& all_ops();

// where(condition) without self and other: nonzero(condition, as_tuple=True).
inline bool where_alone(const OpDef& op, const Args& a) {
  return op.id == OpId::where && a[1].is_none() && a[2].is_none();
}
inline const OpDef& op_def(OpId id) { return all_ops()[size_t(id)]; }
const OpDef* find_function(std::string_view name);
const OpDef* find_attribute(std::string_view name);
struct MethodRef {
  const OpDef* op;
  bool inplace;
};
std::optional<MethodRef> find_method(std::string_view name);
// Every attribute and method name of a Tensor (in-place `name_` forms
// included), sorted: what completion offers after `x.`.
std::vector<std::string> tensor_member_names();
// The other names of op (torch.clip is torch.clamp).
std::vector<std::string_view> aliases_of(const OpDef& op);

using Kwargs = std::vector<std::pair<std::string, IValue>>;
// Runs an op whose tensors are on CUDA (installed by the CUDA backend);
// nullopt: the op has no kernel there, and runs on host copies.
using CudaOpHandler = std::optional<IValue> (*)(const OpDef&, const Args&);
void set_cuda_op_handler(CudaOpHandler h);
// How an op without a fusion kernel runs on CUDA tensors once the backend
// is installed: its runtime kernel's loop is a kernel of the backend's
// library (the index ops, cumsum, argmax/argmin, tril/triu), or it is built
// from copies that are copy kernels (cat, stack, flip, roll, repeat); else
// on host copies.
enum class CudaLibrary : uint8_t { None, Kernel, Copies };
CudaLibrary cuda_library(OpId id);
// Whether a library op runs on the GPU itself (cuBLAS, or cuda_library)
// rather than on host copies, where the backend is installed.
inline bool library_runs_on_cuda(const OpDef& op) {
  return op.family == OpFamily::LinAlg || cuda_library(op.id) != CudaLibrary::None;
}
// Whether op requires its tensor arguments on one device (joins_any_device
// aside), as PyTorch's kernels do: not copy_ and to (they move data), nor
// creation, random and attribute ops and views (they read only metadata).
bool checks_one_device(const OpDef& op);
[[noreturn]] void fail_two_devices(Device a, Device b);
// The check on one of op's arguments (lists walked), with the device met
// first; `in_program`: a program's own arguments (joins_any_device).
void same_device(const IValue& v, std::optional<Device>& first, bool in_program);
// Where a bound parameter's value came from (the tracer records arguments by
// parameter): a default, the receiver, positional arguments [index, index +
// count) (count > 1 only for `int...` varargs), or keyword argument `index`.
struct ArgSource {
  enum Kind : uint8_t { Default, Self, Positional, Keyword } kind = Default;
  uint32_t index = 0, count = 0;
};
// Where creation and random ops that take no tensor make their result when
// no device is given (`thn run --device cuda`); the CPU unless set.
void set_default_device(Device d);
// The PyTorch name of a NumPy keyword its argument parser accepts for its
// own: "dim" for axis, "keepdim" for keepdims; null for any other.
inline const char* numpy_keyword_alias(std::string_view k) {
  return k == "axis" ? "dim" : k == "keepdims" ? "keepdim" : nullptr;
}
// Binds (positional, keyword) arguments to op's schema (keywords by the
// schema's names: interp's OpDispatch::call renames NumPy's); a method call passes its
// receiver as `self`. TypeError on a mismatch. `sources`, when given, gets one
// entry per parameter.
Args bind_args(const OpDef& op, std::optional<IValue> self, std::span<const IValue> positional,
               const Kwargs& kwargs, bool inplace, std::vector<ArgSource>* sources = nullptr);
// Binds one value per parameter (in schema order), converting each as bind_args does.
Args bind_params(const OpDef& op, std::vector<IValue> values, bool inplace);
IValue call_op(const OpDef& op, std::optional<IValue> self, std::span<const IValue> positional,
               const Kwargs& kwargs = {}, bool inplace = false);
// Runs op on bound arguments: its implementation, or the CUDA path when a
// tensor (or the `out` given) is on CUDA.
IValue call_bound(const OpDef& op, const Args& a);
// Convenience for C++ callers and tests: a function by name.
IValue call(std::string_view function, std::vector<IValue> positional, const Kwargs& kwargs = {});
IValue call_method(const Tensor& self, std::string_view method, std::vector<IValue> positional,
                   const Kwargs& kwargs = {});

// The implementations, one per table row.
#define THN_OP(name, family, flags, sig) IValue op_##name(const Args&);
#include "runtime/ops.def"
#undef THN_OP

}  // namespace thn
