#pragma once
// IValue: an argument or result of a runtime op (None, bool, int, float, str,
// dtype, device, Tensor, list or tuple). The interpreter and the tests talk to
// ops through it.
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "runtime/tensor.h"

namespace thn {

class IValue;
struct IList {
  std::vector<IValue> items;
  bool is_tuple = false;
};

class IValue {
 public:
  using Rep = std::variant<std::monostate, bool, int64_t, double, std::string, DType, Device, Tensor,
                           std::shared_ptr<IList>>;
  IValue() = default;
  IValue(bool b) : v_(b) {}
  IValue(int64_t i) : v_(i) {}
  IValue(int i) : v_(int64_t(i)) {}
  IValue(double d) : v_(d) {}
  IValue(std::string s) : v_(std::move(s)) {}
  IValue(const char* s) : v_(std::string(s)) {}
  IValue(DType t) : v_(t) {}
  IValue(Device d) : v_(d) {}
  IValue(Tensor t) : v_(std::move(t)) {}
  IValue(const Scalar& s);
  static IValue list(std::vector<IValue> items, bool is_tuple = false);
  static IValue tuple(std::vector<IValue> items) { return list(std::move(items), true); }
  static IValue tensors(const std::vector<Tensor>& ts, bool is_tuple = true);
  static IValue dims(const Dims& d, bool is_tuple = true);

  bool is_none() const { return v_.index() == 0; }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_int() const { return std::holds_alternative<int64_t>(v_); }
  bool is_double() const { return std::holds_alternative<double>(v_); }
  bool is_number() const { return is_bool() || is_int() || is_double(); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_dtype() const { return std::holds_alternative<DType>(v_); }
  bool is_device() const { return std::holds_alternative<Device>(v_); }
  bool is_tensor() const { return std::holds_alternative<Tensor>(v_); }
  bool is_list() const { return std::holds_alternative<std::shared_ptr<IList>>(v_); }

  bool to_bool() const { return std::get<bool>(v_); }
  int64_t to_int() const { return std::get<int64_t>(v_); }
  double to_double() const { return std::get<double>(v_); }
  Scalar to_scalar() const;  // bool, int or float
  const std::string& to_string() const { return std::get<std::string>(v_); }
  DType to_dtype() const { return std::get<DType>(v_); }
  Device to_device() const { return std::get<Device>(v_); }
  const Tensor& to_tensor() const { return std::get<Tensor>(v_); }
  const IList& to_list() const { return *std::get<std::shared_ptr<IList>>(v_); }

  // Python's type name of the value, for TypeError messages.
  std::string type_name() const;
  const Rep& rep() const { return v_; }

 private:
  Rep v_;
};

}  // namespace thn
