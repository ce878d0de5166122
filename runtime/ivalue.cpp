#include "runtime/ivalue.h"

namespace thn {

IValue::IValue(const Scalar& s) {
  if (s.is_bool()) v_ = s.to_bool();
  else if (s.is_int()) v_ = s.to_int();
  else v_ = s.to_double();
}

IValue IValue::list(std::vector<IValue> items, bool is_tuple) {
  IValue v;
  v.v_ = std::make_shared<IList>(IList{std::move(items), is_tuple});
  return v;
}

IValue IValue::tensors(const std::vector<Tensor>& ts, bool is_tuple) {
  std::vector<IValue> items(ts.begin(), ts.end());
  return list(std::move(items), is_tuple);
}

IValue IValue::dims(const Dims& d, bool is_tuple) {
  std::vector<IValue> items(d.begin(), d.end());
  return list(std::move(items), is_tuple);
}

Scalar IValue::to_scalar() const {
  if (is_bool()) return Scalar(to_bool());
  if (is_int()) return Scalar(to_int());
  return Scalar(to_double());
}

std::string IValue::type_name() const {
  switch (v_.index()) {
    case 0: return "NoneType";
    case 1: return "bool";
    case 2: return "int";
    case 3: return "float";
    case 4: return "str";
    case 5: return "torch.dtype";
    case 6: return "torch.device";
    case 7: return "Tensor";
    default: return to_list().is_tuple ? "tuple" : "list";
  }
}

}  // namespace thn
