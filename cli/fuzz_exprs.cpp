// The expressions of `thn fuzz`'s programs: each returns the value's type
// with its text as name (cli/fuzz_generator.h).
#include "cli/fuzz_generator.h"

namespace thn::fuzzgen {

std::optional<Var> Generator::unary() {
  const Var* x = any();
  if (!x) return std::nullopt;
  Var v = new_value_like(*x);
  if (is_float(x->dt)) {
    std::string op = r_.pick(std::vector<std::string>{"sin", "cos", "tanh", "sigmoid", "relu", "abs", "neg", "atan",
                                                      "exp", "square", "sqrt", "log", "rsqrt", "erf", "erfc", "sinc", "lgamma",
                                                      "nn"});
    if (op == "exp") v.name = fmt::format("{}.tanh().exp()", x->name);
    // (on |x| + 1: in their domain, away from their poles)
    else if (op == "sqrt" || op == "log" || op == "rsqrt" || op == "lgamma") v.name = fmt::format("({}.abs() + 1).{}()", x->name, op);
    else if (op == "nn")  // the standard library's activations, written in thn
      v.name = fmt::format("nn.{}({})", r_.pick(std::vector<std::string>{"gelu", "silu", "relu", "leaky_relu", "softplus"}), x->name);
    else if (r_.chance(0.5)) v.name = fmt::format("{}({})", op, x->name);
    else v.name = fmt::format("{}.{}()", x->name, op);
    if (r_.chance(0.15)) v.name = "-" + x->name;
  } else if (is_int(x->dt)) {
    int k = r_.below(4);
    v.name = k == 0 ? "-" + x->name : k == 1 ? fmt::format("{}.abs()", x->name) : k == 2 ? "~" + x->name
                                                                                    : fmt::format("{}.sin()", x->name);
    if (k == 3) v.dt = DT::F32;
  } else {
    v.name = r_.chance(0.5) ? "~" + x->name : fmt::format("logical_not({})", x->name);
  }
  return v;
}

std::optional<Var> Generator::binary() {
  const Var* x = any();
  if (!x) return std::nullopt;
  const Var* y = pick([&](const Var& v) { return broadcast(x->shape, v.shape).has_value(); });
  Var v;
  v.shape = *broadcast(x->shape, y->shape);
  DT both = promote({tensor_operand(*x), tensor_operand(*y)});
  bool any_bool = x->dt == DT::Bool || y->dt == DT::Bool;
  int k = r_.below(9);
  if (k == 0 && !any_bool) {
    v.name = fmt::format("{} - {}", x->name, y->name);
    v.dt = both;
  } else if (k <= 2) {
    v.name = fmt::format(fmt::runtime(r_.chance(0.5) ? "{} + {}" : "{} * {}"), x->name, y->name);
    v.dt = both;
    if (r_.chance(0.2) && !any_bool) v.name = fmt::format("add({}, {}, alpha=2)", x->name, y->name);
  } else if (k == 3 && !any_bool) {
    v.name = fmt::format(fmt::runtime(r_.chance(0.5) ? "maximum({}, {})" : "minimum({}, {})"), x->name, y->name);
    v.dt = both;
    if (is_float(both) && r_.chance(0.4))  // the float-only binary functions
      v.name = fmt::format("{}({}, {})", r_.pick(std::vector<std::string>{"hypot", "logaddexp", "atan2"}), x->name,
                           y->name);
  } else if (k == 4 && y->dt != DT::Bool) {
    // Divides by |y| + 1 >= 1: rounding differences stay small.
    v.name = fmt::format("{} / ({}.abs() + 1)", x->name, y->name);
    v.dt = promote({tensor_operand(*x), tensor_operand(*y), number_operand(false)});
    if (!is_float(v.dt)) v.dt = DT::F32;
    if (x->dt != DT::Bool && r_.chance(0.3)) {  // remainders (the divisor again >= 1)
      v.name = fmt::format(fmt::runtime(r_.chance(0.5) ? "{}.fmod({}.abs() + 1)" : "remainder({}, {}.abs() + 1)"),
                           x->name, y->name);
      v.dt = promote({tensor_operand(*x), tensor_operand(*y), number_operand(false)});
    }
  } else if (k == 5) {
    v.name = fmt::format("{} {} {}", x->name, r_.pick(std::vector<std::string>{">", "<=", "==", "!="}), y->name);
    if (x->dt == y->dt && r_.chance(0.2))  // isclose: one dtype
      v.name = fmt::format("isclose({}, {}{})", x->name, y->name,
                           r_.pick(std::vector<std::string>{"", ", rtol=0.5", ", atol=1, equal_nan=True"}));
    v.dt = DT::Bool;
  } else if (k == 6 && !is_float(x->dt) && !is_float(y->dt)) {
    std::vector<std::string> ops{"&", "|", "^"};
    if (!any_bool) ops.insert(ops.end(), {"<<", ">>"});  // (any count: a left shift's wraps at the width)
    v.name = fmt::format("{} {} {}", x->name, r_.pick(ops), y->name);
    v.dt = both;
  } else if (k == 7) {
    const Var* c = pick([&](const Var& c) { return c.dt == DT::Bool && broadcast(v.shape, c.shape); });
    if (!c) return std::nullopt;
    v.shape = *broadcast(v.shape, c->shape);
    v.name = fmt::format("where({}, {}, {})", c->name, x->name, y->name);
    v.dt = both;
  } else if (k == 8 && is_float(x->dt) && x->shape.size() == 2) {
    const Var* m = pick([&](const Var& m) { return m.dt == x->dt && m.shape.size() == 2 && m.shape[0] == x->shape[1]; });
    if (!m) return std::nullopt;
    v.shape = {x->shape[0], m->shape[1]};
    v.name = fmt::format(fmt::runtime(r_.chance(0.5) ? "{} @ {}" : "matmul({}, {})"), x->name, m->name);
    v.dt = x->dt;
  } else {
    return std::nullopt;
  }
  return v;
}

std::optional<Var> Generator::with_number() {
  const Var* x = any();
  if (!x) return std::nullopt;
  Var v = new_value_like(*x);
  int k = r_.below(6);
  if (k <= 2) {
    auto [num, flt] = number();
    if (k == 2 && !x->shape.empty()) {
      num = fmt::format("{}.shape[{}]", x->name, dim(*x));
      flt = false;
    }
    std::string op = x->dt == DT::Bool && k == 0 ? "*" : r_.pick(std::vector<std::string>{"+", "*", "-"});
    if (x->dt == DT::Bool && op == "-") op = "+";
    v.name = r_.chance(0.3) && num != "n" && num != "s" ? fmt::format("{} {} {}", num, op, x->name)
                                                         : fmt::format("{} {} {}", x->name, op, num);
    v.dt = promote({tensor_operand(*x), number_operand(flt)});
  } else if (k == 3 && x->dt != DT::Bool) {
    v.name = fmt::format("{} ** 2", x->name);
  } else if (k == 4 && is_int(x->dt)) {
    v.name = fmt::format(fmt::runtime(r_.chance(0.5) ? "{} % 3" : "{} // 2"), x->name);
  } else if (k == 4 && is_float(x->dt)) {
    v.name = fmt::format("{}.clamp(min=-0.5, max=0.5)", x->name);
  } else if (k == 5 && x->dt != DT::Bool) {
    v.name = fmt::format("{}.masked_fill({} > 0, {})", x->name, x->name, is_float(x->dt) ? "0.25" : "7");
  } else {
    return std::nullopt;
  }
  return v;
}

std::optional<Var> Generator::reduction() {
  const Var* x = pick([](const Var& v) { return !v.shape.empty(); });
  if (!x) return std::nullopt;
  Var v = new_value_like(*x);
  int d = dim(*x);
  bool keep = r_.chance(0.3);
  std::string op;
  if (is_float(x->dt))
    // (argmax of floats could flip on a near tie after a reduction that
    // rounds differently when compiled: integers only)
    op = r_.pick(std::vector<std::string>{"sum", "mean", "amax", "amin", "logsumexp", "cumsum", "var", "std",
                                          "softmax", "log_softmax", "layer_norm", "sort", "topk", "cumprod",
                                          "logcumsumexp", "cummax", "cummin"});
  else if (is_int(x->dt))
    op = r_.pick(std::vector<std::string>{"sum", "amax", "amin", "cumsum", "argmax", "argmin", "sort", "argsort", "topk",
                                          "cumprod", "cummax", "cummin"});
  else op = r_.pick(std::vector<std::string>{"any", "all", "sum"});
  if (op == "sum" || op == "cumsum" || op == "cumprod") v.dt = is_float(x->dt) ? x->dt : DT::I64;
  if (op == "argmax" || op == "argmin") v.dt = DT::I64;
  // var/std: the divisor's three spellings (the default is unbiased).
  std::string extra;
  if ((op == "var" || op == "std") && r_.chance(0.5)) extra = r_.chance(0.5) ? ", correction=0" : ", unbiased=False";
  // The scans keep the shape. Products of floats in (0, 2): no overflow;
  // of integers: wrapping alike everywhere. cummax/cummin's indices of
  // integers only (floats computed in another order could swap near ties).
  if (op == "cumsum" || op == "logcumsumexp") {
    v.name = fmt::format("{}.{}({})", x->name, op, dim_text(*x, d));
    return v;
  }
  if (op == "cumprod") {
    v.name = fmt::format(fmt::runtime(is_float(x->dt) ? "({}.tanh() + 1).cumprod({})" : "{}.cumprod({})"), x->name,
                         dim_text(*x, d));
    return v;
  }
  if (op == "cummax" || op == "cummin") {
    const bool indices = is_int(x->dt) && r_.chance(0.5);
    if (indices) v.dt = DT::I64;
    v.name = fmt::format("{}.{}({}).{}", x->name, op, dim_text(*x, d), indices ? "indices" : "values");
    return v;
  }
  // The runtime's sort between fusions: values (indices of integers only:
  // floats computed in another order could swap near ties), the largest
  // or smallest along d.
  if (op == "sort" || op == "argsort") {
    const bool descending = r_.chance(0.5), indices = op == "argsort" || (is_int(x->dt) && r_.chance(0.5));
    if (indices) v.dt = DT::I64;
    v.name = fmt::format("{}.{}({}{}){}", x->name, op, dim_text(*x, d), descending ? ", descending=True" : "",
                         op == "argsort" ? "" : indices ? ".indices" : ".values");
    return v;
  }
  if (op == "topk") {
    const bool indices = is_int(x->dt) && r_.chance(0.5);
    v.name = fmt::format("{}.topk(1, {}{}).{}", x->name, dim_text(*x, d), r_.chance(0.5) ? ", largest=False" : "",
                         indices ? "indices" : "values");
    if (indices) v.dt = DT::I64;
    v.shape[size_t(d)] = kOne;
    return v;
  }
  // The standard library's reductions with elementwise consumers (nn.thn):
  // fusion's main case. Same shape and dtype.
  if (op == "softmax" || op == "log_softmax") {
    v.name = fmt::format("nn.{}({}, {})", op, x->name, dim_text(*x, d));
    return v;
  }
  if (op == "layer_norm") {
    v.name = fmt::format("nn.layer_norm({}, ({}.shape[-1],))", x->name, x->name);
    return v;
  }
  if (r_.chance(0.15) && op != "logsumexp") {  // every dim
    v.name = extra.empty() ? fmt::format("{}.{}()", x->name, op) : fmt::format("{}.{}(None{})", x->name, op, extra);
    v.shape.clear();
    return v;
  }
  v.name = fmt::format("{}.{}({}{}{})", x->name, op, dim_text(*x, d), extra, keep ? ", keepdim=True" : "");
  if (keep) v.shape[size_t(d)] = kOne;
  else v.shape.erase(v.shape.begin() + d);
  return v;
}

std::optional<Var> Generator::more_ops() {
  const Var* x = any();
  if (!x) return std::nullopt;
  const int k = r_.below(4);
  return k == 0 ? more_unary(*x) : k == 1 ? more_binary(*x) : k == 2 ? more_reduction() : product(*x);
}

std::optional<Var> Generator::more_unary(const Var& x) {
  Var v = new_value_like(x);
  if (is_float(x.dt)) {
    // (each on arguments in its domain; rounding to integers only of inputs:
    // on a computed value a near tie could round apart between the paths)
    std::vector<std::string> ops{"sinh", "cosh", "asinh", "expm1", "tan", "exp2", "log1p", "log2", "log10",
                                 "reciprocal", "acos", "atanh", "logit", "deg2rad", "nan_to_num", "isfinite",
                                 "isnan", "signbit", "isposinf"};
    if (x.input) ops.insert(ops.end(), {"floor", "ceil", "round", "trunc", "frac", "sign"});
    const std::string op = r_.pick(ops);
    std::string arg = x.name;
    if (op == "tan" || op == "exp2" || op == "acos" || op == "atanh") arg = fmt::format("({}.tanh() * 0.9)", x.name);
    else if (op == "log1p" || op == "log2" || op == "log10" || op == "reciprocal")
      arg = fmt::format("({}.abs() + 1)", x.name);
    else if (op == "logit") arg = fmt::format("({}.sigmoid() * 0.8 + 0.1)", x.name);
    v.name = r_.chance(0.5) ? fmt::format("{}({})", op, arg) : fmt::format("{}.{}()", arg, op);
    if (op == "nan_to_num" && r_.chance(0.5)) v.name = fmt::format("{}.nan_to_num(0.5, posinf=2.0)", arg);
    if (op.starts_with("is") || op == "signbit") v.dt = DT::Bool;
  } else if (is_int(x.dt)) {
    const int k = r_.below(3);
    v.name = k == 0 ? fmt::format("{}.sign()", x.name) : k == 1 ? fmt::format("bitwise_not({})", x.name)
                                                                : fmt::format("{}.clamp_min(-1).clamp_max(2)", x.name);
  } else {
    v.name = fmt::format("bitwise_not({})", x.name);
  }
  return v;
}

std::optional<Var> Generator::more_binary(const Var& x) {
  const Var* y = pick([&](const Var& v) { return broadcast(x.shape, v.shape).has_value(); });
  Var v;
  v.shape = *broadcast(x.shape, y->shape);
  v.dt = promote({tensor_operand(x), tensor_operand(*y)});
  if (is_float(x.dt) && is_float(y->dt)) {
    // (nextafter, heaviside and lerp take one dtype; nextafter no float16)
    std::vector<std::string> ops{"copysign", "xlogy", "logaddexp2", "addcmul", "addcdiv"};
    if (x.dt == y->dt) ops.insert(ops.end(), {"heaviside", "lerp"});
    if (x.dt == y->dt && x.dt != DT::F16) ops.push_back("nextafter");
    const std::string op = r_.pick(ops);
    if (op == "xlogy") v.name = fmt::format("xlogy({}, {}.abs())", x.name, y->name);
    else if (op == "addcmul") v.name = fmt::format("{0}.addcmul({1}, {1}, value=0.5)", x.name, y->name);
    else if (op == "addcdiv") v.name = fmt::format("addcdiv({}, {}, {}.abs() + 1, value=2)", x.name, y->name, y->name);
    else if (op == "lerp") v.name = fmt::format("{}.lerp({}, 0.25)", x.name, y->name);
    else v.name = fmt::format(fmt::runtime(r_.chance(0.5) ? "{0}({1}, {2})" : "{1}.{0}({2})"), op, x.name, y->name);
  } else if (is_int(x.dt) && is_int(y->dt)) {
    v.name = fmt::format(fmt::runtime(r_.chance(0.5) ? "floor_divide({}, {}.abs() + 1)" : "{}.bitwise_xor({})"),
                         x.name, y->name);
  } else {
    v.name = fmt::format("{}.eq({})", x.name, y->name);
    v.dt = DT::Bool;
  }
  return v;
}

std::optional<Var> Generator::more_reduction() {
  const Var* x = pick([](const Var& v) { return !v.shape.empty(); });
  if (!x) return std::nullopt;
  Var v = new_value_like(*x);
  const int d = dim(*x);
  const std::string dt = dim_text(*x, d);
  const bool keep = r_.chance(0.3);
  std::string op = is_float(x->dt) ? r_.pick(std::vector<std::string>{"prod", "nansum", "nanmean", "norm", "var_mean",
                                                                     "std_mean", "aminmax", "count_nonzero"})
                   : is_int(x->dt) ? r_.pick(std::vector<std::string>{"prod", "aminmax", "count_nonzero"})
                                   : std::string("count_nonzero");
  const std::string kd = keep ? ", keepdim=True" : "";
  if (op == "prod") {  // (of floats in (0, 2): no overflow; of integers: wrapping alike)
    v.name = fmt::format(fmt::runtime(is_float(x->dt) ? "({}.tanh() + 1).prod({}{})" : "{}.prod({}{})"), x->name, dt, kd);
    if (!is_float(x->dt)) v.dt = DT::I64;
  } else if (op == "norm") {
    v.name = fmt::format("{}.norm({}, {}{})", x->name, r_.pick(std::vector<std::string>{"2", "1", "math.inf"}), dt, kd);
  } else if (op == "var_mean" || op == "std_mean") {
    v.name = fmt::format("{}({}, {}{})[{}]", op, x->name, dt, kd, r_.below(2));
  } else if (op == "aminmax") {
    v.name = fmt::format("{}.aminmax(dim={}{}).{}", x->name, dt, kd, r_.chance(0.5) ? "min" : "max");
  } else if (op == "count_nonzero") {
    v.name = fmt::format("count_nonzero({}, {})", x->name, dt);
    v.dt = DT::I64;
  } else {
    v.name = fmt::format("{}.{}({}{})", x->name, op, dt, kd);
  }
  if (keep && op != "count_nonzero") v.shape[size_t(d)] = kOne;
  else v.shape.erase(v.shape.begin() + d);
  return v;
}

std::optional<Var> Generator::product(const Var& x) {
  if (!is_float(x.dt)) return std::nullopt;
  Var v = new_value_like(x);
  const size_t rank = x.shape.size();
  if (rank == 1) {
    if (r_.chance(0.5)) {
      v.name = fmt::format("dot({0}, {0})", x.name);
      v.shape.clear();
    } else {
      v.name = fmt::format("outer({0}, {0}.flip(0))", x.name);
      v.shape = {x.shape[0], x.shape[0]};
    }
  } else if (rank == 2) {
    const int k = r_.below(3);
    v.name = k == 0 ? fmt::format("mm({0}, {0}.t())", x.name) : k == 1 ? fmt::format("linear({0}, {0})", x.name)
                                                                       : fmt::format("mv({0}, {0}[0])", x.name);
    v.shape = k < 2 ? Shape{x.shape[0], x.shape[0]} : Shape{x.shape[0]};
  } else if (rank == 3) {
    v.name = fmt::format("bmm({0}, {0}.transpose(1, 2))", x.name);
    v.shape = {x.shape[0], x.shape[1], x.shape[1]};
  } else {
    return std::nullopt;
  }
  return v;
}

std::optional<Var> Generator::view() {
  const Var* x = any();
  if (!x) return std::nullopt;
  Var v = *x;
  int rank = int(x->shape.size());
  int k = r_.below(12);
  if (k == 0 && rank >= 1) {  // select
    int d = dim(*x);
    if (d == 0) v.name = fmt::format("{}[{}]", x->name, r_.chance(0.5) ? "0" : "-1");
    else if (d == 1) v.name = fmt::format("{}[:, 0]", x->name);
    else v.name = fmt::format("{}.select({}, {})", x->name, dim_text(*x, d), r_.chance(0.5) ? "0" : "-1");
    v.shape.erase(v.shape.begin() + d);
  } else if (k == 1 && rank >= 1) {  // slice
    int d = dim(*x);
    std::string range = r_.pick(std::vector<std::string>{"1:", "::2", ":2", "-2:"});
    v.name = d == 0 ? fmt::format("{}[{}]", x->name, range) : d == 1 ? fmt::format("{}[:, {}]", x->name, range)
                                                                   : fmt::format("{}[..., {}]", x->name, range);
    if (d > 1) d = rank - 1;
    v.shape[size_t(d)] = new_size();
  } else if (k == 2 && rank >= 1) {
    int d = dim(*x);
    v.name = fmt::format("{}.narrow({}, {}, 1)", x->name, dim_text(*x, d), r_.chance(0.5) ? "0" : "-1");
    v.shape[size_t(d)] = kOne;
  } else if (k == 3 && rank >= 2) {
    if (rank == 2 && r_.chance(0.5)) {
      v.name = fmt::format(fmt::runtime(r_.chance(0.5) ? "{}.t()" : "{}.T"), x->name);
      std::swap(v.shape[0], v.shape[1]);
    } else {
      int a = dim(*x), b = dim(*x);
      v.name = fmt::format("{}.transpose({}, {})", x->name, a, b);
      std::swap(v.shape[size_t(a)], v.shape[size_t(b)]);
    }
  } else if (k == 4 && rank >= 2) {
    std::vector<int> perm(static_cast<size_t>(rank));
    for (int i = 0; i < rank; ++i) perm[size_t(i)] = i;
    for (int i = rank - 1; i > 0; --i) std::swap(perm[size_t(i)], perm[size_t(r_.below(i + 1))]);
    v.name = fmt::format("{}.permute({})", x->name, fmt::join(perm, ", "));
    for (int i = 0; i < rank; ++i) v.shape[size_t(i)] = x->shape[size_t(perm[size_t(i)])];
  } else if (k == 5) {
    int d = r_.below(rank + 1);
    if (d == 0 && r_.chance(0.3)) v.name = fmt::format("{}[None]", x->name);
    else v.name = fmt::format("{}.unsqueeze({})", x->name, d);
    v.shape.insert(v.shape.begin() + d, kOne);
  } else if (k == 6 && std::count(x->shape.begin(), x->shape.end(), kOne) > 0) {
    int d = int(std::find(x->shape.begin(), x->shape.end(), kOne) - x->shape.begin());
    v.name = fmt::format("{}.squeeze({})", x->name, d);
    v.shape.erase(v.shape.begin() + d);
  } else if (k == 7) {
    const Var* y = pick([&](const Var& y) { return y.shape.size() >= x->shape.size() && fits(x->shape, y.shape); });
    if (!y || y->shape == x->shape) return std::nullopt;
    v.name = fmt::format("{}.expand_as({})", x->name, y->name);
    v.shape = y->shape;
    v.writable = false;
  } else if (k == 8) {
    // A view when the strides allow, else a copy: writes through it may or
    // may not reach the base, exactly as in PyTorch.
    v.name = fmt::format("{}.{}", x->name, r_.pick(std::vector<std::string>{"reshape(-1)", "flatten()", "reshape(-1)"}));
    v.shape = {rank == 0 ? kOne : rank == 1 ? x->shape[0] : new_size()};
    v.writable = x->writable && rank <= 1;
  } else if (k == 9 && rank >= 1) {
    int d = dim(*x);
    v.name = fmt::format("{}.unflatten({}, (1, -1))", x->name, d);
    v.shape.insert(v.shape.begin() + d, kOne);
  } else if (k == 10 && rank >= 1) {
    int d = dim(*x), c = r_.below(3);
    v.name = c == 0 ? fmt::format("{}.chunk(2, {})[0]", x->name, d)
             : c == 1 ? fmt::format("{}.split(1, {})[-1]", x->name, d)
                      : fmt::format("{}.unbind({})[0]", x->name, d);
    if (c == 0) v.shape[size_t(d)] = new_size();
    else if (c == 1) v.shape[size_t(d)] = kOne;
    else v.shape.erase(v.shape.begin() + d);
  } else if (k == 11 && rank >= 2) {
    v.name = fmt::format("{}.diagonal()", x->name);
    v.shape.erase(v.shape.begin(), v.shape.begin() + 2);
    v.shape.push_back(new_size());
  } else {
    return std::nullopt;
  }
  return v;
}

std::optional<Var> Generator::copy() {
  const Var* x = any();
  if (!x) return std::nullopt;
  Var v = new_value_like(*x);
  int rank = int(x->shape.size());
  int k = r_.below(9);
  if (k == 0) {
    v.name = fmt::format(fmt::runtime(r_.chance(0.5) ? "{}.clone()" : "{}.contiguous()"), x->name);
  } else if (k == 1 && rank >= 1) {
    int d = dim(*x);
    v.name = fmt::format(fmt::runtime(r_.chance(0.5) ? "{}.flip({})" : "{}.roll(1, {})"), x->name, d);
  } else if (k == 2 && rank >= 1) {
    const Var* y = pick([&](const Var& y) { return y.shape == x->shape && y.dt == x->dt; });
    int d = dim(*x);
    v.name = fmt::format("cat([{}, {}], {})", x->name, y->name, d);
    v.shape[size_t(d)] = new_size();
  } else if (k == 3) {
    const Var* y = pick([&](const Var& y) { return y.shape == x->shape && y.dt == x->dt; });
    v.name = fmt::format("stack([{}, {}])", x->name, y->name);
    v.shape.insert(v.shape.begin(), new_size());
  } else if (k == 4) {
    v.dt = r_.pick(std::vector<DT>{DT::F64, DT::F32, DT::F32, DT::F16, DT::BF16});
    v.name = fmt::format("{}.{}()", x->name, v.dt == DT::F64 ? "double" : v.dt == DT::F32 ? "float"
                                             : v.dt == DT::F16 ? "half" : "bfloat16");
    if (r_.chance(0.3)) v.name = fmt::format("{}.to({})", x->name, dt_name(v.dt));
  } else if (k == 5 && !is_float(x->dt)) {
    v.dt = r_.chance(0.5) ? DT::I64 : DT::I32;
    v.name = fmt::format(fmt::runtime(v.dt == DT::I64 ? "{}.long()" : "{}.int()"), x->name);
  } else if (k == 6 && rank == 2) {
    v.name = fmt::format(fmt::runtime(r_.chance(0.5) ? "{}.tril()" : "{}.triu(1)"), x->name);
  } else if (k == 7 && rank >= 1) {  // each slice twice in a row (a tensor of counts is data: not under jit)
    int d = dim(*x);
    v.name = fmt::format("{}.repeat_interleave(2, dim={})", x->name, d);
    v.shape[size_t(d)] = new_size();
  } else if (k == 8 && rank == 2 && is_float(x->dt)) {  // einsum: a transpose, a product with itself
    v.name = fmt::format("einsum(\"ij->ji\", {})", x->name);
    std::swap(v.shape[0], v.shape[1]);
    v.root = x->root;  // (a permutation is a view)
    v.input = x->input;
    v.writable = x->writable;
    if (r_.chance(0.5)) {
      v = new_value_like(*x);
      v.name = fmt::format("einsum(\"ij,kj->ik\", {0}, {0})", x->name);
      v.shape[1] = v.shape[0];
    }
  } else {
    return std::nullopt;
  }
  // contiguous() of a contiguous tensor and a conversion to its own dtype
  // return the tensor itself: the storage (and expansion) stays x's.
  if (k == 0 ? v.name.find(".contiguous()") != std::string::npos : (k == 4 || k == 5) && v.dt == x->dt) {
    v.root = x->root;
    v.input = x->input;
    if (k != 0) v.writable = x->writable;
  }
  return v;
}

std::string Generator::index_along(const Var& x, int d, bool distinct, bool negative) {
  std::string n = fmt::format("{}.shape[{}]", x.name, d), on = cuda_ ? ", device=\"cuda\"" : "";
  if (negative && r_.chance(0.3)) return fmt::format("(arange({0}{1}) - {0})", n, on);
  if (distinct || r_.chance(0.5)) return fmt::format("arange({}{}).flip(0)", n, on);
  return fmt::format("(arange({}{}) // 2)", n, on);
}

std::optional<Var> Generator::gathered() {
  const Var* x = pick([](const Var& v) { return !v.shape.empty(); });
  if (!x) return std::nullopt;
  Var v = new_value_like(*x);
  int d = dim(*x);
  if (d <= 1 && r_.chance(0.3)) {  // indexing with a tensor
    std::string index = index_along(*x, d, false, true);
    if (r_.chance(0.3)) {  // a 2-D index: its sizes replace dim d
      index = fmt::format("({}).unsqueeze(0)", index);
      v.shape.insert(v.shape.begin() + d, kOne);
    }
    v.name = subscript(*x, d, index);
    return v;
  }
  std::string index = index_along(*x, d, false);
  if (r_.chance(0.5)) {
    if (r_.chance(0.3)) {  // every other position: a shorter index
      index += "[::2]";
      v.shape[size_t(d)] = new_size();
    }
    v.name = fmt::format(fmt::runtime(r_.chance(0.5) ? "{}.index_select({}, {})" : "index_select({}, {}, {})"),
                         x->name, dim_text(*x, d), index);
    return v;
  }
  // gather: the index laid along dim d, broadcast (stride 0) over the others.
  // (a size-1 index over the other dims is larger than a size-0 one)
  const bool expand = r_.chance(0.5) || zero_sizes_;
  index = laid_along(*x, d, index, expand);
  if (!expand)
    for (size_t i = 0; i < v.shape.size(); ++i)
      if (int(i) != d) v.shape[i] = kOne;
  v.name = fmt::format("{}.gather({}, {})", x->name, dim_text(*x, d), index);
  return v;
}

std::string Generator::laid_along(const Var& x, int d, const std::string& index, bool expand) {
  std::vector<std::string> view(x.shape.size(), "1");
  view[size_t(d)] = "-1";
  std::string out = fmt::format("{}.reshape({}{})", index, join(view), view.size() == 1 ? "," : "");
  return expand ? out + fmt::format(".expand_as({})", x.name) : out;
}

std::optional<Var> Generator::sized_by_n() {
  const Var* x = any();
  if (!x || !has_n_) return std::nullopt;
  Var v = new_value_like(*x);
  v.name = fmt::format("(zeros((n % 3 + 1,) + tuple({0}.shape), dtype={1}) + {0})", x->name, dt_name(x->dt));
  v.shape.insert(v.shape.begin(), new_size());
  return v;
}

std::optional<Var> Generator::value() {
  for (int attempt = 0; attempt < 20; ++attempt) {
    int k = r_.below(20);
    std::optional<Var> v = k < 3 ? unary() : k < 7 ? binary() : k < 9 ? with_number() : k < 11 ? reduction()
                           : k < 14                                 ? view()
                           : k < 16                                 ? copy()
                           : k < 17                                 ? gathered()
                           : k < 18                                 ? sized_by_n()
                                                                    : more_ops();
    if (v) return v;
  }
  return std::nullopt;
}

}  // namespace thn::fuzzgen
