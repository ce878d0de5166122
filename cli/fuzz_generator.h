#pragma once
// The generator of `thn fuzz` (cli/fuzz_gen.h says what it makes): its
// types and the Generator class, whose expressions are in
// cli/fuzz_exprs.cpp and the rest (signature, statements, calls) in
// cli/fuzz_gen.cpp. Private to those two files.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace thn::fuzzgen {

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
inline int category(DT d) { return d == DT::Bool ? 0 : d >= DT::F16 ? 2 : 1; }
inline bool is_float(DT d) { return category(d) == 2; }
inline bool is_int(DT d) { return category(d) == 1; }
inline const char* dt_name(DT d) {
  static const char* names[] = {"bool", "int32", "int64", "float16", "bfloat16", "float32", "float64"};
  return names[int(d)];
}
// A value of dtype `from` may be written into a tensor of dtype `to`.
inline bool can_cast(DT from, DT to) { return category(from) <= category(to); }

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
inline Operand tensor_operand(const Var& v) { return {v.dt, v.shape.empty() ? 1 : 2}; }
inline Operand number_operand(bool is_float_number) { return {is_float_number ? DT::F32 : DT::I64, 0}; }

// Of two dtypes, the one both promote to: float16 and bfloat16 meet in
// float32, else the later one.
inline DT wider(DT a, DT b) {
  if (std::min(a, b) == DT::F16 && std::max(a, b) == DT::BF16) return DT::F32;
  return std::max(a, b);
}

// PyTorch's result type: the dimensioned tensors decide, then 0-dim tensors
// and then numbers count only where their category is higher (a number of a
// higher category gives that category's default dtype).
inline DT promote(const std::vector<Operand>& ops) {
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

inline std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    int da = i < a.size() ? a[a.size() - 1 - i] : kOne, db = i < b.size() ? b[b.size() - 1 - i] : kOne;
    if (da != db && da != kOne && db != kOne) return std::nullopt;
    out[out.size() - 1 - i] = da == kOne ? db : da;
  }
  return out;
}
// `src` broadcasts to exactly `target`'s shape (an in-place op's operand).
inline bool fits(const Shape& src, const Shape& target) { return broadcast(target, src) == target; }

inline std::string join(const std::vector<std::string>& parts, const char* sep = ", ") {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

inline std::string shape_tuple(const std::vector<int64_t>& sizes) {
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

  std::string program(uint64_t seed, uint64_t index);

 private:
  Rng r_;
  bool cuda_;  // the inputs are made on the CPU, then moved to CUDA
  int rank_ = 2;  // sizes named 1..rank_ shape the inputs
  std::vector<Var> params_;
  bool has_n_ = false, has_s_ = false, zero_sizes_ = false;
  bool packed_ = false;  // f takes its tensors as one list, dict or object, ps
  // The program differentiates: f returns a sum of its float values, and
  // jit(grad(f, argnums=(0, ...))) gives the gradients of its (float)
  // tensor arguments; f's body writes in place only into values it made
  // (an argument is a leaf that requires grad; a view of one is refused).
  bool grad_ = false;
  enum class Pack { List, Dict, Object } pack_ = Pack::List;
  // A packed dict or object also holds meta, a dict shared by the calls
  // ({"step": k}), which f counts up: a number leaf in a nested dict that
  // changes on every call and is written back.
  bool counter_ = false;
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

  DT random_dtype();

  Shape template_suffix(int rank);

  void choose_signature();

  std::string new_name() { return fmt::format("t{}", next_var_++); }
  int new_size() { return next_size_++; }

  // A variable in scope satisfying `ok`, the later ones likelier.
  const Var* pick(const std::function<bool(const Var&)>& ok);

  const Var* any() { return pick([](const Var&) { return true; }); }

  // A new value of x's dtype and shape, in memory of its own.
  static Var new_value_like(const Var& x);

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

  std::optional<Var> unary();

  std::optional<Var> binary();

  std::optional<Var> with_number();

  std::optional<Var> reduction();

  // The rest of the op surface, a kind at a time: more elementwise
  // functions, two-operand functions, the nan-aware and paired reductions,
  // products in BLAS's shapes.
  std::optional<Var> more_ops();

  std::optional<Var> more_unary(const Var& x);

  std::optional<Var> more_binary(const Var& x);

  std::optional<Var> more_reduction();

  // Products whose shapes always fit: x with itself, transposed.
  std::optional<Var> product(const Var& x);

  std::optional<Var> view();

  std::optional<Var> copy();

  // An index into dim `d` of `x`, in range for every size a call gives
  // (size 0 included): the positions reversed, or (unless `distinct`) each
  // position twice and the upper half never, or (with `negative`, Python's
  // indexing) counted from the end. Its length is x.shape[d].
  std::string index_along(const Var& x, int d, bool distinct, bool negative = false);

  // x[idx] along dim 0 or 1 (a slice before it).
  std::string subscript(const Var& x, int d, const std::string& index) {
    return fmt::format("{}[{}{}]", x.name, d == 0 ? "" : ":, ", index);
  }

  std::optional<Var> gathered();

  // A 1-D index as gather's and scatter's index into x: laid along dim d,
  // size 1 over the others or (expand) broadcast to x's shape.
  std::string laid_along(const Var& x, int d, const std::string& index, bool expand);

  // x stacked n % 3 + 1 times (a new leading dim): under cache="symbolic"
  // and shapes="symbolic" a size made from a number argument, which calls
  // make 1, 2 or 3.
  std::optional<Var> sized_by_n();

  std::optional<Var> value();

  // ---- in-place statements ----

  // A target written in place: a writable variable, or a view of one written
  // on the spot (`x[0]`, `x[:, 1]`, `x.t()`).
  std::optional<Var> target();

  // Something to write into `t`: a variable that broadcasts to it and casts
  // to its dtype, or (when numbers are allowed) a number.
  std::optional<std::string> source(const Var& t, bool allow_number = true);

  void operand_of(const Var& target, const Var& operand, bool scattered = false);

  std::optional<std::string> in_place();

  // ---- statements ----

  std::vector<std::string> body(int count, int depth);

  // One statement for a branch or loop body: written in place, or a
  // variable rebound to a value of the same type (so both arms agree).
  std::vector<std::string> arm(int depth, const std::string& loop_var = "");

  std::vector<std::string> control(int depth);

  std::string returns();

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

  std::string make(DT dt, const std::vector<int64_t>& sizes);

  Call random_call();

  std::string calls(uint64_t seed);
};

}  // namespace thn::fuzzgen
