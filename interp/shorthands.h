#pragma once
// Tensor methods PyTorch defines through other ops (x.cpu() is
// x.to("cpu"), x.new_zeros(n) is zeros(n, dtype=x.dtype, device=x.device)):
// each is the same call of that op, so eager, jit and every device treat it
// as they treat the op.
#include <span>
#include <string_view>

#include "interp/value.h"

namespace thn {

class Interpreter;

struct Shorthand {
  std::string_view name;   // the method: x.NAME(...)
  std::string_view form;   // its parameters, as docs/ops.md shows them
  std::string_view means;  // what it calls
  Value (*call)(Interpreter& in, const Value& self, CallArgs& args);
  bool function = false;  // also NAME(x, ...), as torch.NAME
};

// The op `name` called as x.name(args..., kwargs...) (or name(args...)
// without x) through the interpreter's dispatch, eager or traced.
Value call_tensor_op(Interpreter& in, const char* name, const Value* self, std::vector<Value> args,
                     std::vector<std::pair<std::string, Value>> kwargs = {}, bool inplace = false);

std::span<const Shorthand> tensor_shorthands();

// Functions PyTorch composes from other ops that have no tensor receiver
// (einsum(equation, *operands), meshgrid(*tensors)): builtins, made the
// same way.
struct TensorFunction {
  std::string_view name, form, means;
  Value (*call)(Interpreter& in, CallArgs& args);
};
std::span<const TensorFunction> tensor_functions();
const Shorthand* find_shorthand(std::string_view name);

}  // namespace thn
