#pragma once
// einsum(equation, *operands), the builtin (interp/einsum.cpp).
#include "interp/value.h"

namespace thn {

class Interpreter;

Value einsum(Interpreter& in, CallArgs& args);

}  // namespace thn
