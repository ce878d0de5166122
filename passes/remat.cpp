#include "passes/remat.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace thn {

namespace {

using Set = std::unordered_set<const Symbolic*>;

// Bytes of a tensor value, when its sizes are static.
std::optional<int64_t> bytes_of(const Value& v) {
  if (!is_tensor_proxy(v)) return 0;
  auto sizes = static_sizes(v);
  if (!sizes) return std::nullopt;
  int64_t n = itemsize(tensor_proxy(v).dtype());
  for (int64_t s : *sizes) n *= s;
  return n;
}

// A new proxy standing for the same tensor value (a recomputed member's
// result: each fusion defines its own values).
Value fresh(const Value& v) {
  auto p = std::make_shared<TensorProxy>(tensor_proxy(v));
  p->name.clear();
  p->autograd = nullptr;
  return Value::proxy(Value(Type::Tensor, nullptr), p);
}

class Remat {
 public:
  explicit Remat(Trace t) : t_(std::move(t)) {}

  Trace run() {
    if (!t_.functional) return std::move(t_);
    // (the body's own outputs do not change until prune())
    for (size_t i = 0; i < t_.body.size(); ++i)
      for_each_proxy(t_.body[i].out, [&](const Value& o) { producer_[&o.symbolic()] = i; });
    for (size_t c = 0; c < t_.body.size(); ++c)
      if (is_fusion(t_.body[c])) {
        broadcasts(c);
        consumer(c);
      }
    if (changed_) prune();
    return std::move(t_);
  }

 private:
  // A broadcast that several fusions read is taken on the host (passes/
  // fusion.h): each fusion takes it in again, as index arithmetic on its
  // operand, so that one of a reduction's output shape reads once per
  // output element (backend/kernel_ir).
  void broadcasts(size_t c) {
    BoundSymbol& D = t_.body[c];
    std::unordered_map<const Symbolic*, Value> rename;
    std::vector<BoundSymbol> views;
    for (const Value& a : D.args) {
      auto it = producer_.find(&a.symbolic());
      if (it == producer_.end() || it->second >= c) continue;
      const BoundSymbol& v = t_.body[it->second];
      if (!v.sym.op || v.sym.op->id != OpId::expand || !v.sym.is_view() || !is_tensor_proxy(v.args[0])) continue;
      BoundSymbol m = v;
      m.out = fresh(v.out);
      rename[&a.symbolic()] = m.out;
      views.push_back(std::move(m));
    }
    if (views.empty()) return;
    for (BoundSymbol& m : D.subsymbols) m.args = substitute(Value::tuple(m.args), rename).items();
    Set have;
    std::vector<Value> args;
    for (const Value& a : D.args)
      if (!rename.count(&a.symbolic()) && have.insert(&a.symbolic()).second) args.push_back(a);
    for (const BoundSymbol& m : views)
      for_each_proxy(Value::tuple(m.args), [&](const Value& a) {
        if (have.insert(&a.symbolic()).second) args.push_back(a);
      });
    D.args = std::move(args);
    D.subsymbols.insert(D.subsymbols.begin(), std::make_move_iterator(views.begin()), std::make_move_iterator(views.end()));
    changed_ = true;
  }

  // The fusions (by body index) whose outputs fusion c reads.
  void consumer(size_t c) {
    std::vector<size_t> ps;
    for (const Value& a : t_.body[c].args)
      if (auto it = producer_.find(&a.symbolic()); it != producer_.end() && it->second < c &&
          is_fusion(t_.body[it->second]) && a.is(Type::Tensor) && std::find(ps.begin(), ps.end(), it->second) == ps.end())
        ps.push_back(it->second);
    for (size_t p : ps) pair(p, c);
  }

  // The members of fusion f (`member`: which defines a value) that compute
  // `v` from f's args and from the values in `stop` (stored outputs), in f's
  // order; nullopt through a reduction.
  static std::optional<std::vector<size_t>> closure(const BoundSymbol& f,
                                                    const std::unordered_map<const Symbolic*, size_t>& member,
                                                    const Value& v, const Set& stop) {
    std::vector<size_t> out;
    std::unordered_set<size_t> seen;
    std::vector<const Symbolic*> work{&v.symbolic()};
    while (!work.empty()) {
      const Symbolic* s = work.back();
      work.pop_back();
      auto it = member.find(s);
      if (it == member.end() || (s != &v.symbolic() && stop.count(s))) continue;  // an arg, or stored
      if (!seen.insert(it->second).second) continue;
      const BoundSymbol& m = f.subsymbols[it->second];
      if (is_fusible_reduction(m)) return std::nullopt;
      out.push_back(it->second);
      for_each_proxy(m.args, [&](const Value& a) { work.push_back(&a.symbolic()); });
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // Consumer c recomputes what it reads of producer p where that pays.
  void pair(size_t p, size_t c) {
    const BoundSymbol &P = t_.body[p], &C = t_.body[c];
    if (tensor_proxy(P.out.items().front()).device() != tensor_proxy(C.out.items().front()).device()) return;
    Set outs, read;
    for (const Value& o : P.out.items()) outs.insert(&o.symbolic());
    std::vector<Value> taken;  // P's outputs that C reads
    for (const Value& a : C.args)
      if (outs.count(&a.symbolic()) && read.insert(&a.symbolic()).second) taken.push_back(a);
    // Drop what cannot be recomputed until the rest can (from P's args and
    // the outputs P keeps storing).
    std::unordered_map<const Symbolic*, size_t> member;
    for (size_t m = 0; m < P.subsymbols.size(); ++m)
      for_each_proxy(P.subsymbols[m].out, [&](const Value& o) { member[&o.symbolic()] = m; });
    std::vector<std::vector<size_t>> members;
    for (bool again = true; again && !taken.empty();) {
      again = false;
      Set stored = outs;
      for (const Value& x : taken) stored.erase(&x.symbolic());
      members.clear();
      for (size_t k = 0; k < taken.size(); ++k) {
        auto m = closure(P, member, taken[k], stored);
        if (!m) {
          taken.erase(taken.begin() + std::ptrdiff_t(k));
          again = true;
          break;
        }
        members.push_back(std::move(*m));
      }
    }
    if (taken.empty()) return;
    // The values the recomputation reads from outside it: P's args, or
    // outputs P keeps.
    std::vector<size_t> all;
    for (const auto& m : members) all.insert(all.end(), m.begin(), m.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    Set defined, in_c;
    for (size_t m : all) for_each_proxy(P.subsymbols[m].out, [&](const Value& o) { defined.insert(&o.symbolic()); });
    for (const Value& a : C.args) in_c.insert(&a.symbolic());
    std::vector<Value> leaves;
    Set seen;
    for (size_t m : all)
      for_each_proxy(P.subsymbols[m].args, [&](const Value& a) {
        if (!defined.count(&a.symbolic()) && !in_c.count(&a.symbolic()) && seen.insert(&a.symbolic()).second)
          leaves.push_back(a);
      });
    int64_t saved = 0, cost = 0;
    for (const Value& x : taken) {
      auto b = bytes_of(x);
      if (!b) return;
      saved += *b;
    }
    for (const Value& l : leaves) {
      auto b = bytes_of(l);
      if (!b) return;
      cost += *b;
    }
    if (cost >= saved) return;
    // C computes the members itself, under fresh names, before its own.
    std::unordered_map<const Symbolic*, Value> rename;
    std::vector<BoundSymbol> copies;
    for (size_t m : all) {
      BoundSymbol b = P.subsymbols[m];
      b.args = substitute(Value::tuple(b.args), rename).items();
      Value out = fresh(b.out);
      rename[&b.out.symbolic()] = out;
      b.out = out;
      copies.push_back(std::move(b));
    }
    BoundSymbol& D = t_.body[c];
    for (BoundSymbol& m : D.subsymbols) m.args = substitute(Value::tuple(m.args), rename).items();
    D.subsymbols.insert(D.subsymbols.begin(), std::make_move_iterator(copies.begin()),
                        std::make_move_iterator(copies.end()));
    std::vector<Value> args;
    for (const Value& a : D.args)
      if (!rename.count(&a.symbolic())) args.push_back(a);
    args.insert(args.end(), leaves.begin(), leaves.end());
    D.args = std::move(args);
    changed_ = true;
  }

  // Fusions store only what is still read; members nothing needs go.
  void prune() {
    Set used;
    for_each_proxy(t_.output, [&](const Value& o) { used.insert(&o.symbolic()); });
    for (const BoundSymbol& b : t_.body) {
      for_each_proxy(Value::tuple(b.args), [&](const Value& a) { used.insert(&a.symbolic()); });
      if (!b.into.is_none()) for_each_proxy(b.into, [&](const Value& a) { used.insert(&a.symbolic()); });
    }
    std::vector<BoundSymbol> body;
    for (BoundSymbol& b : t_.body) {
      bool unused_view = b.sym.is_view() && b.out.is_proxy() && !used.count(&b.out.symbolic());
      if (unused_view) continue;
      if (!is_fusion(b)) {
        body.push_back(std::move(b));
        continue;
      }
      std::vector<Value> outs;
      for (const Value& o : b.out.items())
        if (used.count(&o.symbolic())) outs.push_back(o);
      if (outs.empty()) continue;
      Set live;
      for (const Value& o : outs) live.insert(&o.symbolic());
      std::vector<bool> keep(b.subsymbols.size(), false);
      for (size_t m = b.subsymbols.size(); m-- > 0;) {
        bool needed = false;
        for_each_proxy(b.subsymbols[m].out, [&](const Value& o) { needed |= live.count(&o.symbolic()) > 0; });
        if (!needed) continue;
        keep[m] = true;
        for_each_proxy(Value::tuple(b.subsymbols[m].args), [&](const Value& a) { live.insert(&a.symbolic()); });
      }
      std::vector<BoundSymbol> members;
      for (size_t m = 0; m < keep.size(); ++m)
        if (keep[m]) members.push_back(std::move(b.subsymbols[m]));
      b.subsymbols = std::move(members);
      std::vector<Value> args;
      for (const Value& a : b.args)
        if (live.count(&a.symbolic())) args.push_back(a);
      b.args = std::move(args);
      b.out = Value::tuple(std::move(outs));
      body.push_back(std::move(b));
    }
    t_.body = std::move(body);
  }

  Trace t_;
  std::unordered_map<const Symbolic*, size_t> producer_;  // a value -> the body entry that makes it
  bool changed_ = false;
};

}  // namespace

Trace rematerialize(Trace t) { return Remat(std::move(t)).run(); }

}  // namespace thn
