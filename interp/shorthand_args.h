#pragma once
// What the shorthands (interp/shorthands.cpp) and the receiverless tensor
// functions (interp/tensor_functions.cpp) share: Python's binding of a
// call's arguments with PyTorch's errors, and calls of ops through the
// interpreter's dispatch (eager or traced).
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "interp/value.h"

namespace thn {

class Interpreter;

namespace shorthand {

// The op `name` called as self.name(args, kwargs) (name(args) without self).
Value call_op(Interpreter& in, const char* name, const Value* self, std::vector<Value> args,
              std::vector<std::pair<std::string, Value>> kwargs, bool inplace = false);
Value method(Interpreter& in, const Value& x, const char* name, std::vector<Value> args = {},
             std::vector<std::pair<std::string, Value>> kwargs = {});

// The keyword arguments `allowed` of a shorthand (PyTorch's TypeError for
// another one).
void only_keywords(std::string_view name, const CallArgs& a, std::initializer_list<std::string_view> allowed);
// Between lo and hi positional arguments (Python's TypeError otherwise).
void positional(std::string_view name, const CallArgs& a, size_t lo, size_t hi);
// The keyword argument k, None when not given.
Value keyword(const CallArgs& a, std::string_view k);

// A shorthand's arguments bound to its parameters as Python binds them
// (positionals, then keywords by name); a parameter without a default
// (nullopt) is required.
using Param = std::pair<std::string_view, std::optional<Value>>;
std::vector<Value> bind(std::string_view name, const CallArgs& a, std::initializer_list<Param> params);

DType dtype_of(Interpreter& in, const Value& x);
// v, which must be a tensor: PyTorch's TypeError naming fn's parameter.
Value check_tensor(std::string_view fn, std::string_view param, int position, const Value& v);
// x's sizes (numbers, symbolic in a trace), and the product of [from, to).
std::vector<Value> sizes_of(Interpreter& in, const Value& x);
Value product(Interpreter& in, const std::vector<Value>& sizes, size_t from, size_t to);
// The broadcast of shapes (right-aligned, size 1 stretched), PyTorch's
// error for sizes that do not match.
std::vector<Value> broadcast_sizes(Interpreter& in, const std::vector<std::vector<Value>>& shapes);

}  // namespace shorthand

}  // namespace thn
