#include "runtime/error.h"

#include <atomic>

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
std::atomic<bool> interrupt_pending{false};
static_assert(std::atomic<bool>::is_always_lock_free);
}  // namespace

void request_interrupt() { interrupt_pending.store(true, std::memory_order_relaxed); }
bool interrupt_requested() { return interrupt_pending.load(std::memory_order_relaxed); }
bool take_interrupt() { return interrupt_pending.exchange(false, std::memory_order_relaxed); }

}  // namespace thn
