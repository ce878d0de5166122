#pragma once
#include "ir/trace.h"

namespace thn {

// Dead code elimination. Requires: a trace in program order. Guarantees: the
// same outputs and side effects (in-place writes, setitem, print, random
// numbers drawn, seeding), without bound symbols whose results nothing uses.
Trace dce(Trace t);

}  // namespace thn
