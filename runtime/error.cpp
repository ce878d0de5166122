#include "runtime/error.h"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace thn {

const char* error_kind_name(ErrorKind k) {
  switch (k) {
#define THN_X(k) \
  case ErrorKind::k: return #k;
    THN_ERROR_KINDS(THN_X)
#undef THN_X
  }
  return "Error";
}

namespace {

// CPython's costs (Python/suggestions.c): an insertion, deletion or
// substitution costs 2, a change of case alone 1; names that differ in more
// than 40 characters (past their common prefix and suffix) and pools of 750
// names or more get no suggestion.
constexpr size_t kMoveCost = 2, kCaseCost = 1, kMaxName = 40, kMaxCandidates = 750;

size_t substitution_cost(char a, char b) {
  if (a == b) return 0;
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
  return lower(a) == lower(b) ? kCaseCost : kMoveCost;
}

// The edit distance of a and b, or max + 1 once it must exceed max.
size_t edit_distance(std::string_view a, std::string_view b, size_t max) {
  while (!a.empty() && !b.empty() && a.front() == b.front()) a.remove_prefix(1), b.remove_prefix(1);
  while (!a.empty() && !b.empty() && a.back() == b.back()) a.remove_suffix(1), b.remove_suffix(1);
  if (a.size() > kMaxName || b.size() > kMaxName) return max + 1;
  if (a.size() > b.size()) std::swap(a, b);
  if (a.empty()) return b.size() * kMoveCost;
  if ((b.size() - a.size()) * kMoveCost > max) return max + 1;
  // One row of the table: row[i] is the distance of a[0..i] to the b prefix so far.
  std::vector<size_t> row(a.size());
  for (size_t i = 0; i < a.size(); ++i) row[i] = (i + 1) * kMoveCost;
  size_t result = 0;
  for (size_t j = 0; j < b.size(); ++j) {
    size_t diagonal = j * kMoveCost;  // the distance of a[0..i-1] to b[0..j-1]
    result = diagonal + kMoveCost;    // of the empty a prefix to b[0..j]
    size_t least = SIZE_MAX;
    for (size_t i = 0; i < a.size(); ++i) {
      const size_t substituted = diagonal + substitution_cost(a[i], b[j]);
      diagonal = row[i];
      result = std::min({substituted, result + kMoveCost, row[i] + kMoveCost});
      row[i] = result;
      least = std::min(least, result);
    }
    if (least > max) return max + 1;
  }
  return result;
}

}  // namespace

std::string closest_name(std::string_view name, const std::vector<std::string>& candidates) {
  if (candidates.size() >= kMaxCandidates) return "";
  const std::string* best = nullptr;
  size_t best_distance = SIZE_MAX;
  for (const std::string& c : candidates) {
    if (c == name) continue;
    // No more than a third of the characters involved may change; only a closer one beats the best.
    size_t max = (name.size() + c.size() + 3) * kMoveCost / 6;
    if (best) max = std::min(max, best_distance - 1);
    const size_t d = edit_distance(name, c, max);
    if (d > max) continue;
    best = &c, best_distance = d;
  }
  return best ? *best : "";
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates, bool colon) {
  std::string best = closest_name(name, candidates);
  if (best.empty()) return "";
  return fmt::format(". Did you mean{} '{}'?", colon ? ":" : "", best);
}

void unexpected_keyword(std::string_view fn, std::string_view k, const std::vector<std::string>& params) {
  throw Error(ErrorKind::TypeError, fmt::format("{}() got an unexpected keyword argument '{}'", fn, k))
      .with_note(did_you_mean(k, params, false));
}

namespace {
std::atomic<bool> interrupt_pending{false};
static_assert(std::atomic<bool>::is_always_lock_free);
}  // namespace

void request_interrupt() { interrupt_pending.store(true, std::memory_order_relaxed); }
bool interrupt_requested() { return interrupt_pending.load(std::memory_order_relaxed); }
bool take_interrupt() { return interrupt_pending.exchange(false, std::memory_order_relaxed); }

}  // namespace thn
