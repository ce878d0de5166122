// The argument handling and op calls the shorthands (interp/shorthands.cpp)
// and the receiverless tensor functions (interp/tensor_functions.cpp) share.
#include "interp/shorthand_args.h"

#include <algorithm>

#include <fmt/format.h>

#include "interp/interpreter.h"
#include "interp/shorthands.h"
#include "runtime/error.h"
#include "runtime/op_registry.h"

namespace thn::shorthand {

Value call_op(Interpreter& in, const char* name, const Value* self, std::vector<Value> args,
              std::vector<std::pair<std::string, Value>> kwargs, bool inplace) {
  return call_tensor_op(in, name, self, std::move(args), std::move(kwargs), inplace);
}
Value method(Interpreter& in, const Value& x, const char* name, std::vector<Value> args,
             std::vector<std::pair<std::string, Value>> kwargs) {
  return call_op(in, name, &x, std::move(args), std::move(kwargs));
}

// The keyword arguments `allowed` of a shorthand (PyTorch's TypeError for
// another one).
void only_keywords(std::string_view name, const CallArgs& a, std::initializer_list<std::string_view> allowed) {
  for (const auto& [k, v] : a.kwargs)
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
      unexpected_keyword(name, k, std::vector<std::string>(allowed.begin(), allowed.end()));
}

void positional(std::string_view name, const CallArgs& a, size_t lo, size_t hi) {
  if (a.args.size() >= lo && a.args.size() <= hi) return;
  if (a.args.size() < lo)
    fail(ErrorKind::TypeError, "{}() missing {} required positional argument{}", name, lo - a.args.size(),
         lo - a.args.size() == 1 ? "" : "s");
  fail(ErrorKind::TypeError, "{}() takes {} positional argument{} but {} {} given", name, hi, hi == 1 ? "" : "s",
       a.args.size(), a.args.size() == 1 ? "was" : "were");
}

Value keyword(const CallArgs& a, std::string_view k) {
  for (const auto& [name, v] : a.kwargs)
    if (name == k) return v;
  return Value();
}

// A shorthand's arguments bound to its parameters as Python binds them
// (positionals, then keywords by name); a parameter without a default
// (nullopt) is required.
std::vector<Value> bind(std::string_view name, const CallArgs& a, std::initializer_list<Param> params) {
  const std::vector<Param> ps(params);
  if (a.args.size() > ps.size()) {
    const auto required = std::count_if(ps.begin(), ps.end(), [](const Param& p) { return !p.second; });
    fail(ErrorKind::TypeError, "{}() takes {}{} positional argument{} but {} {} given", name,
         size_t(required) < ps.size() ? fmt::format("from {} to ", required) : "", ps.size(),
         ps.size() == 1 ? "" : "s", a.args.size(), a.args.size() == 1 ? "was" : "were");
  }
  std::vector<std::optional<Value>> got(ps.size());
  for (size_t i = 0; i < a.args.size(); ++i) got[i] = a.args[i];
  for (const auto& kw : a.kwargs) {
    // (Not a structured binding: clang 14 cannot capture it. NumPy's names
    // are PyTorch's aliases.)
    const char* alias = numpy_keyword_alias(kw.first);
    const std::string_view k = alias ? alias : std::string_view(kw.first);
    auto it = std::find_if(ps.begin(), ps.end(), [&](const Param& p) { return p.first == k; });
    if (it == ps.end()) {
      std::vector<std::string> names;
      for (const Param& p : ps) names.emplace_back(p.first);
      unexpected_keyword(name, kw.first, names);
    }
    std::optional<Value>& slot = got[size_t(it - ps.begin())];
    if (slot) fail(ErrorKind::TypeError, "{}() got multiple values for argument '{}'", name, k);
    slot = kw.second;
  }
  std::vector<Value> out;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (!got[i] && !ps[i].second)
      fail(ErrorKind::TypeError, "{}() missing 1 required positional argument: '{}'", name, ps[i].first);
    out.push_back(got[i] ? *got[i] : *ps[i].second);
  }
  return out;
}

DType dtype_of(Interpreter& in, const Value& x) { return in.getattr(x, "dtype").as_dtype(); }

Value check_tensor(std::string_view fn, std::string_view param, int position, const Value& v) {
  if (!v.is(Type::Tensor))
    fail(ErrorKind::TypeError, "{}(): argument '{}' (position {}) must be Tensor, not {}", fn, param, position,
         type_name(v));
  return v;
}
std::vector<Value> sizes_of(Interpreter& in, const Value& x) {
  std::vector<Value> s;
  for (int64_t d = 0; d < in.tensor_dim(x); ++d) s.push_back(method(in, x, "size", {Value(d)}));
  return s;
}
Value product(Interpreter& in, const std::vector<Value>& sizes, size_t from, size_t to) {
  Value p(int64_t(1));
  for (size_t i = from; i < to; ++i) p = in.binary(ast::BinOp::Mul, p, sizes[i]);
  return p;
}

// The broadcast of shapes (right-aligned, size 1 stretched), PyTorch's
// error for sizes that do not match.
std::vector<Value> broadcast_sizes(Interpreter& in, const std::vector<std::vector<Value>>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<Value> out(rank, Value(int64_t(1)));
  auto is_one = [&](const Value& v) { return in.truth(in.compare(ast::CmpOp::Eq, v, Value(int64_t(1)))); };
  for (const auto& s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      Value& o = out[rank - s.size() + i];
      if (is_one(s[i])) continue;
      if (is_one(o)) o = s[i];
      else if (!in.truth(in.compare(ast::CmpOp::Eq, o, s[i])))
        fail("The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {}", to_repr(o),
             to_repr(s[i]), i);
    }
  return out;
}

}  // namespace thn::shorthand
