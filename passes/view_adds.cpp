#include "passes/view_adds.h"

#include <cmath>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace thn {

namespace {

bool is_number(const Value& v, double x) {
  if (v.is_proxy()) return false;
  if (v.is(Type::Int) || v.is(Type::Bool)) return double(v.raw_int()) == x;
  return v.is(Type::Float) && v.raw_float() == x && !std::signbit(v.raw_float());
}

bool is_full(const BoundSymbol& b) { return b.sym.op && b.sym.is_prim && b.sym.op->id == OpId::full; }

// prims.full(sizes, 0, dtype, device): zeros.
bool is_zeros(const BoundSymbol& b) { return is_full(b) && b.args.size() > 1 && is_number(b.args[1], 0); }

// The sizes of a tensor of `sizes` seen through copy_into_view's steps,
// where every step is a prims.slice with constant bounds.
std::optional<std::vector<Value>> sliced_sizes(std::vector<Value> sizes, const Value& steps) {
  for (const Value& step : steps.items()) {
    const std::vector<Value>& s = step.items();
    if (s.size() != 4 || !s[0].is(Type::Str) || s[0].as_str() != "prims.slice") return std::nullopt;
    for (size_t d = 0; d < sizes.size(); ++d) {
      const Value &start = s[1].items().at(d), &end = s[2].items().at(d), &by = s[3].items().at(d);
      if (start.is_proxy() || end.is_proxy() || by.is_proxy() || by.raw_int() < 1) return std::nullopt;
      sizes[d] = Value(std::max<int64_t>(0, (end.raw_int() - start.raw_int() + by.raw_int() - 1) / by.raw_int()));
    }
  }
  return sizes;
}

bool same_tensor_type(const Value& a, const Value& b) {
  if (!is_tensor_proxy(a) || !is_tensor_proxy(b)) return false;
  const TensorProxy &x = tensor_proxy(a), &y = tensor_proxy(b);
  return x.dtype() == y.dtype() && x.device() == y.device() && same_sizes(x, y);
}

}  // namespace

Trace view_adds(Trace t) {
  std::unordered_map<const Symbolic*, BoundSymbol> def;  // a copy_into_view's or a full's value -> it
  std::unordered_map<const Symbolic*, int> uses;
  // Values known to be contiguous: full's, a copy_into_view's of one, and
  // contiguous inputs. The sum's layout is eager's add's (its contiguous
  // zero-based operand's, where y is contiguous too); the rewrite's is y's.
  std::unordered_set<const Symbolic*> contiguous;
  for (const Value& v : t.inputs) {
    if (!is_tensor_proxy(v)) continue;
    auto sizes = static_sizes(v);
    if (sizes && tensor_proxy(v).strides == contiguous_strides(*sizes)) contiguous.insert(&v.symbolic());
  }
  auto use = [&](const Value& p) { uses[&p.symbolic()]++; };
  for (const BoundSymbol& b : t.body) for_each_proxy(b.args, use);
  for_each_proxy(t.output, use);
  std::vector<BoundSymbol> body;
  body.reserve(t.body.size());
  for (BoundSymbol& b : t.body) {
    const bool scatter = !b.sym.op && b.sym.prim == PrimId::copy_into_view;
    if ((scatter || is_zeros(b)) && b.out.is_proxy()) def[&b.out.symbolic()] = b;
    if (b.out.is_proxy() && (is_full(b) || (scatter && b.args[0].is_proxy() && contiguous.count(&b.args[0].symbolic()))))
      contiguous.insert(&b.out.symbolic());
    // s = add(a, y) (alpha 1, no broadcast, one dtype) where a is zeros with
    // x written into one view that only this add reads ...
    const bool add = b.sym.op && b.sym.is_prim && b.sym.op->id == OpId::add && b.args.size() == 3 &&
                     is_number(b.args[2], 1) && b.out.is_proxy();
    std::optional<size_t> which;  // the operand that is a
    for (size_t i = 0; add && i < 2 && !which; ++i) {
      const Value &a = b.args[i], &y = b.args[1 - i];
      if (!same_tensor_type(a, b.out) || !same_tensor_type(y, b.out) || &a.symbolic() == &y.symbolic() ||
          !contiguous.count(&y.symbolic()))
        continue;
      auto s = def.find(&a.symbolic());
      if (s == def.end() || !(!s->second.sym.op && s->second.sym.prim == PrimId::copy_into_view) || uses[&a.symbolic()] != 1)
        continue;
      const BoundSymbol& w = s->second;
      auto z = def.find(w.args[0].is_proxy() ? &w.args[0].symbolic() : nullptr);
      if (z == def.end() || !is_zeros(z->second)) continue;
      std::optional<std::vector<Value>> sizes = sliced_sizes(tensor_proxy(a).sizes, w.args[2]);
      const Value& x = w.args[1];
      if (!sizes || !is_tensor_proxy(x) || tensor_proxy(x).dtype() != tensor_proxy(a).dtype()) continue;
      const Value view = metadata_tensor(tensor_proxy(a).dtype(), tensor_proxy(a).device(), *sizes);
      if (same_sizes(tensor_proxy(x), tensor_proxy(view))) which = i;
    }
    if (!which) {
      body.push_back(std::move(b));
      continue;
    }
    // ... is y with x added into that view: s = copy_into_view(y, view(y) + x).
    const BoundSymbol& w = def.at(&b.args[*which].symbolic());
    const Value y = b.args[1 - *which], x = w.args[1];
    const TensorProxy& yp = tensor_proxy(y);
    Value viewed = y;
    std::vector<Value> sizes = yp.sizes;
    for (const Value& step : w.args[2].items()) {
      BoundSymbol v;
      v.sym = Symbol::of(PrimId::slice);
      v.args = {viewed, step.items()[1], step.items()[2], step.items()[3]};
      sizes = *sliced_sizes(sizes, Value::list({step}));
      v.out = metadata_tensor(yp.dtype(), yp.device(), sizes);
      v.loc = b.loc;
      viewed = v.out;
      body.push_back(std::move(v));
    }
    BoundSymbol sum = b;
    sum.args[*which] = x;
    sum.args[1 - *which] = viewed;
    sum.out = metadata_tensor(yp.dtype(), yp.device(), sizes);
    BoundSymbol write;
    write.sym = w.sym;
    write.args = {y, sum.out, w.args[2]};
    write.out = b.out;
    write.loc = b.loc;
    body.push_back(std::move(sum));
    body.push_back(std::move(write));
    def[&b.out.symbolic()] = body.back();
    contiguous.insert(&b.out.symbolic());
  }
  t.body = std::move(body);
  return t;
}

}  // namespace thn
