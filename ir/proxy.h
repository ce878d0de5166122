#pragma once
// Proxies: the values a trace computes with. A TensorProxy stands for a
// tensor (dtype, device, sizes as ints or NumberProxies); a NumberProxy for a
// Python number the trace keeps symbolic. A NumberProxy carries this call's
// value (none for one computed from tensor data), a TensorProxy its meta
// tensor, so tracing follows the branches the call takes and records the
// predicates it relied on as guards (ir/tracer.h).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "interp/dispatch.h"
#include "interp/value.h"

namespace thn {

class Tracer;

// How far the prologue pins a number down. Dynamic: computed from tensor data
// at run time (`.item()`), so no guard can mention it. Constrainable: guarded
// only by the predicates the trace branched on (`flag > 5`). Static: guarded
// by value (some code needed the exact number, e.g. as a shape in a
// static-shape trace or a loop count).
enum class Constraint : uint8_t { Dynamic, Constrainable, Static };

struct NumberProxy : Symbolic {
  // Where the number comes from: a number argument, a size of an input
  // tensor, a tensor element, or a Python operation on other numbers.
  enum class Origin : uint8_t { Input, Size, Item, Op };
  Origin origin = Origin::Input;
  Type type = Type::Int;  // Int, Float or Bool
  Value value;            // this call's value, a plain number (Dynamic: a stand-in of its type)
  Constraint constraint = Constraint::Constrainable;
  NumberOp op{};               // Origin::Op
  std::vector<Value> operands;  // Origin::Op: numbers (proxies or constants)
  int64_t dim = 0;              // Origin::Size
  bool sized = false;           // guarded >= 2: a symbolic tensor size (shape_rules.cpp)
  std::string name;             // inputs: the argument's name; else empty (the printer numbers them)
  int id = 0;                   // creation order within its trace
  Tracer* tracer = nullptr;     // null once the trace is finished

  void concrete_use() const override;
  bool depends_on_data() const;  // some operand is Dynamic

  // Origin::Size / Item: the TensorProxy the number comes from. A size is
  // held weakly (the tensor's sizes hold the size: a strong reference back
  // would be a cycle that is never freed); the trace keeps its inputs alive.
  void set_tensor(const Value& t) {
    if (origin == Origin::Size) sized_ = std::static_pointer_cast<Symbolic>(t.object());
    else item_of_ = t;
  }
  Value tensor() const {
    return origin == Origin::Size ? Value::proxy(Value(Type::Tensor, nullptr), sized_.lock()) : item_of_;
  }

 private:
  std::weak_ptr<Symbolic> sized_;
  Value item_of_;
};

struct TensorProxy : Symbolic {
  // This call's value as a meta tensor (runtime/tensor.h: layout, dtype and
  // storage identity, no data; a wrapped number's is its real 0-dim
  // tensor). Undefined for the values of decompositions (ir/decompose.h):
  // only their metadata is known.
  Tensor meta;
  DType dtype_ = DType::Float32;
  Device device_;
  std::vector<Value> sizes;  // ints, or Int NumberProxies under shapes="symbolic"
  std::string name;          // inputs and captured tensors: their name
  // Inputs and captured tensors: the strides the prologue guarantees
  // (contiguous, or exact when guarded); empty when only "non-contiguous"
  // is known or the sizes are symbolic.
  std::vector<int64_t> strides;
  int id = 0;
  Tracer* tracer = nullptr;

  void concrete_use() const override;  // tensor data inside a trace: an error
  std::shared_ptr<Storage> storage() const override { return meta.defined() ? meta.storage() : nullptr; }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
};

// A tensor value known by its metadata only (the values of decompositions
// and of passes): no meta tensor, no tracer.
inline Value metadata_tensor(DType dtype, Device device, std::vector<Value> sizes) {
  auto p = std::make_shared<TensorProxy>();
  p->dtype_ = dtype;
  p->device_ = device;
  p->sizes = std::move(sizes);
  return Value::proxy(Value(Type::Tensor, nullptr), p);
}

inline NumberProxy& number_proxy(const Value& v) {
  return const_cast<NumberProxy&>(static_cast<const NumberProxy&>(v.symbolic()));
}
inline TensorProxy& tensor_proxy(const Value& v) {
  return const_cast<TensorProxy&>(static_cast<const TensorProxy&>(v.symbolic()));
}
// The same sizes: equal ints, or the same size proxy.
inline bool same_sizes(const TensorProxy& a, const TensorProxy& b) {
  if (a.sizes.size() != b.sizes.size()) return false;
  for (size_t i = 0; i < a.sizes.size(); ++i) {
    const Value &x = a.sizes[i], &y = b.sizes[i];
    if (x.is_proxy() || y.is_proxy()) {
      if (!x.is_proxy() || !y.is_proxy() || &x.symbolic() != &y.symbolic()) return false;
    } else if (x.raw_int() != y.raw_int()) {
      return false;
    }
  }
  return true;
}
inline bool is_tensor_proxy(const Value& v) { return v.is_proxy() && v.is(Type::Tensor); }
inline bool is_number_proxy(const Value& v) { return v.is_proxy() && v.is_number(); }
// The static ints of a list of values; nullopt when one is symbolic.
inline std::optional<std::vector<int64_t>> static_ints(const std::vector<Value>& vs) {
  std::vector<int64_t> r;
  for (const Value& v : vs) {
    if (v.is_proxy() || !v.is(Type::Int)) return std::nullopt;
    r.push_back(v.raw_int());
  }
  return r;
}
// A tensor proxy's sizes when none is symbolic.
inline std::optional<std::vector<int64_t>> static_sizes(const Value& t) { return static_ints(tensor_proxy(t).sizes); }

}  // namespace thn
