#pragma once
#include "ir/trace.h"

namespace thn {

// Replaces every bound symbol that has a decomposition (ir/decompose.h) by
// its subsymbols. Requires: subsymbols define the op's outputs themselves.
// Guarantees: the same program, in prims wherever a decomposition exists;
// ops without one (an alias-returning `to`, advanced indexing, print) stay.
Trace lower_to_prims(Trace t);

}  // namespace thn
