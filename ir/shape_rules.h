#pragma once
// Symbolic output sizes for shapes="symbolic": per op family, the sizes of an
// op's outputs as ints and NumberProxies of its inputs' sizes and arguments,
// with the shape arithmetic recorded in the trace (`reshape(x, bs, -1)`
// computes the -1) and the assumptions guarded (two symbolic sizes that
// broadcast together are equal).
#include <optional>
#include <span>
#include <vector>

#include "ir/tracer.h"

namespace thn {

// Sets the sizes of `out`'s tensor proxies (for an in-place op `out` is its
// receiver: the rule only checks and guards). False when the op has no rule
// or the rule's sizes differ from the eager result (then the caller makes
// the inputs' sizes static).
bool apply_shape_rule(Tracer& t, const OpDef& op, const std::vector<Value>& args, const Value& out, bool inplace);

// Basic indexing (ints, slices, None, an ellipsis; see ir/basic_index.h):
// the sizes of x[index] for x of `sizes`, symbolic where the dims the index
// leaves whole are, and for a slice with a bound from a symbolic end; the
// form of each range guarded to hold (x[-1] guards size >= 1, x[:5] either
// size >= 6 or size <= 5). nullopt for another index (a tensor), whose
// result's sizes depend on the values of every size.
std::optional<std::vector<Value>> basic_index_rule(Tracer& t, const std::vector<Value>& sizes,
                                                   std::span<const Value> index);

// Whether a reshape of a tensor of `sizes` and (this call's) `strides` to
// `to` is a view, as PyTorch's computeStride decides, for a layout whose
// stride comparisons hold on every call (the tracer's structural_layout):
// the comparisons of size products that decide it are guarded where a
// symbolic size takes part and the answer is not the same for every size.
bool reshape_is_view(Tracer& t, const std::vector<Value>& sizes, const std::vector<int64_t>& strides,
                     const std::vector<Value>& to);

// Whether op's rule reads numbers of parameter p symbolically (the sizes of
// `reshape`, the sections of `split`), so they need no value guard.
bool consumes_symbolic(const OpDef& op, const Param& p);

}  // namespace thn
