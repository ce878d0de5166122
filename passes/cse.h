#pragma once
#include "ir/trace.h"

namespace thn {

// Common subexpression elimination. Requires: a functional trace (after
// passes/functionalize; writes, random draws and prints are never merged).
// Guarantees: no two pure bound symbols with the same symbol and the same
// arguments; later uses read the first one's outputs. A reshape to its
// operand's own sizes (detach() in a trace) is its operand.
Trace cse(Trace t);

}  // namespace thn
