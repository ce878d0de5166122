#include "ir/basic_index.h"

#include <algorithm>

namespace thn {

std::optional<std::vector<BasicIndexEntry>> basic_index_entries(size_t rank, std::span<const Value> index) {
  size_t consumed = 0, ellipses = 0;
  for (const Value& v : index) {
    if (v.is(Type::Int) || v.is(Type::Slice)) ++consumed;
    else if (v.is(Type::Ellipsis)) ++ellipses;
    else if (!v.is_none()) return std::nullopt;
  }
  if (consumed > rank || ellipses > 1) return std::nullopt;
  std::vector<BasicIndexEntry> out;
  int64_t d = 0;
  for (const Value& v : index) {
    if (v.is(Type::Ellipsis)) {
      for (size_t k = consumed; k < rank; ++k) out.push_back({d++, Value()});
    } else if (v.is_none()) {
      out.push_back({-1, Value()});
    } else {
      out.push_back({d++, v});
    }
  }
  for (; d < int64_t(rank); ++d) out.push_back({d, Value()});
  return out;
}

namespace {

// Python's bound `b` of a slice over a dim of this size, clamped to it, in
// the form that holds at this size; narrows r's size range to where it does.
// A bound that falls on the dim's end or start takes the form of the end or
// start (x[:2] of 2 elements is x[:size], for sizes up to 2): the view is
// then the whole dim for every size the trace serves, or for none, and so
// is contiguous (a reshape's view, contiguous()'s own operand) for every
// size or for none.
IndexBound bound(const Value& b, bool is_stop, int64_t size, IndexRange& r) {
  auto at_least = [&](int64_t k) { r.min_size = std::max(r.min_size, k); };
  auto at_most = [&](int64_t k) { r.max_size = std::min(r.max_size, k); };
  if (b.is_none()) return {is_stop, 0};
  const int64_t i = b.without_proxy().raw_int();
  if (i >= 0) {
    if (size > i) return at_least(i + 1), IndexBound{false, i};
    return at_most(i), IndexBound{true, 0};  // at or past the end: the end
  }
  if (size + i > 0) return at_least(-i + 1), IndexBound{true, i};
  return at_most(-i), IndexBound{false, 0};  // at or before the start: the start
}

// Narrows r's size range to where a.at(size) >= b.at(size) (true == want)
// or a.at(size) < b.at(size) (want false).
void compare(const IndexBound& a, const IndexBound& b, bool want, IndexRange& r) {
  if (a.from_end == b.from_end) return;  // the same for every size
  // a.at - b.at = size * sign + k.
  const int64_t sign = a.from_end ? 1 : -1, k = a.offset - b.offset;
  // size * sign + k >= 0 (or < 0).
  if (sign > 0) {
    if (want) r.min_size = std::max(r.min_size, -k);
    else r.max_size = std::min(r.max_size, -k - 1);
  } else {
    if (want) r.max_size = std::min(r.max_size, k);
    else r.min_size = std::max(r.min_size, k + 1);
  }
}

}  // namespace

IndexRange index_range(const Value& entry, int64_t size) {
  IndexRange r;
  if (entry.is(Type::Int)) {
    const int64_t i = entry.without_proxy().raw_int();
    r.lo = i >= 0 ? IndexBound{false, i} : IndexBound{true, i};
    r.hi = {r.lo.from_end, r.lo.offset + 1};
    r.min_size = i >= 0 ? i + 1 : -i;
    return r;
  }
  const auto& s = entry.obj<SliceObj>();
  r.step = s.step.is_none() ? 1 : s.step.without_proxy().raw_int();
  r.lo = bound(s.start, false, size, r);
  r.hi = bound(s.stop, true, size, r);
  if (r.hi.at(size) >= r.lo.at(size)) {
    compare(r.hi, r.lo, true, r);
  } else {  // empty: [lo, lo)
    compare(r.hi, r.lo, false, r);
    r.hi = r.lo;
  }
  return r;
}

}  // namespace thn
