#pragma once
// Kernel IR: a fusion region (prims.fusion) lowered to one kernel over an
// index space: loads of the region's tensor leaves, each seen through the
// views the region applies to it (the host takes those views, so a load is
// a strided tensor of the index space's shape), an expression DAG, and
// stores of the outputs. Sizes and strides are kernel arguments: one kernel
// serves every shape the trace's guards admit.
//
// A region with reductions has two phases. Its index space is the
// reductions' output; per element, the inner phase runs over the reduced
// elements of their input (the reductions' operands, stores of the input's
// shape) and the outer phase computes the rest from the reduced values.
// Loads, expressions and stores each belong to one phase; the host lays
// every tensor over the input's shape (outer ones with stride 0 along the
// reduced dims). A reduction of values computed from another reduction
// (softmax: amax, then the sum of exp(x - max)) makes the inner phase
// several sweeps over the reduced elements, `stages` in all: sweep s folds
// the reductions of stage s and stores what needs their results, and the
// outer values computed from them come between the sweeps.
#include <span>
#include <string>
#include <vector>

#include "ir/trace.h"

namespace thn {

struct KLoad {
  size_t leaf = 0;                // index into the fusion's args
  std::vector<BoundSymbol> chain;  // view prims to apply to the leaf, in order (args[0] rewired)
  DType dtype{};
  bool inner = false;  // indexed over the reduction's input (else over the index space), in every sweep reading it
  // Broadcast along the index space's last dim, as traced (a [n, 1]
  // operand over [n, m], a 0-dim one): the host's row loops read it once
  // per row where the call's strides agree.
  bool row_broadcast = false;
};

struct KExpr {
  // Reduce: the reduction prim `prim` of operands[0] (an inner expression)
  // over the reduced elements, accumulated in `compute`.
  enum class Kind : uint8_t { Load, Scalar, Const, Op, Cast, Reduce } kind = Kind::Const;
  DType dtype{};     // the value's dtype (held in its compute type: float for float16)
  int index = -1;    // Load: into Kernel::loads; Scalar: into Kernel::scalars
  Value constant;    // Const: a Python number
  BoundSymbol prim;  // Op: the prim (its args give the attributes)
  DType compute{};   // Op: the dtype it computes in
  // Op: one per prim arg (an expression, or -1 for an attribute); Cast, Reduce: the operand.
  std::vector<int> operands;
  bool inner = false;  // computed per reduced element (else per index)
  // Inner: the sweep computing it. Outer: the sweeps whose reductions it
  // needs (computed after them; a Reduce: after the sweep folding it).
  int stage = 0;
};

struct KStore {
  size_t output = 0;  // index into the fusion's outputs
  int expr = -1;
  DType dtype{};
  bool inner = false;
  int stage = 0;  // inner: the sweep storing it (outer stores come last)
  bool contiguous = false;  // a copy's result (clone, contiguous) or full's: new storage is contiguous, as eager's
};

struct Kernel {
  std::string name;
  std::vector<KLoad> loads;
  std::vector<std::pair<size_t, DType>> scalars;  // number leaves: (index into args, their dtype)
  std::vector<KExpr> exprs;                       // in dependency order
  std::vector<KStore> stores;
  bool reduction = false;        // has reductions (two phases)
  int stages = 1;                // sweeps of the inner phase
  std::vector<int64_t> reduced;  // the dims of their input they reduce
  bool keepdim = false;
};

// The kernel of fusion f, named `name`. logic_error for a prim that has no
// kernel (passes/fusion.h only groups prims that have one).
Kernel lower_fusion(const BoundSymbol& f, const std::string& name);

// How many elements of every tensor one thread of a CUDA kernel moves per
// vector access when every tensor is contiguous and aligned to it
// (KernelCall::flat == 2): 16 bytes of the widest dtype, so 2 to 16. For a
// reduction, of the inner tensors, along rows (its modes 2 and 3).
int vector_lanes(const Kernel& k);

// The most dims a kernel indexes after contiguous dims are merged; a region
// that needs more runs its prims one by one.
constexpr int kMaxKernelDims = 12;

// Whether a kernel call needs 64-bit index arithmetic: its element count
// (sizes: every dim it indexes, reduced ones included) or the furthest
// element of some tensor (strides: per tensor a row of `row` values, one
// per dim, as KernelCall::strides holds them) reaches 2^30, which leaves a
// grid-stride loop's last step room below 2^31. The CUDA launch decides by
// it; host kernels always index in 64 bits.
bool needs_wide_index(std::span<const int64_t> sizes, std::span<const int64_t> strides, size_t row);

}  // namespace thn
