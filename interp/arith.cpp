// Python's operators, truth, comparison, iteration, attributes and items over
// thn values. Numbers follow CPython exactly (floor division and modulo,
// float repr), except that ints are 64-bit and overflow is an error. Any
// tensor operand hands the operator to the op table (PyTorch semantics).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "frontend/unicode.h"
#include "interp/interpreter.h"
#include "interp/objects.h"
#include "interp/shorthands.h"
#include "runtime/op_registry.h"

namespace thn {

using namespace ast;

// An op by its function name, else its method name (`dim` is x.dim() only).
const OpDef& op_named(const char* name) {
  const OpDef* op = find_function(name);
  if (!op)
    if (std::optional<MethodRef> m = find_method(name)) op = m->op;
  if (!op) throw std::logic_error(std::string("op table lacks ") + name);
  return *op;
}

namespace {

const OpDef& tensor_op(BinOp op) {
  static const OpDef* table[] = {
      &op_named("add"), &op_named("sub"), &op_named("mul"), &op_named("div"), &op_named("floor_divide"),
      &op_named("remainder"), &op_named("pow"), &op_named("matmul"), &op_named("bitwise_left_shift"),
      &op_named("bitwise_right_shift"), &op_named("bitwise_and"), &op_named("bitwise_or"), &op_named("bitwise_xor")};
  return *table[int(op)];
}

const OpDef& tensor_cmp(CmpOp op) {
  static const OpDef* table[] = {&op_named("lt"), &op_named("gt"), &op_named("eq"),
                                 &op_named("ge"), &op_named("le"), &op_named("ne")};
  return *table[int(op)];
}

[[noreturn]] void overflow(const Value& a, BinOp op, const Value& b) {
  fail(ErrorKind::OverflowError, "int overflow: {} {} {} does not fit in a 64-bit int", a.as_int(), binop_symbol(op),
       b.as_int());
}

Value int_pow(const Value& a, const Value& b) {
  int64_t base = a.as_int(), e = b.as_int();
  if (e < 0) {
    if (base == 0) fail(ErrorKind::ZeroDivisionError, "0.0 cannot be raised to a negative power");
    return Value(std::pow(double(base), double(e)));
  }
  int64_t result = 1;
  while (e > 0) {
    if (e & 1 && __builtin_mul_overflow(result, base, &result)) overflow(a, BinOp::Pow, b);
    e >>= 1;
    if (e > 0 && __builtin_mul_overflow(base, base, &base)) overflow(a, BinOp::Pow, b);
  }
  return Value(result);
}

Value int_binary(BinOp op, const Value& a, const Value& b) {
  int64_t x = a.as_int(), y = b.as_int(), r = 0;
  bool both_bool = a.is(Type::Bool) && b.is(Type::Bool);
  switch (op) {
    case BinOp::Add: if (__builtin_add_overflow(x, y, &r)) overflow(a, op, b); return Value(r);
    case BinOp::Sub: if (__builtin_sub_overflow(x, y, &r)) overflow(a, op, b); return Value(r);
    case BinOp::Mul: if (__builtin_mul_overflow(x, y, &r)) overflow(a, op, b); return Value(r);
    case BinOp::Div:
      if (y == 0) fail(ErrorKind::ZeroDivisionError, "division by zero");
      return Value(double(x) / double(y));
    case BinOp::FloorDiv: {
      if (y == 0) fail(ErrorKind::ZeroDivisionError, "integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) overflow(a, op, b);
      int64_t q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
      return Value(q);
    }
    case BinOp::Mod: {
      if (y == 0) fail(ErrorKind::ZeroDivisionError, "integer modulo by zero");
      if (y == -1) return Value(int64_t(0));
      int64_t m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      return Value(m);
    }
    case BinOp::Pow: return int_pow(a, b);
    case BinOp::LShift:
      if (y < 0) fail(ErrorKind::ValueError, "negative shift count");
      if (x == 0) return Value(int64_t(0));
      if (y >= 63 || ((x << y) >> y) != x) overflow(a, op, b);
      return Value(int64_t(x << y));
    case BinOp::RShift:
      if (y < 0) fail(ErrorKind::ValueError, "negative shift count");
      return Value(int64_t(y >= 64 ? (x < 0 ? -1 : 0) : x >> y));
    case BinOp::BitAnd: return both_bool ? Value(bool(x & y)) : Value(int64_t(x & y));
    case BinOp::BitOr: return both_bool ? Value(bool(x | y)) : Value(int64_t(x | y));
    case BinOp::BitXor: return both_bool ? Value(bool(x ^ y)) : Value(int64_t(x ^ y));
    case BinOp::MatMul: break;
  }
  fail(ErrorKind::TypeError, "unsupported operand type(s) for {}: '{}' and '{}'", binop_symbol(op), type_name(a),
       type_name(b));
}

// CPython's float_divmod.
std::pair<double, double> float_divmod(double vx, double wx) {
  double mod = std::fmod(vx, wx);
  double div = (vx - mod) / wx;
  if (mod != 0) {
    if ((wx < 0) != (mod < 0)) {
      mod += wx;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, wx);
  }
  double floordiv;
  if (div != 0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, vx / wx);
  }
  return {floordiv, mod};
}

Value float_binary(BinOp op, const Value& a, const Value& b) {
  double x = a.as_float(), y = b.as_float();
  switch (op) {
    case BinOp::Add: return Value(x + y);
    case BinOp::Sub: return Value(x - y);
    case BinOp::Mul: return Value(x * y);
    case BinOp::Div:
      if (y == 0) fail(ErrorKind::ZeroDivisionError, "float division by zero");
      return Value(x / y);
    case BinOp::FloorDiv:
      if (y == 0) fail(ErrorKind::ZeroDivisionError, "float floor division by zero");
      return Value(float_divmod(x, y).first);
    case BinOp::Mod:
      if (y == 0) fail(ErrorKind::ZeroDivisionError, "float modulo");
      return Value(float_divmod(x, y).second);
    case BinOp::Pow: {
      if (x == 0 && y < 0) fail(ErrorKind::ZeroDivisionError, "0.0 cannot be raised to a negative power");
      if (x < 0 && std::isfinite(y) && y != std::floor(y))
        fail(ErrorKind::ValueError, "negative number cannot be raised to a fractional power (thn has no complex numbers)");
      double r = std::pow(x, y);
      if (std::isinf(r) && std::isfinite(x) && std::isfinite(y))
        fail(ErrorKind::OverflowError, "(34, 'Numerical result out of range')");
      return Value(r);
    }
    default: break;
  }
  fail(ErrorKind::TypeError, "unsupported operand type(s) for {}: '{}' and '{}'", binop_symbol(op), type_name(a),
       type_name(b));
}

// A repetition's length (seq * n), checked first, as CPython does: a length
// past an index is an OverflowError for a str ("repeated string is too
// long") and a MemoryError for a list or tuple; so is one whose bytes exceed
// the machine's memory. No absurd request grows memory until allocation fails.
int64_t repeat_length(int64_t len, int64_t n, size_t item_bytes) {
  if (len == 0 || n <= 0) return 0;
  int64_t total = 0, bytes = 0;
  if (__builtin_mul_overflow(len, n, &total)) {
    if (item_bytes == 1) fail(ErrorKind::OverflowError, "repeated string is too long");
    fail(ErrorKind::MemoryError, "a repetition of {} * {} items does not fit in memory", len, n);
  }
  static const int64_t memory = int64_t(sysconf(_SC_PHYS_PAGES)) * int64_t(sysconf(_SC_PAGE_SIZE));
  if (__builtin_mul_overflow(total, int64_t(item_bytes), &bytes) || (memory > 0 && bytes > memory))
    fail(ErrorKind::MemoryError, "a repetition of {} items does not fit in memory", total);
  return total;
}

Value repeat(const std::vector<Value>& items, int64_t n, bool tuple) {
  std::vector<Value> out;
  out.reserve(size_t(repeat_length(int64_t(items.size()), n, sizeof(Value))));
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
  return tuple ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}


// Numbers compared exactly: x86's long double holds every int64 and double.
long double exact(const Value& v) {
  return v.is(Type::Float) ? (long double)v.as_float() : (long double)v.as_int();
}


NumberOp number_op_of(BinOp op) {
  static const NumberOp table[] = {NumberOp::add,    NumberOp::sub,     NumberOp::mul,    NumberOp::truediv,
                                   NumberOp::floordiv, NumberOp::mod,   NumberOp::pow,    NumberOp::mul /* @ */,
                                   NumberOp::lshift, NumberOp::rshift,  NumberOp::bitand_, NumberOp::bitor_,
                                   NumberOp::bitxor};
  return table[int(op)];
}
NumberOp number_op_of(CmpOp op) {
  static const NumberOp table[] = {NumberOp::lt, NumberOp::gt, NumberOp::eq, NumberOp::ge, NumberOp::le, NumberOp::ne};
  return table[int(op)];
}
bool has_proxy(const Value& a, const Value& b) { return a.is_proxy() || b.is_proxy(); }

}  // namespace

Value eval_number_op(Interpreter& in, NumberOp op, std::span<const Value> x) {
  static const BinOp binops[] = {BinOp::Add,    BinOp::Sub,    BinOp::Mul,    BinOp::Div,
                                 BinOp::FloorDiv, BinOp::Mod,  BinOp::Pow,    BinOp::LShift,
                                 BinOp::RShift, BinOp::BitAnd, BinOp::BitOr,  BinOp::BitXor};
  static const CmpOp cmps[] = {CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge, CmpOp::Eq, CmpOp::Ne};
  auto builtin = [&](const char* name) {
    CallArgs args{{x[0]}, {}};
    return in.call(in.builtins().at(name), args);
  };
  if (op <= NumberOp::bitxor) return in.binary(binops[int(op)], x[0], x[1]);
  if (is_comparison(op)) return in.compare(cmps[int(op) - int(NumberOp::lt)], x[0], x[1]);
  switch (op) {
    case NumberOp::neg: return in.unary(UnaryOp::Neg, x[0]);
    case NumberOp::pos: return in.unary(UnaryOp::Pos, x[0]);
    case NumberOp::invert: return in.unary(UnaryOp::Invert, x[0]);
    case NumberOp::not_: return Value(!in.truth(x[0]));
    case NumberOp::abs: return builtin("abs");
    case NumberOp::min: return in.less(x[1], x[0]) ? x[1] : x[0];
    case NumberOp::max: return in.less(x[0], x[1]) ? x[1] : x[0];
    case NumberOp::to_int: return builtin("__type_int");
    case NumberOp::to_float: return builtin("__type_float");
    case NumberOp::to_bool: return Value(in.truth(x[0]));
    case NumberOp::round: return builtin("round");
    case NumberOp::math_sqrt: case NumberOp::math_exp: case NumberOp::math_log: case NumberOp::math_sin:
    case NumberOp::math_cos: case NumberOp::math_tanh: case NumberOp::math_floor: case NumberOp::math_ceil:
      return math_number_op(op, x[0]);
    default: break;
  }
  throw std::logic_error("eval_number_op: unknown op");
}

int64_t seq_index(const Value& idx, int64_t n, const char* what) {
  if (!idx.is_int_like())
    fail(ErrorKind::TypeError, "{} indices must be integers or slices, not {}", what, type_name(idx));
  int64_t i = idx.as_int();
  if (i < 0) i += n;
  if (i < 0 || i >= n) fail(ErrorKind::IndexError, "{} index out of range", what);
  return i;
}

SliceRange slice_range(const SliceObj& s, int64_t n) {
  auto get = [](const Value& v, int64_t dflt) {
    if (v.is_none()) return dflt;
    if (!v.is_int_like())
      fail(ErrorKind::TypeError, "slice indices must be integers or None or have an __index__ method");
    return v.as_int();
  };
  int64_t step = get(s.step, 1);
  if (step == 0) fail(ErrorKind::ValueError, "slice step cannot be zero");
  int64_t lo = step < 0 ? -1 : 0, hi = step < 0 ? n - 1 : n;
  auto clamp = [&](const Value& v, int64_t dflt) {
    if (v.is_none()) return dflt;
    int64_t i = get(v, 0);
    if (i < 0) i = std::max(i + n, lo);
    return std::min(i, hi);
  };
  int64_t start = clamp(s.start, step < 0 ? hi : lo), stop = clamp(s.stop, step < 0 ? lo : hi);
  int64_t count = step > 0 ? (stop > start ? (stop - start + step - 1) / step : 0)
                           : (start > stop ? (start - stop - step - 1) / (-step) : 0);
  return {start, step, count};
}


bool Interpreter::truth(const Value& v) {
  if (v.is_proxy()) return dispatch_->truth(v);
  switch (v.type()) {
    case Type::None: return false;
    case Type::Bool: case Type::Int: return v.as_int() != 0;
    case Type::Float: return v.as_float() != 0;
    case Type::Str: return !v.as_str().empty();
    case Type::List: case Type::Tuple: return !v.items().empty();
    case Type::Dict: return v.obj<DictObj>().count != 0;
    case Type::Range: return v.obj<RangeObj>().length() != 0;
    case Type::Tensor: return dispatch_->truth(v);
    case Type::Instance: {
      if (Value m = special(v, "__bool__"); !m.is(Type::Unbound)) {
        CallArgs none;
        Value r = call(m, none);
        if (!r.is(Type::Bool)) fail(ErrorKind::TypeError, "__bool__ should return bool, returned {}", type_name(r));
        return r.as_bool();
      }
      if (special(v, "__len__").is(Type::Unbound)) return true;
      return truth(instance_len(v));
    }
    default: return true;
  }
}

Value Interpreter::instance_len(const Value& v) {
  CallArgs none;
  Value n = call(special(v, "__len__"), none);
  if (!n.is_int_like()) fail(ErrorKind::TypeError, "'{}' object cannot be interpreted as an integer", type_name(n));
  if (!n.is_proxy() && n.as_int() < 0) fail(ErrorKind::ValueError, "__len__() should return >= 0");
  return n.is(Type::Bool) ? Value(n.as_int()) : n;
}

Value Interpreter::binary(BinOp op, const Value& a, const Value& b) {
  if (op == BinOp::Mod && a.is(Type::Str)) return percent_format(*this, a.as_str(), b);
  if (has_proxy(a, b) && a.is_number() && b.is_number() && op != BinOp::MatMul)
    return dispatch_->number_op(*this, number_op_of(op), std::vector<Value>{a, b});
  if (a.is_int_like() && b.is_int_like()) return int_binary(op, a, b);
  if (a.is_number() && b.is_number()) return float_binary(op, a, b);
  if (a.is(Type::Tensor) || b.is(Type::Tensor)) {
    if (a.is(Type::Tensor) && (b.is(Type::Tensor) || b.is_number()))
      return dispatch_->call(tensor_op(op), nullptr, std::vector<Value>{a, b}, CallArgs{}, false);
    if (a.is_number() && op == BinOp::Div) {
      // 2 / t: PyTorch's __rtruediv__ is t.reciprocal() * 2 (two roundings).
      Value r = dispatch_->call(op_named("reciprocal"), nullptr, std::vector<Value>{b}, CallArgs{}, false);
      return dispatch_->call(tensor_op(BinOp::Mul), nullptr, std::vector<Value>{r, a}, CallArgs{}, false);
    }
    if (a.is_number() && op != BinOp::MatMul) {
      // 2 - t: the number becomes a wrapped 0-dim tensor, as PyTorch's reflected ops do.
      Value wrapped = dispatch_->wrap_number(a);
      return dispatch_->call(tensor_op(op), nullptr, std::vector<Value>{wrapped, b}, CallArgs{}, false);
    }
  }
  if (op == BinOp::Add) {
    if (a.is(Type::Str) && b.is(Type::Str)) return Value::str(a.as_str() + b.as_str());
    if (a.is(Type::Str)) fail(ErrorKind::TypeError, "can only concatenate str (not \"{}\") to str", type_name(b));
    if (a.is_sequence() && b.is(a.type())) {
      std::vector<Value> items = a.items();
      items.insert(items.end(), b.items().begin(), b.items().end());
      if (a.is_size()) return Value::size(std::move(items));  // torch.Size + tuple is a torch.Size
      return a.is(Type::List) ? Value::list(std::move(items)) : Value::tuple(std::move(items));
    }
    if (a.is_sequence())
      fail(ErrorKind::TypeError, "can only concatenate {} (not \"{}\") to {}", type_name(a), type_name(b), type_name(a));
  }
  if (op == BinOp::Mul) {
    const Value *seq = &a, *n = &b;
    if (a.is_int_like()) std::swap(seq, n);
    if (n->is_int_like()) {
      if (seq->is(Type::Str)) {
        std::string out;
        out.reserve(size_t(repeat_length(int64_t(seq->as_str().size()), n->as_int(), 1)));
        for (int64_t i = 0; i < n->as_int(); ++i) out += seq->as_str();
        return Value::str(std::move(out));
      }
      if (seq->is_sequence()) {
        Value r = repeat(seq->items(), n->as_int(), seq->is(Type::Tuple));
        return seq->is_size() ? Value::size(r.items()) : r;  // torch.Size * n is a torch.Size
      }
    }
  }
  fail(ErrorKind::TypeError, "unsupported operand type(s) for {}: '{}' and '{}'", binop_symbol(op), type_name(a),
       type_name(b));
}

Value Interpreter::inplace_binary(BinOp op, const Value& a, const Value& b) {
  if (a.is(Type::Tensor) && op != BinOp::MatMul) {
    // t += x is t.add_(x): the tensor is updated in place, visible through every view.
    return dispatch_->call(tensor_op(op), &a, std::span<const Value>(&b, 1), CallArgs{}, true);
  }
  if (a.is(Type::List) && op == BinOp::Add) {  // xs += ys extends the list in place
    std::vector<Value> extra = iterate(b);
    a.items().insert(a.items().end(), extra.begin(), extra.end());
    return a;
  }
  return binary(op, a, b);
}

Value Interpreter::unary(UnaryOp op, const Value& v) {
  if (v.is_proxy() && v.is_number()) {
    static const NumberOp ops[] = {NumberOp::neg, NumberOp::pos, NumberOp::invert};
    return dispatch_->number_op(*this, ops[int(op)], std::span<const Value>(&v, 1));
  }
  if (v.is(Type::Tensor)) {
    if (op == UnaryOp::Pos) return v;
    const OpDef& def = op_named(op == UnaryOp::Neg ? "neg" : "bitwise_not");
    return dispatch_->call(def, nullptr, std::span<const Value>(&v, 1), CallArgs{}, false);
  }
  if (v.is_int_like()) {
    int64_t x = v.as_int();
    if (op == UnaryOp::Pos) return Value(x);
    if (op == UnaryOp::Invert) return Value(int64_t(~x));
    if (x == INT64_MIN) fail(ErrorKind::OverflowError, "int overflow: -({}) does not fit in a 64-bit int", x);
    return Value(-x);
  }
  if (v.is(Type::Float) && op != UnaryOp::Invert) return Value(op == UnaryOp::Neg ? -v.as_float() : v.as_float());
  const char* sym = op == UnaryOp::Neg ? "-" : op == UnaryOp::Pos ? "+" : "~";
  fail(ErrorKind::TypeError, "bad operand type for unary {}: '{}'", sym, type_name(v));
}

bool Interpreter::same_object(const Value& a, const Value& b) {
  if (a.is(Type::Tensor) && b.is(Type::Tensor)) return dispatch_->same_tensor(a, b);
  return a.object() == b.object();
}

namespace {

// One more level of comparing sequences, counted with the calls in progress.
class Deeper {
 public:
  explicit Deeper(int& depth, int limit) : depth_(depth) {
    if (depth_ >= limit) fail(ErrorKind::RecursionError, "maximum recursion depth exceeded in comparison");
    ++depth_;
  }
  ~Deeper() { --depth_; }
  Deeper(const Deeper&) = delete;
  Deeper& operator=(const Deeper&) = delete;

 private:
  int& depth_;
};

}  // namespace

bool Interpreter::equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (has_proxy(a, b)) return truth(dispatch_->number_op(*this, NumberOp::eq, std::vector<Value>{a, b}));
    if (a.is(Type::Float) || b.is(Type::Float)) return exact(a) == exact(b);
    return a.as_int() == b.as_int();
  }
  // An object's __eq__ (either side's, the left first), whatever the other is.
  for (const Value* x : {&a, &b})
    if (x->is(Type::Instance)) {
      if (same_object(a, b)) return true;
      Value m = special(*x, "__eq__");
      if (m.is(Type::Unbound)) continue;
      CallArgs args{{x == &a ? b : a}, {}};
      return truth(call(m, args));
    }
  if (a.type() != b.type()) return false;
  if (a.object() && same_object(a, b)) return true;  // identity first, as Python's containers
  switch (a.type()) {
    case Type::None: case Type::Ellipsis: return true;
    case Type::Str: return a.as_str() == b.as_str();
    case Type::List: case Type::Tuple: {
      auto &x = a.items(), &y = b.items();
      if (x.size() != y.size()) return false;
      Deeper deeper(depth_, kMaxDepth);
      for (size_t i = 0; i < x.size(); ++i)
        if (!equals(x[i], y[i])) return false;
      return true;
    }
    case Type::Dict: {
      auto &x = a.obj<DictObj>(), &y = b.obj<DictObj>();
      if (x.count != y.count) return false;
      Deeper deeper(depth_, kMaxDepth);
      bool same = true;
      x.each([&](const Value& k, const Value& v) {
        const Value* w = same ? y.find(k) : nullptr;
        same = w && equals(v, *w);
      });
      return same;
    }
    case Type::DType: return a.as_dtype() == b.as_dtype();
    case Type::Device: return a.as_device() == b.as_device();
    case Type::TypeObj: return a.as_type() == b.as_type();
    case Type::Range: {
      auto &x = a.obj<RangeObj>(), &y = b.obj<RangeObj>();
      return x.length() == y.length() && (x.length() == 0 || (x.start == y.start && (x.length() == 1 || x.step == y.step)));
    }
    case Type::Tensor: return truth(compare(CmpOp::Eq, a, b));
    default: return a.object() == b.object();
  }
}

bool Interpreter::less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (has_proxy(a, b)) return truth(dispatch_->number_op(*this, NumberOp::lt, std::vector<Value>{a, b}));
    return exact(a) < exact(b);
  }
  if (a.is(Type::Str) && b.is(Type::Str)) return a.as_str() < b.as_str();
  if (a.is_sequence() && b.is(a.type())) {
    auto &x = a.items(), &y = b.items();
    Deeper deeper(depth_, kMaxDepth);
    for (size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (!equals(x[i], y[i])) return less(x[i], y[i]);
    return x.size() < y.size();
  }
  if (a.is(Type::Tensor) || b.is(Type::Tensor)) return truth(compare(CmpOp::Lt, a, b));
  fail(ErrorKind::TypeError, "'<' not supported between instances of '{}' and '{}'", type_name(a), type_name(b));
}

Value Interpreter::compare(CmpOp op, const Value& a, const Value& b) {
  switch (op) {
    case CmpOp::Is: case CmpOp::IsNot: {
      // A number the trace keeps symbolic: `flag is True` is its type (which
      // the prologue checks) and its value (a guard where it is branched on).
      if (a.is_number() && b.is_number() && has_proxy(a, b)) {
        if (a.type() != b.type()) return Value(op == CmpOp::IsNot);
        NumberOp eq = op == CmpOp::Is ? NumberOp::eq : NumberOp::ne;
        return dispatch_->number_op(*this, eq, std::vector<Value>{a, b});
      }
      bool same = a.type() == b.type() &&
                  (a.object() ? same_object(a, b) : (a.is_none() || a.type() == Type::Ellipsis || equals(a, b)));
      return Value(same == (op == CmpOp::Is));
    }
    case CmpOp::In: case CmpOp::NotIn: {
      bool found = false;
      if (b.is(Type::Str)) {
        if (!a.is(Type::Str))
          fail(ErrorKind::TypeError, "'in <string>' requires string as left operand, not {}", type_name(a));
        found = b.as_str().find(a.as_str()) != std::string::npos;
      } else if (b.is(Type::Tensor)) {
        Value eq = compare(CmpOp::Eq, b, a);
        found = truth(dispatch_->call(op_named("any"), nullptr, std::span<const Value>(&eq, 1), CallArgs{}, false));
      } else if (b.is(Type::Dict)) {
        found = b.obj<DictObj>().find(a) != nullptr;
      } else if (b.is(Type::Range) && a.is_int_like()) {
        auto& r = b.obj<RangeObj>();
        int64_t x = a.as_int(), n = r.length();
        found = n > 0 && (x - r.start) % r.step == 0 && (x - r.start) / r.step >= 0 && (x - r.start) / r.step < n;
      } else if (Value contains = b.is(Type::Instance) ? special(b, "__contains__") : Value::unbound();
                 !contains.is(Type::Unbound)) {
        CallArgs arg{{a}, {}};
        found = truth(call(contains, arg));
      } else {
        if (!b.is_sequence() && !b.is(Type::Range) && !draws(b))
          fail(ErrorKind::TypeError, "argument of type '{}' is not iterable", type_name(b));
        // (an iterator is drawn from up to the item found, as in Python)
        found = !each(b, [&](const Value& x) { return !equals(x, a); });
      }
      return Value(found == (op == CmpOp::In));
    }
    default: break;
  }
  if (a.is(Type::Tensor) || b.is(Type::Tensor)) {
    if (a.is(Type::Tensor) && (b.is(Type::Tensor) || b.is_number()))
      return dispatch_->call(tensor_cmp(op), nullptr, std::vector<Value>{a, b}, CallArgs{}, false);
    if (a.is_number()) {
      static const CmpOp mirrored[] = {CmpOp::Gt, CmpOp::Lt, CmpOp::Eq, CmpOp::Le, CmpOp::Ge, CmpOp::Ne};
      return dispatch_->call(tensor_cmp(mirrored[int(op)]), nullptr, std::vector<Value>{b, a}, CallArgs{}, false);
    }
    if (op == CmpOp::Eq || op == CmpOp::Ne) return Value(op == CmpOp::Ne);
  }
  if (a.is_number() && b.is_number()) {
    if (has_proxy(a, b)) return dispatch_->number_op(*this, number_op_of(op), std::vector<Value>{a, b});
    long double x = exact(a), y = exact(b);
    switch (op) {
      case CmpOp::Lt: return Value(x < y);
      case CmpOp::Gt: return Value(x > y);
      case CmpOp::Eq: return Value(x == y);
      case CmpOp::Ge: return Value(x >= y);
      case CmpOp::Le: return Value(x <= y);
      case CmpOp::Ne: return Value(x != y);
      default: break;
    }
  }
  switch (op) {
    case CmpOp::Eq: return Value(equals(a, b));
    case CmpOp::Ne: return Value(!equals(a, b));
    default: break;
  }
  bool comparable = (a.is(Type::Str) && b.is(Type::Str)) || (a.is_sequence() && b.is(a.type()));
  if (!comparable)
    fail(ErrorKind::TypeError, "'{}' not supported between instances of '{}' and '{}'", cmpop_symbol(op),
         type_name(a), type_name(b));
  switch (op) {
    case CmpOp::Lt: return Value(less(a, b));
    case CmpOp::Gt: return Value(less(b, a));
    case CmpOp::Le: return Value(!less(b, a));
    default: return Value(!less(a, b));
  }
}

bool Interpreter::each(const Value& v, const std::function<bool(const Value&)>& step) {
  if (v.is(Type::Range)) {
    const RangeObj& r = v.obj<RangeObj>();
    for (int64_t i = 0, n = r.length(); i < n; ++i)
      if (!step(Value(r.at(i)))) return false;
    return true;
  }
  if (v.is(Type::List)) {
    const std::vector<Value>& items = v.items();
    for (size_t i = 0; i < items.size(); ++i)
      if (!step(Value(items[i]))) return false;
    return true;
  }
  if (v.is(Type::Instance) && !special(v, "__iter__").is(Type::Unbound)) return each(make_iterator(*this, v), step);
  if (v.is(Type::Iterator)) {
    auto& it = v.obj<IteratorObj>();
    while (std::optional<Value> x = it.take())
      if (!step(*x)) return false;
    return true;
  }
  if (v.is(Type::Instance) && !special(v, "__getitem__").is(Type::Unbound)) {
    // The sequence protocol: v[0], v[1], ... until IndexError.
    Value get = special(v, "__getitem__");
    for (int64_t i = 0;; ++i) {
      if (interrupt_requested() && take_interrupt()) fail(ErrorKind::KeyboardInterrupt, "");
      CallArgs at{{Value(i)}, {}};
      Value x;
      try {
        x = call(get, at);
      } catch (Error& e) {
        if (e.kind() != ErrorKind::IndexError) throw;
        return true;
      }
      if (!step(x)) return false;
    }
  }
  for (const Value& x : iterate(v))
    if (!step(x)) return false;
  return true;
}

std::vector<Value> Interpreter::iterate(const Value& v) {
  switch (v.type()) {
    case Type::List: case Type::Tuple: return v.items();
    case Type::Dict: return v.obj<DictObj>().keys();
    case Type::Range: {
      auto& r = v.obj<RangeObj>();
      std::vector<Value> out;
      for (int64_t i = 0, n = r.length(); i < n; ++i) out.emplace_back(r.at(i));
      return out;
    }
    case Type::Str: {
      std::vector<Value> out;
      const std::string& s = v.as_str();  // by character, not UTF-8 byte
      for (size_t i = 0; i < s.size();) {
        size_t j = i + 1;
        while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
        out.push_back(Value::str(s.substr(i, j - i)));
        i = j;
      }
      return out;
    }
    case Type::Tensor: {
      if (tensor_dim(v) == 0) fail(ErrorKind::TypeError, "iteration over a 0-d tensor");
      std::vector<Value> out;
      for (int64_t i = 0, n = tensor_len(v).as_int(); i < n; ++i) {
        Value idx(i);
        out.push_back(dispatch_->getitem(v, std::span<const Value>(&idx, 1)));
      }
      return out;
    }
    case Type::Iterator: case Type::Instance: {
      // What is left of an iterator (then used up); an object's __iter__,
      // else Python's sequence protocol: v[0], v[1], ... until IndexError.
      if (v.is(Type::Instance) && special(v, "__iter__").is(Type::Unbound) && special(v, "__getitem__").is(Type::Unbound))
        break;
      std::vector<Value> out;
      each(v, [&](const Value& x) {
        out.push_back(x);
        return true;
      });
      return out;
    }
    default: break;
  }
  fail(ErrorKind::TypeError, "'{}' object is not iterable", type_name(v));
}

int64_t Interpreter::tensor_dim(const Value& t) {
  if (!t.is_proxy()) return t.as_tensor().dim();
  return dispatch_->call(op_named("dim"), &t, {}, CallArgs{}, false).as_int();
}

Value Interpreter::tensor_len(const Value& t) {
  if (!t.is_proxy()) return Value(t.as_tensor().sizes()[0]);
  Value zero(int64_t(0));
  return dispatch_->call(op_named("size"), &t, std::span<const Value>(&zero, 1), CallArgs{}, false);
}

Value Interpreter::getattr(const Value& obj, const std::string& name) {
  if (obj.is(Type::Tensor)) {
    if (const OpDef* a = find_attribute(name)) {
      return dispatch_->call(*a, &obj, {}, CallArgs{}, false);
    }
    if (auto m = find_method(name)) {
      const OpDef* op = m->op;
      bool inplace = m->inplace;
      return make_builtin(name, [obj, op, inplace](Interpreter& in, CallArgs& args) {
        return in.dispatch().call(*op, &obj, args.args, args, inplace);
      });
    }
    if (Value v = autograd_attribute(obj, name); !v.is(Type::Unbound)) return v;
    if (const Shorthand* sh = find_shorthand(name))
      return make_builtin(name, [obj, sh](Interpreter& in, CallArgs& args) { return sh->call(in, obj, args); });
    no_attribute(obj, name);
  }
  if (obj.is(Type::Module)) {
    auto& m = obj.obj<ModuleObj>();
    if (auto it = m.globals.find(name); it != m.globals.end()) {
      // While tracing, guarded as a global of that module is (load_name);
      // a built-in or library module's names cannot be rebound.
      const Value& v = it->second;
      const bool fixed = m.library || m.path.empty();
      if (dispatch_->tracing() && !(fixed && !v.is(Type::List) && !v.is(Type::Dict) && !v.is(Type::Instance)))
        dispatch_->external_load(m.name + "." + name, v);
      return v;
    }
    no_attribute(obj, name);
  }
  if (obj.is(Type::DType)) {
    DType d = obj.as_dtype();
    if (name == "is_floating_point") return make_builtin(name, [d](Interpreter&, CallArgs&) { return Value(is_floating(d)); });
    if (name == "itemsize") return Value(itemsize(d));
  }
  if (obj.is(Type::Device) && name == "type") return Value::str(obj.as_device().type == DeviceType::CPU ? "cpu" : "cuda");  // torch.device.type
  if (obj.is(Type::Tuple) && !obj.obj<ListObj>().return_type.empty()) {
    const auto fields = return_fields(obj.obj<ListObj>().return_type);
    for (size_t i = 0; i < 2; ++i)
      if (name == fields[i]) return obj.items()[i];
  }
  if (obj.is(Type::List) || obj.is(Type::Tuple)) return method(obj, name);
  if (obj.is(Type::Str)) return str_method(obj, name);
  if (obj.is(Type::Dict)) return dict_method(obj, name);
  Value v = object_attr(obj, name);
  if (!v.is(Type::Unbound)) return v;
  no_attribute(obj, name);
}

namespace {

// The items of a tensor's index: a tuple's, or (as PyTorch 1.13 reads it,
// after NumPy's old rule) a list shorter than 32 that holds a sequence, a
// tensor, a slice, an Ellipsis or None: x[[[0, 1], [1, 2]]] is
// x[[0, 1], [1, 2]]. Anything else is one index.
std::span<const Value> tensor_index_items(const Value& index) {
  if (index.is(Type::Tuple) && !index.is_size()) return index.items();
  if (index.is(Type::List) && index.items().size() < 32 &&
      std::any_of(index.items().begin(), index.items().end(), [](const Value& v) {
        return v.is_sequence() || v.is(Type::Tensor) || v.is(Type::Slice) || v.is(Type::Ellipsis) || v.is_none();
      }))
    return index.items();
  return std::span<const Value>(&index, 1);
}

}  // namespace

Value Interpreter::getitem(const Value& obj, const Value& index) {
  if (obj.is(Type::Tensor)) return dispatch_->getitem(obj, tensor_index_items(index));
  if (obj.is_sequence() || obj.is(Type::Str) || obj.is(Type::Range)) {
    const char* what = obj.is(Type::Str) ? "string" : obj.is(Type::Tuple) ? "tuple" : obj.is(Type::List) ? "list" : "range object";
    // (a string by character: the byte offsets of its characters, unless ASCII)
    const bool ascii = obj.is(Type::Str) && is_ascii(obj.as_str());
    const std::vector<size_t> at = obj.is(Type::Str) && !ascii ? char_offsets(obj.as_str()) : std::vector<size_t>{};
    auto char_at = [&](int64_t i) {
      const std::string& s = obj.as_str();
      return ascii ? s.substr(size_t(i), 1) : s.substr(at[size_t(i)], at[size_t(i) + 1] - at[size_t(i)]);
    };
    int64_t n = obj.is(Type::Str) ? (ascii ? int64_t(obj.as_str().size()) : int64_t(at.size()) - 1)
                : obj.is(Type::Range) ? obj.obj<RangeObj>().length() : int64_t(obj.items().size());
    if (index.is(Type::Slice)) {
      SliceRange r = slice_range(index.obj<SliceObj>(), n);
      if (obj.is(Type::Str)) {
        std::string out;
        for (int64_t i = 0; i < r.count; ++i) out += char_at(r.start + i * r.step);
        return Value::str(std::move(out));
      }
      if (obj.is(Type::Range)) {
        auto& rg = obj.obj<RangeObj>();
        return Value(Type::Range, std::make_shared<RangeObj>(rg.at(r.start), rg.at(r.start + r.count * r.step), rg.step * r.step));
      }
      std::vector<Value> out;
      for (int64_t i = 0; i < r.count; ++i) out.push_back(obj.items()[size_t(r.start + i * r.step)]);
      if (obj.is_size()) return Value::size(std::move(out));
      return obj.is(Type::List) ? Value::list(std::move(out)) : Value::tuple(std::move(out));
    }
    if (index.is(Type::Tensor) && index.as_tensor().dim() == 0 && !is_floating(index.as_tensor().dtype()))
      return getitem(obj, Value(index.as_tensor().item().to_int()));
    int64_t i = seq_index(index, n, what);
    if (obj.is(Type::Str)) return Value::str(char_at(i));
    if (obj.is(Type::Range)) return Value(obj.obj<RangeObj>().at(i));
    return obj.items()[size_t(i)];
  }
  if (obj.is(Type::Dict)) {
    if (const Value* v = obj.obj<DictObj>().find(index)) return *v;
    raise_key_error(index);
  }
  Value m = special(obj, "__getitem__");
  if (!m.is(Type::Unbound)) {
    CallArgs args{{index}, {}};
    return call(m, args);
  }
  if (obj.is(Type::Class) && obj.obj<ClassObj>().kind) fail(ErrorKind::TypeError, "type '{}' is not subscriptable", obj.obj<ClassObj>().name);
  fail(ErrorKind::TypeError, "'{}' object is not subscriptable", type_name(obj));
}

void Interpreter::setitem(const Value& obj, const Value& index, const Value& v) {
  if (obj.is(Type::Tensor)) return dispatch_->setitem(obj, tensor_index_items(index), v);
  if (obj.is(Type::List)) {
    auto& items = obj.items();
    if (index.is(Type::Slice)) {
      SliceRange r = slice_range(index.obj<SliceObj>(), int64_t(items.size()));
      std::vector<Value> repl = iterate(v);
      if (r.step == 1) {
        auto first = items.begin() + r.start;
        items.erase(first, first + r.count);
        items.insert(items.begin() + r.start, repl.begin(), repl.end());
        return;
      }
      if (int64_t(repl.size()) != r.count)
        fail(ErrorKind::ValueError, "attempt to assign sequence of size {} to extended slice of size {}", repl.size(), r.count);
      for (int64_t i = 0; i < r.count; ++i) items[size_t(r.start + i * r.step)] = repl[size_t(i)];
      return;
    }
    items[size_t(seq_index(index, int64_t(items.size()), "list assignment"))] = v;
    return;
  }
  if (obj.is(Type::Dict)) return obj.obj<DictObj>().set(index, v);
  Value m = special(obj, "__setitem__");
  if (!m.is(Type::Unbound)) {
    CallArgs args{{index, v}, {}};
    call(m, args);
    return;
  }
  fail(ErrorKind::TypeError, "'{}' object does not support item assignment", type_name(obj));
}

void Interpreter::delitem(const Value& obj, const Value& index) {
  if (obj.is(Type::Dict)) {
    if (!obj.obj<DictObj>().erase(index)) raise_key_error(index);
    return;
  }
  if (obj.is(Type::List)) {
    auto& items = obj.items();
    if (index.is(Type::Slice)) {
      SliceRange r = slice_range(index.obj<SliceObj>(), int64_t(items.size()));
      std::vector<char> drop(items.size(), 0);
      for (int64_t i = 0; i < r.count; ++i) drop[size_t(r.start + i * r.step)] = 1;
      std::vector<Value> kept;
      for (size_t i = 0; i < items.size(); ++i)
        if (!drop[i]) kept.push_back(std::move(items[i]));
      items = std::move(kept);
      return;
    }
    items.erase(items.begin() + seq_index(index, int64_t(items.size()), "list assignment"));
    return;
  }
  Value m = special(obj, "__delitem__");
  if (!m.is(Type::Unbound)) {
    CallArgs args{{index}, {}};
    call(m, args);
    return;
  }
  fail(ErrorKind::TypeError, "'{}' object does not support item deletion", type_name(obj));
}

}  // namespace thn
