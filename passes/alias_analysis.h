#pragma once
#include <optional>
#include <span>

#include "ir/trace.h"
#include "runtime/tensor.h"

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

// Where a view's elements lie in the memory of the value owning it, in
// elements: sizes, strides and the first element's offset (when known).
struct Region {
  Dims sizes, strides;
  std::optional<int64_t> offset;
};
struct ViewResult {
  bool known = false;   // `region` holds the view's sizes and strides
  bool copies = false;  // a reshape the strides admit no view of (the runtime copies)
  Region region;
};
// A view prim (its operands after the tensor: `rest`) applied to a region.
// Unknown when an argument is symbolic; a slice with symbolic bounds takes
// `out_sizes` when given, and its offset is then unknown.
ViewResult view_region(const Symbol& sym, std::span<const Value> rest, const Region& in, const Dims* out_sizes);
// The region of a value of an analysed trace, when its layout is known.
std::optional<Region> region_of(const Trace& t, const Value& v);
// The region copy_into_view's steps select of a value whose region is `in`.
std::optional<Region> steps_region(Region in, const Value& steps);
// Whether two regions of one value's memory provably share no element (their
// spans do not meet); false when an offset is unknown.
bool disjoint(const Region& a, const Region& b);
// Whether b, a copy_into_view updating its operand 0 in place, writes none
// of the elements of p, a view of that operand's memory (`x[0] = x[1]`).
bool writes_apart(const Trace& t, const BoundSymbol& b, const Value& p);

}  // namespace thn
