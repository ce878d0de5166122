#pragma once
// The trace executor: runs a computation trace op by op on the runtime. It
// is the jit's execution path until fusion lands, and later the host side of
// fused traces. A trace is compiled once into steps over numbered slots.
#include <span>
#include <vector>

#include "interp/interpreter.h"
#include "ir/trace.h"

namespace thn {

// A compiled fusion region (prims.fusion): its outputs from its leaves (the
// fusion's args, resolved), written into `into[k]` where that is a tensor
// (the buffer plan's out=) and into new tensors where it is None.
class FusionKernel {
 public:
  virtual ~FusionKernel() = default;
  // Runs the region on its leaves, writing outputs into `into` where given;
  // `loaded` (empty, or one per leaf) gets, per leaf, the most bytes one of
  // the kernel's loads read of it (no entry: not known).
  virtual std::vector<Value> run(Interpreter& in, std::span<const Value> leaves, std::span<const Value> into,
                                 std::span<int64_t> loaded) const = 0;
};
using FusionKernels = std::vector<std::shared_ptr<const FusionKernel>>;

// What executors ran on this thread: kernels launched (fusions and library
// ops) and the bytes their tensors read and wrote (from the kernels' loads
// and stores; a library op or copy counts what it reads and what it writes,
// each tensor's distinct elements once).
struct ExecCounters {
  int64_t kernels = 0, bytes = 0;
};
ExecCounters& exec_counters();

// Runs a fusion's prims one by one on the runtime (no compiler).
std::shared_ptr<const FusionKernel> eager_fusion(const BoundSymbol& fusion);

// What one run needed of each input (for min_bytes, a lower bound on what
// any plan moves): the most distinct bytes one step read of it whole or
// through a view (a fusion's views are inside its kernel: there only what
// its prims read whole counts), and the most one step wrote into it.
struct InputTraffic {
  std::vector<int64_t> read, written;  // per input of the trace
};

// The distinct elements' bytes of a tensor (broadcast dims counted once),
// of each tensor in a list or tuple; 0 for anything else.
int64_t distinct_bytes(const Value& v);

class TraceExecutor {
 public:
  // `kernels`: one per prims.fusion of t, in order; empty: every fusion runs eagerly.
  explicit TraceExecutor(const Trace& t, FusionKernels kernels = {});
  // `inputs` in the order of the trace's inputs (proxies bound to them).
  Value run(Interpreter& in, std::span<const Value> inputs, InputTraffic* traffic = nullptr) const;

 private:
  // A value to rebuild at run time: a slot, a constant, or a list/tuple/slice of refs.
  struct Ref {
    int slot = -1;
    Value constant;
    Type seq = Type::None;
    Value like;  // for a list or tuple: an empty one of its kind (Value::like)
    std::vector<Ref> items;
  };
  // Where a step's result goes (the buffer plan's `into`): a new tensor, the
  // `into` tensor as the kernel's output, or operand 0 updated in place.
  enum class Mode : uint8_t { Fresh, Out, InPlace };
  // How a step uses an operand: reads it, writes all of it (a write-back's
  // destination), both (an elementwise in-place op's), updates part of it
  // in place (setitem_, index_copy_ into its operand: how much, only the
  // values say), or only takes views of it (inside a fusion) or its sizes.
  enum class Use : uint8_t { Read, Write, ReadWrite, Update, ViewedOnly };
  struct Step {
    Symbol sym;
    std::vector<Ref> args;
    std::vector<Use> uses;    // per arg
    std::vector<int> memory;  // per arg: the input whose memory it is or views, or -1
    std::vector<int> into_memory;  // per entry of `into` (a fusion's tuple): the same
    Ref out;
    Mode mode = Mode::Fresh;
    Ref into;
    std::vector<int> frees;  // slots dropped after the step
    int fusion = -1;         // prims.fusion: its kernel
    Place loc;  // the statement that recorded it, for errors raised while running
  };

  Ref ref(const Value& v);
  Value resolve(const Ref& r, std::vector<Value>& slots) const;
  void assign(const Ref& r, const Value& v, std::vector<Value>& slots) const;
  Value run_step(Interpreter& in, const Step& s, std::vector<Value>& args, const Value& into,
                 std::span<int64_t> loaded = {}) const;
  // The view copy_into_view's steps select of t.
  Tensor select_view(Interpreter& in, const Tensor& t, const Value& steps) const;

  std::unordered_map<const Symbolic*, int> slot_of_;
  int slots_ = 0;
  std::vector<int> inputs_;
  std::vector<std::pair<int, Value>> captured_;
  std::vector<Step> steps_;
  FusionKernels kernels_;
  Ref output_;
  mutable EagerDispatch eager_;
};

}  // namespace thn
