#include "cli/fuzz_gen.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <vector>

namespace thn {

namespace {

// splitmix64: plain integer arithmetic, so a seed names the same programs on
// every machine (the standard distributions are not specified that tightly).
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int below(int n) { return int(next() % uint64_t(n)); }
  int between(int lo, int hi) { return lo + below(hi - lo + 1); }  // inclusive
  bool chance(double p) { return double(next() >> 11) * 0x1.0p-53 < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[size_t(below(int(v.size())))];
  }
};

// In promotion order: a later dtype of a higher category wins.
enum class DT { Bool, I32, I64, F16, BF16, F32, F64 };
int category(DT d) { return d == DT::Bool ? 0 : d >= DT::F16 ? 2 : 1; }
bool is_float(DT d) { return category(d) == 2; }
bool is_int(DT d) { return category(d) == 1; }
const char* dt_name(DT d) {
  static const char* names[] = {"bool", "int32", "int64", "float16", "bfloat16", "float32", "float64"};
  return names[int(d)];
}
// A value of dtype `from` may be written into a tensor of dtype `to`.
bool can_cast(DT from, DT to) { return category(from) <= category(to); }

// A dim is a size name: 0 is the size 1 in every call; any other number is a
// size that may differ between calls, equal wherever the number is.
using Shape = std::vector<int>;
constexpr int kOne = 0;

struct Var {
  std::string name;  // or the expression, for a value not yet bound
  DT dt = DT::F32;
  Shape shape;
  bool writable = true;  // no expanded (stride-0) dims
  bool input = false;    // an input, or (perhaps) a view of one
  int root = -1;         // the storage it (perhaps) views: a parameter's index, another number per new value
  bool list = false;     // returned: the argument list ps itself
};

// An operand of a promoting op: a tensor (0-dim or not) or a Python number.
struct Operand {
  DT dt;
  int priority;  // 2: a tensor with dims, 1: a 0-dim tensor, 0: a number
};
Operand tensor_operand(const Var& v) { return {v.dt, v.shape.empty() ? 1 : 2}; }
Operand number_operand(bool is_float_number) { return {is_float_number ? DT::F32 : DT::I64, 0}; }

// Of two dtypes, the one both promote to: float16 and bfloat16 meet in
// float32, else the later one.
DT wider(DT a, DT b) {
  if (std::min(a, b) == DT::F16 && std::max(a, b) == DT::BF16) return DT::F32;
  return std::max(a, b);
}

// PyTorch's result type: the dimensioned tensors decide, then 0-dim tensors
// and then numbers count only where their category is higher (a number of a
// higher category gives that category's default dtype).
DT promote(const std::vector<Operand>& ops) {
  std::optional<DT> result;
  for (int priority = 2; priority >= 0; --priority) {
    std::optional<DT> group;
    for (const Operand& o : ops)
      if (o.priority == priority) group = group ? wider(*group, o.dt) : o.dt;
    if (!group) continue;
    if (!result) result = group;
    else if (category(*group) > category(*result)) result = group;
  }
  return result.value_or(DT::F32);
}

std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    int da = i < a.size() ? a[a.size() - 1 - i] : kOne, db = i < b.size() ? b[b.size() - 1 - i] : kOne;
    if (da != db && da != kOne && db != kOne) return std::nullopt;
    out[out.size() - 1 - i] = da == kOne ? db : da;
  }
  return out;
}
// `src` broadcasts to exactly `target`'s shape (an in-place op's operand).
bool fits(const Shape& src, const Shape& target) { return broadcast(target, src) == target; }

std::string join(const std::vector<std::string>& parts, const char* sep = ", ") {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::string shape_tuple(const std::vector<int64_t>& sizes) {
  if (sizes.size() == 1) return fmt::format("({},)", sizes[0]);
  return fmt::format("({})", fmt::join(sizes, ", "));
}

// How one call makes one tensor argument.
struct ArgKind {
  enum Kind { Fresh, Permuted, Strided, Expanded, Same, Overlap, Row, Transposed } kind = Fresh;
  int other = -1;  // the earlier parameter it is made from (Same, Overlap, Row, Transposed)
};

class Generator {
 public:
  Generator(uint64_t seed, uint64_t index, bool cuda)
      : r_{seed * 0x9e3779b97f4a7c15ULL ^ (index + 1) * 0xd1b54a32d192ed03ULL}, cuda_(cuda) {
    r_.next();
  }

  std::string program(uint64_t seed, uint64_t index) {
    choose_signature();
    std::vector<std::string> lines = body(r_.between(3, 10), 1);
    if (packed_) {
      // The tensors come in one list, dict or object: unpacked first; the
      // container may change (its new contents are written back).
      for (size_t i = 0; i < params_.size(); ++i) {
        std::string item = pack_ == Pack::List ? fmt::format("ps[{}]", i)
                           : pack_ == Pack::Dict ? fmt::format("ps[\"p{}\"]", i) : fmt::format("ps.p{}", i);
        lines.insert(lines.begin() + long(i), fmt::format("    p{} = {}", i, item));
      }
      if (r_.chance(0.6)) {
        const Var* v = any();
        bool add = r_.chance(0.5);
        int k = r_.below(int(params_.size()));
        if (pack_ == Pack::List)
          lines.push_back(add ? fmt::format("    ps.append({})", v->name) : fmt::format("    ps[{}] = {}", k, v->name));
        else if (pack_ == Pack::Dict)
          lines.push_back(add ? fmt::format("    ps[\"extra\"] = {}", v->name) : fmt::format("    ps[\"p{}\"] = {}", k, v->name));
        else
          lines.push_back(add ? fmt::format("    ps.extra = {}", v->name) : fmt::format("    ps.p{} = {}", k, v->name));
      }
    }
    std::string ret = returns();
    std::string out =
        fmt::format("# thn fuzz --seed {} program {}{}\nimport math\nimport nn\n\n", seed, index, cuda_ ? " --device cuda" : "");
    out += "def show(t):\n    print(t.dtype, t.shape, t.tolist())\n\n\n";
    if (pack_ == Pack::Object)
      out += "class Box:\n    def __init__(self, **tensors):\n        for k, t in tensors.items():\n"
             "            setattr(self, k, t)\n\n\n";
    // Some float inputs hold infinities and NaNs (make).
    out += "def special(t):\n    k = randint(0, 8, t.shape)\n"
           "    return where(k == 0, math.inf, where(k == 1, -math.inf, where(k == 2, math.nan, t)))\n\n\n";
    std::vector<std::string> names;
    if (packed_) names.push_back("ps");
    else for (const Var& p : params_) names.push_back(p.name);
    if (has_n_) names.push_back("n");
    if (has_s_) names.push_back("s");
    out += fmt::format("def f({}):\n", join(names));
    for (const std::string& l : lines) out += l + "\n";
    out += "    return " + ret + "\n\n\n";
    std::vector<std::string> argnums;
    for (size_t i = 0; i < params_.size(); ++i) argnums.push_back(std::to_string(i));
    std::string fn = grad_ ? fmt::format("grad(f, argnums=({},))", join(argnums)) : "f";
    out += fmt::format("g = jit({}, cache=\"{}\", shapes=\"{}\")\n", fn, cache_, shapes_);
    out += calls(seed * 1000003 + index);
    return out;
  }

 private:
  Rng r_;
  bool cuda_;  // the inputs are made on the CPU, then moved to CUDA
  int rank_ = 2;  // sizes named 1..rank_ shape the inputs
  std::vector<Var> params_;
  bool has_n_ = false, has_s_ = false, zero_sizes_ = false;
  bool packed_ = false;  // f takes its tensors as one list, dict or object, ps
  // The program differentiates: f returns a sum of its float values, and
  // jit(grad(f, argnums=(0, ...))) gives the gradients of its (float)
  // tensor arguments; f's body writes nothing in place (autograd refuses
  // in-place ops on tensors that require grad).
  bool grad_ = false;
  enum class Pack { List, Dict, Object } pack_ = Pack::List;
  std::string cache_, shapes_;
  std::vector<Var> vars_;  // in scope in f's body
  std::vector<Var> returned_;
  int next_size_ = 100, next_var_ = 0, next_root_ = 1000;
  // Pairs of parameters one of which is written with the other as an
  // operand: a call never passes them overlapping storage. Where storage
  // overlaps only partly and PyTorch cannot tell (a strided or transposed
  // view), the result of such a write depends on PyTorch's loop order.
  std::set<std::pair<int, int>> written_from_;
  // Pairs one of which is scattered into (index_add_, index_copy_) from the
  // other: PyTorch refuses any shared storage, even the very same tensor.
  std::set<std::pair<int, int>> scattered_from_;

  DT random_dtype() {
    int x = r_.below(20);
    if (x < 11) return r_.chance(0.15) ? r_.pick(std::vector<DT>{DT::F16, DT::BF16}) : DT::F32;
    return x < 13 ? DT::F64 : x < 16 ? DT::I64 : x < 17 ? DT::I32 : DT::Bool;
  }

  Shape template_suffix(int rank) {
    Shape s;
    for (int d = rank_ - rank + 1; d <= rank_; ++d) s.push_back(r_.chance(0.15) ? kOne : d);
    return s;
  }

  void choose_signature() {
    grad_ = r_.chance(0.2);
    rank_ = r_.chance(0.05) ? 0 : r_.between(1, 3);
    zero_sizes_ = r_.chance(0.06);
    int count = r_.between(1, 3);
    for (int i = 0; i < count; ++i) {
      Var p;
      p.name = fmt::format("p{}", i);
      p.input = true;
      p.root = i;
      p.dt = grad_ ? (r_.chance(0.3) ? DT::F64 : DT::F32) : random_dtype();
      p.shape = template_suffix(i == 0 ? rank_ : r_.between(0, rank_));
      if (i > 0) {
        const Var& q = params_[size_t(r_.below(i))];
        int rel = r_.below(10);
        if (rel < 4) {
          p.shape = q.shape;  // may be passed the same tensor, or an overlapping slice
          p.dt = q.dt;
        } else if (rel < 6 && !q.shape.empty()) {
          p.shape.assign(q.shape.begin() + 1, q.shape.end());  // may be a row of q
          p.dt = q.dt;
        } else if (rel < 7 && q.shape.size() == 2) {
          p.shape = {q.shape[1], q.shape[0]};  // may be q transposed
          p.dt = q.dt;
        }
      }
      params_.push_back(p);
    }
    packed_ = !grad_ && r_.chance(0.15);
    if (packed_) pack_ = r_.pick(std::vector<Pack>{Pack::List, Pack::Dict, Pack::Object});
    has_n_ = r_.chance(0.6);
    has_s_ = r_.chance(0.35);
    cache_ = r_.pick(std::vector<std::string>{"auto", "auto", "constant", "symbolic", "symbolic", "none"});
    shapes_ = r_.pick(std::vector<std::string>{"auto", "symbolic", "static", "static"});
    vars_ = params_;
  }

  std::string new_name() { return fmt::format("t{}", next_var_++); }
  int new_size() { return next_size_++; }

  // A variable in scope satisfying `ok`, the later ones likelier.
  const Var* pick(const std::function<bool(const Var&)>& ok) {
    std::vector<const Var*> c;
    for (const Var& v : vars_)
      if (ok(v)) c.push_back(&v);
    if (c.empty()) return nullptr;
    if (r_.chance(0.5)) return c[size_t(r_.below(int(c.size())))];
    return c[c.size() - 1 - size_t(r_.below(std::min<int>(3, int(c.size()))))];
  }

  const Var* any() { return pick([](const Var&) { return true; }); }

  // A new value of x's dtype and shape, in memory of its own.
  static Var new_value_like(const Var& x) {
    Var v = x;
    v.writable = true;
    v.input = false;
    v.root = -1;
    return v;
  }

  int dim(const Var& v) { return r_.below(int(v.shape.size())); }
  // `d` as the program writes it: sometimes negative.
  std::string dim_text(const Var& v, int d) {
    return std::to_string(r_.chance(0.3) ? d - int(v.shape.size()) : d);
  }

  // A number operand: a literal, or one of f's number arguments.
  std::pair<std::string, bool> number(bool allow_float = true) {  // text, is a float
    int x = r_.below(7);
    if (x == 0 && has_n_) return {"n", false};
    if (x == 1 && has_s_ && allow_float) return {"s", true};
    if (x == 6 && (has_n_ || has_s_)) {  // a function of a number argument: recorded, not pinned
      if (has_s_ && allow_float && r_.chance(0.5))
        return {r_.pick(std::vector<std::string>{"math.sqrt(abs(s) + 1.0)", "math.exp(-abs(s))", "math.cos(s)",
                                                  "math.tanh(s)", "math.log(abs(s) + 1.0)", "float(math.floor(s))"}),
                true};
      if (has_s_ && r_.chance(0.5))
        return {r_.pick(std::vector<std::string>{"math.floor(s)", "math.ceil(s)", "round(s)"}), false};
      if (has_n_) return {r_.pick(std::vector<std::string>{"abs(n)", "min(n, 2)", "max(n, 1)", "int(math.sqrt(abs(n)))"}), false};
    }
    if (x == 2 && allow_float) return {r_.pick(std::vector<std::string>{"0.5", "-1.5", "2.0"}), true};
    return {r_.pick(std::vector<std::string>{"1", "2", "-3"}), false};
  }

  // ---- expressions: each returns the value's type with its text as name ----

  std::optional<Var> unary() {
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

  std::optional<Var> binary() {
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

  std::optional<Var> with_number() {
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

  std::optional<Var> reduction() {
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

  // The rest of the op surface, a kind at a time: more elementwise
  // functions, two-operand functions, the nan-aware and paired reductions,
  // products in BLAS's shapes.
  std::optional<Var> more_ops() {
    const Var* x = any();
    if (!x) return std::nullopt;
    const int k = r_.below(4);
    return k == 0 ? more_unary(*x) : k == 1 ? more_binary(*x) : k == 2 ? more_reduction() : product(*x);
  }

  std::optional<Var> more_unary(const Var& x) {
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

  std::optional<Var> more_binary(const Var& x) {
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

  std::optional<Var> more_reduction() {
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

  // Products whose shapes always fit: x with itself, transposed.
  std::optional<Var> product(const Var& x) {
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

  std::optional<Var> view() {
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

  std::optional<Var> copy() {
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

  // An index into dim `d` of `x`, in range for every size a call gives
  // (size 0 included): the positions reversed, or (unless `distinct`) each
  // position twice and the upper half never, or (with `negative`, Python's
  // indexing) counted from the end. Its length is x.shape[d].
  std::string index_along(const Var& x, int d, bool distinct, bool negative = false) {
    std::string n = fmt::format("{}.shape[{}]", x.name, d), on = cuda_ ? ", device=\"cuda\"" : "";
    if (negative && r_.chance(0.3)) return fmt::format("(arange({0}{1}) - {0})", n, on);
    if (distinct || r_.chance(0.5)) return fmt::format("arange({}{}).flip(0)", n, on);
    return fmt::format("(arange({}{}) // 2)", n, on);
  }

  // x[idx] along dim 0 or 1 (a slice before it).
  std::string subscript(const Var& x, int d, const std::string& index) {
    return fmt::format("{}[{}{}]", x.name, d == 0 ? "" : ":, ", index);
  }

  std::optional<Var> gathered() {
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

  // A 1-D index as gather's and scatter's index into x: laid along dim d,
  // size 1 over the others or (expand) broadcast to x's shape.
  std::string laid_along(const Var& x, int d, const std::string& index, bool expand) {
    std::vector<std::string> view(x.shape.size(), "1");
    view[size_t(d)] = "-1";
    std::string out = fmt::format("{}.reshape({}{})", index, join(view), view.size() == 1 ? "," : "");
    return expand ? out + fmt::format(".expand_as({})", x.name) : out;
  }

  // x stacked n % 3 + 1 times (a new leading dim): under cache="symbolic"
  // and shapes="symbolic" a size made from a number argument, which calls
  // make 1, 2 or 3.
  std::optional<Var> sized_by_n() {
    const Var* x = any();
    if (!x || !has_n_) return std::nullopt;
    Var v = new_value_like(*x);
    v.name = fmt::format("(zeros((n % 3 + 1,) + tuple({0}.shape), dtype={1}) + {0})", x->name, dt_name(x->dt));
    v.shape.insert(v.shape.begin(), new_size());
    return v;
  }

  std::optional<Var> value() {
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

  // ---- in-place statements ----

  // A target written in place: a writable variable, or a view of one written
  // on the spot (`x[0]`, `x[:, 1]`, `x.t()`).
  std::optional<Var> target() {
    const Var* x = pick([&](const Var& v) { return v.writable && (v.input || r_.chance(0.6)); });
    if (!x) x = pick([](const Var& v) { return v.writable; });
    if (!x) return std::nullopt;
    Var t = *x;
    int rank = int(x->shape.size());
    int k = r_.below(8);
    if (k == 0 && rank >= 1) {
      t.name = fmt::format("{}[0]", x->name);
      t.shape.erase(t.shape.begin());
    } else if (k == 1 && rank >= 2) {
      t.name = fmt::format("{}[:, 1:]", x->name);
      t.shape[1] = new_size();
    } else if (k == 2 && rank == 2) {
      t.name = fmt::format("{}.t()", x->name);
      std::swap(t.shape[0], t.shape[1]);
    }
    return t;
  }

  // Something to write into `t`: a variable that broadcasts to it and casts
  // to its dtype, or (when numbers are allowed) a number.
  std::optional<std::string> source(const Var& t, bool allow_number = true) {
    const Var* s = !allow_number || r_.chance(0.6) ? pick([&](const Var& v) {
      return fits(v.shape, t.shape) && can_cast(v.dt, t.dt) && v.root != t.root;
    })
                                                   : nullptr;
    if (s) {
      operand_of(t, *s);
      return s->name;
    }
    if (!allow_number) return std::nullopt;
    if (t.dt == DT::Bool) return "True";
    return number(is_float(t.dt)).first;
  }

  void operand_of(const Var& target, const Var& operand, bool scattered = false) {
    if (target.root < int(params_.size()) && operand.root < int(params_.size()))
      (scattered ? scattered_from_ : written_from_).insert(std::minmax(target.root, operand.root));
  }

  std::optional<std::string> in_place() {
    std::optional<Var> t = target();
    if (!t) return std::nullopt;
    int k = r_.below(10);
    bool numeric = t->dt != DT::Bool;
    std::string stmt;
    if (k == 9 && t->shape.size() >= 1 && r_.chance(0.3)) {
      // x[idx] = source: a tensor of the target's dtype (or a number); a
      // duplicate index's last value wins.
      const Var* s = r_.chance(0.7) ? pick([&](const Var& v) {
        return fits(v.shape, t->shape) && v.dt == t->dt && v.root != t->root;
      })
                                    : nullptr;
      if (s) operand_of(*t, *s, true);
      int d = dim(*t) % 2;
      std::string value = s ? s->name : t->dt == DT::Bool ? "True" : number(is_float(t->dt)).first;
      // (augmented: x[idx] += v reads x[idx], then stores, the last duplicate winning)
      const char* op = numeric && r_.chance(0.3) ? r_.pick(std::vector<const char*>{"+", "-", "*"}) : "";
      return fmt::format("{} {}= {}", subscript(*t, d, index_along(*t, d, false, true)), op, value);
    }
    if (k == 9 && numeric && !t->shape.empty()) {
      // index_add_ / index_copy_ / scatter_add_ / scatter_ from a tensor of
      // the target's type (scatter_: or a number); index_copy_'s index has
      // no duplicates (their order is unspecified), a scatter's index is
      // laid along the dim (gathered()), its duplicates apply in index order.
      const Var* s = pick([&](const Var& v) { return v.shape == t->shape && v.dt == t->dt && v.root != t->root; });
      if (!s) return std::nullopt;
      operand_of(*t, *s, true);
      int d = dim(*t);
      if (r_.chance(0.4)) {
        std::string index = laid_along(*t, d, index_along(*t, d, false), true);
        if (r_.chance(0.5)) return fmt::format("{}.scatter_add_({}, {}, {})", t->name, dim_text(*t, d), index, s->name);
        return fmt::format("{}.scatter_({}, {}, {})", t->name, dim_text(*t, d), index,
                           r_.chance(0.7) ? s->name : number(is_float(t->dt)).first);
      }
      bool add = r_.chance(0.6);
      std::string index = index_along(*t, d, !add);
      if (add) return fmt::format("{}.index_add_({}, {}, {}{})", t->name, dim_text(*t, d), index, s->name,
                                  r_.chance(0.3) ? ", alpha=2" : "");
      return fmt::format("{}.index_copy_({}, {}, {})", t->name, dim_text(*t, d), index, s->name);
    }
    if (k <= 1 && numeric) {
      std::string op = r_.pick(std::vector<std::string>{"add_", "sub_", "mul_"});
      stmt = fmt::format("{}.{}({})", t->name, op, *source(*t));
      if (r_.chance(0.25)) stmt += is_float(t->dt) ? ".sin_()" : ".mul_(2)";
    } else if (k == 2 && numeric && t->name.back() != ')') {  // (`x.t() += y` is not an assignment)
      stmt = fmt::format("{} {}= {}", t->name, r_.pick(std::vector<std::string>{"+", "-", "*"}), *source(*t));
    } else if (k == 3) {
      std::optional<std::string> src = source(*t, false);
      if (!src) return std::nullopt;
      stmt = fmt::format("{}.copy_({})", t->name, *src);
    } else if (k == 4) {
      std::string index = t->shape.empty() ? "..." : r_.pick(std::vector<std::string>{"0", "-1", "1:", ":"});
      Var view = *t;
      if (index == "0" || index == "-1") view.shape.erase(view.shape.begin());
      else if (index == "1:") view.shape[0] = new_size();
      if (t->shape.size() >= 1 && r_.chance(0.2)) {
        stmt = fmt::format("{}.reshape(-1)[-1] = {}", t->name, t->dt == DT::Bool ? "False" : "0");
      } else {
        // (augmented through the view: x[1:] *= y)
        const char* op = numeric && r_.chance(0.35) ? r_.pick(std::vector<const char*>{"+", "-", "*"}) : "";
        stmt = fmt::format("{}[{}] {}= {}", t->name, index, op, *source(view));
      }
    } else if (k == 5) {
      stmt = r_.chance(0.5) ? fmt::format("{}.zero_()", t->name)
                            : fmt::format("{}.fill_({})", t->name, t->dt == DT::Bool ? "True" : is_float(t->dt) ? "1.5" : "4");
    } else if (k == 6 && is_float(t->dt)) {
      std::vector<std::string> ops{"sin_()", "relu_()", "tanh_()", "abs_()", "neg_()", "sigmoid_()", "clamp_(min=-1.0, max=1.0)",
                                   "add_(1)", "mul_(5)"};
      stmt = t->name;
      for (int i = r_.between(1, 3); i > 0; --i) stmt += "." + r_.pick(ops);
    } else if (k == 7 && numeric) {
      const Var* c = pick([&](const Var& c) { return c.dt == DT::Bool && fits(c.shape, t->shape); });
      if (c) operand_of(*t, *c);
      std::string cond = c ? c->name : fmt::format("{} > 0", t->name);
      std::string value = is_float(t->dt) ? "-0.5" : "3";
      // x[mask] = v: a mask of x's own shape, a number (what masked_fill_ does)
      if ((!c || c->shape == t->shape) && r_.chance(0.4)) stmt = fmt::format("{}[{}] = {}", t->name, cond, value);
      else stmt = fmt::format("{}.masked_fill_({}, {})", t->name, cond, value);
    } else if (k == 8 && is_float(t->dt)) {
      const Var* a = pick([&](const Var& v) { return fits(v.shape, t->shape) && can_cast(v.dt, t->dt) && v.root != t->root; });
      if (!a) return std::nullopt;
      operand_of(*t, *a);
      stmt = r_.chance(0.5) || a->dt != t->dt ? fmt::format("{}.addcmul_({}, {}, value=0.5)", t->name, a->name, a->name)
                                              : fmt::format("{}.lerp_({}, 0.25)", t->name, a->name);  // (same dtype only)
    } else {
      return std::nullopt;
    }
    return stmt;
  }

  // ---- statements ----

  std::vector<std::string> body(int count, int depth) {
    std::vector<std::string> lines;
    std::string pad(size_t(depth) * 4, ' ');
    for (int i = 0; i < count; ++i) {
      int k = r_.below(20);
      if (k < 10) {
        if (std::optional<Var> v = value()) {
          v->name = fmt::format("{} = {}", new_name(), v->name);
          lines.push_back(pad + v->name);
          v->name = v->name.substr(0, v->name.find(' '));
          if (v->root < 0) v->root = next_root_++;
          vars_.push_back(*v);
        }
      } else if (k < 17) {
        if (grad_) continue;
        if (auto s = in_place()) lines.push_back(pad + *s);
      } else if (depth < 3) {
        std::vector<std::string> block = control(depth);
        lines.insert(lines.end(), block.begin(), block.end());
      }
    }
    return lines;
  }

  // One statement for a branch or loop body: written in place, or a
  // variable rebound to a value of the same type (so both arms agree).
  std::vector<std::string> arm(int depth, const std::string& loop_var = "") {
    std::string pad(size_t(depth) * 4, ' ');
    if (r_.chance(0.35)) {
      const Var* x = pick([](const Var& v) { return v.dt != DT::Bool; });
      if (x) {
        std::string by = loop_var.empty() ? number(is_float(x->dt)).first : loop_var;
        if (is_int(x->dt) && (by.find('.') != std::string::npos || by == "s")) by = "2";  // keep the dtype
        return {pad + fmt::format("{} = {} {} {}", x->name, x->name, r_.chance(0.5) ? "*" : "+", by)};
      }
    }
    if (!grad_)
      if (auto s = in_place()) return {pad + *s};
    return {pad + "pass"};
  }

  std::vector<std::string> control(int depth) {
    std::string pad(size_t(depth) * 4, ' ');
    std::vector<std::string> lines;
    int k = r_.below(4);
    if (k <= 1) {
      std::string cond;
      const Var* sized = pick([](const Var& v) { return !v.shape.empty(); });
      if (k == 0 && has_n_) cond = fmt::format(fmt::runtime(r_.chance(0.3) ? "(n > {}) is True" : "n > {}"), r_.between(0, 3));
      else if (has_s_ && r_.chance(0.5)) cond = r_.chance(0.3) ? "(s > 0.5) is not False" : "s > 0.5";
      else if (sized) cond = fmt::format("{}.shape[{}] > {}", sized->name, dim(*sized), r_.between(1, 3));
      else return lines;
      lines.push_back(pad + "if " + cond + ":");
      for (auto& l : arm(depth + 1)) lines.push_back(l);
      if (r_.chance(0.6)) {
        lines.push_back(pad + "else:");
        for (auto& l : arm(depth + 1)) lines.push_back(l);
      }
    } else {
      std::string bound = has_n_ && r_.chance(0.6) ? "n % 3 + 1" : std::to_string(r_.between(1, 3));
      std::string i = fmt::format("i{}", depth);
      lines.push_back(pad + fmt::format("for {} in range({}):", i, bound));
      for (auto& l : arm(depth + 1, r_.chance(0.5) ? i : "")) lines.push_back(l);
    }
    return lines;
  }

  std::string returns() {
    if (grad_) {  // a 0-dim float64: the sum of some float values (the first argument's at least)
      std::vector<std::string> parts;
      std::set<std::string> seen;
      for (int i = r_.between(1, 3); i > 0; --i)
        if (const Var* v = pick([](const Var& v) { return is_float(v.dt); }); v && seen.insert(v->name).second)
          parts.push_back(fmt::format("{}.double().sum()", v->name));
      if (parts.empty()) parts.push_back("p0.double().sum()");
      return join(parts, " + ");
    }
    int count = r_.between(1, 3);
    std::vector<std::string> parts;
    std::set<std::string> seen;
    for (int i = 0; i < count; ++i) {
      const Var* v = r_.chance(0.3) ? pick([](const Var& v) { return v.input; }) : nullptr;
      if (!v) v = any();
      if (!seen.insert(v->name).second) continue;
      parts.push_back(v->name);
      returned_.push_back(*v);
    }
    if (packed_ && pack_ == Pack::List && r_.chance(0.25)) {
      parts.push_back("ps");  // the caller's list itself, as eager returns it
      Var list;
      list.name = "ps";
      list.list = true;
      returned_.push_back(list);
    }
    if (has_n_ && r_.chance(0.15)) {
      parts.push_back("n + 1");
      Var number;  // no name: a number, printed as it is
      number.dt = DT::I64;
      returned_.push_back(number);
    }
    return join(parts);
  }

  // ---- the calls ----

  struct Call {
    std::vector<int64_t> sizes;  // per size name 1..rank_
    int64_t n = 0;
    double s = 0;
    std::vector<ArgKind> kinds;
  };

  int64_t size_of(const Call& c, int name) const { return name == kOne ? 1 : c.sizes[size_t(name - 1)]; }
  std::vector<int64_t> concrete(const Call& c, const Shape& s) const {
    std::vector<int64_t> out;
    for (int d : s) out.push_back(size_of(c, d));
    return out;
  }

  std::string make(DT dt, const std::vector<int64_t>& sizes) {
    std::string shape = shape_tuple(sizes), to = cuda_ ? ".to(\"cuda\")" : "";
    switch (dt) {
      case DT::F16: case DT::BF16: case DT::F32: case DT::F64: {
        std::string x = fmt::format("randn({}{})", shape, dt == DT::F32 ? "" : fmt::format(", dtype={}", dt_name(dt)));
        return fmt::format("{}{}", r_.chance(0.08) ? "special(" + x + ")" : x, to);
      }
      case DT::I64: return fmt::format("randint(-4, 5, {}){}", shape, to);
      case DT::I32: return fmt::format("randint(-4, 5, {}, dtype=int32){}", shape, to);
      case DT::Bool: return cuda_ ? fmt::format("(randn({}) > 0){}", shape, to) : fmt::format("randn({}) > 0", shape);
    }
    return "";
  }

  Call random_call() {
    Call c;
    for (int d = 0; d < rank_; ++d) c.sizes.push_back(zero_sizes_ && r_.chance(0.3) ? 0 : r_.between(1, 5));
    c.n = r_.between(0, 5);
    c.s = r_.pick(std::vector<double>{0.25, 0.75, 1.5, -1.0});
    for (size_t p = 0; p < params_.size(); ++p) {
      ArgKind a;
      std::vector<int64_t> sizes = concrete(c, params_[p].shape);
      int k = r_.below(14);
      for (size_t q = 0; q < p; ++q) {
        const Var &P = params_[p], &Q = params_[q];
        if (P.dt != Q.dt || !r_.chance(0.6)) continue;
        // Written from each other: only the very same dense tensor (each
        // element then reads itself), never a partial overlap.
        bool written = written_from_.count({int(q), int(p)}) > 0, scattered = scattered_from_.count({int(q), int(p)}) > 0;
        if (scattered) continue;
        if (P.shape == Q.shape && k < 3 && (!written || c.kinds[q].kind == ArgKind::Fresh)) a = {ArgKind::Same, int(q)};
        else if (written) continue;
        else if (P.shape == Q.shape && k < 5 && !P.shape.empty() && c.kinds[q].kind == ArgKind::Fresh)
          a = {ArgKind::Overlap, int(q)};
        else if (!Q.shape.empty() && Shape(Q.shape.begin() + 1, Q.shape.end()) == P.shape && k < 7 &&
                 size_of(c, Q.shape[0]) >= 1)
          a = {ArgKind::Row, int(q)};
        else if (Q.shape.size() == 2 && P.shape == Shape{Q.shape[1], Q.shape[0]} && k < 8)
          a = {ArgKind::Transposed, int(q)};
        if (a.kind != ArgKind::Fresh) break;
      }
      if (a.kind == ArgKind::Fresh) {
        if (k == 8 && sizes.size() >= 2) a.kind = ArgKind::Permuted;
        else if (k == 9 && !sizes.empty()) a.kind = ArgKind::Strided;
        else if (k == 10 && !sizes.empty() && sizes[0] != 1) a.kind = ArgKind::Expanded;
      }
      c.kinds.push_back(a);
    }
    return c;
  }

  std::string calls(uint64_t seed) {
    std::vector<Call> done;
    std::string out;
    int count = r_.between(1, 4);
    int base = 0;
    for (int i = 0; i < count; ++i) {
      Call c;
      if (!done.empty() && r_.chance(0.35)) {
        c = r_.pick(done);  // the same call again: a hit (unless cache="none")
      } else if (!done.empty() && r_.chance(0.4)) {
        c = done.back();  // same inputs, other numbers
        c.n = r_.between(0, 5);
        c.s = r_.pick(std::vector<double>{0.25, 0.75, 1.5, -1.0});
      } else {
        c = random_call();
      }
      done.push_back(c);
      out += fmt::format("manual_seed({})\n", seed % 100000 + uint64_t(i));
      std::vector<std::string> bases, args(params_.size());
      for (size_t p = 0; p < params_.size(); ++p) {
        std::vector<int64_t> sizes = concrete(c, params_[p].shape);
        const ArgKind& a = c.kinds[p];
        DT dt = params_[p].dt;
        std::string b = fmt::format("b{}", base);
        auto new_base = [&](const std::vector<int64_t>& s) {
          out += fmt::format("{} = {}\n", b, make(dt, s));
          bases.push_back(b);
          ++base;
        };
        bool overlapped = false;
        for (size_t later = p + 1; later < params_.size(); ++later)
          overlapped |= c.kinds[later].kind == ArgKind::Overlap && c.kinds[later].other == int(p);
        switch (a.kind) {
          case ArgKind::Fresh:
            if (overlapped) {
              std::vector<int64_t> s = sizes;
              s[0] += 1;
              new_base(s);
              args[p] = b + "[:-1]";
            } else {
              new_base(sizes);
              args[p] = b;
            }
            break;
          case ArgKind::Permuted: {
            std::vector<int64_t> s(sizes.rbegin(), sizes.rend());
            new_base(s);
            std::vector<int> perm;
            for (int d = int(sizes.size()) - 1; d >= 0; --d) perm.push_back(d);
            args[p] = fmt::format("{}.permute({})", b, fmt::join(perm, ", "));
            break;
          }
          case ArgKind::Strided: {
            std::vector<int64_t> s = sizes;
            s.back() *= 2;
            new_base(s);
            args[p] = b + "[..., ::2]";
            break;
          }
          case ArgKind::Expanded: {
            std::vector<int64_t> s = sizes;
            s[0] = 1;
            new_base(s);
            args[p] = fmt::format("{}.expand{}", b, shape_tuple(sizes));
            break;
          }
          case ArgKind::Same: args[p] = args[size_t(a.other)]; break;
          case ArgKind::Overlap: {
            std::string q = args[size_t(a.other)];
            args[p] = q.substr(0, q.size() - std::string("[:-1]").size()) + "[1:]";
            break;
          }
          case ArgKind::Row: args[p] = args[size_t(a.other)] + "[0]"; break;
          case ArgKind::Transposed: args[p] = args[size_t(a.other)] + ".t()"; break;
        }
      }
      std::vector<std::string> call_args = args;
      if (packed_) {
        std::vector<std::string> named;
        for (size_t p = 0; p < args.size(); ++p)
          named.push_back(pack_ == Pack::Dict ? fmt::format("\"p{}\": {}", p, args[p]) : fmt::format("p{}={}", p, args[p]));
        if (pack_ == Pack::List) out += fmt::format("l = [{}]\n", join(args));
        else if (pack_ == Pack::Dict) out += fmt::format("l = {{{}}}\n", join(named));
        else out += fmt::format("l = Box({})\n", join(named));
        call_args = {"l"};
      }
      std::string shapes_key, numbers_key, kinds_key;
      for (size_t p = 0; p < params_.size(); ++p) {
        shapes_key += fmt::format("{}/", fmt::join(concrete(c, params_[p].shape), "x"));
        kinds_key += fmt::format("{}{}/", int(c.kinds[p].kind), c.kinds[p].other);
      }
      if (has_n_) {
        call_args.push_back(std::to_string(c.n));
        numbers_key += fmt::format("n{}", c.n);
      }
      if (has_s_) {
        call_args.push_back(fmt::format("{:.2f}", c.s));
        numbers_key += fmt::format("s{:.2f}", c.s);
      }
      std::string must = (shapes_ == "static" ? shapes_key : "") + (cache_ == "constant" ? numbers_key : "");
      std::string full = shapes_key + numbers_key + kinds_key;
      if (cache_ == "none") must = full = fmt::format("call{}", i);
      if (must.empty()) must = "-";
      out += fmt::format("r = g({})  # fuzz-key: {} {}\n", join(call_args), must, full);
      if (grad_) {  // the gradients, then the arguments (unchanged)
        for (size_t k = 0; k < params_.size(); ++k) out += fmt::format("show(r[{}])\n", k);
        for (const std::string& b : bases) out += fmt::format("show({})\n", b);
        continue;
      }
      bool tuple = returned_.size() > 1;
      std::vector<std::string> results;
      for (size_t k = 0; k < returned_.size(); ++k) {
        std::string rk = tuple ? fmt::format("r[{}]", k) : "r";
        if (returned_[k].name.empty()) out += fmt::format("print({})\n", rk);
        else if (returned_[k].list) out += fmt::format("print({} is l, len({}))\n", rk, rk);
        else {
          out += fmt::format("show({})\n", rk);
          results.push_back(rk);
        }
      }
      // A returned view of an input must still be one: write through it.
      if (!results.empty() && r_.chance(0.5)) out += fmt::format("{}.fill_(7)\n", r_.pick(results));
      if (packed_ && pack_ == Pack::List) out += "for t in l:\n    show(t)\n";
      if (packed_ && pack_ == Pack::Dict) out += "for k, t in l.items():\n    print(k)\n    show(t)\n";
      if (packed_ && pack_ == Pack::Object) out += "for k, t in l.__dict__.items():\n    print(k)\n    show(t)\n";
      for (const std::string& b : bases) out += fmt::format("show({})\n", b);
    }
    return out;
  }
};

}  // namespace

std::string fuzz_program(uint64_t seed, uint64_t index, bool cuda) {
  return Generator(seed, index, cuda).program(seed, index);
}

}  // namespace thn
