#include "interp/shorthands.h"

#include <cmath>

#include <fmt/format.h>

#include "interp/interpreter.h"
#include "runtime/error.h"
#include "runtime/op_registry.h"

namespace thn {

namespace {

Value call_op(Interpreter& in, const char* name, const Value* self, std::vector<Value> args,
              std::vector<std::pair<std::string, Value>> kwargs) {
  CallArgs c{std::move(args), std::move(kwargs)};
  return in.dispatch().call(op_named(name), self, c.args, c, false);
}

// The keyword arguments `allowed` of a shorthand (PyTorch's TypeError for
// another one).
void only_keywords(std::string_view name, const CallArgs& a, std::initializer_list<std::string_view> allowed) {
  for (const auto& [k, v] : a.kwargs)
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
      fail(ErrorKind::TypeError, "{}() got an unexpected keyword argument '{}'", name, k);
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

Value to_device(Interpreter& in, const Value& x, Value device) {
  return call_op(in, "to", &x, {std::move(device)}, {});
}

Value cpu(Interpreter& in, const Value& x, CallArgs& a) {
  only_keywords("cpu", a, {});
  positional("cpu", a, 0, 0);
  return to_device(in, x, Value::str("cpu"));
}

// x.cuda(device=None): x.cuda(1) is "cuda:1".
Value cuda(Interpreter& in, const Value& x, CallArgs& a) {
  only_keywords("cuda", a, {"device"});
  positional("cuda", a, 0, a.kwargs.empty() ? 1 : 0);
  Value device = a.args.empty() ? keyword(a, "device") : a.args[0];
  if (device.is(Type::Int)) device = Value::str(fmt::format("cuda:{}", device.as_int()));
  if (device.is(Type::None)) device = Value::str("cuda");
  return to_device(in, x, device);
}

// The one tensor argument of type_as and view_as.
const Value& other_tensor(std::string_view name, const CallArgs& a) {
  only_keywords(name, a, {});
  positional(name, a, 1, 1);
  if (!a.args[0].is(Type::Tensor))
    fail(ErrorKind::TypeError, "{}(): argument 'other' (position 1) must be Tensor, not {}", name, type_name(a.args[0]));
  return a.args[0];
}
Value type_as(Interpreter& in, const Value& x, CallArgs& a) {
  return call_op(in, "to", &x, {in.getattr(other_tensor("type_as", a), "dtype")}, {});
}
Value view_as(Interpreter& in, const Value& x, CallArgs& a) {
  return call_op(in, "view", &x, {in.getattr(other_tensor("view_as", a), "shape")}, {});
}

// x.new_zeros(size, dtype=None, device=None): the creation op with x's
// dtype and device where none is given.
Value like(Interpreter& in, const Value& x, CallArgs& a, const char* op, size_t extra) {
  const std::string name = fmt::format("new_{}", op);
  only_keywords(name, a, {"dtype", "device"});
  std::vector<std::pair<std::string, Value>> kwargs;
  for (const char* k : {"dtype", "device"}) {
    Value v = keyword(a, k);
    kwargs.emplace_back(k, v.is(Type::None) ? in.getattr(x, k) : v);
  }
  if (a.args.size() < 1 + extra) positional(name, a, 1 + extra, 1 + extra);  // (more: the op's own error)
  return call_op(in, op, nullptr, a.args, std::move(kwargs));
}
Value new_zeros(Interpreter& in, const Value& x, CallArgs& a) { return like(in, x, a, "zeros", 0); }
Value new_ones(Interpreter& in, const Value& x, CallArgs& a) { return like(in, x, a, "ones", 0); }
Value new_empty(Interpreter& in, const Value& x, CallArgs& a) { return like(in, x, a, "empty", 0); }
Value new_full(Interpreter& in, const Value& x, CallArgs& a) {
  positional("new_full", a, 2, 2);
  return like(in, x, a, "full", 1);
}
Value new_tensor(Interpreter& in, const Value& x, CallArgs& a) {
  positional("new_tensor", a, 1, 1);
  return like(in, x, a, "tensor", 0);
}

// x.allclose(other, rtol, atol, equal_nan): every element isclose, a bool
// (under jit a number read from the tensor, as item()).
Value allclose(Interpreter& in, const Value& x, CallArgs& a) {
  Value close = in.dispatch().call(op_named("isclose"), &x, a.args, a, false);
  Value all = call_op(in, "all", &close, {}, {});
  Value item = call_op(in, "item", &all, {}, {});
  return item;
}

// x.norm(p=2, dim=None, keepdim=False): the vector p-norm over dim (every
// dim when None), as PyTorch computes it: p = 2 ("fro") sqrt(sum(x*x)), 1
// sum(|x|), inf / -inf max / min |x|, 0 the count of nonzeros, else
// sum(|x|^p)^(1/p).
Value norm(Interpreter& in, const Value& x, CallArgs& a) {
  only_keywords("norm", a, {"p", "dim", "keepdim"});
  positional("norm", a, 0, 3);
  Value p = a.args.size() > 0 ? a.args[0] : keyword(a, "p");
  Value dim = a.args.size() > 1 ? a.args[1] : keyword(a, "dim");
  Value keepdim = a.args.size() > 2 ? a.args[2] : keyword(a, "keepdim");
  if (keepdim.is(Type::None)) keepdim = Value(false);
  const Value dtype = in.getattr(x, "dtype");
  if (!is_floating(dtype.as_dtype()))
    fail("norm(): input dtype should be either floating point or complex. Got {} instead.",
         dtype_torch_name(dtype.as_dtype()));
  if (p.is(Type::Str) && p.as_str() == "fro") p = Value(2.0);
  if (p.is(Type::None)) p = Value(2.0);
  if (!p.is(Type::Int) && !p.is(Type::Float))
    fail(ErrorKind::TypeError, "norm(): p must be a number or 'fro', not {}", to_repr(p));
  const double q = p.as_float();
  auto reduce = [&](const char* op, const Value& t) {
    Value d = dim.is(Type::None) && (std::string_view(op) != "sum") ? Value::list({}) : dim;
    return call_op(in, op, &t, {}, {{"dim", d}, {"keepdim", keepdim}});
  };
  if (q == 0) {
    Value nonzero = call_op(in, "ne", &x, {Value(int64_t(0))}, {});
    Value count = reduce("sum", nonzero);
    return call_op(in, "to", &count, {dtype}, {});
  }
  if (q == 2) {
    Value squares = call_op(in, "square", &x, {}, {});
    Value total = reduce("sum", squares);
    return call_op(in, "sqrt", &total, {}, {});
  }
  Value absolute = call_op(in, "abs", &x, {}, {});
  if (std::isinf(q)) return reduce(q > 0 ? "amax" : "amin", absolute);
  if (q == 1) return reduce("sum", absolute);
  Value powers = call_op(in, "pow", &absolute, {Value(q)}, {});
  Value total = reduce("sum", powers);
  return call_op(in, "pow", &total, {Value(1.0 / q)}, {});
}

constexpr Shorthand kShorthands[] = {
    {"allclose", "(other, rtol=1e-05, atol=1e-08, equal_nan=False)", "isclose(x, other, ...).all().item()", allclose,
     true},
    {"cpu", "()", "x.to(\"cpu\")", cpu},
    {"cuda", "(device=None)", "x.to(\"cuda\")` (`x.cuda(1)`: `x.to(\"cuda:1\")", cuda},
    {"new_empty", "(size, *, dtype=None, device=None)", "empty(size, dtype=x.dtype, device=x.device)", new_empty},
    {"new_full", "(size, fill_value, *, dtype=None, device=None)", "full(size, fill_value, dtype=x.dtype, device=x.device)",
     new_full},
    {"new_ones", "(size, *, dtype=None, device=None)", "ones(size, dtype=x.dtype, device=x.device)", new_ones},
    {"new_tensor", "(data, *, dtype=None, device=None)", "tensor(data, dtype=x.dtype, device=x.device)", new_tensor},
    {"new_zeros", "(size, *, dtype=None, device=None)", "zeros(size, dtype=x.dtype, device=x.device)", new_zeros},
    {"norm", "(p=2, dim=None, keepdim=False)", "x.square().sum(dim).sqrt()` (p = 2, \"fro\"); `x.abs()` with `amax`, `amin`, "
     "`pow` for other p; p = 0: `(x != 0).sum(dim)", norm, true},
    {"type_as", "(other)", "x.to(other.dtype)", type_as},
    {"view_as", "(other)", "x.view(other.shape)", view_as},
};

}  // namespace

std::span<const Shorthand> tensor_shorthands() { return kShorthands; }

const Shorthand* find_shorthand(std::string_view name) {
  for (const Shorthand& s : kShorthands)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace thn
