#pragma once
#include "ir/trace.h"
#include "passes/alias_analysis.h"

namespace thn {

// Fusion. Requires: a functional trace of prims. Guarantees: the same
// program, where groups of pointwise prims (elementwise math, dtype
// conversions) and the views between them become one bound symbol
//   (t3, t7) = prims.fusion(a, b, n)
// whose subsymbols are the group's prims in order, whose args are the values
// it reads from outside (tensors and numbers) and whose outputs are the
// values used after it (of one shape, the region's index space, but see
// reductions below).
//  - Views inside a region are index arithmetic: a value read through views
//    is recomputed at the viewed index (its leaves are loaded through the
//    same views), so a broadcast never materialises.
//  - Regions are grown from consumers to producers; a prim joins a region
//    when every use of its value is in it (it is then not stored), or when
//    its value has the region's shape and no path leads from it to the
//    region through other ops (a store; regions of one shape with no path
//    between them merge horizontally, an optimizer step over many
//    parameters of one shape becomes one kernel).
//  - The fused trace is ordered topologically, keeping the original order
//    where it can: side effects stay in order and a write-back into an
//    input stays after every op that reads the input's old value.
//  - Reductions (sum, prod, amax, amin) fuse with their pointwise producers
//    and consumers: such a region computes, per element of the reduction's
//    output, the reduced elements (inner phase: the reduction's operands,
//    and stores of the input's shape) and then what follows (outer phase).
//    Its reductions share input shape and dims, none feeds another, and
//    nothing independent of them joins (it would run inside their loops).
// Not fused: matmul, gathers, random numbers, integer division (its
// zero-divisor error), other reductions and whatever has no kernel yet;
// they run as library ops between the fusions.
Trace fusion(Trace t);

// How an op of the table runs in compiled traces, for docs/ops.md: "fused"
// (its prims go into fusion kernels), "fused (float)" (integer forms run as
// library ops), "view" (index arithmetic: free in a fusion, taken on the
// host otherwise) or "library" (the runtime's kernel between fusions).
std::string_view codegen_status(const OpDef& op);

// Whether fusion f reads `leaf` (one of its args) only at the elements of
// its index space it writes: the leaf has an output's shape and is loaded
// with no view in between. A fusion may write an output into such a leaf.
bool fusion_reads_elementwise(const BoundSymbol& f, const Value& leaf);

// Whether fusion f stores output `out` no earlier than its last read of
// `leaf`: with reductions the kernel sweeps the reduced elements several
// times, storing a value in the sweep after the reductions it needs and
// reading a leaf in each sweep whose values use it. An output stored in an
// earlier sweep than a read of the leaf may not take the leaf's memory.
bool fusion_stores_after_reads(const BoundSymbol& f, const Value& out, const Value& leaf);

// Whether fusion f, storing one of its outputs at `store` (a region of the
// memory that `leaf`, one of its args, is `leaf_region` of), reads no element
// of that memory before the kernel stores it: every element of the leaf it
// reads is where the output is stored at the same index, or outside the
// store. (With reductions: a value stored at index i after the sweeps
// reads it there; the sweeps may read only elements outside the store.)
bool fusion_reads_at_store(const BoundSymbol& f, const Value& leaf, const Region& leaf_region, const Region& store);

}  // namespace thn
