#pragma once
// Basic indexing, x[i, a:b:c, None, ...], as the tracer's shape rule and
// decompose both read it: the dim each entry of the index takes, and where
// a slice's bounds fall. A bound that Python counts from the end of the dim
// stays an offset from it, so a symbolic size gives symbolic bounds, valid
// over a range of sizes the tracer guards.
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "interp/dispatch.h"
#include "interp/value.h"

namespace thn {

struct BasicIndexEntry {
  int64_t dim = -1;  // the input dim it takes; -1 for a None (a new dim of size 1)
  Value index;       // an int, a slice, or None: the dim taken whole (by an ellipsis, or past the index's end)
};

// The entries of `index` over a tensor of `rank` dims: every input dim once,
// in order, with the Nones where they are. nullopt for an index that is not
// basic (a tensor, a list, a bool) or that takes more dims than there are.
std::optional<std::vector<BasicIndexEntry>> basic_index_entries(size_t rank, std::span<const Value> index);

// `offset`, or `size + offset` when from_end.
struct IndexBound {
  bool from_end = false;
  int64_t offset = 0;
  int64_t at(int64_t size) const { return from_end ? size + offset : offset; }
};

// The elements [lo, hi) by step of a dim, hi >= lo, in a form that holds
// for the sizes in [min_size, max_size] (this call's among them).
struct IndexRange {
  IndexBound lo, hi;
  int64_t step = 1;
  int64_t min_size = 0, max_size = std::numeric_limits<int64_t>::max();
  bool whole() const { return !lo.from_end && lo.offset == 0 && hi.from_end && hi.offset == 0 && step == 1; }
};

// What an int or a slice entry takes of a dim of this size (an int: the one
// element it picks; the caller has checked it is in the dim).
IndexRange index_range(const Value& entry, int64_t size);

// size + k, for a size that is an int or symbolic: `num(op, a, b)` builds
// the arithmetic on a symbolic one.
template <class Num>
Value size_plus(const Value& size, int64_t k, Num num) {
  if (!size.is_proxy()) return Value(size.raw_int() + k);
  if (k == 0) return size;
  return k > 0 ? num(NumberOp::add, size, Value(k)) : num(NumberOp::sub, size, Value(-k));
}

// The start or end `b` of a range over a dim of `size`.
template <class Num>
Value index_bound_value(const IndexBound& b, const Value& size, Num num) {
  return b.from_end ? size_plus(size, b.offset, num) : Value(b.offset);
}

// The number of elements r takes, likewise: ceil((hi - lo) / step), where
// hi - lo is a constant, or the size plus or minus one.
template <class Num>
Value index_range_length(const IndexRange& r, const Value& size, Num num) {
  const int64_t k = r.hi.offset - r.lo.offset, sign = int64_t(r.hi.from_end) - int64_t(r.lo.from_end);
  if (sign == 0 || !size.is_proxy()) {
    const int64_t n = k + sign * (sign == 0 ? 0 : size.raw_int());
    return Value((n + r.step - 1) / r.step);
  }
  Value n = sign > 0 ? size_plus(size, k, num) : num(NumberOp::sub, Value(k), size);
  if (r.step == 1) return n;
  return num(NumberOp::floordiv, num(NumberOp::add, n, Value(r.step - 1)), Value(r.step));
}

}  // namespace thn
