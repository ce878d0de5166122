#pragma once
// Decompositions: each language op (and ltorch.getitem / setitem_) written as
// prims (ir/trace.h: PrimIds and the op-table rows that are prims). A
// decomposition makes explicit what the eager kernel does implicitly: type
// promotion (convert_element_type to one computation dtype, float32 for
// float16/bfloat16 as PyTorch's CPU kernels compute), broadcasting (expand),
// normalised dims, `alpha` and `value` factors, keepdim, view arithmetic
// (reshape, permute, slice, squeeze, unsqueeze) and in-place writes (one
// prims.copy_ into the destination). Fusion and code generation read prims
// only; passes/lower_to_prims replaces each op by its decomposition.
#include "ir/trace.h"

namespace thn {

class Tracer;

// Fills b.subsymbols with b's decomposition. Requires: b as the tracer
// records it (canonical args, proxies carrying this call's meta tensors).
// Guarantees: the last prims define b's outputs themselves, with the same
// dtype, device and sizes (checked; a mismatch is a logic_error); b is left
// without subsymbols when the op has no decomposition or returns an alias of
// an input unchanged (`x.to(x.dtype)`, `x[...]`).
void decompose(Tracer& tr, BoundSymbol& b);

}  // namespace thn
