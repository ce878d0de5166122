#pragma once
#include "ir/trace.h"

namespace thn {

// The buffer plan. Requires: a functional trace with layouts (alias
// analysis), write-backs at the end. Guarantees: the same program, where
// each computed tensor is written into a buffer decided from the dataflow:
//  - the producer of `computed` in `copy_to_out_(computed, x)` (x an input,
//    or the range of memory inputs share: a view of one) writes into x
//    itself when no later op reads x's old value (or a view of it) and the
//    producer reads x, if at all, as the operand it updates in place
//    (elementwise, or operand 0 of an op with an in-place form); the
//    write-back then disappears, else it stays a copy;
//  - an elementwise result reuses an operand's buffer (same dtype and
//    sizes) when that value dies at the op, and an updated input's buffer
//    once its old value is dead;
//  - every value is dropped after its last use (BoundSymbol::frees).
// Ops that read the old value of x keep their place before the write into x:
// the plan only reuses a buffer whose previous values are dead.
Trace buffer_plan(Trace t);

// What the plan leaves to copy and allocate, per call.
struct BufferStats {
  int writeback_copies = 0;  // write-backs that copy (copy_to_out_ left, copy_)
  int temporaries = 0;       // new buffers that are not returned
  int new_buffers = 0;       // every new buffer, returned ones included
};
BufferStats buffer_stats(const Trace& planned);

}  // namespace thn
