#pragma once
// The trace verifier: run after every pass with --verify-each (and in the
// test corpus). It throws std::logic_error naming the pass and the broken
// invariant; it never changes the trace.
#include <string>

#include "ir/trace.h"

namespace thn {

// Checks, on every trace: each proxy is defined once, before its uses.
// On a planned trace (after buffer_plan), the buffer plan's three
// conditions, checked by replaying which value each buffer holds:
//  1. every read sees the value it names: no op reads a value after its
//     buffer received another one (the old value of an input after the
//     input was updated in place), nor after the value was dropped;
//  2. an op that writes into a buffer it also reads, reads it as the very
//     tensor it updates (elementwise, or operand 0 of an in-place form),
//     never through another view of it;
//  3. the returned values are intact at the end.
void verify(const Trace& t, const std::string& after_pass);

}  // namespace thn
