#pragma once
// The global state of the Philox generator (runtime/philox.h): a key (the
// seed) and the next unused counter. Every random op reserves one counter per
// element, so a call's numbers depend only on the seed and how many numbers
// were drawn before it, whichever path (eager, generated host or CUDA
// kernel) draws them.
#include <cstdint>

namespace thn {

struct PhiloxState {
  uint64_t seed;
  uint64_t offset;  // the counter of the first element
};

// Sets the seed and restarts the counters at 0 (torch.manual_seed).
void philox_manual_seed(uint64_t seed);
// The state for drawing n numbers; advances the offset by n.
PhiloxState philox_reserve(uint64_t n);
// The whole generator state, saved and restored around a jit trace (tracing
// computes on private copies and must not use up numbers).
PhiloxState philox_get_state();
void philox_set_state(PhiloxState st);

}  // namespace thn
