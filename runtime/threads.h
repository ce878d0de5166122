#pragma once
// The threads thn's kernels run on (OpenMP: the runtime's loops, the
// generated host kernels, OpenBLAS's OpenMP build): as many as the cores
// that other processes leave idle, never fewer than one. A parallel region
// waits for its slowest thread, so a team larger than the idle cores waits
// for a descheduled thread at every region (a cliff: 60x slower steps seen
// under a load of 3 on 2 cores); a team the size of the idle cores makes a
// busy neighbour cost time in proportion. OMP_NUM_THREADS, when set, fixes
// the count (adapt_threads then leaves it alone).
namespace thn {

// Samples the running processes (at most every 50 ms: /proc/stat's
// procs_running, less this process's own running threads) and sets
// OpenMP's thread count for the calling thread's next regions. Called where
// a step starts (a jit call, an eager op); cheap when it does not sample
// (one clock read).
void adapt_threads();

// The count adapt_threads chose last (OpenMP's default before the first sample).
int kernel_threads();

}  // namespace thn
