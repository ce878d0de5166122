#pragma once
#include "ir/trace.h"

namespace thn {

// Removes in-place writes. Requires: a lowered trace (passes/lower_to_prims),
// where every write is `t = prims.copy_(dst, src)` and views are view prims.
// Guarantees: every value is written once. A write into a base tensor makes
// src its new value; a write through a view makes
// `prims.copy_into_view(base, src, steps)` the base's new value (the view's
// prims replayed). Later reads of the base see the new value, and views of it
// are re-derived from it. Each mutated input (argument or captured tensor)
// gets one write-back at the end: `prims.copy_to_out_(computed, out)` when
// nothing else uses computed, else `prims.copy_(input, computed)`; returned
// views of inputs are views of the input itself, so they alias it as in
// eager. Inputs that share memory (Trace::storage_groups) are views
// (`prims.as_strided`) of one base, the range they span, which is the
// input written back. A trace that still holds an in-place language op
// without a decomposition is returned unchanged (it runs in order, writes
// and all); overlapping inputs that are only read are plain values.
Trace functionalize(Trace t);

}  // namespace thn
