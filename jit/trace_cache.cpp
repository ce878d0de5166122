#include "jit/trace_cache.h"

#include <algorithm>

#include "backend/cpu.h"
#include "backend/cuda.h"

namespace thn {

namespace {

// The inputs a trace writes into (targets of its write-backs), by position.
std::vector<size_t> mutated_inputs(const std::vector<PassRecord>& passes) {
  std::vector<size_t> out;
  for (const PassRecord& p : passes) {
    if (p.pass != "functionalize") continue;
    for (const BoundSymbol& b : p.trace.body) {
      if (!is_write_back(b)) continue;
      const Value& x = write_back_target(b);
      for (size_t i = 0; i < p.trace.inputs.size(); ++i)
        if (p.trace.inputs[i].is_proxy() && &p.trace.inputs[i].symbolic() == &x.symbolic()) out.push_back(i);
    }
  }
  return out;
}

// The trace's fusions compiled for the device their results live on (a
// trace may make its CUDA tensors itself: zeros(..., device="cuda")): host
// kernels in `mode`, each job this trace queued first in `started`; CUDA
// kernels (one module, compiled first) counted as compiled or loaded from
// the disk cache.
FusionKernels compile(const Trace& t, CompileMode mode, std::vector<std::shared_ptr<const CompileJob>>& started,
                      int& compiled, int& loaded) {
  bool cuda = false;
  for (const BoundSymbol& b : t.body)
    if (is_fusion(b))
      for (const Value& o : b.out.items()) cuda |= tensor_proxy(o).device().type == DeviceType::CUDA;
  if (!cuda) return compile_cpu(t, mode, &started);
  CompileInfo info;
  FusionKernels ks = compile_cuda(t, &info);
  if (info.from_disk) loaded = int(ks.size());
  else if (!info.from_memory) compiled = int(ks.size());
  return ks;
}

}  // namespace

CacheEntry::CacheEntry(const TraceResult& r, Trace t, std::vector<PassRecord> p, CompileMode mode)
    : prologue(r), computation(std::move(t)),
      executor(computation, compile(computation, mode, jobs, cuda_compiled, cuda_loaded)), passes(std::move(p)),
      mutated(mutated_inputs(passes)), list_updates(r.list_updates), output_links(r.output_links) {}

std::shared_ptr<CacheEntry> TraceCache::find(Interpreter& in, std::span<const Value> params, std::vector<Value>& inputs) {
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!entries[i]->prologue.check(in, params, inputs)) continue;
    std::rotate(entries.begin(), entries.begin() + long(i), entries.begin() + long(i) + 1);
    return entries[0];
  }
  return nullptr;
}

std::shared_ptr<CacheEntry> TraceCache::add(const TraceResult& r, const PipelineOptions& pipeline, bool keep,
                                            std::vector<Value>& inputs, CompileMode mode) {
  std::vector<PassRecord> records;
  Trace t = run_pipeline(r.trace, pipeline, records);
  auto entry = std::make_shared<CacheEntry>(r, std::move(t), std::move(records), mode);
  if (keep) entries.insert(entries.begin(), entry);
  if (capacity && entries.size() > capacity) entries.resize(capacity);
  inputs.clear();
  for (const InputLeaf& l : r.leaves)
    if (l.proxy.is_proxy()) inputs.push_back(l.value);
  return entry;
}

}  // namespace thn
