#pragma once
// A compiled fusion's call on concrete tensors, shared by the backends: the
// region's loads taken through their views, the index space with size-1
// dims dropped and contiguous dims merged, every tensor's strides over it,
// the outputs allocated on the backend's device and the number leaves
// gathered. The backend then only launches its kernel (host: a call into
// the loaded module; CUDA: the driver's launch).
#include <functional>
#include <memory>
#include <optional>

#include "backend/compile_queue.h"
#include "backend/kernel_ir.h"
#include "ir/executor.h"

namespace thn {

// The kernels of t's fusions, in order: thn_fusion0, thn_fusion1, ...
std::vector<Kernel> lower_fusions(const Trace& t);

// The arguments of one kernel launch (backend/codegen.h gives the ABI).
struct KernelCall {
  int64_t n = 0, rn = 0;  // elements of the index space; reduced elements per output
  int32_t nd = 0, rnd = 0;
  int32_t flat = 0;  // 1: every tensor contiguous; 2: and aligned to its vector (vector_lanes; a reduction's rows)
  Dims sizes;                    // nd + rnd dims
  std::vector<int64_t> strides;  // kMaxKernelDims per tensor: the loads', then the stores'
  std::vector<void*> data;       // per tensor: its first element (a device address on CUDA)
  std::vector<double> fs;        // number leaves, by kind (one spare: never empty)
  std::vector<int64_t> is;
};

// Whether a reduction call's inner tensors are contiguous rows: one
// reduced dim, each of them stepping by one element along it.
bool reduces_rows(const Kernel& k, const KernelCall& c);
// Whether its inner tensors step by one element along the innermost output
// dim (adjacent outputs read adjacent elements: columns).
bool reduces_columns(const Kernel& k, const KernelCall& c);

class CompiledFusion : public FusionKernel {
 public:
  // The kernel of fusion f, run on `device`; a call it cannot index (more
  // dims than kMaxKernelDims, an operand on another device, an empty
  // amax/amin) runs the region's prims one by one instead.
  CompiledFusion(const BoundSymbol& f, Kernel k, Device device);
  std::vector<Value> run(Interpreter& in, std::span<const Value> leaves, std::span<const Value> into,
                         std::span<int64_t> loaded) const final;

 private:
  // What a call computes from its operands' layouts alone: the outputs'
  // layouts, the index space and every tensor's strides over it.
  struct Plan {
    std::vector<Dims> sizes, strides;  // per load, then per store given (into)
    std::vector<DType> dtypes;         // per load
    std::vector<char> given;           // per store: whether the call gave it
    std::vector<std::pair<Dims, Dims>> fresh;  // per store: its sizes and strides
    KernelCall call;                   // without addresses and numbers
    int64_t bytes = 0;                 // the call's traffic (exec_counters)
    bool empty = false;                // no elements: nothing to launch
    bool reusable = true;              // false: the index space came from number leaves
    bool matches(const std::vector<Tensor>& loads, std::span<const Value> into) const;
  };
  std::unique_ptr<Plan> plan(const std::vector<Tensor>& loads, std::span<const Value> leaves,
                             std::span<const Value> into) const;
  // Tensor t's dtype in a call (loads, then stores).
  DType dtype_of(const Plan& p, size_t t) const {
    return t < p.dtypes.size() ? p.dtypes[t] : k_.stores[t - p.dtypes.size()].dtype;
  }
  void vectorize(KernelCall& c, const Plan& p) const;
  void note_loaded(const std::vector<Tensor>& loads, std::span<int64_t> loaded) const;

 protected:
  const Kernel& kernel() const { return k_; }
  // Elements per vector access of the kernel's vector path (CUDA; 1: none).
  int lanes() const { return lanes_; }
  // Launches the kernel; false when this call cannot be launched (the
  // region then runs eagerly).
  virtual bool launch(const KernelCall& c) const = 0;

 private:
  Kernel k_;
  Device device_;
  std::vector<std::vector<bool>> feeds_;  // per store, per load: whether its value reads the load
  std::vector<std::unique_ptr<TraceExecutor>> views_;  // per load: the views its leaf is seen through
  // A view chain whose arguments are constants gives a leaf of the same
  // layout the same view of it: the last call's, per load, is reused
  // without running the chain (a horizontally fused update reads a dozen
  // parameters through reshapes).
  struct ViewMemo {
    bool constant = false, valid = false;
    Dims leaf_sizes, leaf_strides, sizes, strides;
    int64_t leaf_offset = 0, offset = 0;
    DType leaf_dtype = DType::Float32, dtype = DType::Float32;
  };
  mutable std::vector<ViewMemo> memos_;
  Tensor view_of(size_t load, Interpreter& in, std::span<const Value> leaves) const;
  std::vector<std::vector<Value>> out_sizes_;
  std::optional<std::vector<int64_t>> out_dims_;  // see the constructor
  bool extremes_ = false;                         // amax/amin: an empty reduction is an error
  std::shared_ptr<const FusionKernel> fallback_;  // the region's prims one by one
  int lanes_;                                     // vector_lanes(k_) on CUDA
  mutable std::unique_ptr<Plan> plan_;            // the last call's
};

// A fusion whose kernel compiles in the background: until its job is done
// the region's prims run one by one (the runtime's kernels, as eager runs
// them), and the first call after it is done switches to the kernel that
// `finish` makes of the job's result (on the calling thread: loading a
// CUDA module needs its context). A job that failed is reported once on
// stderr and the region keeps running eagerly.
class TieredFusion : public FusionKernel {
 public:
  using Finish = std::function<std::shared_ptr<const FusionKernel>(const CompileJob&)>;
  TieredFusion(const BoundSymbol& f, std::shared_ptr<CompileJob> job, Finish finish)
      : job_(std::move(job)), finish_(std::move(finish)), eager_(eager_fusion(f)) {}
  std::vector<Value> run(Interpreter& in, std::span<const Value> leaves, std::span<const Value> into,
                         std::span<int64_t> loaded) const final;

 private:
  void switch_over() const;
  std::shared_ptr<CompileJob> job_;  // (kept: a retrace asking for the same kernel finds it done)
  mutable Finish finish_;            // null once switched
  mutable std::shared_ptr<const FusionKernel> compiled_;
  std::shared_ptr<const FusionKernel> eager_;
};

// The kernel of each fusion of t, built by `job_for` (a compile job per
// kernel, deduplicated by its key) and made by `finish` once built: waiting
// for every job (Sync), or tiered (Background). `started` (when given)
// gets the jobs this call queued first.
using KernelJobFor = std::function<std::shared_ptr<CompileJob>(const Kernel& k, bool* fresh)>;
using KernelFinish = std::function<std::shared_ptr<const FusionKernel>(const BoundSymbol& f, const Kernel& k, const CompileJob& job)>;
FusionKernels compile_fusions(const Trace& t, CompileMode mode, const KernelJobFor& job_for, const KernelFinish& finish,
                              std::vector<std::shared_ptr<const CompileJob>>* started);

}  // namespace thn
