#include "passes/dce.h"

#include <unordered_set>

namespace thn {

Trace dce(Trace t) {
  std::unordered_set<const Symbolic*> live;
  // A live tensor keeps its symbolic sizes live: the shape arithmetic stays
  // visible in the trace (and its type comments name defined values).
  auto use = [&](const Value& v) {
    for_each_proxy(v, [&](const Value& p) {
      live.insert(&p.symbolic());
      if (p.is(Type::Tensor))
        for (const Value& s : tensor_proxy(p).sizes)
          if (s.is_proxy()) live.insert(&s.symbolic());
    });
  };
  use(t.output);
  std::vector<bool> keep(t.body.size(), false);
  for (size_t i = t.body.size(); i-- > 0;) {
    const BoundSymbol& b = t.body[i];
    bool needed = b.sym.has_side_effect();
    for_each_proxy(b.out, [&](const Value& o) { needed |= live.count(&o.symbolic()) > 0; });
    if (!needed) continue;
    keep[i] = true;
    for (const Value& a : b.args) use(a);
    use(b.out);
  }
  size_t kept = 0;
  for (size_t i = 0; i < t.body.size(); ++i)
    if (keep[i]) {
      if (kept != i) t.body[kept] = std::move(t.body[i]);  // (a self-move would empty it)
      ++kept;
    }
  t.body.resize(kept);
  return t;
}

}  // namespace thn
