#pragma once
#include "ir/trace.h"

namespace thn {

// Adds into a view. A tensor that is zero but in one view (a view's
// gradient: zeros with the gradient written into the view, as autograd's
// slice and getitem rules make it) added to another tensor is that tensor
// with the gradient added into the view: the sum of q's, k's and v's
// gradients sliced from one qkv is three writes into one buffer, not two
// full-size sums of mostly zeros. Only where the other tensor is known to
// be contiguous (zeros, a write into them, a contiguous input), so that the
// result has the sum's layout. Requires: a functional trace of prims
// (after passes/functionalize). Guarantees: the same values, up to the sign
// of zeros outside the view (eager's 0 + -0.0 is +0.0), and layouts.
Trace view_adds(Trace t);

}  // namespace thn
