// The tracer's numbers: guards, recorded Python number operations, and the
// numbers of tensor data (item()), which have no value while tracing.
#include "ir/tracer.h"
#include "runtime/error.h"

namespace thn {

namespace {

// The stand-in value of a number of tensor data (Constraint::Dynamic) of a
// Python type: meta_stand_in's (make_static refuses to read it).
Value placeholder(Type type) {
  DType d = type == Type::Float ? DType::Float64 : type == Type::Bool ? DType::Bool : DType::Int64;
  return from_ivalue(IValue(meta_stand_in(d)));
}

}  // namespace

void Tracer::assume(const Value& predicate) {
  if (!in_.truth(predicate.without_proxy())) throw std::logic_error("Tracer::assume: the predicate is false");
  guards_.push_back({predicate, Value(true), true, here()});
}

Value Tracer::record_number_op(NumberOp op, std::vector<Value> operands) {
  Value v = number_node(op, std::move(operands));
  record(Symbol::of(op), number_proxy(v).operands, v);
  return v;
}

Value Tracer::number_node(NumberOp op, std::vector<Value> operands) {
  std::vector<Value> plain;
  bool dynamic = false;
  for (const Value& v : operands) {
    plain.push_back(v.without_proxy());
    dynamic |= v.is_proxy() && number_proxy(v).depends_on_data();
  }
  guard_result_type(op, operands);
  // A number of tensor data has no value while tracing: the result is a
  // stand-in of Python's result type, which the run computes.
  Value result = dynamic ? placeholder(dynamic_result_type(op, operands)) : eval_number_op(in_, op, plain);
  auto n = std::make_shared<NumberProxy>();
  n->origin = NumberProxy::Origin::Op;
  n->type = result.type();
  n->value = result;
  n->constraint = dynamic ? Constraint::Dynamic : Constraint::Constrainable;
  n->op = op;
  n->operands = std::move(operands);
  n->id = int(numbers_.size());
  n->tracer = this;
  numbers_.push_back(n);
  return Value::proxy(result, n);
}

void Tracer::guard_result_type(NumberOp op, const std::vector<Value>& operands) {
  auto known = [](const Value& v) { return !v.is_proxy() || !number_proxy(v).depends_on_data(); };
  if (op == NumberOp::pow) {
    // int ** int is a float for a negative exponent: its sign is guarded.
    const Value &b = operands[0], &e = operands[1];
    if (b.is(Type::Float) || !e.is(Type::Int) || !e.is_proxy() || !known(e)) return;
    const bool negative = e.without_proxy().raw_int() < 0;
    assume(number_node(negative ? NumberOp::lt : NumberOp::ge, {e, Value(int64_t(0))}));
  } else if ((op == NumberOp::min || op == NumberOp::max) && operands[0].type() != operands[1].type()) {
    // min/max of an int and a float is the one it picks, of its type: the
    // comparison that picks it is guarded (eval_number_op's: min takes the
    // second when it is less, max when the first is less).
    if (!known(operands[0]) || !known(operands[1])) return;  // (refused by dynamic_result_type)
    const Value &x = op == NumberOp::min ? operands[1] : operands[0], &y = op == NumberOp::min ? operands[0] : operands[1];
    const bool less = in_.less(x.without_proxy(), y.without_proxy());
    assume(number_node(less ? NumberOp::lt : NumberOp::ge, {x, y}));
  }
}

Type Tracer::dynamic_result_type(NumberOp op, const std::vector<Value>& operands) const {
  const Type a = operands[0].type(), b = operands.size() > 1 ? operands[1].type() : a;
  const bool floating = a == Type::Float || b == Type::Float;
  switch (op) {
    case NumberOp::truediv: case NumberOp::to_float: case NumberOp::math_sqrt: case NumberOp::math_exp:
    case NumberOp::math_log: case NumberOp::math_sin: case NumberOp::math_cos: case NumberOp::math_tanh:
      return Type::Float;
    case NumberOp::to_int: case NumberOp::round: case NumberOp::math_floor: case NumberOp::math_ceil: return Type::Int;
    case NumberOp::not_: case NumberOp::to_bool: return Type::Bool;
    case NumberOp::bitand_: case NumberOp::bitor_: case NumberOp::bitxor:
      return a == Type::Bool && b == Type::Bool ? Type::Bool : Type::Int;
    case NumberOp::pow: {
      // int ** int is a float for a negative exponent: a type of the value.
      if (floating) return Type::Float;
      const Value& e = operands[1];
      if (e.is_proxy() && number_proxy(e).depends_on_data())
        data_dependent("the type of int ** int depends on the sign of an exponent computed from tensor data");
      return e.without_proxy().as_int() < 0 ? Type::Float : Type::Int;
    }
    case NumberOp::min: case NumberOp::max:
      if (a != b) data_dependent("min/max of an int and a float has the type of the one a tensor's value picks");
      return a;
    case NumberOp::abs: case NumberOp::neg: case NumberOp::pos: case NumberOp::invert:
      return a == Type::Float ? Type::Float : Type::Int;
    default:
      if (is_comparison(op)) return Type::Bool;
      return floating ? Type::Float : Type::Int;  // + - * // % << >>
  }
}

Value Tracer::number_op(Interpreter&, NumberOp op, std::span<const Value> operands) {
  return record_number_op(op, std::vector<Value>(operands.begin(), operands.end()));
}

bool Tracer::truth(const Value& v) {
  if (v.is(Type::Tensor)) data_dependent("the truth value of a tensor is not known while tracing");
  auto& n = number_proxy(v);
  if (n.depends_on_data()) data_dependent("a branch depends on a number computed from tensor data");
  bool b = in_.truth(v.without_proxy());
  if (n.constraint != Constraint::Static) guards_.push_back({v, Value(b), true, here()});
  return b;
}

Value Tracer::wrap_number(const Value& n) {
  Value out = new_tensor(wrap_scalar(to_ivalue(n.without_proxy()).to_scalar()), kCPU);
  tensor_proxy(out).meta.set_wrapped_number(true);
  record(Symbol::of(PrimId::wrap_number), {n}, out);
  return out;
}

Value Tracer::item(const Value& self) {
  const TensorProxy& p = tensor_proxy(self);
  if (p.meta.numel() != 1) fail(ErrorKind::ValueError, "only one element tensors can be converted to Python scalars");
  // No value while tracing (the number is Dynamic: no code may read it).
  Value value = from_ivalue(IValue(meta_stand_in(p.dtype())));
  auto n = std::make_shared<NumberProxy>();
  n->origin = NumberProxy::Origin::Item;
  n->type = value.type();
  n->value = value;
  n->constraint = Constraint::Dynamic;
  n->set_tensor(self);
  n->id = int(numbers_.size());
  n->tracer = this;
  numbers_.push_back(n);
  Value v = Value::proxy(value, n);
  record(Symbol::of(PrimId::item), {self}, v);
  return v;
}

}  // namespace thn
