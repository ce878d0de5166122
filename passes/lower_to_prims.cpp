#include "passes/lower_to_prims.h"

#include <iterator>

namespace thn {

Trace lower_to_prims(Trace t) {
  std::vector<BoundSymbol> body;
  body.reserve(t.body.size());
  for (BoundSymbol& b : t.body) {
    if (b.subsymbols.empty()) body.push_back(std::move(b));
    else std::move(b.subsymbols.begin(), b.subsymbols.end(), std::back_inserter(body));
  }
  t.body = std::move(body);
  return t;
}

}  // namespace thn
