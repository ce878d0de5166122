#pragma once
// The pass pipeline: Trace -> Trace, one pass per file, run in order; the
// trace after each pass is kept for last_traces() and --print-after.
#include <string>
#include <vector>

#include "ir/trace.h"

namespace thn {

struct PipelineOptions {
  std::string print_after;  // a pass name: print the trace after it (stderr); "all": after every pass
  bool verify_each = false;  // run the verifier (passes/verify.h) after every pass
};

// The trace after a pass, printed on demand (printing costs more than most
// passes, and few traces are ever looked at).
struct PassRecord {
  std::string pass;
  Trace trace;
  double ms = 0;
  std::string printed() const { return print_trace(trace); }
};

// Each record's trace, one after another (each followed by a blank line);
// a pass that changed nothing is its header line and "(unchanged)".
std::string print_passes(const std::vector<PassRecord>& records);

// The names of the passes, in order ("tracing" is the trace as recorded).
const std::vector<std::string>& pass_names();

// Runs every pass on t; returns the final trace, and in `records` the
// trace after tracing and after each pass.
Trace run_pipeline(Trace t, const PipelineOptions& opts, std::vector<PassRecord>& records);

}  // namespace thn
