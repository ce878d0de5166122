#include "interp/shorthands.h"

#include <cmath>

#include <fmt/format.h>

#include "interp/autograd.h"
#include "interp/interpreter.h"
#include "interp/shorthand_args.h"
#include "runtime/error.h"
#include "runtime/op_registry.h"

namespace thn {

namespace {

using namespace shorthand;


// PyTorch's error for a kernel its CPU build lacks for x's dtype.
Device device_of(Interpreter& in, const Value& x) { return in.getattr(x, "device").as_device(); }
// PyTorch's refusal of a non-float x by `kernel` (`cuda_kernel` on a GPU,
// runtime/tensor.h's not_implemented).
void floats_only(Interpreter& in, const Value& x, std::string_view kernel, std::string_view cuda_kernel = {}) {
  DType d = dtype_of(in, x);
  if (!is_floating(d)) not_implemented(kernel, d, device_of(in, x), cuda_kernel);
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

Value vector_norm(Interpreter& in, const Value& x, double q, const Value& dim, const Value& keepdim);

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
  // (one step for autograd, whose rule is PyTorch's norm_backward: the ops'
  // own rules give NaN at a zero norm, where PyTorch gives 0)
  return in.autograd().composite("norm", {x, p, dim, keepdim}, [&] { return vector_norm(in, x, q, dim, keepdim); });
}

Value vector_norm(Interpreter& in, const Value& x, double q, const Value& dim, const Value& keepdim) {
  const Value dtype = in.getattr(x, "dtype");
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

// x.softmax(dim, dtype=None), x.log_softmax(...): the standard library's
// nn.softmax / nn.log_softmax, one definition for both spellings.
Value stdlib_softmax(Interpreter& in, const Value& x, const CallArgs& a, const char* name) {
  std::vector<Value> p = bind(name, a, {{"dim", std::nullopt}, {"dtype", Value()}});
  CallArgs c{{x, p[0]}, {{"dtype", p[1]}}};
  return in.call(in.import_module("nn").globals.at(name), c);
}
Value softmax(Interpreter& in, const Value& x, CallArgs& a) { return stdlib_softmax(in, x, a, "softmax"); }
Value log_softmax(Interpreter& in, const Value& x, CallArgs& a) { return stdlib_softmax(in, x, a, "log_softmax"); }

// clamp_min(min) / clamp_max(max) and their in-place forms: clamp with one bound.
Value clamp_bound(Interpreter& in, const Value& x, CallArgs& a, const char* name, const char* bound, bool inplace) {
  Value v = bind(name, a, {{bound, std::nullopt}})[0];
  return call_op(in, "clamp", &x, {}, {{bound, v}}, inplace);
}
Value clamp_min(Interpreter& in, const Value& x, CallArgs& a) { return clamp_bound(in, x, a, "clamp_min", "min", false); }
Value clamp_min_(Interpreter& in, const Value& x, CallArgs& a) { return clamp_bound(in, x, a, "clamp_min_", "min", true); }
Value clamp_max(Interpreter& in, const Value& x, CallArgs& a) { return clamp_bound(in, x, a, "clamp_max", "max", false); }
Value clamp_max_(Interpreter& in, const Value& x, CallArgs& a) { return clamp_bound(in, x, a, "clamp_max_", "max", true); }

// detach(): a new tensor object over x's memory, strides kept, outside
// autograd's graph (in a trace: a view of all of x, taken with grad mode off).
Value detach(Interpreter& in, const Value& x, CallArgs& a) {
  bind("detach", a, {});
  if (!x.is_proxy()) return Value::tensor(x.as_tensor());
  GradMode off(in.autograd(), false);
  return method(in, x, "view", {in.getattr(x, "shape")});
}

Value is_floating_point(Interpreter& in, const Value& x, CallArgs& a) {
  bind("is_floating_point", a, {});
  return Value(is_floating(dtype_of(in, x)));
}
Value element_size(Interpreter& in, const Value& x, CallArgs& a) {
  bind("element_size", a, {});
  return Value(int64_t(itemsize(dtype_of(in, x))));
}

// dot(tensor) and mv(vec): matmul of 1-D and 1-D, 2-D and 1-D, after
// PyTorch's own checks of ranks and dtypes.
Value dot(Interpreter& in, const Value& x, CallArgs& a) {
  Value y = bind("dot", a, {{"tensor", std::nullopt}})[0];
  if (!y.is(Type::Tensor)) fail(ErrorKind::TypeError, "dot(): argument 'tensor' (position 1) must be Tensor, not {}", type_name(y));
  const int64_t dx = in.tensor_dim(x), dy = in.tensor_dim(y);
  if (dx != 1 || dy != 1) fail("1D tensors expected, but got {}D and {}D tensors", dx, dy);
  const DType tx = dtype_of(in, x), ty = dtype_of(in, y);
  if (tx != ty)
    fail("dot : expected both vectors to have same dtype, but found {} and {}", dtype_torch_name(tx), dtype_torch_name(ty));
  return method(in, x, "matmul", {y});
}
Value mv(Interpreter& in, const Value& x, CallArgs& a) {
  Value v = bind("mv", a, {{"vec", std::nullopt}})[0];
  if (!v.is(Type::Tensor)) fail(ErrorKind::TypeError, "mv(): argument 'vec' (position 1) must be Tensor, not {}", type_name(v));
  const int64_t dx = in.tensor_dim(x), dv = in.tensor_dim(v);
  if (dx != 2 || dv != 1) fail("vector + matrix @ vector expected, got 1, {}, {}", dx, dv);
  const DType tx = dtype_of(in, x), tv = dtype_of(in, v);
  if (tx != tv) fail("expected scalar type {} but found {}", dtype_torch_name(tx), dtype_torch_name(tv));
  return method(in, x, "matmul", {v});
}

// repeat_interleave(repeats, dim=None): each element (each slice along dim)
// `repeats` times in a row; without dim, of the flattened tensor. An int (or
// a one-element tensor) repeats every slice as often: x.unsqueeze(dim + 1)
// expanded and flattened back, a copy. A 1-D tensor gives each slice its
// count, read from the data (so not inside jit): an index_select.
Value repeat_interleave_of(Interpreter& in, const Value& x, const Value& repeats_arg, const Value& dim) {
  Value self = x;
  if (dim.is_none() || in.tensor_dim(self) == 0) self = method(in, self, "reshape", {Value(int64_t(-1))});
  const int64_t rank = in.tensor_dim(self);
  const int64_t d = dim.is_none() ? 0 : dim.as_int() < 0 ? dim.as_int() + rank : dim.as_int();
  if (d < 0 || d >= rank)
    fail(ErrorKind::IndexError, "Dimension out of range (expected to be in range of [{}, {}], but got {})", -rank,
         rank - 1, dim.as_int());
  Value repeats = repeats_arg;
  if (repeats.is(Type::Tensor)) {
    const int64_t rd = in.tensor_dim(repeats);
    if (rd > 1) fail("repeats must be 0-dim or 1-dim tensor");
    const DType rt = dtype_of(in, repeats);
    if (rt != DType::Int32 && rt != DType::Int64) not_implemented("repeat_interleave_cpu", rt, device_of(in, repeats));
    Value counts = method(in, repeats, "tolist");
    if (rd == 0) repeats = counts;
    else if (counts.items().size() == 1) repeats = counts.items()[0];
    else {
      std::vector<Value> index;
      const std::vector<Value>& c = counts.items();
      if (int64_t(c.size()) != method(in, self, "size", {Value(d)}).as_int())
        fail("repeats must have the same size as input along dim");
      for (size_t i = 0; i < c.size(); ++i) {
        if (c[i].as_int() < 0) fail("repeats can not be negative");
        for (int64_t k = 0; k < c[i].as_int(); ++k) index.push_back(Value(int64_t(i)));
      }
      Value idx = call_op(in, "tensor", nullptr, {Value::list(std::move(index))},
                          {{"dtype", Value(DType::Int64)}, {"device", in.getattr(x, "device")}});
      return method(in, self, "index_select", {Value(d), idx});
    }
  }
  if (!repeats.is(Type::Int))
    fail(ErrorKind::TypeError, "repeat_interleave(): argument 'repeats' must be int or Tensor, not {}", type_name(repeats));
  const int64_t r = repeats.as_int();
  if (r < 0) fail("repeats can not be negative");
  if (r == 1) return method(in, self, "clone");
  std::vector<Value> sizes;
  for (int64_t i = 0; i <= rank; ++i) sizes.push_back(Value(i == d + 1 ? r : int64_t(-1)));
  Value expanded = method(in, method(in, self, "unsqueeze", {Value(d + 1)}), "expand", {Value::tuple(std::move(sizes))});
  return method(in, method(in, expanded, "flatten", {Value(d), Value(d + 1)}), "contiguous");
}

Value repeat_interleave(Interpreter& in, const Value& x, CallArgs& a) {
  std::vector<Value> p = bind("repeat_interleave", a, {{"repeats", Value()}, {"dim", Value()}, {"output_size", Value()}});
  Value out;
  if (p[0].is_none()) {  // repeat_interleave(repeats): each index its count of times
    if (in.tensor_dim(x) != 1) fail("repeat_interleave only accept 1D vector as repeat");
    Value positions = call_op(in, "arange", nullptr, {in.tensor_len(x)}, {{"device", in.getattr(x, "device")}});
    out = repeat_interleave_of(in, positions, x, Value(int64_t(0)));
  } else {
    if (!p[1].is_none() && in.tensor_dim(x) == 0)
      fail(ErrorKind::IndexError, "Dimension specified as {} but tensor has no dimensions", to_repr(p[1]));
    out = repeat_interleave_of(in, x, p[0], p[1]);
  }
  if (!p[2].is_none()) {
    Value d = p[1].is_none() ? Value(int64_t(0)) : p[1];
    if (!in.truth(in.compare(ast::CmpOp::Eq, method(in, out, "size", {d}), p[2])))
      fail("allocated size does not match required size");
  }
  return out;
}

Value nelement(Interpreter& in, const Value& x, CallArgs& a) {
  bind("nelement", a, {});
  return method(in, x, "numel");
}

Value ravel(Interpreter& in, const Value& x, CallArgs& a) {
  bind("ravel", a, {});
  return method(in, x, "reshape", {Value(int64_t(-1))});
}
Value flip_dim(Interpreter& in, const Value& x, CallArgs& a, const char* name, int64_t d) {
  bind(name, a, {});
  if (in.tensor_dim(x) <= d) fail("Input must be >= {}-d.", d + 1);
  return method(in, x, "flip", {Value(d)});
}
Value flipud(Interpreter& in, const Value& x, CallArgs& a) { return flip_dim(in, x, a, "flipud", 0); }
Value fliplr(Interpreter& in, const Value& x, CallArgs& a) { return flip_dim(in, x, a, "fliplr", 1); }

// diag(diagonal=0): a 1-D x becomes the diagonal of a square matrix of
// zeros; a 2-D x gives its diagonal, copied.
Value diag(Interpreter& in, const Value& x, CallArgs& a) {
  Value k = bind("diag", a, {{"diagonal", Value(int64_t(0))}})[0];
  const int64_t rank = in.tensor_dim(x);
  if (rank == 2) return method(in, method(in, x, "diagonal", {k}), "clone");
  if (rank != 1) fail("matrix or a vector expected");
  Value m = in.binary(ast::BinOp::Add, in.tensor_len(x), Value(std::abs(k.as_int())));
  Value out = call_op(in, "zeros", nullptr, {Value::tuple({m, m})},
                      {{"dtype", in.getattr(x, "dtype")}, {"device", in.getattr(x, "device")}});
  // (written at the diagonal's indices, not through a view of out: a
  // write autograd follows)
  const int64_t n = in.tensor_len(x).as_int(), d = k.as_int();
  auto positions = [&](int64_t first) {
    return call_op(in, "arange", nullptr, {Value(first), Value(first + n)}, {{"device", in.getattr(x, "device")}});
  };
  in.setitem(out, Value::tuple({positions(std::max<int64_t>(-d, 0)), positions(std::max<int64_t>(d, 0))}), x);
  return out;
}
Value trace(Interpreter& in, const Value& x, CallArgs& a) {
  bind("trace", a, {});
  const int64_t rank = in.tensor_dim(x);
  if (rank != 2) fail("trace: expected a matrix, but got tensor with dim {}", rank);
  // (PyTorch's CPU trace refuses Bool; its CUDA one, diagonal().sum(), takes it.)
  return method(in, method(in, x, "diagonal"), "sum");
}

// nansum / nanmean(dim=None, keepdim=False, *, dtype=None): NaNs count as
// zero in the sum and not at all in the count.
std::vector<std::pair<std::string, Value>> sum_kwargs(const std::vector<Value>& p) {
  std::vector<std::pair<std::string, Value>> kw{{"keepdim", p[1]}, {"dtype", p[2]}};
  if (!p[0].is_none()) kw.emplace_back("dim", p[0]);
  return kw;
}
Value nan_to_zero(Interpreter& in, const Value& x) {
  return call_op(in, "where", nullptr, {method(in, x, "isnan"), Value(int64_t(0)), x}, {});
}
Value nansum(Interpreter& in, const Value& x, CallArgs& a) {
  std::vector<Value> p = bind("nansum", a, {{"dim", Value()}, {"keepdim", Value(false)}, {"dtype", Value()}});
  const Value v = is_floating(dtype_of(in, x)) ? nan_to_zero(in, x) : x;
  return call_op(in, "sum", &v, {}, sum_kwargs(p));
}
Value nanmean(Interpreter& in, const Value& x, CallArgs& a) {
  std::vector<Value> p = bind("nanmean", a, {{"dim", Value()}, {"keepdim", Value(false)}, {"dtype", Value()}});
  const DType d = dtype_of(in, x);
  if (!is_floating(d))
    fail("nanmean(): expected input to have floating point dtype but got {}", dtype_torch_name(d));
  const Value v = nan_to_zero(in, x);
  Value total = call_op(in, "sum", &v, {}, sum_kwargs(p));
  Value present = method(in, method(in, x, "isnan"), "logical_not");
  std::vector<Value> count_p = {p[0], p[1], Value()};
  Value count = call_op(in, "sum", &present, {}, sum_kwargs(count_p));
  return method(in, total, "div", {count});
}

// diff(n=1, dim=-1, prepend=None, append=None): x[1:] - x[:-1] along dim
// (logical_xor for bool), n times, after prepending / appending.
Value diff(Interpreter& in, const Value& x, CallArgs& a) {
  std::vector<Value> p = bind("diff", a, {{"n", Value(int64_t(1))}, {"dim", Value(int64_t(-1))}, {"prepend", Value()}, {"append", Value()}});
  const int64_t rank = in.tensor_dim(x);
  if (rank == 0) fail("diff expects input to be at least one-dimensional");
  Value v = x;
  if (!p[2].is_none() || !p[3].is_none()) {
    std::vector<Value> parts;
    for (const Value& t : {p[2], x, p[3]}) {
      if (t.is_none()) continue;
      if (!t.is(Type::Tensor) || in.tensor_dim(t) != rank)
        fail("diff expects prepend or append to be the same dimension as input");
      parts.push_back(t);
    }
    v = call_op(in, "cat", nullptr, {Value::list(std::move(parts)), p[1]}, {});
  }
  const bool boolean = dtype_of(in, v) == DType::Bool;
  for (int64_t i = 0; i < p[0].as_int(); ++i) {
    Value len = method(in, v, "size", {p[1]});
    const bool empty = !in.truth(in.compare(ast::CmpOp::Gt, len, Value(int64_t(0))));
    Value n = empty ? Value(int64_t(0)) : in.binary(ast::BinOp::Sub, len, Value(int64_t(1)));
    Value later = method(in, v, "narrow", {p[1], Value(int64_t(empty ? 0 : 1)), n});
    Value earlier = method(in, v, "narrow", {p[1], Value(int64_t(0)), n});
    v = method(in, later, boolean ? "logical_xor" : "sub", {earlier});
  }
  return v;
}

// The in-place random fills: uniform_(from=0, to=1), normal_(mean=0,
// std=1), bernoulli_(p=0.5), and bernoulli(p=None) (x holds the
// probabilities when p is None): numbers from rand / randn, so the same seed
// gives the same values on every path, but not PyTorch's values.
// rand / randn shaped like x, in x's dtype (float32 for a bool or integer x).
Value random_like(Interpreter& in, const Value& x, const char* op) {
  const DType d = dtype_of(in, x);
  return call_op(in, op, nullptr, {in.getattr(x, "shape")},
                 {{"dtype", Value(is_floating(d) ? d : DType::Float32)}, {"device", in.getattr(x, "device")}});
}
Value uniform_(Interpreter& in, const Value& x, CallArgs& a) {
  std::vector<Value> p = bind("uniform_", a, {{"from", Value(0.0)}, {"to", Value(1.0)}});
  floats_only(in, x, "check_uniform_bounds", "check_uniform_bounds");
  if (in.truth(in.compare(ast::CmpOp::Gt, p[0], p[1])))
    fail("uniform_ expects to return a [from, to) range, but found from={} > to={}", to_repr(p[0]), to_repr(p[1]));
  Value span = in.binary(ast::BinOp::Sub, p[1], p[0]);
  Value u = method(in, method(in, random_like(in, x, "rand"), "mul", {span}), "add", {p[0]});
  return call_op(in, "copy_", &x, {u}, {});
}
Value normal_(Interpreter& in, const Value& x, CallArgs& a) {
  std::vector<Value> p = bind("normal_", a, {{"mean", Value(0.0)}, {"std", Value(1.0)}});
  floats_only(in, x, "normal_kernel_cpu");
  if (in.truth(in.compare(ast::CmpOp::Lt, p[1], Value(0.0))))
    fail("normal expects std >= 0.0, but found std {}", to_repr(p[1]));
  Value n = method(in, method(in, random_like(in, x, "randn"), "mul", {p[1]}), "add", {p[0]});
  return call_op(in, "copy_", &x, {n}, {});
}
// 1 where a uniform number falls below p (a number or a tensor of
// probabilities; None: x holds them), in x's dtype: every dtype (PyTorch
// 1.13's CPU kernels refuse float16, its CUDA ones take it), and only
// floats as probabilities.
Value bernoulli_draw(Interpreter& in, const Value& x, const Value& p) {
  const DType d = dtype_of(in, x);
  const bool number = !p.is_none() && !p.is(Type::Tensor);
  if (p.is_none()) floats_only(in, x, "bernoulli_tensor_cpu_p_", "bernoulli_tensor_cuda_p_");
  if (number && (in.truth(in.compare(ast::CmpOp::Lt, p, Value(0.0))) || in.truth(in.compare(ast::CmpOp::Gt, p, Value(1.0)))))
    fail("bernoulli_ expects p to be in [0, 1], but got p={}", to_repr(p));
  Value hit = method(in, random_like(in, x, "rand"), "lt", {p.is_none() ? x : p});
  return method(in, hit, "to", {Value(d)});
}
Value bernoulli(Interpreter& in, const Value& x, CallArgs& a) {
  return bernoulli_draw(in, x, bind("bernoulli", a, {{"p", Value()}})[0]);
}
Value bernoulli_(Interpreter& in, const Value& x, CallArgs& a) {
  return call_op(in, "copy_", &x, {bernoulli_draw(in, x, bind("bernoulli_", a, {{"p", Value(0.5)}})[0])}, {});
}

// ---- more of PyTorch's composite ops ----

Value positive(Interpreter& in, const Value& x, CallArgs& a) {
  bind("positive", a, {});
  if (dtype_of(in, x) == DType::Bool) fail("The `+` operator, on a bool tensor is not supported.");
  return x;
}

// nan_to_num(nan=0.0, posinf=None, neginf=None): NaN, inf and -inf of a
// float tensor replaced (infinities by default with the dtype's largest
// and lowest finite values); other dtypes copied as they are.
double finite_max(DType d) {
  switch (d) {
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;
    case DType::Float32: return 3.4028234663852886e38;
    default: return 1.7976931348623157e308;
  }
}
Value nan_to_num_of(Interpreter& in, const Value& x, CallArgs& a, const char* name) {
  std::vector<Value> p = bind(name, a, {{"nan", Value(0.0)}, {"posinf", Value()}, {"neginf", Value()}});
  const DType d = dtype_of(in, x);
  if (!is_floating(d)) return method(in, x, "clone");
  Value posinf = p[1].is_none() ? Value(finite_max(d)) : p[1];
  Value neginf = p[2].is_none() ? Value(-finite_max(d)) : p[2];
  Value v = call_op(in, "where", nullptr, {method(in, x, "isneginf"), neginf, x}, {});
  v = call_op(in, "where", nullptr, {method(in, x, "isposinf"), posinf, v}, {});
  return call_op(in, "where", nullptr, {method(in, x, "isnan"), p[0], v}, {});
}
Value nan_to_num(Interpreter& in, const Value& x, CallArgs& a) { return nan_to_num_of(in, x, a, "nan_to_num"); }
Value nan_to_num_(Interpreter& in, const Value& x, CallArgs& a) {
  Value v = nan_to_num_of(in, x, a, "nan_to_num_");
  return call_op(in, "copy_", &x, {v}, {});
}

// true_divide(other): div without a rounding mode (PyTorch's true_divide
// takes none: a TypeError names it).
Value true_divide(Interpreter& in, const Value& x, CallArgs& a) {
  return method(in, x, "div", {bind("true_divide", a, {{"other", std::nullopt}})[0]});
}
Value true_divide_(Interpreter& in, const Value& x, CallArgs& a) {
  return call_op(in, "div", &x, {bind("true_divide_", a, {{"other", std::nullopt}})[0]}, {}, true);
}

// deg2rad / rad2deg: a product with pi / 180 (its inverse), the number
// rounded to x's dtype as PyTorch's multiplication by a number does.
Value deg2rad(Interpreter& in, const Value& x, CallArgs& a) {
  bind("deg2rad", a, {});
  return method(in, x, "mul", {Value(0.017453292519943295)});
}
Value rad2deg(Interpreter& in, const Value& x, CallArgs& a) {
  bind("rad2deg", a, {});
  return method(in, x, "mul", {Value(57.295779513082323)});
}

// logit(eps=None): log(z / (1 - z)), z = x clamped to [eps, 1 - eps].
Value logit(Interpreter& in, const Value& x, CallArgs& a) {
  Value eps = bind("logit", a, {{"eps", Value()}})[0];
  Value z = is_floating(dtype_of(in, x)) ? x : method(in, x, "to", {Value(kDefaultFloat)});
  if (!eps.is_none()) z = method(in, z, "clamp", {eps, in.binary(ast::BinOp::Sub, Value(1.0), eps)});
  return method(in, method(in, z, "div", {method(in, method(in, z, "neg"), "add", {Value(int64_t(1))})}), "log");
}

// ldexp(other): x * 2 ** other; float_power(exponent): pow in float64.
Value ldexp(Interpreter& in, const Value& x, CallArgs& a) {
  Value other = check_tensor("ldexp", "other", 2, bind("ldexp", a, {{"other", std::nullopt}})[0]);
  return method(in, x, "mul", {call_op(in, "pow", nullptr, {Value(2.0), other}, {})});
}
Value float_power(Interpreter& in, const Value& x, CallArgs& a) {
  Value e = bind("float_power", a, {{"exponent", std::nullopt}})[0];
  if (e.is(Type::Tensor)) e = method(in, e, "to", {Value(DType::Float64)});
  else if (!e.is(Type::Int) && !e.is(Type::Float) && !e.is(Type::Bool))
    fail(ErrorKind::TypeError, "float_power(): argument 'exponent' must be Tensor or Number, not {}", type_name(e));
  return method(in, method(in, x, "to", {Value(DType::Float64)}), "pow", {e});
}

// aminmax(*, dim=None, keepdim=False): torch.return_types.aminmax(min, max).
Value aminmax(Interpreter& in, const Value& x, CallArgs& a) {
  only_keywords("aminmax", a, {"dim", "keepdim"});
  positional("aminmax", a, 0, 0);
  Value dim = keyword(a, "dim"), keepdim = keyword(a, "keepdim");
  if (keepdim.is_none()) keepdim = Value(false);
  if (!keepdim.is(Type::Bool))
    fail(ErrorKind::TypeError, "aminmax(): argument 'keepdim' must be bool, not {}", type_name(keepdim));
  if (dim.is_none()) {
    if (!in.truth(in.compare(ast::CmpOp::Gt, method(in, x, "numel"), Value(int64_t(0)))))
      fail("aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
    if (in.truth(keepdim)) {  // every dim kept, with size 1
      std::vector<Value> ones(size_t(in.tensor_dim(x)), Value(int64_t(1)));
      Value flat = method(in, x, "reshape", {Value(int64_t(-1))});
      auto kept = [&](const char* op) { return method(in, method(in, flat, op, {Value(int64_t(0))}), "reshape", {Value::tuple(ones)}); };
      return return_tuple("aminmax", {kept("amin"), kept("amax")});
    }
    return return_tuple("aminmax", {method(in, x, "amin"), method(in, x, "amax")});
  }
  if (!dim.is(Type::Int)) fail(ErrorKind::TypeError, "aminmax(): argument 'dim' must be int, not {}", type_name(dim));
  return return_tuple("aminmax", {method(in, x, "amin", {dim, keepdim}), method(in, x, "amax", {dim, keepdim})});
}

// take_along_dim(indices, dim=None): gather along dim after broadcasting
// x and indices over the other dims; without dim, of the flattened tensors.
Value take_along_dim(Interpreter& in, const Value& x, CallArgs& a) {
  std::vector<Value> p = bind("take_along_dim", a, {{"indices", std::nullopt}, {"dim", Value()}});
  const Value idx = check_tensor("take_along_dim", "indices", 2, p[0]);
  const DType it = dtype_of(in, idx);
  if (it != DType::Int64)
    fail("torch.take_along_dim(): dtype of indices should be Long but got {}", dtype_torch_name(it));
  const Value flat = Value(int64_t(-1));
  if (p[1].is_none())
    return method(in, method(in, x, "reshape", {flat}), "gather", {Value(int64_t(0)), method(in, idx, "reshape", {flat})});
  const int64_t rank = in.tensor_dim(x);
  if (rank != in.tensor_dim(idx))
    fail("torch.take_along_dim(): input and indices should have the same number of dimensions, but got {} "
         "dimensions for input, and {} dimensions for indices", rank, in.tensor_dim(idx));
  const int64_t d = wrap_dim(p[1].as_int(), rank);
  if (rank == 0) return method(in, x, "gather", {Value(d), idx});
  std::vector<Value> xs = sizes_of(in, x), shape = xs;
  shape[size_t(d)] = method(in, idx, "size", {Value(d)});
  shape = broadcast_sizes(in, {shape, sizes_of(in, idx)});
  Value indices = method(in, idx, "expand", {Value::tuple(shape)});
  shape[size_t(d)] = xs[size_t(d)];
  return method(in, method(in, x, "expand", {Value::tuple(shape)}), "gather", {Value(d), indices});
}

// tile(dims): repeat, with dims padded by leading 1s to x's rank.
Value tile(Interpreter& in, const Value& x, CallArgs& a) {
  Value dims = bind("tile", a, {{"dims", std::nullopt}})[0];
  if (dims.is(Type::Int)) dims = Value::tuple({dims});
  if (!dims.is(Type::List) && !dims.is(Type::Tuple))
    fail(ErrorKind::TypeError, "tile(): argument 'dims' must be tuple of ints, not {}", type_name(dims));
  std::vector<Value> reps = dims.items();
  const size_t rank = size_t(in.tensor_dim(x));
  if (reps.size() < rank) reps.insert(reps.begin(), rank - reps.size(), Value(int64_t(1)));
  return method(in, x, "repeat", {Value::tuple(std::move(reps))});
}

Value broadcast_to(Interpreter& in, const Value& x, CallArgs& a) {
  return method(in, x, "expand", {bind("broadcast_to", a, {{"size", std::nullopt}})[0]});
}

// count_nonzero(dim=None): (x != 0).sum(dim), int64.
Value count_nonzero(Interpreter& in, const Value& x, CallArgs& a) {
  Value dim = bind("count_nonzero", a, {{"dim", Value()}})[0];
  Value nonzero = method(in, x, "ne", {Value(int64_t(0))});
  if (dim.is_none()) return method(in, nonzero, "sum");
  return call_op(in, "sum", &nonzero, {}, {{"dim", dim}});
}

// addmm / addmv / baddbmm / addbmm(…, *, beta=1, alpha=1):
// beta * x + alpha * (the product), x broadcast to the product's shape; x
// left out when beta is 0 (its NaNs too), as BLAS does.
Value add_product(Interpreter& in, const Value& x, CallArgs& a, const char* name, const char* p1, const char* p2,
                  const char* product, int64_t ranks, bool sum_batches) {
  std::vector<Value> p = bind(name, a, {{p1, std::nullopt}, {p2, std::nullopt}, {"beta", Value(int64_t(1))}, {"alpha", Value(int64_t(1))}});
  check_tensor(name, p1, 1, p[0]);
  check_tensor(name, p2, 2, p[1]);
  const int64_t r1 = in.tensor_dim(p[0]), r2 = in.tensor_dim(p[1]);
  if (r1 != ranks || r2 != (ranks == 2 && std::string_view(product) == "mv" ? 1 : ranks))
    fail("{}: expected {}{}D tensors, but got {}D and {}D tensors", name, std::string_view(product) == "mv" ? "2D and 1" : "",
         std::string_view(product) == "mv" ? "" : std::to_string(ranks), r1, r2);
  const DType ts = dtype_of(in, x), t1 = dtype_of(in, p[0]), t2 = dtype_of(in, p[1]);
  if (std::string_view(product) == "mm") {
    if (t1 != t2) fail("mat1 and mat2 must have the same dtype");
    if (ts != t2) fail("self and mat2 must have the same dtype");
  } else {
    for (DType t : {t1, t2})
      if (t != ts) fail("expected scalar type {} but found {}", dtype_torch_name(ts), dtype_torch_name(t));
  }
  if (std::string_view(product) == "mv") {
    const Value n = method(in, p[0], "size", {Value(int64_t(0))}), k = method(in, p[0], "size", {Value(int64_t(1))});
    const Value m = method(in, p[1], "size", {Value(int64_t(0))});
    const int64_t rs = in.tensor_dim(x);
    const Value s = rs == 0 ? Value(int64_t(1)) : method(in, x, "size", {Value(int64_t(0))});
    auto eq = [&](const Value& u, const Value& v) { return in.truth(in.compare(ast::CmpOp::Eq, u, v)); };
    if (rs > 1 || !eq(k, m) || !(eq(s, n) || eq(s, Value(int64_t(1)))))
      fail("size mismatch, got {}, {}x{},{}", to_repr(s), to_repr(n), to_repr(k), to_repr(m));
  }
  Value prod = method(in, p[0], std::string_view(product) == "mv" ? "matmul" : product, {p[1]});
  if (sum_batches) prod = method(in, prod, "sum", {Value(int64_t(0))});
  if (!in.truth(in.compare(ast::CmpOp::Eq, p[3], Value(int64_t(1))))) prod = method(in, prod, "mul", {p[3]});
  const Value self = method(in, x, "expand_as", {prod});  // (x must broadcast to the product)
  if (in.truth(in.compare(ast::CmpOp::Eq, p[2], Value(int64_t(0))))) return prod;
  return call_op(in, "add", &prod, {self}, {{"alpha", p[2]}});
}
Value addmm(Interpreter& in, const Value& x, CallArgs& a) { return add_product(in, x, a, "addmm", "mat1", "mat2", "mm", 2, false); }
Value addmv(Interpreter& in, const Value& x, CallArgs& a) { return add_product(in, x, a, "addmv", "mat", "vec", "mv", 2, false); }
Value baddbmm(Interpreter& in, const Value& x, CallArgs& a) { return add_product(in, x, a, "baddbmm", "batch1", "batch2", "bmm", 3, false); }
Value addbmm(Interpreter& in, const Value& x, CallArgs& a) { return add_product(in, x, a, "addbmm", "batch1", "batch2", "bmm", 3, true); }

// rot90(k=1, dims=[0, 1]): k quarter turns from dims[0] towards dims[1],
// flips and a transpose, as PyTorch composes them.
Value rot90(Interpreter& in, const Value& x, CallArgs& a) {
  std::vector<Value> p = bind("rot90", a, {{"k", Value(int64_t(1))}, {"dims", Value::list({Value(int64_t(0)), Value(int64_t(1))})}});
  if (!p[1].is(Type::List) && !p[1].is(Type::Tuple))
    fail(ErrorKind::TypeError, "rot90(): argument 'dims' must be tuple of ints, not {}", type_name(p[1]));
  const std::vector<Value>& dims = p[1].items();
  const int64_t rank = in.tensor_dim(x);
  if (dims.size() != 2) fail("expected total rotation dims == 2, but got dims = {}", dims.size());
  if (rank < 2) fail("expected total dims >= 2, but got total dims = {}", rank);
  const int64_t d0 = dims[0].as_int(), d1 = dims[1].as_int();
  if (d0 == d1 || (d0 - d1 == rank) || (d1 - d0 == rank))
    fail("expected rotation dims to be different, but got dim0 = {} and dim1 = {}", d0, d1);
  if (d0 >= rank || d0 < -rank) fail("Rotation dim0 out of range, dim0 = {}", d0);
  if (d1 >= rank || d1 < -rank) fail("Rotation dim1 out of range, dim1 = {}", d1);
  const int64_t k = ((p[0].as_int() % 4) + 4) % 4;
  switch (k) {
    case 1: return method(in, method(in, x, "flip", {Value::list({dims[1]})}), "transpose", {dims[0], dims[1]});
    case 2: return method(in, x, "flip", {p[1]});
    case 3: return method(in, method(in, x, "flip", {Value::list({dims[0]})}), "transpose", {dims[0], dims[1]});
    default: return method(in, x, "clone");
  }
}

// kron(other): every product x[i] * other[j] at i * other.shape + j: x
// and other (padded with leading 1s to one rank) interleaved, multiplied
// and merged.
Value kron(Interpreter& in, const Value& x, CallArgs& a) {
  Value y = check_tensor("kron", "other", 1, bind("kron", a, {{"other", std::nullopt}})[0]);
  std::vector<Value> xs = sizes_of(in, x), ys = sizes_of(in, y);
  const size_t rank = std::max(xs.size(), ys.size());
  xs.insert(xs.begin(), rank - xs.size(), Value(int64_t(1)));
  ys.insert(ys.begin(), rank - ys.size(), Value(int64_t(1)));
  std::vector<Value> xi, yi, out;
  for (size_t i = 0; i < rank; ++i) {
    xi.insert(xi.end(), {xs[i], Value(int64_t(1))});
    yi.insert(yi.end(), {Value(int64_t(1)), ys[i]});
    out.push_back(in.binary(ast::BinOp::Mul, xs[i], ys[i]));
  }
  Value prod = method(in, method(in, x, "reshape", {Value::tuple(xi)}), "mul", {method(in, y, "reshape", {Value::tuple(yi)})});
  return method(in, prod, "reshape", {Value::tuple(out)});
}

// cross(other, dim=None): the cross product of 3-vectors along dim (None:
// the first dim of size 3), x.roll(-1) * other.roll(1) - x.roll(1) *
// other.roll(-1) after broadcasting.
Value cross(Interpreter& in, const Value& x, CallArgs& a) {
  std::vector<Value> p = bind("cross", a, {{"other", std::nullopt}, {"dim", Value()}});
  const Value y = check_tensor("cross", "other", 2, p[0]);
  const int64_t rank = in.tensor_dim(x);
  if (rank != in.tensor_dim(y))
    fail("linalg.cross: inputs must have the same number of dimensions.");
  std::vector<Value> shape = broadcast_sizes(in, {sizes_of(in, x), sizes_of(in, y)});
  auto is3 = [&](const Value& s) { return in.truth(in.compare(ast::CmpOp::Eq, s, Value(int64_t(3)))); };
  int64_t d = -1;
  if (p[1].is_none()) {
    for (int64_t i = 0; i < rank && d < 0; ++i)
      if (is3(shape[size_t(i)])) d = i;
    if (d < 0) fail("no dimension of size 3 in input");
  } else {
    d = wrap_dim(p[1].as_int(), rank);
    Value sx = method(in, x, "size", {Value(d)}), sy = method(in, y, "size", {Value(d)});
    if (!is3(sx) || !is3(sy))
      fail("linalg.cross: inputs dimension {} must have length 3. Got {} and {}", d, to_repr(sx), to_repr(sy));
  }
  Value xe = method(in, x, "expand", {Value::tuple(shape)}), ye = method(in, y, "expand", {Value::tuple(shape)});
  auto rolled = [&](const Value& t, int64_t s) { return method(in, t, "roll", {Value(s), Value(d)}); };
  Value l = method(in, rolled(xe, -1), "mul", {rolled(ye, 1)});
  Value r = method(in, rolled(xe, 1), "mul", {rolled(ye, -1)});
  return method(in, l, "sub", {r});
}

constexpr Shorthand kShorthands[] = {
    {"addbmm", "(batch1, batch2, *, beta=1, alpha=1)", "bmm(batch1, batch2).sum(0) * alpha + x * beta", addbmm, true},
    {"addmm", "(mat1, mat2, *, beta=1, alpha=1)", "mm(mat1, mat2) * alpha + x * beta` (beta = 0: x left out", addmm, true},
    {"addmv", "(mat, vec, *, beta=1, alpha=1)", "mv(mat, vec) * alpha + x * beta", addmv, true},
    {"allclose", "(other, rtol=1e-05, atol=1e-08, equal_nan=False)", "isclose(x, other, ...).all().item()", allclose,
     true},
    {"aminmax", "(*, dim=None, keepdim=False)", "(x.amin(dim, keepdim), x.amax(dim, keepdim))` as `(min, max)", aminmax, true},
    {"baddbmm", "(batch1, batch2, *, beta=1, alpha=1)", "bmm(batch1, batch2) * alpha + x * beta", baddbmm, true},
    {"bernoulli", "(p=None)", "(rand(x.shape) < p).to(x.dtype)` (p None: `p = x", bernoulli, true},
    {"bernoulli_", "(p=0.5)", "x.copy_(rand(x.shape) < p)", bernoulli_},
    {"broadcast_to", "(size)", "x.expand(size)", broadcast_to, true},
    {"clamp_max", "(max)", "clamp(x, max=max)", clamp_max, true},
    {"clamp_max_", "(max)", "x.clamp_(max=max)", clamp_max_},
    {"clamp_min", "(min)", "clamp(x, min=min)", clamp_min, true},
    {"clamp_min_", "(min)", "x.clamp_(min=min)", clamp_min_},
    {"count_nonzero", "(dim=None)", "(x != 0).sum(dim)", count_nonzero, true},
    {"cpu", "()", "x.to(\"cpu\")", cpu},
    {"cross", "(other, dim=None)", "x.roll(-1, dim) * other.roll(1, dim) - x.roll(1, dim) * other.roll(-1, dim)` (broadcast; dim None: the first of size 3", cross, true},
    {"cuda", "(device=None)", "x.to(\"cuda\")` (`x.cuda(1)`: `x.to(\"cuda:1\")", cuda},
    {"deg2rad", "()", "x * (pi / 180)", deg2rad, true},
    {"detach", "()", "x.view(x.shape)", detach, true},
    {"diag", "(diagonal=0)", "x.diagonal(diagonal).clone()` (2-D); a 1-D x written on the diagonal of `zeros", diag, true},
    {"diff", "(n=1, dim=-1, prepend=None, append=None)", "x.narrow(dim, 1, len - 1) - x.narrow(dim, 0, len - 1)` (n times; bool: `logical_xor",
     diff, true},
    {"dot", "(tensor)", "matmul(x, tensor)", dot, true},
    {"element_size", "()", "x.dtype.itemsize", element_size},
    {"fliplr", "()", "x.flip(1)", fliplr, true},
    {"flipud", "()", "x.flip(0)", flipud, true},
    {"float_power", "(exponent)", "x.double() ** exponent` (a tensor exponent: `exponent.double()", float_power, true},
    {"is_floating_point", "()", "x.dtype.is_floating_point", is_floating_point, true},
    {"kron", "(other)", "(x.reshape(a, 1, b, 1) * other.reshape(1, c, 1, d)).reshape(a * c, b * d)` (any rank", kron, true},
    {"ldexp", "(other)", "x * pow(2.0, other)", ldexp, true},
    {"log_softmax", "(dim, dtype=None)", "nn.log_softmax(x, dim, dtype=dtype)", log_softmax, true},
    {"logit", "(eps=None)", "log(z / (1 - z))`, `z = x.clamp(eps, 1 - eps)", logit, true},
    {"mv", "(vec)", "matmul(x, vec)", mv, true},
    {"nan_to_num", "(nan=0.0, posinf=None, neginf=None)", "where(x.isnan(), nan, where(x.isposinf(), posinf, where(x.isneginf(), neginf, x)))` (infinities: the dtype's finite extremes", nan_to_num, true},
    {"nan_to_num_", "(nan=0.0, posinf=None, neginf=None)", "x.copy_(x.nan_to_num(...))", nan_to_num_},
    {"nanmean", "(dim=None, keepdim=False, *, dtype=None)", "x.nansum(...) / x.isnan().logical_not().sum(dim, keepdim)",
     nanmean, true},
    {"nansum", "(dim=None, keepdim=False, *, dtype=None)", "where(x.isnan(), 0, x).sum(dim, keepdim, dtype=dtype)",
     nansum, true},
    {"nelement", "()", "x.numel()", nelement},
    {"new_empty", "(size, *, dtype=None, device=None)", "empty(size, dtype=x.dtype, device=x.device)", new_empty},
    {"new_full", "(size, fill_value, *, dtype=None, device=None)", "full(size, fill_value, dtype=x.dtype, device=x.device)",
     new_full},
    {"new_ones", "(size, *, dtype=None, device=None)", "ones(size, dtype=x.dtype, device=x.device)", new_ones},
    {"new_tensor", "(data, *, dtype=None, device=None)", "tensor(data, dtype=x.dtype, device=x.device)", new_tensor},
    {"new_zeros", "(size, *, dtype=None, device=None)", "zeros(size, dtype=x.dtype, device=x.device)", new_zeros},
    {"norm", "(p=2, dim=None, keepdim=False)", "x.square().sum(dim).sqrt()` (p = 2, \"fro\"); `x.abs()` with `amax`, `amin`, "
     "`pow` for other p; p = 0: `(x != 0).sum(dim)", norm, true},
    {"normal_", "(mean=0, std=1)", "x.copy_(randn(x.shape) * std + mean)", normal_},
    {"positive", "()", "x", positive, true},
    {"rad2deg", "()", "x * (180 / pi)", rad2deg, true},
    {"ravel", "()", "x.reshape(-1)", ravel, true},
    {"repeat_interleave", "(repeats, dim=None, *, output_size=None)",
     "x.unsqueeze(dim + 1).expand(..., repeats, ...).flatten(dim, dim + 1)` (a copy); a tensor of repeats: `index_select",
     repeat_interleave, true},
    {"rot90", "(k=1, dims=[0, 1])", "x.flip(dims[1]).transpose(*dims)` (k = 1; k = 2: `x.flip(dims)`, 3: `x.flip(dims[0]).transpose(*dims)", rot90, true},
    {"softmax", "(dim, dtype=None)", "nn.softmax(x, dim, dtype=dtype)", softmax, true},
    {"take_along_dim", "(indices, dim=None)", "x.expand(...).gather(dim, indices.expand(...))` (without dim: of `x.reshape(-1)", take_along_dim, true},
    {"tile", "(dims)", "x.repeat(1, ..., *dims)", tile, true},
    {"trace", "()", "x.diagonal().sum()", trace, true},
    {"true_divide", "(other)", "x.div(other)", true_divide, true},
    {"true_divide_", "(other)", "x.div_(other)", true_divide_},
    {"type_as", "(other)", "x.to(other.dtype)", type_as},
    {"uniform_", "(from=0, to=1)", "x.copy_(rand(x.shape) * (to - from) + from)", uniform_},
    {"view_as", "(other)", "x.view(other.shape)", view_as},
};


}  // namespace


Value call_tensor_op(Interpreter& in, const char* name, const Value* self, std::vector<Value> args,
                     std::vector<std::pair<std::string, Value>> kwargs, bool inplace) {
  CallArgs c{std::move(args), std::move(kwargs)};
  return in.dispatch().call(op_named(name), self, c.args, c, inplace);
}

std::span<const Shorthand> tensor_shorthands() { return kShorthands; }

const Shorthand* find_shorthand(std::string_view name) {
  for (const Shorthand& s : kShorthands)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace thn
