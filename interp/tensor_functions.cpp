// Functions PyTorch composes from other ops that have no tensor receiver
// (broadcast_tensors, meshgrid, cartesian_prod, tensordot, var_mean,
// std_mean; einsum is interp/einsum.cpp): builtins made as the shorthands
// are (interp/shorthands.h), through the interpreter's dispatch.
#include <fmt/format.h>

#include "interp/einsum.h"
#include "interp/interpreter.h"
#include "interp/shorthand_args.h"
#include "interp/shorthands.h"
#include "runtime/error.h"
#include "runtime/op_registry.h"

namespace thn {

namespace {

using namespace shorthand;

// var_mean / std_mean(dim=None, unbiased=None, keepdim=False, *,
// correction=None): (var, mean) as a tuple, one call of each.
Value moments(Interpreter& in, const Value& x, CallArgs& a, const char* name, const char* spread) {
  std::vector<Value> p =
      bind(name, a, {{"dim", Value()}, {"unbiased", Value()}, {"keepdim", Value(false)}, {"correction", Value()}});
  if (p[0].is(Type::Bool) && p[1].is_none()) std::swap(p[0], p[1]);  // var_mean(x, False): the unbiased flag by position
  Value s = call_op(in, spread, &x, {}, {{"dim", p[0]}, {"unbiased", p[1]}, {"keepdim", p[2]}, {"correction", p[3]}});
  return Value::tuple({s, call_op(in, "mean", &x, {}, {{"dim", p[0]}, {"keepdim", p[2]}})});
}
Value receiver_first(std::string_view name, CallArgs& a) {
  if (a.args.empty()) fail(ErrorKind::TypeError, "{}() missing 1 required positional argument: 'input'", name);
  const Value self = check_tensor(name, "input", 1, a.args[0]);
  a.args.erase(a.args.begin());
  return self;
}
Value var_mean(Interpreter& in, CallArgs& a) { return moments(in, receiver_first("var_mean", a), a, "var_mean", "var"); }
Value std_mean(Interpreter& in, CallArgs& a) { return moments(in, receiver_first("std_mean", a), a, "std_mean", "std"); }

// ---- functions without a tensor receiver ----

// The tensors of f(*tensors) or f([tensors]).
std::vector<Value> tensor_list(std::string_view name, const CallArgs& a) {
  std::vector<Value> ts = a.args;
  if (ts.size() == 1 && (ts[0].is(Type::List) || ts[0].is(Type::Tuple))) ts = ts[0].items();
  for (size_t i = 0; i < ts.size(); ++i)
    if (!ts[i].is(Type::Tensor))
      fail(ErrorKind::TypeError, "{}(): expected Tensor as element {} in argument 0, but got {}", name, i, type_name(ts[i]));
  return ts;
}

// broadcast_tensors(*tensors): each expanded to the common shape (views).
Value broadcast_tensors(Interpreter& in, CallArgs& a) {
  only_keywords("broadcast_tensors", a, {});
  std::vector<Value> ts = tensor_list("broadcast_tensors", a);
  std::vector<std::vector<Value>> shapes;
  for (const Value& t : ts) shapes.push_back(sizes_of(in, t));
  Value shape = Value::tuple(broadcast_sizes(in, shapes));
  std::vector<Value> out;
  for (const Value& t : ts) out.push_back(method(in, t, "expand", {shape}));
  return Value::tuple(std::move(out));
}

// meshgrid(*tensors, indexing="ij"): tensor i (0-D or 1-D) viewed along
// dim i and expanded over the others; "xy" swaps the first two dims.
Value meshgrid(Interpreter& in, CallArgs& a) {
  only_keywords("meshgrid", a, {"indexing"});
  Value indexing = keyword(a, "indexing");
  const std::string mode = indexing.is_none() ? "ij" : indexing.as_str();
  if (mode != "ij" && mode != "xy")
    fail("torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {}", mode);
  std::vector<Value> ts = tensor_list("meshgrid", a);
  if (ts.empty()) fail("meshgrid expects a non-empty TensorList");
  for (const Value& t : ts) {
    const int64_t r = in.tensor_dim(t);
    if (r > 1) fail("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of {} dims", r);
    if (dtype_of(in, t) != dtype_of(in, ts[0])) fail("meshgrid expects all tensors to have the same dtype");
    if (!in.truth(in.compare(ast::CmpOp::Eq, in.getattr(t, "device"), in.getattr(ts[0], "device"))))
      fail("meshgrid expects all tensors to have the same device");
  }
  const bool swap = mode == "xy" && ts.size() >= 2;
  std::vector<size_t> order(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) order[i] = i;
  if (swap) std::swap(order[0], order[1]);
  std::vector<Value> shape;
  for (size_t i : order) shape.push_back(method(in, ts[i], "numel"));
  std::vector<Value> out(ts.size());
  for (size_t pos = 0; pos < ts.size(); ++pos) {
    const size_t i = order[pos];
    std::vector<Value> view(ts.size(), Value(int64_t(1)));
    view[pos] = Value(int64_t(-1));
    out[i] = method(in, method(in, ts[i], "view", {Value::tuple(view)}), "expand", {Value::tuple(shape)});
  }
  return Value::tuple(std::move(out));
}

// cartesian_prod(*tensors): the rows of every combination, meshgrid's
// grids flattened and stacked as columns (one tensor: itself).
Value cartesian_prod(Interpreter& in, CallArgs& a) {
  only_keywords("cartesian_prod", a, {});
  std::vector<Value> ts = tensor_list("cartesian_prod", a);
  for (const Value& t : ts)
    if (in.tensor_dim(t) != 1) fail("Expect a 1D vector, but got shape {}", to_repr(Value::list(sizes_of(in, t))));
  if (ts.size() == 1) return ts[0];
  CallArgs grid{ts, {{"indexing", Value::str("ij")}}};
  std::vector<Value> cols;
  const Value grids = meshgrid(in, grid);
  for (const Value& g : grids.items()) cols.push_back(method(in, g, "flatten"));
  return call_op(in, "stack", nullptr, {Value::list(std::move(cols)), Value(int64_t(1))}, {});
}

// tensordot(a, b, dims=2): the dims summed (the last `dims` of a with the
// first of b, or two lists of dims), as one matmul of a permuted and
// reshaped to (free, summed) and b to (summed, free).
Value tensordot(Interpreter& in, CallArgs& c) {
  std::vector<Value> p = bind("tensordot", c, {{"a", std::nullopt}, {"b", std::nullopt}, {"dims", Value(int64_t(2))}});
  const Value a = check_tensor("tensordot", "a", 1, p[0]), b = check_tensor("tensordot", "b", 2, p[1]);
  const int64_t ra = in.tensor_dim(a), rb = in.tensor_dim(b);
  std::vector<int64_t> da, db;
  if (p[2].is(Type::Int)) {
    const int64_t n = p[2].as_int();
    if (n < 0) fail("tensordot expects dims >= 0, but got dims={}", n);
    if (n > ra) wrap_dim(-n, ra);  // (PyTorch's IndexError)
    if (n > rb) wrap_dim(n - 1, rb);
    for (int64_t i = 0; i < n; ++i) {
      da.push_back(ra - n + i);
      db.push_back(i);
    }
  } else {
    if ((!p[2].is(Type::List) && !p[2].is(Type::Tuple)) || p[2].items().size() != 2)
      fail(ErrorKind::TypeError, "tensordot expects dims to be an int or a pair of lists of dims");
    auto dims_of = [&](const Value& v, int64_t rank) {
      std::vector<int64_t> out;
      if (v.is(Type::Int)) out.push_back(wrap_dim(v.as_int(), rank));
      else
        for (const Value& d : v.items()) out.push_back(wrap_dim(d.as_int(), rank));
      return out;
    };
    da = dims_of(p[2].items()[0], ra);
    db = dims_of(p[2].items()[1], rb);
    if (da.size() != db.size()) fail("both dimension lists should have same length");
  }
  std::vector<Value> sa = sizes_of(in, a), sb = sizes_of(in, b);
  for (size_t i = 0; i < da.size(); ++i)
    if (!in.truth(in.compare(ast::CmpOp::Eq, sa[size_t(da[i])], sb[size_t(db[i])])))
      fail("contracted dimensions need to match, but first has size {} in dim {} and second has size {} in dim {}",
           to_repr(sa[size_t(da[i])]), da[i], to_repr(sb[size_t(db[i])]), db[i]);
  // The permutation that puts the summed dims last (first for b); `free`
  // gets the sizes of the others.
  auto arrange = [&](const std::vector<Value>& sizes, const std::vector<int64_t>& summed, bool summed_first,
                     std::vector<Value>& free) {
    std::vector<Value> kept, gone;
    for (int64_t i = 0; i < int64_t(sizes.size()); ++i) {
      const auto n = std::count(summed.begin(), summed.end(), i);
      if (n > 1) fail("dim {} appears multiple times in the list of dims", i);
      if (n == 1) continue;
      kept.push_back(Value(i));
      free.push_back(sizes[size_t(i)]);
    }
    for (int64_t d : summed) gone.push_back(Value(d));
    std::vector<Value>& perm = summed_first ? gone : kept;
    const std::vector<Value>& rest = summed_first ? kept : gone;
    perm.insert(perm.end(), rest.begin(), rest.end());
    return perm;
  };
  std::vector<Value> fa, fb;
  std::vector<Value> pa = arrange(sa, da, false, fa), pb = arrange(sb, db, true, fb);
  Value k(int64_t(1));
  for (int64_t d : da) k = in.binary(ast::BinOp::Mul, k, sa[size_t(d)]);
  Value ma = method(in, method(in, a, "permute", {Value::tuple(pa)}), "reshape",
                    {Value::tuple({product(in, fa, 0, fa.size()), k})});
  Value mb = method(in, method(in, b, "permute", {Value::tuple(pb)}), "reshape",
                    {Value::tuple({k, product(in, fb, 0, fb.size())})});
  std::vector<Value> out = fa;
  out.insert(out.end(), fb.begin(), fb.end());
  return method(in, method(in, ma, "mm", {mb}), "reshape", {Value::tuple(out)});
}

constexpr TensorFunction kFunctions[] = {
    {"broadcast_tensors", "(*tensors)", "tuple(t.expand(shape) for t in tensors)` (shape: their broadcast", broadcast_tensors},
    {"cartesian_prod", "(*tensors)", "stack([g.flatten() for g in meshgrid(*tensors)], 1)", cartesian_prod},
    {"einsum", "(equation, *operands)",
     "diagonal`, `sum`, `permute`, `expand`, `reshape` and one batched `matmul` per pair of operands (PyTorch's "
     "equation language: `->` or the implicit output, `...`, repeated subscripts as diagonals; `interp/einsum.cpp`",
     einsum},
    {"meshgrid", "(*tensors, indexing=\"ij\")", "t.view(1, .., -1, .., 1).expand(shape)` for each t (\"xy\": the first two swapped", meshgrid},
    {"std_mean", "(input, dim=None, unbiased=None, keepdim=False, *, correction=None)", "(input.std(...), input.mean(dim, keepdim))", std_mean},
    {"tensordot", "(a, b, dims=2)", "mm(a.permute(...).reshape(m, k), b.permute(...).reshape(k, n)).reshape(...)", tensordot},
    {"var_mean", "(input, dim=None, unbiased=None, keepdim=False, *, correction=None)", "(input.var(...), input.mean(dim, keepdim))", var_mean},
};

}  // namespace

std::span<const TensorFunction> tensor_functions() { return kFunctions; }

}  // namespace thn
