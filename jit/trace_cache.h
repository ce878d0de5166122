#pragma once
// The compile cache: (prologue, computation) entries of one traced callable,
// tried most recently hit first. A jit function has one; so has each op an
// eager call runs on CUDA tensors (jit/eager_cuda.h).
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/compile_queue.h"
#include "ir/executor.h"
#include "ir/tracer.h"
#include "jit/prologue.h"
#include "passes/pipeline.h"

namespace thn {

struct CacheEntry {
  Prologue prologue;
  Trace computation;  // the execution trace, its fusions compiled for its tensors' device
  // The compiles of its host kernels that it queued first (done or not:
  // their info says compiled or loaded from the disk cache); of CUDA
  // kernels, how many were compiled, or loaded from the disk cache (none of
  // either when this process had the same module already).
  std::vector<std::shared_ptr<const CompileJob>> jobs;
  int cuda_compiled = 0, cuda_loaded = 0;
  TraceExecutor executor;
  std::vector<PassRecord> passes;
  std::vector<size_t> mutated;  // the inputs it writes into, by position
  std::vector<std::vector<int>> list_updates;  // TraceResult's: the list arguments it changes
  std::vector<TraceResult::OutputLink> output_links;  // and the lists it gives back as themselves
  CacheEntry(const TraceResult& r, Trace t, std::vector<PassRecord> p, CompileMode mode);
};

struct TraceCache {
  std::vector<std::shared_ptr<CacheEntry>> entries;  // most recently hit first
  size_t capacity = 0;  // > 0: the least recently hit entries past it are dropped

  // The entry whose prologue `params` pass, moved to the front, with
  // `inputs` its computation's inputs; null when none does.
  std::shared_ptr<CacheEntry> find(Interpreter& in, std::span<const Value> params, std::vector<Value>& inputs);
  // A new entry from a trace (the pass pipeline run on it, its kernels
  // compiled or compiling, as `mode` says), added when `keep`. `inputs`: as find's.
  std::shared_ptr<CacheEntry> add(const TraceResult& r, const PipelineOptions& pipeline, bool keep,
                                  std::vector<Value>& inputs, CompileMode mode);
};

}  // namespace thn
