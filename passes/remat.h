#pragma once
#include "ir/trace.h"

namespace thn {

// Rematerialization. Requires: a fused functional trace (passes/fusion.h).
// Guarantees: the same program, where a fusion that reads values another
// fusion computed elementwise from its inputs computes them itself from
// those inputs when that reads fewer bytes: a training step's backward
// recomputes gelu's erf from the matmul output it already had, instead of
// loading the three intermediates the forward stored for it.
//  - A value is recomputed with the producer's prims that lead to it from
//    the producer's inputs (views, elementwise math, conversions,
//    constants), never through a reduction; it may also start from values
//    the producer still stores.
//  - Per (producer, consumer) pair the values taken are those whose
//    recomputation needs them only; it happens when the consumer's new
//    inputs are fewer bytes than the values it no longer reads (static
//    sizes only).
//  - The producer then stores only the values something still reads, and
//    is dropped when nothing does.
Trace rematerialize(Trace t);

}  // namespace thn
