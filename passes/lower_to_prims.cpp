#include "passes/lower_to_prims.h"

namespace thn {

Trace lower_to_prims(const Trace& t) {
  Trace out = t.shell();
  for (const BoundSymbol& b : t.body) {
    if (b.subsymbols.empty()) out.body.push_back(b);
    else out.body.insert(out.body.end(), b.subsymbols.begin(), b.subsymbols.end());
  }
  return out;
}

}  // namespace thn
