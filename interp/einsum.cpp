// einsum(equation, *operands): PyTorch's equation language, computed with
// the tensor API (diagonal, sum, permute, expand, reshape, matmul), so the
// interpreter runs it eagerly and the tracer records those ops. As PyTorch
// 1.13 does: repeated subscripts of an operand take its diagonal, a
// subscript only one operand has and the output lacks is summed first, then
// the operands are contracted left to right, each pair as one batched
// matmul ([batch, left, summed] @ [batch, summed, right]).
#include "interp/einsum.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "interp/interpreter.h"
#include "interp/shorthands.h"
#include "runtime/error.h"

namespace thn {

namespace {

// A subscript: 0-25 for A-Z, 26-51 for a-z (implicit output order), 52 on
// for the dims an ellipsis covers, right-aligned across operands.
using Label = int;
constexpr Label kEllipsis = 52;

char subscript(Label l) { return l < 26 ? char('A' + l) : l < 52 ? char('a' + l - 26) : '.'; }

struct Term {
  std::vector<Label> labels;  // kEllipsis marks where "..." stands
  bool ellipsis = false;
};

// One equation term ("ij", "b...d"): `at` is its first character's index in
// the equation, for the error message.
Term parse_term(const std::string& eq, size_t at, size_t end, int operand) {
  Term t;
  for (size_t i = at; i < end; ++i) {
    const char c = eq[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (t.ellipsis) fail("einsum(): found '.' for operand {} for which an ellipsis was already found", operand);
      if (i + 2 >= end || eq[i + 1] != '.' || eq[i + 2] != '.')
        fail("einsum(): found '.' for operand {} that is not part of any ellipsis", operand);
      t.ellipsis = true;
      t.labels.push_back(kEllipsis);
      i += 2;
    } else if (c >= 'A' && c <= 'Z') {
      t.labels.push_back(c - 'A');
    } else if (c >= 'a' && c <= 'z') {
      t.labels.push_back(26 + c - 'a');
    } else {
      fail("einsum(): invalid subscript given at index {} in the equation string, subscripts must be in [a-zA-Z]", i);
    }
  }
  return t;
}

// An operand as the contraction sees it: a tensor and one label per dim.
struct Operand {
  Value t;
  std::vector<Label> labels;
};

class Einsum {
 public:
  explicit Einsum(Interpreter& in) : in_(in) {}

  Value run(const std::string& eq, std::vector<Value> tensors) {
    const size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    std::vector<Term> terms;
    for (size_t start = 0;;) {
      const size_t comma = lhs.find(',', start);
      const size_t end = comma == std::string::npos ? lhs.size() : comma;
      terms.push_back(parse_term(eq, start, end, int(terms.size())));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (terms.size() < tensors.size()) fail("einsum(): more operands were provided than specified in the equation");
    if (terms.size() > tensors.size()) fail("einsum(): fewer operands were provided than specified in the equation");

    // Each operand's labels, its ellipsis expanded into its dims' labels.
    std::vector<Operand> ops;
    int ellipsis_dims = 0;
    for (size_t k = 0; k < terms.size(); ++k) {
      const int64_t ndim = in_.tensor_dim(tensors[k]);
      const int64_t named = int64_t(terms[k].labels.size()) - (terms[k].ellipsis ? 1 : 0);
      if (!terms[k].ellipsis && named != ndim)
        fail("einsum(): the number of subscripts in the equation ({}) does not match the number of dimensions ({}) "
             "for operand {} and no ellipsis was given",
             named, ndim, k);
      if (named > ndim)
        fail("einsum(): the number of subscripts in the equation ({}) is more than the number of dimensions ({}) for "
             "operand {}",
             named, ndim, k);
      ellipsis_dims = std::max(ellipsis_dims, int(ndim - named));
    }
    ellipsis_dims_ = ellipsis_dims;
    for (size_t k = 0; k < terms.size(); ++k) {
      Operand o{tensors[k], {}};
      const int64_t covered = in_.tensor_dim(tensors[k]) - int64_t(terms[k].labels.size()) + 1;
      for (Label l : terms[k].labels) {
        if (l != kEllipsis) o.labels.push_back(l);
        else for (int64_t j = 0; j < covered; ++j) o.labels.push_back(Label(kEllipsis + ellipsis_dims - covered + j));
      }
      ops.push_back(std::move(o));
    }

    std::vector<Label> out = output(eq, arrow, terms, ellipsis_dims);
    for (size_t k = 0; k < ops.size(); ++k) take_diagonals(ops[k], int(k));
    check_sizes(ops);

    // Sum what only one operand has and the output lacks; then contract
    // left to right, keeping what the output or a later operand needs.
    for (size_t k = 0; k < ops.size(); ++k) {
      std::vector<Label> others = out;
      for (size_t j = 0; j < ops.size(); ++j)
        if (j != k) others.insert(others.end(), ops[j].labels.begin(), ops[j].labels.end());
      sum_unneeded(ops[k], others);
    }
    Operand acc = ops[0];
    for (size_t k = 1; k < ops.size(); ++k) acc = contract(acc, ops[k], needed(ops, k, out));
    return permuted(acc, out).t;
  }

 private:
  // The output's labels: as written after "->", or the ellipsis dims then
  // every subscript that appears once, in order (A-Z before a-z).
  std::vector<Label> output(const std::string& eq, size_t arrow, const std::vector<Term>& terms, int ellipsis_dims) {
    std::vector<int> count(kEllipsis, 0);
    for (const Term& t : terms)
      for (Label l : t.labels)
        if (l != kEllipsis) ++count[size_t(l)];
    std::vector<Label> out;
    auto add_ellipsis = [&] {
      for (int j = 0; j < ellipsis_dims; ++j) out.push_back(kEllipsis + j);
    };
    if (arrow == std::string::npos) {
      add_ellipsis();
      for (Label l = 0; l < kEllipsis; ++l)
        if (count[size_t(l)] == 1) out.push_back(l);
      return out;
    }
    Term t = parse_term(eq, arrow + 2, eq.size(), int(terms.size()));
    std::vector<bool> seen(kEllipsis, false);
    for (Label l : t.labels) {
      if (l == kEllipsis) {
        add_ellipsis();
        continue;
      }
      if (count[size_t(l)] == 0)
        fail("einsum(): output subscript {} does not appear in the equation for any input operand", subscript(l));
      if (seen[size_t(l)]) fail("einsum(): output subscript {} appears more than once in the output", subscript(l));
      seen[size_t(l)] = true;
      out.push_back(l);
    }
    return out;
  }

  Value size(const Operand& o, size_t d) { return call(o.t, "size", {Value(int64_t(d))}); }
  static bool is_one(const Value& v) { return !v.is_proxy() && v.as_int() == 1; }
  bool equal(const Value& a, const Value& b) { return in_.truth(in_.compare(ast::CmpOp::Eq, a, b)); }

  Value call(const Value& self, const char* op, std::vector<Value> args) {
    return call_tensor_op(in_, op, &self, std::move(args));
  }

  // A label twice in one operand ("ii"): its diagonal, whose dim goes last.
  void take_diagonals(Operand& o, int k) {
    for (size_t i = 0; i < o.labels.size(); ++i)
      for (size_t j = i + 1; j < o.labels.size(); ++j) {
        if (o.labels[i] != o.labels[j]) continue;
        Value a = size(o, i), b = size(o, j);
        if (!equal(a, b))
          fail("einsum(): subscript {} is repeated for operand {} but the sizes don't match, {} != {}",
               subscript(o.labels[i]), k, to_repr(b), to_repr(a));
        const Label l = o.labels[i];
        o.t = call(o.t, "diagonal", {Value(int64_t(0)), Value(int64_t(i)), Value(int64_t(j))});
        o.labels.erase(o.labels.begin() + long(j));
        o.labels.erase(o.labels.begin() + long(i));
        o.labels.push_back(l);
        return take_diagonals(o, k);
      }
  }

  // A label's sizes across operands agree or are 1 (which broadcasts).
  void check_sizes(const std::vector<Operand>& ops) {
    std::vector<std::optional<Value>> seen(size_t(kEllipsis + ellipsis_dims_));
    for (size_t k = 0; k < ops.size(); ++k)
      for (size_t d = 0; d < ops[k].labels.size(); ++d) {
        std::optional<Value>& s = seen[size_t(ops[k].labels[d])];
        Value here = size(ops[k], d);
        if (!s || is_one(*s)) s = here;
        else if (!is_one(here) && !equal(here, *s))
          fail("einsum(): subscript {} has size {} for operand {} which does not broadcast with previously seen size {}",
               subscript(ops[k].labels[d]), to_repr(here), k, to_repr(*s));
      }
  }

  // The labels the output or an operand after k has.
  static std::vector<Label> needed(const std::vector<Operand>& ops, size_t k, const std::vector<Label>& out) {
    std::vector<Label> n = out;
    for (size_t j = k + 1; j < ops.size(); ++j) n.insert(n.end(), ops[j].labels.begin(), ops[j].labels.end());
    return n;
  }
  static bool has(const std::vector<Label>& ls, Label l) { return std::find(ls.begin(), ls.end(), l) != ls.end(); }

  // Sums the dims of o that no label of `keep` names (and no other
  // operand's: they are in keep, or o is the contraction's left side).
  void sum_unneeded(Operand& o, const std::vector<Label>& keep, const std::vector<Label>& other = {}) {
    std::vector<Value> dims;
    std::vector<Label> kept;
    for (size_t d = 0; d < o.labels.size(); ++d) {
      if (has(keep, o.labels[d]) || has(other, o.labels[d])) kept.push_back(o.labels[d]);
      else dims.push_back(Value(int64_t(d)));
    }
    if (dims.empty()) return;
    o.t = call(o.t, "sum", {Value::list(std::move(dims))});
    o.labels = std::move(kept);
  }

  Operand permuted(const Operand& o, const std::vector<Label>& order) {
    if (order == o.labels) return o;
    std::vector<Value> perm;
    for (Label l : order) perm.push_back(Value(int64_t(std::find(o.labels.begin(), o.labels.end(), l) - o.labels.begin())));
    return {call(o.t, "permute", {Value::tuple(std::move(perm))}), order};
  }

  // a and b as one batched matmul: [batch, left, summed] @ [batch, summed,
  // right], the batch and summed dims expanded to a common size first; with
  // nothing summed, a product [batch, left, 1...] * [batch, 1..., right]
  // (which promotes dtypes, as PyTorch's does).
  Operand contract(Operand a, Operand b, const std::vector<Label>& keep) {
    sum_unneeded(a, keep, b.labels);
    sum_unneeded(b, keep, a.labels);
    std::vector<Label> batch, left, summed, right;
    for (Label l : a.labels) (has(b.labels, l) ? (has(keep, l) ? batch : summed) : left).push_back(l);
    for (Label l : b.labels)
      if (!has(a.labels, l)) right.push_back(l);
    auto cat = [](std::initializer_list<const std::vector<Label>*> parts) {
      std::vector<Label> out;
      for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
      return out;
    };
    Operand pa = permuted(a, cat({&batch, &left, &summed})), pb = permuted(b, cat({&batch, &summed, &right}));
    if (summed.empty()) {
      for (size_t i = 0; i < right.size(); ++i) pa.t = call(pa.t, "unsqueeze", {Value(int64_t(-1))});
      for (size_t i = 0; i < left.size(); ++i) pb.t = call(pb.t, "unsqueeze", {Value(int64_t(batch.size()))});
      return {call(pa.t, "mul", {pb.t}), cat({&batch, &left, &right})};
    }
    const DType ta = in_.getattr(pa.t, "dtype").as_dtype(), tb = in_.getattr(pb.t, "dtype").as_dtype();
    if (ta != tb) fail("expected scalar type {} but found {}", dtype_torch_name(ta), dtype_torch_name(tb));
    // The common size of each batch and summed label (a size 1 broadcasts).
    auto sizes_of = [&](const Operand& o) {
      std::vector<Value> s;
      for (size_t d = 0; d < o.labels.size(); ++d) s.push_back(size(o, d));
      return s;
    };
    std::vector<Value> sa = sizes_of(pa), sb = sizes_of(pb);
    const size_t nb = batch.size(), nl = left.size(), ns = summed.size(), nr = right.size();
    bool expand_a = false, expand_b = false;
    auto common = [&](size_t ia, size_t ib) {
      if (is_one(sa[ia]) && !is_one(sb[ib])) (expand_a = true, sa[ia] = sb[ib]);
      if (is_one(sb[ib]) && !is_one(sa[ia])) (expand_b = true, sb[ib] = sa[ia]);
    };
    for (size_t i = 0; i < nb; ++i) common(i, i);
    for (size_t i = 0; i < ns; ++i) common(nb + nl + i, nb + i);
    if (expand_a) pa.t = call(pa.t, "expand", {Value::tuple(sa)});
    if (expand_b) pb.t = call(pb.t, "expand", {Value::tuple(sb)});
    auto product = [&](const std::vector<Value>& s, size_t from, size_t n) {
      Value p = n ? s[from] : Value(int64_t(1));
      for (size_t i = from + 1; i < from + n; ++i) p = in_.binary(ast::BinOp::Mul, p, s[i]);
      return p;
    };
    Value ma = call(pa.t, "reshape", {Value::tuple({product(sa, 0, nb), product(sa, nb, nl), product(sa, nb + nl, ns)})});
    Value mb = call(pb.t, "reshape", {Value::tuple({product(sb, 0, nb), product(sb, nb, ns), product(sb, nb + ns, nr)})});
    std::vector<Value> shape(sa.begin(), sa.begin() + long(nb + nl));
    shape.insert(shape.end(), sb.begin() + long(nb + ns), sb.end());
    Value r = call(call(ma, "matmul", {mb}), "reshape", {Value::tuple(std::move(shape))});
    return {r, cat({&batch, &left, &right})};
  }

  Interpreter& in_;
  int ellipsis_dims_ = 0;
};

}  // namespace

Value einsum(Interpreter& in, CallArgs& a) {
  if (!a.kwargs.empty()) fail(ErrorKind::TypeError, "einsum() takes no keyword arguments");
  if (a.args.empty() || !a.args[0].is(Type::Str))
    fail(ErrorKind::TypeError, "einsum(): argument 'equation' (position 1) must be str, not {}",
         a.args.empty() ? "nothing" : type_name(a.args[0]));
  std::vector<Value> operands(a.args.begin() + 1, a.args.end());
  if (operands.size() == 1 && (operands[0].is(Type::List) || operands[0].is(Type::Tuple)))
    operands = operands[0].items();  // einsum(eq, [a, b])
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i].is(Type::Tensor))
      fail(ErrorKind::TypeError, "expected Tensor as element {} in argument 1, but got {}", i, type_name(operands[i]));
    if (in.tensor_dim(operands[i]) > 64) fail("only tensors with up to 64 dims are supported");
  }
  if (operands.empty()) fail("einsum(): must provide at least one operand");
  return Einsum(in).run(a.args[0].as_str(), std::move(operands));
}

}  // namespace thn
