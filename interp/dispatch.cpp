#include "interp/dispatch.h"

#include <algorithm>

#include "interp/interpreter.h"
#include "runtime/indexing.h"
#include "runtime/progress.h"

namespace thn {

const char* number_op_name(NumberOp op) {
  static const char* names[] = {
#define THN_X(name, py, n) #name,
      THN_NUMBER_OPS(THN_X)
#undef THN_X
  };
  return names[int(op)];
}
const char* number_op_python(NumberOp op) {
  static const char* names[] = {
#define THN_X(name, py, n) py,
      THN_NUMBER_OPS(THN_X)
#undef THN_X
  };
  return names[int(op)];
}
int number_op_arity(NumberOp op) {
  static const int n[] = {
#define THN_X(name, py, n) n,
      THN_NUMBER_OPS(THN_X)
#undef THN_X
  };
  return n[int(op)];
}
bool is_comparison(NumberOp op) { return op >= NumberOp::lt && op <= NumberOp::ne; }

Value OpDispatch::number_op(Interpreter& in, NumberOp op, std::span<const Value> operands) {
  std::vector<Value> plain;
  for (const Value& v : operands) plain.push_back(v.without_proxy());
  return eval_number_op(in, op, plain);
}

Value OpDispatch::wrap_number(const Value& n) { return Value::tensor(wrap_scalar(to_ivalue(n).to_scalar())); }

void OpDispatch::print(Interpreter& in, std::span<const Value> args, const std::string& sep, const std::string& end) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) out += sep;
    out += to_str(args[i]);
  }
  out += end;
  clear_status();  // (a kernel compile's progress line, on the same terminal)
  std::fwrite(out.data(), 1, out.size(), in.out());
}

Value OpDispatch::call(const OpDef& op, const Value* self, std::span<const Value> args, const CallArgs& kw, bool inplace) {
  auto alias = [&](const std::string& k) -> const char* {
    const char* to = numpy_keyword_alias(k);
    if (to && std::none_of(op.schema.params.begin(), op.schema.params.end(), [&](const Param& p) { return p.name == to; }))
      return nullptr;  // (the op's TypeError names the keyword as given)
    return to;
  };
  if (std::none_of(kw.kwargs.begin(), kw.kwargs.end(), [&](const auto& k) { return alias(k.first); }))
    return run_op(op, self, args, kw, inplace);
  CallArgs named{kw.args, {}};
  for (const auto& [k, v] : kw.kwargs) named.kwargs.emplace_back(alias(k) ? alias(k) : k, v);
  return run_op(op, self, args, named, inplace);
}

Value EagerDispatch::run_op(const OpDef& op, const Value* self, std::span<const Value> args, const CallArgs& kw,
                          bool inplace) {
  std::vector<IValue> positional;
  positional.reserve(args.size());
  for (auto& a : args) positional.push_back(to_ivalue(a));
  Kwargs kwargs;
  for (auto& [k, v] : kw.kwargs) kwargs.emplace_back(k, to_ivalue(v));
  std::optional<IValue> s;
  if (self) s = to_ivalue(*self);
  // A program's CPU tensor beside CUDA ones must be a number (0-dim); the
  // runtime's own check also admits the expansions decompositions make.
  if (checks_one_device(op)) {
    std::optional<Device> first;
    if (s) same_device(*s, first, true);
    for (const IValue& v : positional) same_device(v, first, true);
    for (const auto& [k, v] : kwargs) same_device(v, first, true);
  }
  IValue result = call_op(op, s, positional, kwargs, inplace);
  // In-place ops (and copy_, fill_, zero_) return their receiver: the same
  // object, so `is` and aliasing hold.
  if (self && (inplace || (op.name.ends_with('_') && result.is_tensor() &&
                           same_view(self->as_tensor(), result.to_tensor()))))
    return *self;
  const Value* src = self ? self : args.empty() ? nullptr : &args[0];
  if (src && src->is(Type::Tensor) && result.is_tensor() && returns_input(op, src->as_tensor(), result.to_tensor()))
    return *src;
  return present_result(op.name, from_ivalue(result));
}

namespace {

std::optional<int64_t> slice_bound(const Value& v) {
  if (v.is_none()) return std::nullopt;
  if (v.is_int_like()) return v.as_int();
  if (v.is(Type::Tensor) && v.as_tensor().dim() == 0 && !is_floating(v.as_tensor().dtype()))
    return v.as_tensor().item().to_int();
  fail(ErrorKind::TypeError, "slice indices must be integers or None or have an __index__ method");
}

TensorIndex to_index(const Value& v) {
  switch (v.type()) {
    case Type::Bool: return TensorIndex(v.as_bool());
    case Type::Int: return TensorIndex(v.as_int());
    case Type::None: return TensorIndex(NewAxis{});
    case Type::Ellipsis: return TensorIndex(Ellipsis{});
    case Type::Tensor: return TensorIndex(v.as_tensor());
    case Type::Slice: {
      auto& s = v.obj<SliceObj>();
      return TensorIndex(thn::Slice{slice_bound(s.start), slice_bound(s.stop), slice_bound(s.step)});
    }
    case Type::List:  // (an empty list selects nothing, as an empty long tensor)
      if (v.items().empty()) return TensorIndex(empty({0}, DType::Int64));
      return TensorIndex(call("tensor", {to_ivalue(v)}).to_tensor());
    default:
      fail(ErrorKind::IndexError,
           "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
           "(got {})",
           type_name(v));
  }
}

std::vector<TensorIndex> to_indices(std::span<const Value> index) {
  std::vector<TensorIndex> out;
  out.reserve(index.size());
  for (auto& v : index) out.push_back(to_index(v));
  return out;
}

Tensor to_tensor_value(const Value& v) {
  if (v.is(Type::Tensor)) return v.as_tensor();
  if (v.is_number()) return wrap_scalar(to_ivalue(v).to_scalar());
  return call("tensor", {to_ivalue(v)}).to_tensor();
}

}  // namespace

Value EagerDispatch::getitem(const Value& tensor, std::span<const Value> index) {
  return Value::tensor(thn::index(tensor.as_tensor(), to_indices(index)));
}

void EagerDispatch::setitem(const Value& tensor, std::span<const Value> index, const Value& value) {
  index_put(tensor.as_tensor(), to_indices(index), to_tensor_value(value));
}

bool EagerDispatch::truth(const Value& v) {
  const Tensor& t = v.as_tensor();
  if (t.numel() != 1) {
    if (t.numel() == 0) fail("Boolean value of Tensor with no values is ambiguous");
    fail("Boolean value of Tensor with more than one value is ambiguous");
  }
  return t.item().to_bool();
}

}  // namespace thn
