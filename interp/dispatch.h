#pragma once
// The one interface through which the evaluator touches tensors. The eager
// implementation runs the runtime's kernels; the tracer (issue 4) implements
// the same interface over proxies, so one evaluator serves both.
#include <optional>
#include <span>

#include "interp/value.h"
#include "runtime/op_registry.h"

namespace thn {

class Interpreter;

// Python's operations on numbers, listed once: what a number proxy records in
// a trace (ir/ prints them as prims.NAME) and what the executor and the
// prologue evaluate. X(name, python spelling, operand count).
#define THN_NUMBER_OPS(X)                                                                                    \
  X(add, "+", 2) X(sub, "-", 2) X(mul, "*", 2) X(truediv, "/", 2) X(floordiv, "//", 2) X(mod, "%", 2)       \
  X(pow, "**", 2) X(lshift, "<<", 2) X(rshift, ">>", 2) X(bitand_, "&", 2) X(bitor_, "|", 2)                \
  X(bitxor, "^", 2) X(lt, "<", 2) X(le, "<=", 2) X(gt, ">", 2) X(ge, ">=", 2) X(eq, "==", 2) X(ne, "!=", 2) \
  X(neg, "-", 1) X(pos, "+", 1) X(invert, "~", 1) X(not_, "not", 1) X(abs, "abs", 1) X(min, "min", 2)      \
  X(max, "max", 2) X(to_int, "int", 1) X(to_float, "float", 1) X(to_bool, "bool", 1) X(round, "round", 1)        \
  X(math_sqrt, "math.sqrt", 1) X(math_exp, "math.exp", 1) X(math_log, "math.log", 1) X(math_sin, "math.sin", 1)  \
  X(math_cos, "math.cos", 1) X(math_tanh, "math.tanh", 1) X(math_floor, "math.floor", 1)                        \
  X(math_ceil, "math.ceil", 1)

enum class NumberOp : uint8_t {
#define THN_X(name, py, n) name,
  THN_NUMBER_OPS(THN_X)
#undef THN_X
};
const char* number_op_name(NumberOp op);    // "add"
const char* number_op_python(NumberOp op);  // "+"
int number_op_arity(NumberOp op);
bool is_comparison(NumberOp op);
// Evaluates op on plain (non-proxy) numbers with Python's semantics.
Value eval_number_op(Interpreter& in, NumberOp op, std::span<const Value> operands);
// The last NumberOp (the tensor prims follow them in ir/trace.h's PrimId).
constexpr NumberOp kLastNumberOp = NumberOp::math_ceil;
// The math module's function of op (math_sqrt ... math_ceil) on a plain
// number, with Python's domain and range errors.
Value math_number_op(NumberOp op, const Value& x);

class OpDispatch {
 public:
  virtual ~OpDispatch() = default;
  // An op of the table, called as a function (self empty) or a method.
  // NumPy's keyword names that PyTorch accepts for its own (axis= for dim=,
  // keepdims= for keepdim=) become the schema's here, once: every layer
  // below (autograd's saved steps and their backward rules, the tracer)
  // sees only PyTorch's names.
  Value call(const OpDef& op, const Value* self, std::span<const Value> args, const CallArgs& kw, bool inplace);
  virtual Value getitem(const Value& tensor, std::span<const Value> index) = 0;
  virtual void setitem(const Value& tensor, std::span<const Value> index, const Value& value) = 0;
  // bool(v) for `if v:` and friends: a tensor, or (while tracing) a number proxy.
  virtual bool truth(const Value& v) = 0;

  // The hooks below matter only while tracing; the eager defaults do the
  // plain thing (number proxies never exist outside a trace).
  virtual bool tracing() const { return false; }
  // A Python number operation with a number proxy among the operands.
  virtual Value number_op(Interpreter& in, NumberOp op, std::span<const Value> operands);
  // A Python number as a wrapped 0-dim tensor (the left operand of `2 - t`).
  virtual Value wrap_number(const Value& n);
  // print(...)'s text, written now (eager) or recorded in the trace.
  virtual void print(Interpreter& in, std::span<const Value> args, const std::string& sep, const std::string& end);
  // Whether two tensors are one object (`is`, and the identity check
  // containers make before ==). While tracing, two input proxies are when
  // their arguments are: a predicate the prologue then checks.
  virtual bool same_tensor(const Value& a, const Value& b) { return a.object() == b.object(); }
  // A name read from outside the traced code: a module global, or a local of
  // a frame that existed before tracing began. `slot` is where it lives.
  virtual void external_load(const std::string& name, const Value& slot) {}
  // A built-in read by name from a module whose `globals` lack that name
  // (one defined there later would be read instead).
  virtual void builtin_load(const std::string& name, const std::unordered_map<std::string, Value>& globals) {}

 protected:
  // call() with the keywords named as the schema names them.
  virtual Value run_op(const OpDef& op, const Value* self, std::span<const Value> args, const CallArgs& kw,
                       bool inplace) = 0;
};

class EagerDispatch : public OpDispatch {
 public:
  Value getitem(const Value& tensor, std::span<const Value> index) override;
  void setitem(const Value& tensor, std::span<const Value> index, const Value& value) override;
  bool truth(const Value& tensor) override;

 protected:
  Value run_op(const OpDef& op, const Value* self, std::span<const Value> args, const CallArgs& kw,
               bool inplace) override;
};

}  // namespace thn
