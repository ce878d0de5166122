#include "ir/shape_rules.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "ir/basic_index.h"

namespace thn {

namespace {

using Sizes = std::vector<Value>;

bool is_static(const Value& s) { return !s.is_proxy(); }
int64_t value_of(const Value& s) { return s.raw_int(); }

// An int made by + and - of numbers, as its coefficient per symbolic number
// (nullptr: the constant); nullopt for another expression. Two with the same
// form are equal whatever the numbers are: `d0 + d1 + (n - d0 - d1)` is n.
using LinearForm = std::map<const Symbolic*, int64_t>;
bool add_linear(const Value& v, int64_t sign, LinearForm& out) {
  if (!v.is(Type::Int)) return false;
  if (!v.is_proxy()) {
    out[nullptr] += sign * v.raw_int();
    return true;
  }
  const NumberProxy& n = number_proxy(v);
  if (n.origin == NumberProxy::Origin::Op && (n.op == NumberOp::add || n.op == NumberOp::sub))
    return add_linear(n.operands[0], sign, out) &&
           add_linear(n.operands[1], n.op == NumberOp::sub ? -sign : sign, out);
  out[&v.symbolic()] += sign;
  return true;
}
std::optional<LinearForm> linear(const Value& v) {
  LinearForm f;
  if (!add_linear(v, 1, f)) return std::nullopt;
  std::erase_if(f, [](const auto& term) { return term.second == 0; });
  return f;
}

const Sizes& sizes_of(const Value& t) { return tensor_proxy(t).sizes; }

// Size arithmetic, folded where static; else a number node, recorded in the
// trace where the trace computes with it (a size) and not where only a
// guard reads it.
Value sum_of(Tracer& t, const Value& a, const Value& b, bool record) {
  if (is_static(a) && is_static(b)) return Value(value_of(a) + value_of(b));
  return record ? t.record_number_op(NumberOp::add, {a, b}) : t.number_node(NumberOp::add, {a, b});
}
Value product_of(Tracer& t, const Value& a, const Value& b, bool record) {
  if (is_static(a) && is_static(b)) return Value(value_of(a) * value_of(b));
  if (is_static(a) && value_of(a) == 1) return b;
  if (is_static(b) && value_of(b) == 1) return a;
  return record ? t.record_number_op(NumberOp::mul, {a, b}) : t.number_node(NumberOp::mul, {a, b});
}
Value product_of(Tracer& t, const Sizes& s, size_t from, size_t to, bool record) {
  Value p(int64_t(1));
  for (size_t i = from; i < to; ++i) p = product_of(t, p, s[i], record);
  return p;
}

// An int made by * of numbers, as its symbolic factors (with their
// multiplicity) and its constant factor; nullopt for another expression.
struct ProductForm {
  std::map<const Symbolic*, int64_t> factors;
  int64_t constant = 1;
  bool sized = true;  // every factor a symbolic size (so at least 2)
};
bool add_factors(const Value& v, ProductForm& out) {
  if (!v.is(Type::Int)) return false;
  if (!v.is_proxy()) {
    out.constant *= v.raw_int();
    return true;
  }
  const NumberProxy& n = number_proxy(v);
  if (n.origin == NumberProxy::Origin::Op && n.op == NumberOp::mul)
    return add_factors(n.operands[0], out) && add_factors(n.operands[1], out);
  out.factors[&v.symbolic()] += 1;
  out.sized &= n.sized || n.origin == NumberProxy::Origin::Size;
  return true;
}

// How a compares with b for every value of the symbolic sizes: -1 (less),
// 0 (equal) or 1 (greater) where one is the other times sizes (each at
// least 2) or a constant; nullopt where the forms do not settle it.
std::optional<int> settled(const Value& a, const Value& b) {
  ProductForm fa, fb;
  if (!add_factors(a, fa) || !add_factors(b, fb) || fa.constant <= 0 || fb.constant <= 0) return std::nullopt;
  // Whether y = x * (more factors, a larger constant): x <= y, and x < y
  // when anything is more.
  auto within = [](const ProductForm& x, const ProductForm& y) -> std::optional<bool> {
    bool more = false;
    for (const auto& [f, k] : x.factors) {
      auto it = y.factors.find(f);
      if (it == y.factors.end() || it->second < k) return std::nullopt;
    }
    for (const auto& [f, k] : y.factors) {
      auto it = x.factors.find(f);
      more |= k > (it == x.factors.end() ? 0 : it->second);
    }
    if (y.constant % x.constant != 0 || (more && !y.sized)) return std::nullopt;
    return more || y.constant > x.constant;
  };
  if (auto w = within(fa, fb)) return *w ? -1 : 0;
  if (auto w = within(fb, fa)) return *w ? 1 : 0;
  return std::nullopt;
}

class Rules {
 public:
  Rules(Tracer& t, const OpDef& op, const std::vector<Value>& args) : tr_(t), op_(op), args_(args) {}

  std::optional<std::vector<Sizes>> run() {
    std::string_view n = op_.name;
    switch (op_.family) {
      case OpFamily::Unary: case OpFamily::Binary: case OpFamily::Pointwise: case OpFamily::Conversion:
        return one(broadcast_all());
      case OpFamily::Creation:
        if (n.ends_with("_like")) return one(sizes_of(arg("self")));
        if (n == "zeros" || n == "ones" || n == "empty" || n == "full") return one(list(arg("size")));
        return std::nullopt;
      case OpFamily::Random:
        if (n == "rand" || n == "randn") return one(list(arg("size")));
        if (n == "multinomial") {
          Sizes out = sizes_of(arg("self"));
          if (out.empty() || !arg("num_samples").is_int_like()) return std::nullopt;
          out.back() = arg("num_samples");
          return one(out);
        }
        return std::nullopt;
      case OpFamily::Reduction: return reduction();
      case OpFamily::View: return view();
      case OpFamily::Copy:
        // (The writes into a copy of self keep self's sizes; their index
        // and source sizes are checked by the op's own run on the meta tensors.)
        if (n == "cat" || n == "stack") return concatenated(n == "stack");
        if (n == "gather") return one(sizes_of(arg("index")));
        if (n == "index_select") {
          // self's sizes, the one along dim the index's length (1 for a 0-dim index).
          Sizes out = sizes_of(arg("self"));
          const Sizes& index = sizes_of(arg("index"));
          auto k = dim_arg(arg("dim"), out.size());
          if (out.empty() || !k || index.size() > 1) return std::nullopt;
          out[*k] = index.empty() ? Value(int64_t(1)) : index[0];
          return one(out);
        }
        if (n == "clone" || n == "contiguous" || n == "flip" || n == "roll" || n == "tril" || n == "triu" ||
            n == "index_copy" || n == "index_add" || n == "scatter" || n == "scatter_add")
          return one(sizes_of(arg("self")));
        return std::nullopt;
      case OpFamily::LinAlg: return linalg();
      case OpFamily::Attribute:
        if (n == "T" || n == "mT") return one(transposed(sizes_of(arg("self")), n == "T"));
        return std::nullopt;
    }
    return std::nullopt;
  }

 private:
  static std::optional<std::vector<Sizes>> one(std::optional<Sizes> s) {
    if (!s) return std::nullopt;
    return std::vector<Sizes>{*s};
  }

  const Value& arg(std::string_view name) const {
    const auto& ps = op_.schema.params;
    for (size_t i = 0; i < ps.size(); ++i)
      if (ps[i].name == name) return args_[i];
    throw std::logic_error("shape rule: no parameter " + std::string(name));
  }

  static std::optional<Sizes> list(const Value& v) {
    if (v.is_int_like()) return Sizes{v};
    if (!v.is_sequence()) return std::nullopt;
    for (const Value& x : v.items())
      if (!x.is_int_like()) return std::nullopt;
    return v.items();
  }

  // Whether the product of `part` divides the product of `whole` whatever
  // their symbolic sizes are: each symbolic factor of part is a distinct one
  // of whole's, and the static rest divides whole's static rest.
  static bool divides(const Sizes& part, const Sizes& whole) {
    std::vector<const Value*> left;
    int64_t whole_static = 1, part_static = 1;
    for (const Value& w : whole)
      if (is_static(w)) whole_static *= value_of(w);
      else left.push_back(&w);
    for (const Value& p : part) {
      if (is_static(p)) {
        part_static *= value_of(p);
        continue;
      }
      auto it = std::find_if(left.begin(), left.end(), [&](const Value* w) {
        return w->is_proxy() && p.is_proxy() && &w->symbolic() == &p.symbolic();
      });
      if (it == left.end()) return false;
      left.erase(it);
    }
    return part_static != 0 && whole_static % part_static == 0;
  }

  // Elements [start, start + length) of a dim, a negative start counting
  // from its end (narrow, select): where the dim's size or the length is
  // symbolic, guarded to stay inside the dim, as eager checks on each call,
  // and, where it can be all of the dim (a narrow, not a select; one from
  // 0 or from the end), to cover all of it on every call or on none (as a
  // slice's bounds are: basic_index.cpp).
  void in_range(const Value& size, const Value& start, const Value& length, bool can_be_whole) {
    if (is_static(size) && is_static(length)) return;
    const int64_t st = start.raw_int();
    if (st > 0) can_be_whole = false;
    auto guard = [&](const Value& a, const Value& b) {  // a >= b (and a == b or a > b as now, where it may be whole)
      const NumberOp op = !can_be_whole ? NumberOp::ge : a.raw_int() == b.raw_int() ? NumberOp::eq : NumberOp::gt;
      tr_.assume(tr_.number_node(op, {a, b}));
    };
    if (st >= 0) {
      guard(size, is_static(length) ? Value(st + value_of(length))
                  : st == 0         ? length
                                    : sum_of(tr_, length, Value(st), false));
      return;
    }
    if (!is_static(size)) guard(size, Value(-st));  // size + start >= 0: the start, or after it
    if (!is_static(length)) tr_.assume(tr_.number_node(NumberOp::ge, {Value(-st), length}));  // start + length <= 0
  }

  // Two sizes that must be equal: one of them, with the equality guarded
  // unless it holds for every input (the same sum of the same numbers).
  Value unify(const Value& a, const Value& b) {
    if (a.is_proxy() && b.is_proxy() && &a.symbolic() == &b.symbolic()) return a;
    if (is_static(a) && is_static(b)) return a;
    if (auto la = linear(a), lb = linear(b); la && lb && *la == *lb) return a;
    tr_.assume(tr_.number_node(NumberOp::eq, {a, b}));
    return is_static(a) ? a : b;
  }

  // PyTorch's broadcasting over symbolic sizes: sizes 1 are static (inputs
  // specialise them), so which side broadcasts is known while tracing.
  Sizes broadcast(const Sizes& a, const Sizes& b) {
    size_t n = std::max(a.size(), b.size());
    Sizes out(n);
    for (size_t i = 0; i < n; ++i) {
      const Value* x = i < n - a.size() ? nullptr : &a[i - (n - a.size())];
      const Value* y = i < n - b.size() ? nullptr : &b[i - (n - b.size())];
      if (!x || (is_static(*x) && value_of(*x) == 1)) out[i] = y ? *y : *x;
      else if (!y || (is_static(*y) && value_of(*y) == 1)) out[i] = *x;
      else out[i] = unify(*x, *y);
    }
    return out;
  }

  std::optional<Sizes> broadcast_all() {
    std::optional<Sizes> acc;
    for (size_t i = 0; i < args_.size(); ++i) {
      if (!is_tensor_proxy(args_[i])) continue;
      acc = acc ? broadcast(*acc, sizes_of(args_[i])) : sizes_of(args_[i]);
    }
    return acc;
  }

  Value product(const Sizes& s, size_t from, size_t to) { return product_of(tr_, s, from, to, true); }
  Value floordiv(const Value& a, const Value& b) {
    if (is_static(a) && is_static(b) && value_of(b) != 0) return Value(value_of(a) / value_of(b));
    if (is_static(b) && value_of(b) == 1) return a;
    return tr_.record_number_op(NumberOp::floordiv, {a, b});
  }

  static Sizes transposed(Sizes s, bool all) {
    if (all) std::reverse(s.begin(), s.end());
    else if (s.size() >= 2) std::swap(s[s.size() - 1], s[s.size() - 2]);
    return s;
  }

  static std::optional<size_t> dim_arg(const Value& d, size_t ndim) {
    if (!d.is_int_like() || d.is_proxy()) return std::nullopt;
    int64_t v = d.raw_int(), n = int64_t(std::max<size_t>(ndim, 1));
    if (v < -n || v >= n) return std::nullopt;
    return size_t(v < 0 ? v + n : v);
  }

  std::optional<std::vector<Sizes>> reduction() {
    std::string_view n = op_.name;
    const Sizes& in = sizes_of(arg("self"));
    if (n == "cumsum" || n == "cumprod" || n == "logcumsumexp") return one(in);
    if (n == "cummax" || n == "cummin") return std::vector<Sizes>(2, in);
    const Value& dim = arg("dim");
    bool keep = arg("keepdim").is(Type::Bool) && arg("keepdim").raw_int();
    std::vector<bool> reduced(in.size(), false);
    std::vector<Value> dims;
    if (dim.is_none() || (dim.is_sequence() && dim.items().empty())) {
      if (n == "max" || n == "min" || n == "argmax" || n == "argmin" || n == "all" || n == "any") keep = false;
      reduced.assign(in.size(), true);
    } else {
      dims = dim.is_sequence() ? dim.items() : std::vector<Value>{dim};
      for (const Value& d : dims) {
        auto k = dim_arg(d, in.size());
        if (!k) return std::nullopt;
        if (k < in.size()) reduced[*k] = true;
      }
    }
    Sizes out;
    for (size_t i = 0; i < in.size(); ++i) {
      if (!reduced[i]) out.push_back(in[i]);
      else if (keep) out.push_back(Value(int64_t(1)));
    }
    size_t outputs = (n == "max" || n == "min") && !dim.is_none() ? 2 : 1;
    return std::vector<Sizes>(outputs, out);
  }

  // cat: the sizes along dim added, the others equal (a 1-D tensor of size
  // 0 is skipped, as PyTorch does); stack: each tensor unsqueezed at dim.
  std::optional<std::vector<Sizes>> concatenated(bool stack) {
    const Value& ts = arg("tensors");
    if (!ts.is_sequence() || ts.items().empty()) return std::nullopt;
    std::optional<Sizes> out;
    std::optional<size_t> k;
    for (const Value& t : ts.items()) {
      if (!is_tensor_proxy(t)) return std::nullopt;
      Sizes s = sizes_of(t);
      if (!stack && s.size() == 1 && is_static(s[0]) && value_of(s[0]) == 0) continue;
      if (!k) k = dim_arg(arg("dim"), s.size() + (stack ? 1 : 0));
      if (!k) return std::nullopt;
      if (stack) s.insert(s.begin() + long(*k), Value(int64_t(1)));
      if (!out) {
        out = s;
        continue;
      }
      if (s.size() != out->size() || *k >= s.size()) return std::nullopt;
      for (size_t i = 0; i < s.size(); ++i)
        (*out)[i] = i == *k ? add((*out)[i], s[i]) : unify((*out)[i], s[i]);
    }
    return one(out);
  }

  Value add(const Value& a, const Value& b) { return sum_of(tr_, a, b, true); }

  std::optional<std::vector<Sizes>> view() {
    std::string_view n = op_.name;
    const Sizes& in = sizes_of(arg("self"));
    if (n == "view" || n == "reshape" || n == "unflatten") {
      auto want = list(arg(n == "view" ? "size" : n == "reshape" ? "shape" : "sizes"));
      if (!want) return std::nullopt;
      // The sizes asked for stand for `whole`: the tensor, or unflatten's dim.
      std::optional<size_t> k;
      if (n == "unflatten" && !(k = dim_arg(arg("dim"), in.size()))) return std::nullopt;
      const Sizes whole = k ? Sizes{in[*k]} : in;
      Sizes out = *want;
      // Without a -1 the sizes asked for multiply up to the tensor's, on
      // every call the trace serves (else eager's error for the op).
      if (std::none_of(out.begin(), out.end(), [](const Value& v) { return is_static(v) && value_of(v) == -1; })) {
        Value numel = product_of(tr_, whole, 0, whole.size(), false), asked = product_of(tr_, out, 0, out.size(), false);
        if (!(is_static(numel) && is_static(asked)) && settled(numel, asked) != 0)
          tr_.assume(tr_.number_node(NumberOp::eq, {numel, asked}));
      }
      for (size_t i = 0; i < out.size(); ++i) {
        if (!is_static(out[i]) || value_of(out[i]) != -1) continue;
        Sizes others = out;
        others.erase(others.begin() + long(i));
        Value numel = product(whole, 0, whole.size()), rest = product(others, 0, others.size());
        out[i] = floordiv(numel, rest);
        // The trace serves only sizes that divide evenly (others miss the
        // cache, and eager gives its error for the shape as written; a
        // symbolic divisor of 0 fails the guard the same way), unless they
        // always do (x.reshape(x.shape[0], -1)).
        if (!is_static(out[i]) && !(is_static(rest) && value_of(rest) == 0) && !divides(others, whole))
          tr_.assume(tr_.number_node(NumberOp::eq, {tr_.number_node(NumberOp::mod, {numel, rest}), Value(int64_t(0))}));
      }
      if (k) {  // in's sizes with the one at dim replaced by `sizes`
        out.insert(out.begin(), in.begin(), in.begin() + long(*k));
        out.insert(out.end(), in.begin() + long(*k) + 1, in.end());
      }
      return one(out);
    }
    if (n == "t" || n == "transpose") {
      if (in.size() < 2) return one(in);
      Sizes out = in;
      auto a = n == "t" ? std::optional<size_t>(0) : dim_arg(arg("dim0"), in.size());
      auto b = n == "t" ? std::optional<size_t>(1) : dim_arg(arg("dim1"), in.size());
      if (!a || !b) return std::nullopt;
      std::swap(out[*a], out[*b]);
      return one(out);
    }
    if (n == "permute") {
      auto dims = list(arg("dims"));
      if (!dims || dims->size() != in.size()) return std::nullopt;
      Sizes out;
      for (const Value& d : *dims) {
        auto k = dim_arg(d, in.size());
        if (!k) return std::nullopt;
        out.push_back(in[*k]);
      }
      return one(out);
    }
    if (n == "unsqueeze") {
      auto k = dim_arg(arg("dim"), in.size() + 1);
      if (!k) return std::nullopt;
      Sizes out = in;
      out.insert(out.begin() + long(*k), Value(int64_t(1)));
      return one(out);
    }
    if (n == "squeeze") {
      Sizes out;
      auto k = arg("dim").is_none() ? std::nullopt : dim_arg(arg("dim"), in.size());
      if (!arg("dim").is_none() && !k) return std::nullopt;
      for (size_t i = 0; i < in.size(); ++i) {
        bool one_ = is_static(in[i]) && value_of(in[i]) == 1;
        if (!(one_ && (!k || *k == i))) out.push_back(in[i]);
      }
      return one(out);
    }
    if (n == "expand" || n == "expand_as") {
      auto want = n == "expand" ? list(arg("size")) : std::optional<Sizes>(sizes_of(arg("other")));
      if (!want || want->size() < in.size()) return std::nullopt;
      Sizes out = *want;
      size_t lead = out.size() - in.size();
      for (size_t i = 0; i < in.size(); ++i) {
        Value& o = out[lead + i];
        if (is_static(o) && value_of(o) == -1) o = in[i];
        else if (!(is_static(in[i]) && value_of(in[i]) == 1)) o = unify(in[i], o);
      }
      return one(out);
    }
    if (n == "flatten") {
      if (in.empty()) return one(Sizes{Value(int64_t(1))});
      auto a = dim_arg(arg("start_dim"), in.size()), b = dim_arg(arg("end_dim"), in.size());
      if (!a || !b || *a > *b) return std::nullopt;
      Sizes out(in.begin(), in.begin() + long(*a));
      out.push_back(product(in, *a, *b + 1));
      out.insert(out.end(), in.begin() + long(*b + 1), in.end());
      return one(out);
    }
    if (n == "narrow" || n == "select") {
      auto k = dim_arg(arg("dim"), in.size());
      if (!k) return std::nullopt;
      in_range(in[*k], n == "narrow" ? arg("start") : arg("index"), n == "narrow" ? arg("length") : Value(int64_t(1)),
               n == "narrow");
      Sizes out = in;
      if (n == "narrow") out[*k] = arg("length");
      else out.erase(out.begin() + long(*k));
      return one(out);
    }
    if (n == "diagonal") {
      // min(size1 - max(0, -offset), size2 - max(0, offset)), at least 0:
      // symbolic only where the two sizes are equal (a square matrix; the
      // equality guarded) and reach past the offset (n - |offset| is then
      // a size, guarded to stay >= 2 or made static).
      auto a = dim_arg(arg("dim1"), in.size()), b = dim_arg(arg("dim2"), in.size());
      const Value& offset = arg("offset");
      if (!a || !b || *a == *b || !offset.is_int_like() || offset.is_proxy()) return std::nullopt;
      const int64_t off = offset.raw_int(), skip = off < 0 ? -off : off;
      const Value &s1 = in[*a], &s2 = in[*b];
      Value len;
      if (is_static(s1) && is_static(s2)) {
        len = Value(std::max<int64_t>(0, std::min(value_of(s1) - std::max<int64_t>(0, -off), value_of(s2) - std::max<int64_t>(0, off))));
      } else {
        if (s1.raw_int() != s2.raw_int() || s1.raw_int() < skip) return std::nullopt;
        const Value side = unify(s1, s2);
        len = skip == 0 ? side : tr_.record_number_op(NumberOp::sub, {side, Value(skip)});
      }
      Sizes out;
      for (size_t i = 0; i < in.size(); ++i)
        if (i != *a && i != *b) out.push_back(in[i]);
      out.push_back(len);
      return one(out);
    }
    if (n == "split") {
      auto sections = arg("split_size_or_sections");
      auto k = dim_arg(arg("dim"), in.size());
      if (!k || !sections.is_sequence()) return std::nullopt;
      std::vector<Sizes> outs;
      std::optional<Value> total;
      for (const Value& s : sections.items()) {
        if (!s.is_int_like()) return std::nullopt;
        outs.push_back(in);
        outs.back()[*k] = s;
        total = total ? sum_of(tr_, *total, s, false) : s;
      }
      if (!total) return std::nullopt;
      unify(in[*k], *total);  // the sections add up to the size, as eager checks
      return outs;
    }
    return std::nullopt;
  }

  std::optional<std::vector<Sizes>> linalg() {
    std::string_view n = op_.name;
    if (n == "linear") {
      Sizes x = sizes_of(arg("input")), w = sizes_of(arg("weight"));
      if (x.empty() || w.size() != 2) return std::nullopt;
      unify(x.back(), w[1]);
      x.back() = w[0];
      if (!arg("bias").is_none()) x = broadcast(x, sizes_of(arg("bias")));
      return one(x);
    }
    if (n == "outer") {
      const Sizes &a = sizes_of(arg("self")), &b = sizes_of(arg("vec2"));
      if (a.size() != 1 || b.size() != 1) return std::nullopt;
      return one(Sizes{a[0], b[0]});
    }
    const Sizes& a = sizes_of(arg("self"));
    const Sizes& b = sizes_of(arg(n == "matmul" ? "other" : "mat2"));
    // matmul's vector cases: (n) @ (n) -> (), (m, n) @ (n) -> (m), (n) @ (n, k) -> (k).
    if (a.size() == 1 && b.size() == 1) {
      unify(a[0], b[0]);
      return one(Sizes{});
    }
    if (a.size() == 2 && b.size() == 1) {
      unify(a[1], b[0]);
      return one(Sizes{a[0]});
    }
    if (a.size() == 1 && b.size() == 2) {
      unify(a[0], b[0]);
      return one(Sizes{b[1]});
    }
    if (a.size() < 2 || b.size() < 2) return std::nullopt;
    unify(a.back(), b[b.size() - 2]);
    Sizes batch = broadcast(Sizes(a.begin(), a.end() - 2), Sizes(b.begin(), b.end() - 2));
    batch.push_back(a[a.size() - 2]);
    batch.push_back(b.back());
    return one(batch);
  }

  Tracer& tr_;
  const OpDef& op_;
  const std::vector<Value>& args_;
};

bool same_concrete(const std::vector<Sizes>& want, const std::vector<Value>& tensors) {
  if (want.size() != tensors.size()) return false;
  for (size_t k = 0; k < want.size(); ++k) {
    const Dims& real = tensor_proxy(tensors[k]).meta.sizes();
    if (real.size() != want[k].size()) return false;
    for (size_t i = 0; i < real.size(); ++i)
      if (want[k][i].raw_int() != real[i]) return false;
  }
  return true;
}


// A symbolic size is at least 2 (sizes 0 and 1 decide broadcasting and
// emptiness, so they stay static, as the inputs' do): a number that becomes
// a size (n in zeros(n), a narrow's length, a diagonal's n - 1) is guarded
// to stay >= 2, or made static where this call's value is 0 or 1.
void at_least_two(Tracer& t, Sizes& sizes) {
  for (Value& s : sizes) {
    if (!s.is_proxy()) continue;
    NumberProxy& n = number_proxy(s);
    if (n.sized) continue;
    if (s.raw_int() < 2) {
      t.make_static(n);
      s = Value(s.raw_int());
      continue;
    }
    t.assume(t.number_node(NumberOp::ge, {s, Value(int64_t(2))}));
    n.sized = true;
  }
}

// The outcome of a < b (less) or a == b on this call, guarded unless the
// forms settle it for every call.
bool compare_guarded(Tracer& t, const Value& a, const Value& b, bool less) {
  const bool now = less ? a.raw_int() < b.raw_int() : a.raw_int() == b.raw_int();
  if (is_static(a) && is_static(b)) return now;
  if (auto c = settled(a, b); c && (less ? *c < 0 : *c == 0) == now) return now;
  const NumberOp op = less ? (now ? NumberOp::lt : NumberOp::ge) : (now ? NumberOp::eq : NumberOp::ne);
  t.assume(t.number_node(op, {a, b}));
  return now;
}

}  // namespace

bool reshape_is_view(Tracer& t, const std::vector<Value>& sizes, const std::vector<int64_t>& strides,
                     const std::vector<Value>& to) {
  // PyTorch's computeStride (aten/src/ATen/TensorUtils.cpp), walking the
  // old dims from the last in chunks that are contiguous in memory: the
  // stride comparisons on this call's strides, the products of sizes
  // symbolic. (An empty tensor: the caller keeps its sizes static.)
  if (sizes.empty()) return true;
  int64_t view_d = int64_t(to.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  Value tensor_numel(int64_t(1)), view_numel(int64_t(1));
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel = product_of(t, tensor_numel, sizes[size_t(d)], false);
    const bool chunk_ends =
        d == 0 || (sizes[size_t(d - 1)].raw_int() != 1 &&
                   strides[size_t(d - 1)] != tensor_numel.raw_int() * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (compare_guarded(t, view_numel, tensor_numel, true) || to[size_t(view_d)].raw_int() == 1)) {
      view_numel = product_of(t, view_numel, to[size_t(view_d)], false);
      --view_d;
    }
    if (!compare_guarded(t, view_numel, tensor_numel, false)) return false;
    if (d > 0) {
      chunk_base_stride = strides[size_t(d - 1)];
      tensor_numel = Value(int64_t(1));
      view_numel = Value(int64_t(1));
    }
  }
  return view_d == -1;
}

std::optional<std::vector<Value>> basic_index_rule(Tracer& t, const std::vector<Value>& sizes,
                                                   std::span<const Value> index) {
  auto entries = basic_index_entries(sizes.size(), index);
  if (!entries) return std::nullopt;
  auto record = [&](NumberOp op, const Value& a, const Value& b) { return t.record_number_op(op, {a, b}); };
  Sizes out;
  for (const BasicIndexEntry& e : *entries) {
    if (e.dim < 0) {
      out.push_back(Value(int64_t(1)));
      continue;
    }
    const Value& s = sizes[size_t(e.dim)];
    if (e.index.is_none()) {
      out.push_back(s);
      continue;
    }
    const IndexRange r = index_range(e.index, s.raw_int());
    // (A symbolic size is at least 2 already.)
    if (!is_static(s) && r.min_size > 2) t.assume(t.number_node(NumberOp::ge, {s, Value(r.min_size)}));
    if (!is_static(s) && r.max_size < std::numeric_limits<int64_t>::max())
      t.assume(t.number_node(NumberOp::le, {s, Value(r.max_size)}));
    if (!e.index.is(Type::Int)) out.push_back(index_range_length(r, s, record));
  }
  at_least_two(t, out);
  return out;
}

bool apply_shape_rule(Tracer& t, const OpDef& op, const std::vector<Value>& args, const Value& out, bool inplace) {
  auto sizes = Rules(t, op, args).run();
  if (!sizes) return false;
  std::vector<Value> tensors;
  collect_proxies(out, tensors);
  if (!same_concrete(*sizes, tensors)) return false;
  if (inplace) return true;  // the receiver keeps its sizes; the rule only guarded
  for (Sizes& s : *sizes) at_least_two(t, s);
  for (size_t k = 0; k < tensors.size(); ++k) tensor_proxy(tensors[k]).sizes = (*sizes)[k];
  return true;
}

bool consumes_symbolic(const OpDef& op, const Param& p) {
  if (op.family == OpFamily::View)
    return p.name == "size" || p.name == "shape" || p.name == "sizes" || p.name == "split_size_or_sections" || p.name == "length";
  if (op.family == OpFamily::Creation || op.family == OpFamily::Random) return p.name == "size";
  return false;
}

}  // namespace thn
