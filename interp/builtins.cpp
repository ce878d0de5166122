// The builtins of LANGUAGE.md, the tensor API (every function of the op
// table) and the built-in modules `math`, `time` and `cuda`.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "frontend/unicode.h"
#include "interp/interpreter.h"
#include "interp/objects.h"
#include "interp/shorthands.h"
#include "runtime/cuda.h"
#include "runtime/op_registry.h"

namespace thn {

namespace {

using ast::BinOp;

void no_kwargs(const char* name, const CallArgs& a) {
  if (!a.kwargs.empty()) fail(ErrorKind::TypeError, "{}() takes no keyword arguments", name);
}
void arity(const char* name, const CallArgs& a, size_t lo, size_t hi) {
  size_t n = a.args.size();
  if (n >= lo && n <= hi) return;
  if (lo == hi) fail(ErrorKind::TypeError, "{}() takes exactly {} argument{} ({} given)", name, lo, lo == 1 ? "" : "s", n);
  if (n < lo) fail(ErrorKind::TypeError, "{} expected at least {} argument{}, got {}", name, lo, lo == 1 ? "" : "s", n);
  fail(ErrorKind::TypeError, "{} expected at most {} argument{}, got {}", name, hi, hi == 1 ? "" : "s", n);
}
// A keyword argument, removed from the call; `dflt` when absent.
Value take_kwarg(CallArgs& a, const char* name, Value dflt) {
  for (auto it = a.kwargs.begin(); it != a.kwargs.end(); ++it)
    if (it->first == name) {
      Value v = it->second;
      a.kwargs.erase(it);
      return v;
    }
  return dflt;
}
void no_more_kwargs(const char* fn, const CallArgs& a) {
  if (!a.kwargs.empty())
    fail(ErrorKind::TypeError, "{}() got an unexpected keyword argument '{}'", fn, a.kwargs.front().first);
}

int64_t as_index(const Value& v) {
  if (v.is_int_like()) return v.as_int();
  fail(ErrorKind::TypeError, "'{}' object cannot be interpreted as an integer", type_name(v));
}

// A one-element tensor converts to a Python number as PyTorch's __float__ / __int__ do.
Value tensor_item(Interpreter& in, const Value& t) {
  if (t.is_proxy()) return in.dispatch().call(*find_method("item")->op, &t, {}, CallArgs{}, false);
  const Tensor& x = t.as_tensor();
  if (x.numel() != 1) fail(ErrorKind::ValueError, "only one element tensors can be converted to Python scalars");
  return from_ivalue(IValue(x.item()));
}

int64_t float_to_int(double d) {
  if (std::isnan(d)) fail(ErrorKind::ValueError, "cannot convert float NaN to integer");
  if (std::isinf(d)) fail(ErrorKind::OverflowError, "cannot convert float infinity to integer");
  if (d >= 9223372036854775808.0 || d < -9223372036854775808.0)
    fail(ErrorKind::OverflowError, "int too large: {} does not fit in a 64-bit int", d);
  return int64_t(d);
}

std::string strip(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\n\r\f\v"), b = s.find_last_not_of(" \t\n\r\f\v");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// int(x), float(x) of a number proxy, or of a tensor proxy's item(), stay symbolic.
Value symbolic_number(Interpreter& in, NumberOp op, const Value& v) {
  Value n = v.is(Type::Tensor) ? tensor_item(in, v) : v;
  return in.dispatch().number_op(in, op, std::span<const Value>(&n, 1));
}

// int(s, base) of a string as Python reads it: a sign, for bases 2, 8 and
// 16 (or 0, where it decides the base) a 0b/0o/0x prefix, digits with
// single underscores between them (and after a prefix); base 0 takes no
// leading zero on a decimal other than zero itself.
Value parse_int(const std::string& text, int64_t base) {
  const std::string s = strip(text);
  auto bad = [&]() -> Value {
    fail(ErrorKind::ValueError, "invalid literal for int() with base {}: {}", base, repr_string(text));
  };
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  int64_t b = base;
  auto lower = [](char c) { return char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); };
  bool prefixed = false;
  if (i + 1 < s.size() && s[i] == '0') {
    const char p = lower(s[i + 1]);
    const int64_t of = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (of && (b == 0 || b == of)) b = of, i += 2, prefixed = true;
  }
  if (b == 0) b = 10;
  const size_t digits_at = i;
  unsigned __int128 value = 0;
  bool digit_before = prefixed;  // an underscore may follow a prefix or a digit
  bool overflow = false;
  for (; i < s.size(); ++i) {
    const char c = lower(s[i]);
    if (c == '_') {
      if (!digit_before) return bad();
      digit_before = false;
      continue;
    }
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'z' ? c - 'a' + 10 : 99;
    if (d >= b) return bad();
    value = value * unsigned(b) + unsigned(d);
    overflow |= value > (unsigned __int128)INT64_MAX + 1;
    digit_before = true;
  }
  const bool any_digit = s.find_first_not_of('_', digits_at) != std::string::npos && i > digits_at;
  if (!any_digit || !digit_before) return bad();
  // Base 0 reads "010" as Python 3 does: an error, not octal.
  if (base == 0 && !prefixed && s[digits_at] == '0' && value != 0) return bad();
  if (overflow || (!negative && value > (unsigned __int128)INT64_MAX))
    fail(ErrorKind::OverflowError, "int too large: '{}' does not fit in a 64-bit int", s);
  return Value(negative ? int64_t(-(__int128)value) : int64_t(value));
}

Value to_int(Interpreter& in, CallArgs& a) {
  if (!a.kwargs.empty() && a.kwargs.front().first == "base" && a.args.size() == 1) {
    a.args.push_back(a.kwargs.front().second);
    a.kwargs.clear();
  }
  no_kwargs("int", a);
  arity("int", a, 0, 2);
  if (a.args.empty()) return Value(int64_t(0));
  const Value& v = a.args[0];
  if (a.args.size() == 2) {
    if (!a.args[1].is_int_like()) fail(ErrorKind::TypeError, "'{}' object cannot be interpreted as an integer", type_name(a.args[1]));
    const int64_t base = a.args[1].as_int();
    if (base != 0 && (base < 2 || base > 36)) fail(ErrorKind::ValueError, "int() base must be >= 2 and <= 36, or 0");
    if (!v.is(Type::Str)) fail(ErrorKind::TypeError, "int() can't convert non-string with explicit base");
    return parse_int(v.as_str(), base);
  }
  if (v.is_proxy()) return symbolic_number(in, NumberOp::to_int, v);
  if (v.is_int_like()) return Value(v.as_int());
  if (v.is(Type::Float)) return Value(float_to_int(v.as_float()));
  if (v.is(Type::Tensor)) {
    Value x = tensor_item(in, v);
    return Value(x.is(Type::Float) ? float_to_int(x.as_float()) : x.as_int());
  }
  if (v.is(Type::Str)) return parse_int(v.as_str(), 10);
  fail(ErrorKind::TypeError, "int() argument must be a string, a bytes-like object or a real number, not '{}'",
       type_name(v));
}

Value to_float(Interpreter& in, CallArgs& a) {
  no_kwargs("float", a);
  arity("float", a, 0, 1);
  if (a.args.empty()) return Value(0.0);
  const Value& v = a.args[0];
  if (v.is_proxy()) return symbolic_number(in, NumberOp::to_float, v);
  if (v.is_number()) return Value(v.as_float());
  if (v.is(Type::Tensor)) return Value(tensor_item(in, v).as_float());
  if (v.is(Type::Str)) {
    std::string s = strip(v.as_str());
    std::string lower = s;
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    size_t sign = (!lower.empty() && (lower[0] == '-' || lower[0] == '+')) ? 1 : 0;
    std::string word = lower.substr(sign);
    double neg = sign && lower[0] == '-' ? -1.0 : 1.0;
    if (word == "inf" || word == "infinity") return Value(neg * INFINITY);
    if (word == "nan") return Value(std::copysign(NAN, neg));
    if (!s.empty() && s.find_first_not_of("0123456789.eE+-_") == std::string::npos) {
      std::string digits = s;
      std::erase(digits, '_');
      char* end = nullptr;
      double d = std::strtod(digits.c_str(), &end);
      if (end && *end == '\0' && end != digits.c_str()) return Value(d);
    }
    fail(ErrorKind::ValueError, "could not convert string to float: {}", repr_string(v.as_str()));
  }
  fail(ErrorKind::TypeError, "float() argument must be a string or a real number, not '{}'", type_name(v));
}

bool isinstance_of(const Value& v, const Value& t) {
  if (t.is(Type::Tuple)) {
    for (auto& x : t.items())
      if (isinstance_of(v, x)) return true;
    return false;
  }
  if (t.is(Type::Class))
    return v.is(Type::Instance) && v.obj<InstanceObj>().cls->derives_from(t.obj<ClassObj>());
  if (!t.is(Type::TypeObj))
    fail(ErrorKind::TypeError, "isinstance() arg 2 must be a type, a tuple of types, or a union");
  switch (t.as_type()) {
    case TypeTag::Dict: return v.is(Type::Dict);
    case TypeTag::Object: return true;
    case TypeTag::Int: return v.is_int_like();
    case TypeTag::Float: return v.is(Type::Float);
    case TypeTag::Bool: return v.is(Type::Bool);
    case TypeTag::Str: return v.is(Type::Str);
    case TypeTag::List: return v.is(Type::List);
    case TypeTag::Tuple: return v.is(Type::Tuple);
    case TypeTag::Tensor: return v.is(Type::Tensor);
    case TypeTag::DType: return v.is(Type::DType);
    case TypeTag::Device: return v.is(Type::Device);
  }
  return false;
}

// issubclass(c, t): c a class or a built-in type; t one, or a tuple of them.
bool subclass_of(const Value& c, const Value& t) {
  if (t.is(Type::Tuple)) {
    for (const Value& x : t.items())
      if (subclass_of(c, x)) return true;
    return false;
  }
  if (!t.is(Type::Class) && !t.is(Type::TypeObj))
    fail(ErrorKind::TypeError, "issubclass() arg 2 must be a class, a tuple of classes, or a union");
  if (t.is(Type::TypeObj) && t.as_type() == TypeTag::Object) return true;
  if (c.is(Type::Class)) return t.is(Type::Class) && c.obj<ClassObj>().derives_from(t.obj<ClassObj>());
  if (!t.is(Type::TypeObj)) return false;
  return c.as_type() == t.as_type() || (c.as_type() == TypeTag::Bool && t.as_type() == TypeTag::Int);
}

Value min_max(Interpreter& in, CallArgs& a, bool is_max) {
  const char* name = is_max ? "max" : "min";
  Value key = take_kwarg(a, "key", Value());
  no_more_kwargs(name, a);
  if (a.args.empty()) fail(ErrorKind::TypeError, "{} expected at least 1 argument, got 0", name);
  std::vector<Value> items = a.args.size() == 1 ? in.iterate(a.args[0]) : a.args;
  if (items.empty()) fail(ErrorKind::ValueError, "{}() arg is an empty sequence", name);
  if (!key.is_none()) {  // the first item whose key is the largest (smallest)
    size_t best = 0;
    std::vector<Value> keys;
    for (const Value& v : items) {
      CallArgs k{{v}, {}};
      keys.push_back(in.call(key, k));
    }
    for (size_t i = 1; i < items.size(); ++i)
      if (is_max ? in.less(keys[best], keys[i]) : in.less(keys[i], keys[best])) best = i;
    return items[best];
  }
  Value best = items[0];
  bool symbolic = false, numbers = true;
  for (const Value& v : items) {
    symbolic |= v.is_proxy();
    numbers &= v.is_number();
  }
  if (symbolic && numbers) {  // min/max of number proxies is recorded, not decided
    for (size_t i = 1; i < items.size(); ++i)
      best = in.dispatch().number_op(in, is_max ? NumberOp::max : NumberOp::min, std::vector<Value>{best, items[i]});
    return best;
  }
  for (size_t i = 1; i < items.size(); ++i)
    if (is_max ? in.less(best, items[i]) : in.less(items[i], best)) best = items[i];
  return best;
}

Value round_builtin(Interpreter& in, CallArgs& a) {
  Value nd = take_kwarg(a, "ndigits", Value());
  no_more_kwargs("round", a);
  arity("round", a, 1, 2);
  if (a.args.size() == 2) nd = a.args[1];
  const Value& x = a.args[0];
  if (x.is_proxy() && x.is_number() && nd.is_none())
    return in.dispatch().number_op(in, NumberOp::round, std::span<const Value>(&x, 1));
  if (!x.is_number()) fail(ErrorKind::TypeError, "type {} doesn't define __round__ method", type_name(x));
  if (nd.is_none()) {
    if (x.is_int_like()) return Value(x.as_int());
    return Value(float_to_int(std::nearbyint(x.as_float())));  // ties to even
  }
  int64_t n = as_index(nd);
  if (x.is_int_like()) {
    if (n >= 0) return Value(x.as_int());
    if (n < -18) return Value(int64_t(0));
    int64_t p = 1;
    for (int64_t i = 0; i < -n; ++i) p *= 10;
    int64_t v = x.as_int(), q = v / p, r = v % p;
    if (r < 0) { r += p; --q; }
    if (2 * r > p || (2 * r == p && (q & 1))) ++q;
    return Value(q * p);
  }
  double d = x.as_float();
  if (!std::isfinite(d) || n > 308) return Value(d);
  if (n >= 0) return Value(std::strtod(fmt::format("{:.{}f}", d, n).c_str(), nullptr));
  double p = std::pow(10.0, double(-n));
  double y = std::nearbyint(d / p) * p;
  return Value(std::isfinite(y) ? y : std::copysign(0.0, d));
}

Value print_builtin(Interpreter& in, CallArgs& a) {
  Value sep = take_kwarg(a, "sep", Value()), end = take_kwarg(a, "end", Value());
  Value flush = take_kwarg(a, "flush", Value(false));
  no_more_kwargs("print", a);
  for (const Value* v : {&sep, &end})
    if (!v->is_none() && !v->is(Type::Str))
      fail(ErrorKind::TypeError, "{} must be None or a string, not {}", v == &sep ? "sep" : "end", type_name(*v));
  in.dispatch().print(in, a.args, sep.is_none() ? " " : sep.as_str(), end.is_none() ? "\n" : end.as_str());
  if (in.truth(flush)) std::fflush(in.out());
  return Value();
}

// jit validates its options; the jit/ library (when installed) makes the
// callable, else (`thn run --interpret`) jit is the identity.
Value jit_builtin(Interpreter& in, CallArgs& a) {
  Value cache = take_kwarg(a, "cache", Value::str("auto"));
  Value shapes = take_kwarg(a, "shapes", Value::str("auto"));
  Value compile = take_kwarg(a, "compile", Value::none());
  no_more_kwargs("jit", a);
  arity("jit", a, 0, 1);
  auto check = [](const Value& v, const char* what, std::initializer_list<const char*> allowed) {
    std::string list;
    for (const char* s : allowed) {
      if (v.is(Type::Str) && v.as_str() == s) return;
      list += std::string(list.empty() ? "" : ", ") + "'" + s + "'";
    }
    fail(ErrorKind::ValueError, "jit(): {} must be one of {}, not {}", what, list, to_repr(v));
  };
  check(cache, "cache", {"auto", "constant", "symbolic", "none"});
  check(shapes, "shapes", {"auto", "static", "symbolic"});
  if (!compile.is_none()) check(compile, "compile", {"background", "sync"});
  if (a.args.empty())  // @jit(cache=...): the decorator that applies these options
    return make_builtin("jit", [cache, shapes, compile](Interpreter& in, CallArgs& b) {
      no_kwargs("jit", b);
      arity("jit", b, 1, 1);
      b.kwargs = {{"cache", cache}, {"shapes", shapes}, {"compile", compile}};
      return jit_builtin(in, b);
    });
  Value f = a.args[0];
  if (f.is(Type::Instance)) {  // jit(model): its __call__, bound to it
    Value c = in.special(f, "__call__");
    if (c.is(Type::Unbound)) fail(ErrorKind::TypeError, "jit() expects a function or a callable object, not '{}'", type_name(f));
    f = c;
  }
  if (!f.is(Type::Function) && !f.is(Type::Builtin) && !f.is(Type::Method))
    fail(ErrorKind::TypeError, "jit() expects a function or a callable object, not '{}'", type_name(f));
  if (in.options().make_jit)
    return in.options().make_jit(in, f, cache.as_str(), shapes.as_str(), compile.is_none() ? "" : compile.as_str());
  return f;
}

// The functions whose first argument may be a Python number, which becomes
// a wrapped 0-dim tensor (PyTorch's argument parser allows numbers as
// tensors for these: add(3, t)).
bool takes_number_self(OpId id) {
  switch (id) {
    case OpId::add: case OpId::sub: case OpId::mul: case OpId::div: case OpId::floor_divide: case OpId::remainder:
    case OpId::pow: case OpId::bitwise_and: case OpId::bitwise_or: case OpId::bitwise_xor:
    case OpId::bitwise_left_shift: case OpId::bitwise_right_shift: return true;
    default: return false;
  }
}

// A function of the tensor API: one entry of the op table.
Value op_function(const OpDef& op) {
  return make_builtin(std::string(op.name), [&op](Interpreter& in, CallArgs& a) {
    if (takes_number_self(op.id) && a.args.size() >= 2 && a.args[0].is_number() && a.args[1].is(Type::Tensor)) {
      std::vector<Value> args = a.args;
      args[0] = in.dispatch().wrap_number(args[0]);
      return in.dispatch().call(op, nullptr, args, a, false);
    }
    return in.dispatch().call(op, nullptr, a.args, a, false);
  });
}

// Python builtins that PyTorch also names (max, abs, sum, ...): a tensor as
// the first argument selects the tensor op, anything else Python's builtin.
void hybrid(Interpreter& in, const char* name, NativeFn python) {
  const OpDef* op = find_function(name);
  in.builtins()[name] = make_builtin(name, [op, python](Interpreter& in, CallArgs& a) {
    if (op && !a.args.empty() && a.args[0].is(Type::Tensor)) return in.dispatch().call(*op, nullptr, a.args, a, false);
    return python(in, a);
  });
}

}  // namespace

Value math_number_op(NumberOp op, const Value& v) {
  if (!v.is_number()) fail(ErrorKind::TypeError, "must be real number, not {}", type_name(v));
  if ((op == NumberOp::math_floor || op == NumberOp::math_ceil) && v.is_int_like()) return Value(v.as_int());
  const double x = v.as_float();
  auto domain = [](bool ok) {
    if (!ok) fail(ErrorKind::ValueError, "math domain error");
  };
  double r = 0;
  switch (op) {
    case NumberOp::math_sqrt: domain(x >= 0 || std::isnan(x)); r = std::sqrt(x); break;
    case NumberOp::math_exp: r = std::exp(x); break;
    case NumberOp::math_log: domain(x > 0 || std::isnan(x)); r = std::log(x); break;
    case NumberOp::math_sin: domain(!std::isinf(x)); r = std::sin(x); break;
    case NumberOp::math_cos: domain(!std::isinf(x)); r = std::cos(x); break;
    case NumberOp::math_tanh: r = std::tanh(x); break;
    case NumberOp::math_floor: return Value(float_to_int(std::floor(x)));
    case NumberOp::math_ceil: return Value(float_to_int(std::ceil(x)));
    default: throw std::logic_error("math_number_op: not a math function");
  }
  if (std::isinf(r) && std::isfinite(x)) fail(ErrorKind::OverflowError, "math range error");
  return Value(r);
}

namespace {

double math_arg(Interpreter& in, const Value& v) {
  if (v.is_number()) return v.as_float();
  if (v.is(Type::Tensor)) return tensor_item(in, v).as_float();
  fail(ErrorKind::TypeError, "must be real number, not {}", type_name(v));
}

Value math_module() {
  auto m = std::make_shared<ModuleObj>();
  m->name = "math";
  auto& g = m->globals;
  g["pi"] = Value(M_PI);
  g["e"] = Value(M_E);
  g["tau"] = Value(2 * M_PI);
  g["inf"] = Value(double(INFINITY));
  g["nan"] = Value(double(NAN));
  // f(x) -> float with Python's domain/range errors.
  auto unary = [&](const char* name, double (*f)(double), bool (*domain)(double)) {
    g[name] = make_builtin(name, [name, f, domain](Interpreter& in, CallArgs& a) {
      no_kwargs(name, a);
      arity(name, a, 1, 1);
      double x = math_arg(in, a.args[0]);
      if (domain && !domain(x)) fail(ErrorKind::ValueError, "math domain error");
      double r = f(x);
      if (std::isinf(r) && std::isfinite(x)) fail(ErrorKind::OverflowError, "math range error");
      return Value(r);
    });
  };
  // Those a jit trace keeps symbolic: a number proxy's is recorded.
  auto recorded = [&](const char* name, NumberOp op) {
    g[name] = make_builtin(name, [name, op](Interpreter& in, CallArgs& a) {
      no_kwargs(name, a);
      arity(name, a, 1, 1);
      Value x = a.args[0].is(Type::Tensor) ? tensor_item(in, a.args[0]) : a.args[0];
      if (x.is_proxy()) return in.dispatch().number_op(in, op, std::span<const Value>(&x, 1));
      return math_number_op(op, x);
    });
  };
  recorded("sqrt", NumberOp::math_sqrt);
  recorded("exp", NumberOp::math_exp);
  recorded("sin", NumberOp::math_sin);
  recorded("cos", NumberOp::math_cos);
  recorded("tanh", NumberOp::math_tanh);
  recorded("floor", NumberOp::math_floor);
  recorded("ceil", NumberOp::math_ceil);
  unary("log2", [](double x) { return std::log2(x); }, [](double x) { return x > 0 || std::isnan(x); });
  unary("log10", [](double x) { return std::log10(x); }, [](double x) { return x > 0 || std::isnan(x); });
  unary("tan", [](double x) { return std::tan(x); }, [](double x) { return !std::isinf(x); });
  unary("atan", [](double x) { return std::atan(x); }, nullptr);
  unary("fabs", [](double x) { return std::fabs(x); }, nullptr);
  unary("erf", [](double x) { return std::erf(x); }, nullptr);
  g["log"] = make_builtin("log", [](Interpreter& in, CallArgs& a) {
    no_kwargs("log", a);
    arity("log", a, 1, 2);
    if (a.args.size() == 1) {  // (kept symbolic, as math.sqrt)
      Value v = a.args[0].is(Type::Tensor) ? tensor_item(in, a.args[0]) : a.args[0];
      if (v.is_proxy()) return in.dispatch().number_op(in, NumberOp::math_log, std::span<const Value>(&v, 1));
    }
    double x = math_arg(in, a.args[0]);
    if (!(x > 0) && !std::isnan(x)) fail(ErrorKind::ValueError, "math domain error");
    if (a.args.size() == 1) return Value(std::log(x));
    double b = math_arg(in, a.args[1]);
    if (!(b > 0) && !std::isnan(b)) fail(ErrorKind::ValueError, "math domain error");
    if (b == 1) fail(ErrorKind::ZeroDivisionError, "float division by zero");
    return Value(std::log(x) / std::log(b));
  });
  auto to_int_fn = [&](const char* name, double (*f)(double)) {
    g[name] = make_builtin(name, [name, f](Interpreter& in, CallArgs& a) {
      no_kwargs(name, a);
      arity(name, a, 1, 1);
      if (a.args[0].is_int_like()) return Value(a.args[0].as_int());
      return Value(float_to_int(f(math_arg(in, a.args[0]))));
    });
  };
  to_int_fn("trunc", [](double x) { return std::trunc(x); });
  auto pred = [&](const char* name, bool (*f)(double)) {
    g[name] = make_builtin(name, [name, f](Interpreter& in, CallArgs& a) {
      no_kwargs(name, a);
      arity(name, a, 1, 1);
      return Value(f(math_arg(in, a.args[0])));
    });
  };
  pred("isnan", [](double x) { return std::isnan(x); });
  pred("isinf", [](double x) { return std::isinf(x); });
  pred("isfinite", [](double x) { return std::isfinite(x); });
  g["pow"] = make_builtin("pow", [](Interpreter& in, CallArgs& a) {
    no_kwargs("pow", a);
    arity("pow", a, 2, 2);
    double x = math_arg(in, a.args[0]), y = math_arg(in, a.args[1]);
    if ((x == 0 && y < 0) || (x < 0 && std::isfinite(y) && y != std::floor(y)))
      fail(ErrorKind::ValueError, "math domain error");
    double r = std::pow(x, y);
    if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) fail(ErrorKind::OverflowError, "math range error");
    return Value(r);
  });
  g["atan2"] = make_builtin("atan2", [](Interpreter& in, CallArgs& a) {
    no_kwargs("atan2", a);
    arity("atan2", a, 2, 2);
    return Value(std::atan2(math_arg(in, a.args[0]), math_arg(in, a.args[1])));
  });
  return Value(Type::Module, m);
}

Value time_module() {
  auto m = std::make_shared<ModuleObj>();
  m->name = "time";
  m->globals["perf_counter"] = make_builtin("perf_counter", [](Interpreter&, CallArgs& a) {
    no_kwargs("perf_counter", a);
    arity("perf_counter", a, 0, 0);
    auto t = std::chrono::steady_clock::now().time_since_epoch();
    return Value(std::chrono::duration<double>(t).count());
  });
  m->globals["time"] = make_builtin("time", [](Interpreter&, CallArgs& a) {
    arity("time", a, 0, 0);
    auto t = std::chrono::system_clock::now().time_since_epoch();
    return Value(std::chrono::duration<double>(t).count());
  });
  return Value(Type::Module, m);
}

// torch.cuda's few functions a script needs: timing GPU work waits for it.
Value cuda_module() {
  auto m = std::make_shared<ModuleObj>();
  m->name = "cuda";
  m->globals["is_available"] = make_builtin("is_available", [](Interpreter&, CallArgs& a) {
    arity("is_available", a, 0, 0);
    return Value(cuda::available());
  });
  m->globals["synchronize"] = make_builtin("synchronize", [](Interpreter&, CallArgs& a) {
    arity("synchronize", a, 0, 0);
    cuda::check(cuda::driver().cuCtxSynchronize(), "cuCtxSynchronize");
    return Value();
  });
  m->globals["get_device_name"] = make_builtin("get_device_name", [](Interpreter&, CallArgs& a) {
    arity("get_device_name", a, 0, 0);
    cuda::driver();
    return Value::str(cuda::device_info().name);
  });
  return Value(Type::Module, m);
}

}  // namespace

Value make_builtin_module(Interpreter&, const std::string& name) {
  if (name == "math") return math_module();
  if (name == "time") return time_module();
  if (name == "cuda") return cuda_module();
  if (name == "safetensors") return safetensors_module();
  return Value();
}

void install_builtins(Interpreter& in) {
  auto& b = in.builtins();
  // The tensor API: every function of the op table.
  for (const OpDef& op : all_ops()) {
    if (!op.has('F')) continue;
    b[std::string(op.name)] = op_function(op);
    for (std::string_view alias : aliases_of(op)) b[std::string(alias)] = op_function(op);
  }
  for (const Shorthand& sh : tensor_shorthands()) {
    if (!sh.function) continue;
    b[std::string(sh.name)] = make_builtin(std::string(sh.name), [&sh](Interpreter& in, CallArgs& a) {
      if (a.args.empty()) fail(ErrorKind::TypeError, "{}() missing 1 required positional argument: 'input'", sh.name);
      if (!a.args[0].is(Type::Tensor))
        fail(ErrorKind::TypeError, "{}(): argument 'input' (position 1) must be Tensor, not {}", sh.name,
             type_name(a.args[0]));
      const Value self = a.args[0];
      CallArgs rest{std::vector<Value>(a.args.begin() + 1, a.args.end()), a.kwargs};
      return sh.call(in, self, rest);
    });
  }
  for (const TensorFunction& f : tensor_functions()) b[std::string(f.name)] = make_builtin(std::string(f.name), f.call);
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32, DType::Int64})
    b[std::string(dtype_name(d))] = Value(d);
  b["half"] = Value(DType::Float16);
  b["double"] = Value(DType::Float64);
  b["long"] = Value(DType::Int64);
  b["Tensor"] = Value(TypeTag::Tensor);
  b["dtype"] = Value(TypeTag::DType);
  b["device"] = Value(TypeTag::Device);
  b["__type_device"] = make_builtin("device", [](Interpreter&, CallArgs& a) {
    no_kwargs("device", a);
    arity("device", a, 1, 1);
    if (a.args[0].is(Type::Device)) return a.args[0];
    if (!a.args[0].is(Type::Str)) fail(ErrorKind::TypeError, "device() expects a string such as 'cpu', not {}", type_name(a.args[0]));
    return Value(parse_device(a.args[0].as_str()));
  });

  b["print"] = make_builtin("print", print_builtin);
  // exit(code=None) / quit(code=None): SystemExit(code), as Python's site
  // module gives them (the status: cli/run.cpp system_exit).
  for (const char* name : {"exit", "quit"})
    b[name] = make_builtin(name, [name](Interpreter&, CallArgs& a) -> Value {
      if (Value code = take_kwarg(a, "code", Value::unbound()); !code.is(Type::Unbound)) a.args.push_back(code);
      no_kwargs(name, a);
      arity(name, a, 0, 1);
      std::vector<Value> args = a.args;
      throw RaisedError(ErrorKind::SystemExit, args.empty() ? "" : to_str(args[0]), Loc{},
                        make_exception(exception_class(ErrorKind::SystemExit), args), "SystemExit");
    });
  b["jit"] = make_builtin("jit", jit_builtin);
  // allocations(): (tensor buffers, bytes) allocated so far by this program;
  // for measuring what a step allocates (bench/jit/buffers.thn).
  b["allocations"] = make_builtin("allocations", [](Interpreter&, CallArgs& a) {
    no_kwargs("allocations", a);
    arity("allocations", a, 0, 0);
    return Value::tuple({Value(Storage::allocations()), Value(Storage::allocated_bytes())});
  });
  // cuda_copies(): (host-to-device, device-to-host) copies made so far
  // through the CUDA driver (tests/cuda: tracing copies nothing to the host).
  b["cuda_copies"] = make_builtin("cuda_copies", [](Interpreter&, CallArgs& a) {
    no_kwargs("cuda_copies", a);
    arity("cuda_copies", a, 0, 0);
    cuda::CopyCounts c = cuda::copy_counts();
    return Value::tuple({Value(c.to_device), Value(c.to_host)});
  });
  b["len"] = make_builtin("len", [](Interpreter& in, CallArgs& a) {
    no_kwargs("len", a);
    arity("len", a, 1, 1);
    const Value& v = a.args[0];
    switch (v.type()) {
      case Type::Str: return Value(int64_t(char_count(v.as_str())));
      case Type::List: case Type::Tuple: return Value(int64_t(v.items().size()));
      case Type::Dict: return Value(int64_t(v.obj<DictObj>().count));
      case Type::Range: return Value(v.obj<RangeObj>().length());
      case Type::Instance:
        if (in.special(v, "__len__").is(Type::Unbound)) break;
        return in.instance_len(v);
      case Type::Tensor:
        if (in.tensor_dim(v) == 0) fail(ErrorKind::TypeError, "len() of a 0-d tensor");
        return in.tensor_len(v);
      default: break;
    }
    fail(ErrorKind::TypeError, "object of type '{}' has no len()", type_name(v));
  });
  b["range"] = make_builtin("range", [](Interpreter&, CallArgs& a) {
    no_kwargs("range", a);
    if (a.args.empty()) fail(ErrorKind::TypeError, "range expected at least 1 argument, got 0");
    arity("range", a, 1, 3);
    int64_t start = 0, stop, step = 1;
    if (a.args.size() == 1) {
      stop = as_index(a.args[0]);
    } else {
      start = as_index(a.args[0]);
      stop = as_index(a.args[1]);
      if (a.args.size() == 3) step = as_index(a.args[2]);
    }
    if (step == 0) fail(ErrorKind::ValueError, "range() arg 3 must not be zero");
    return Value(Type::Range, std::make_shared<RangeObj>(start, stop, step));
  });
  hybrid(in, "max", [](Interpreter& in, CallArgs& a) { return min_max(in, a, true); });
  hybrid(in, "min", [](Interpreter& in, CallArgs& a) { return min_max(in, a, false); });
  hybrid(in, "abs", [](Interpreter& in, CallArgs& a) {
    no_kwargs("abs", a);
    arity("abs", a, 1, 1);
    const Value& v = a.args[0];
    if (v.is_proxy()) return in.dispatch().number_op(in, NumberOp::abs, std::span<const Value>(&v, 1));
    if (v.is_int_like()) {
      if (v.as_int() == INT64_MIN) fail(ErrorKind::OverflowError, "int overflow: abs({}) does not fit in a 64-bit int", v.as_int());
      return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
    }
    if (v.is(Type::Float)) return Value(std::fabs(v.as_float()));
    fail(ErrorKind::TypeError, "bad operand type for abs(): '{}'", type_name(v));
  });
  hybrid(in, "sum", [](Interpreter& in, CallArgs& a) {
    Value start = take_kwarg(a, "start", Value(int64_t(0)));
    no_more_kwargs("sum", a);
    arity("sum", a, 1, 2);
    if (a.args.size() == 2) start = a.args[1];
    if (start.is(Type::Str)) fail(ErrorKind::TypeError, "sum() can't sum strings [use ''.join(seq) instead]");
    Value acc = start;
    for (const Value& x : in.iterate(a.args[0])) acc = in.binary(BinOp::Add, acc, x);
    return acc;
  });
  hybrid(in, "round", round_builtin);
  // pow(base, exp[, mod]): torch.pow when a tensor is given, else Python's
  // ** (and modular exponentiation of ints).
  b["pow"] = make_builtin("pow", [op = find_function("pow")](Interpreter& in, CallArgs& a) {
    if (a.args.size() >= 2 && (a.args[0].is(Type::Tensor) || a.args[1].is(Type::Tensor)) && op)
      return in.dispatch().call(*op, nullptr, a.args, a, false);
    Value mod = take_kwarg(a, "mod", Value());
    Value exp = take_kwarg(a, "exp", Value::unbound());
    Value base = take_kwarg(a, "base", Value::unbound());
    no_more_kwargs("pow", a);
    if (!base.is(Type::Unbound)) a.args.insert(a.args.begin(), base);
    if (!exp.is(Type::Unbound)) a.args.push_back(exp);
    if (a.args.size() == 3) mod = a.args[2], a.args.pop_back();
    arity("pow", a, 2, 2);
    if (mod.is_none()) return in.binary(BinOp::Pow, a.args[0], a.args[1]);
    for (const Value* v : {&a.args[0], &a.args[1], &mod})
      if (!v->is(Type::Int) && !v->is(Type::Bool))
        fail(ErrorKind::TypeError, "pow() 3rd argument not allowed unless all arguments are integers");
    int64_t m = mod.as_int(), x = a.args[0].as_int(), e = a.args[1].as_int();
    if (m == 0) fail(ErrorKind::ValueError, "pow() 3rd argument cannot be 0");
    const __int128 mm = m < 0 ? -__int128(m) : __int128(m);
    __int128 base_mod = ((__int128(x) % mm) + mm) % mm;
    if (e < 0) {  // the inverse of x modulo m, as Python 3.8+
      __int128 r0 = mm, r1 = base_mod, t0 = 0, t1 = 1;
      while (r1 != 0) {
        __int128 q = r0 / r1;
        std::tie(r0, r1) = std::make_pair(r1, r0 - q * r1);
        std::tie(t0, t1) = std::make_pair(t1, t0 - q * t1);
      }
      if (r0 != 1) fail(ErrorKind::ValueError, "base is not invertible for the given modulus");
      base_mod = ((t0 % mm) + mm) % mm;
      e = -e;
    }
    __int128 r = 1 % mm;
    for (; e > 0; e >>= 1, base_mod = base_mod * base_mod % mm)
      if (e & 1) r = r * base_mod % mm;
    if (m < 0 && r != 0) r -= mm;  // (the result takes the modulus' sign)
    return Value(int64_t(r));
  });
  hybrid(in, "all", [](Interpreter& in, CallArgs& a) {
    no_kwargs("all", a);
    arity("all", a, 1, 1);
    return Value(in.each(a.args[0], [&](const Value& x) { return in.truth(x); }));  // (up to the first false)
  });
  hybrid(in, "any", [](Interpreter& in, CallArgs& a) {
    no_kwargs("any", a);
    arity("any", a, 1, 1);
    return Value(!in.each(a.args[0], [&](const Value& x) { return !in.truth(x); }));  // (up to the first true)
  });
  b["sorted"] = make_builtin("sorted", [](Interpreter& in, CallArgs& a) {
    Value reverse = take_kwarg(a, "reverse", Value(false));
    Value key = take_kwarg(a, "key", Value());
    no_more_kwargs("sorted", a);
    arity("sorted", a, 1, 1);
    std::vector<Value> items = in.iterate(a.args[0]);
    // Sorted by key, stable, reversed as Python does (equal keys keep their order).
    std::vector<std::pair<Value, size_t>> keyed;
    for (size_t i = 0; i < items.size(); ++i) {
      CallArgs k{{items[i]}, {}};
      keyed.emplace_back(key.is_none() ? items[i] : in.call(key, k), i);
    }
    bool rev = in.truth(reverse);
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
      return rev ? in.less(y.first, x.first) : in.less(x.first, y.first);
    });
    std::vector<Value> out;
    for (auto& [k, i] : keyed) out.push_back(items[i]);
    return Value::list(std::move(out));
  });
  b["issubclass"] = make_builtin("issubclass", [](Interpreter&, CallArgs& a) {
    no_kwargs("issubclass", a);
    arity("issubclass", a, 2, 2);
    if (!a.args[0].is(Type::Class) && !a.args[0].is(Type::TypeObj)) fail(ErrorKind::TypeError, "issubclass() arg 1 must be a class");
    return Value(subclass_of(a.args[0], a.args[1]));
  });
  b["isinstance"] = make_builtin("isinstance", [](Interpreter&, CallArgs& a) {
    no_kwargs("isinstance", a);
    arity("isinstance", a, 2, 2);
    return Value(isinstance_of(a.args[0], a.args[1]));
  });
  b["zip"] = make_builtin("zip", [](Interpreter& in, CallArgs& a) {
    no_kwargs("zip", a);
    if (std::any_of(a.args.begin(), a.args.end(), Interpreter::draws)) {
      auto it = std::make_shared<IteratorObj>();  // drawing from the iterators only as it is taken
      it->kind = IteratorObj::Kind::Zip;
      for (const Value& x : a.args) it->sources.push_back(make_iterator(in, x));
      return Value(Type::Iterator, it);
    }
    std::vector<std::vector<Value>> seqs;
    for (auto& x : a.args) seqs.push_back(in.iterate(x));
    size_t n = seqs.empty() ? 0 : SIZE_MAX;
    for (auto& s : seqs) n = std::min(n, s.size());
    std::vector<Value> out;
    for (size_t i = 0; i < n; ++i) {
      std::vector<Value> t;
      for (auto& s : seqs) t.push_back(s[i]);
      out.push_back(Value::tuple(std::move(t)));
    }
    return Value::list(std::move(out));
  });
  b["enumerate"] = make_builtin("enumerate", [](Interpreter& in, CallArgs& a) {
    Value start = take_kwarg(a, "start", Value(int64_t(0)));
    no_more_kwargs("enumerate", a);
    arity("enumerate", a, 1, 2);
    if (a.args.size() == 2) start = a.args[1];
    int64_t i = as_index(start);
    if (Interpreter::draws(a.args[0])) {  // drawing from it only as it is taken
      auto it = std::make_shared<IteratorObj>();
      it->kind = IteratorObj::Kind::Enumerate;
      it->sources.push_back(make_iterator(in, a.args[0]));
      it->count = i;
      return Value(Type::Iterator, it);
    }
    std::vector<Value> out;
    for (const Value& x : in.iterate(a.args[0])) out.push_back(Value::tuple({Value(i++), x}));
    return Value::list(std::move(out));
  });
  // Types: values for isinstance and dtype=, callables that convert.
  b["int"] = Value(TypeTag::Int);
  b["float"] = Value(TypeTag::Float);
  b["bool"] = Value(TypeTag::Bool);
  b["str"] = Value(TypeTag::Str);
  b["list"] = Value(TypeTag::List);
  b["tuple"] = Value(TypeTag::Tuple);
  b["__type_int"] = make_builtin("int", to_int);
  b["__type_float"] = make_builtin("float", to_float);
  b["__type_bool"] = make_builtin("bool", [](Interpreter& in, CallArgs& a) {
    no_kwargs("bool", a);
    arity("bool", a, 0, 1);
    return Value(!a.args.empty() && in.truth(a.args[0]));
  });
  b["__type_str"] = make_builtin("str", [](Interpreter&, CallArgs& a) {
    no_kwargs("str", a);
    arity("str", a, 0, 1);
    return Value::str(a.args.empty() ? "" : to_str(a.args[0]));
  });
  b["__type_list"] = make_builtin("list", [](Interpreter& in, CallArgs& a) {
    no_kwargs("list", a);
    arity("list", a, 0, 1);
    return Value::list(a.args.empty() ? std::vector<Value>{} : in.iterate(a.args[0]));
  });
  install_object_builtins(in);
  install_file_builtins(in);
  b["__type_tuple"] = make_builtin("tuple", [](Interpreter& in, CallArgs& a) {
    no_kwargs("tuple", a);
    arity("tuple", a, 0, 1);
    return Value::tuple(a.args.empty() ? std::vector<Value>{} : in.iterate(a.args[0]));
  });
}

}  // namespace thn
