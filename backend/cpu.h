#pragma once
// The host backend: every fusion of a trace lowered to Kernel IR, rendered
// as C++ (a translation unit per kernel), compiled and loaded through the
// kernel cache on the compile workers, and run on the host (OpenMP over
// large index spaces).
#include <string>

#include "backend/codegen.h"
#include "backend/compile_queue.h"
#include "backend/kernel_cache.h"
#include "ir/executor.h"

namespace thn {

// One kernel per prims.fusion of t, in order (for TraceExecutor): compiled
// first (Sync), or running eagerly until compiled (Background). `started`:
// as compile_fusions'.
FusionKernels compile_cpu(const Trace& t, CompileMode mode,
                          std::vector<std::shared_ptr<const CompileJob>>* started = nullptr);

// The generated source of t's fusions for a target (thn kernels, --emit=kernels),
// with or without the prelude every kernel includes; empty when t has no fusion.
std::string kernel_source(const Trace& t, Target target, bool prelude = true);

}  // namespace thn
