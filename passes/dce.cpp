#include "passes/dce.h"

#include <unordered_set>

namespace thn {

Trace dce(const Trace& t) {
  std::unordered_set<const Symbolic*> live;
  // A live tensor keeps its symbolic sizes live: the shape arithmetic stays
  // visible in the trace (and its type comments name defined values).
  auto use = [&](const Value& v) {
    std::vector<Value> ps;
    collect_proxies(v, ps);
    for (const Value& p : ps) {
      live.insert(&p.symbolic());
      if (p.is(Type::Tensor))
        for (const Value& s : tensor_proxy(p).sizes)
          if (s.is_proxy()) live.insert(&s.symbolic());
    }
  };
  use(t.output);
  std::vector<bool> keep(t.body.size(), false);
  for (size_t i = t.body.size(); i-- > 0;) {
    const BoundSymbol& b = t.body[i];
    std::vector<Value> outs;
    collect_proxies(b.out, outs);
    bool needed = b.sym.has_side_effect();
    for (const Value& o : outs) needed |= live.count(&o.symbolic()) > 0;
    if (!needed) continue;
    keep[i] = true;
    for (const Value& a : b.args) use(a);
    for (const Value& o : outs) use(o);
  }
  Trace out = t.shell();
  for (size_t i = 0; i < t.body.size(); ++i)
    if (keep[i]) out.body.push_back(t.body[i]);
  return out;
}

}  // namespace thn
