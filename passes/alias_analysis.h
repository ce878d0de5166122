#pragma once
#include "ir/trace.h"

namespace thn {

// Alias analysis. Requires: a functional trace of prims. Guarantees: the same
// trace, with `layouts` filled in for every tensor value: the value whose
// memory it shares (views of views resolve to the owner: an input, a
// captured tensor or a computed tensor) and its strides when they are known
// (static sizes and an input layout the prologue guarantees). View prims
// (slice, as_strided, reshape, permute, expand, squeeze, unsqueeze,
// diagonal) run as view arithmetic with no kernel, so a returned view of an
// input is a real alias.
// A prims.reshape whose operand's strides do not allow a view is a bug in
// the decomposition (eager copies there: prims.contiguous comes first) and
// raises logic_error.
Trace alias_analysis(Trace t);

}  // namespace thn
