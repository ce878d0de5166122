#pragma once
// The code generators' shared part (backend/codegen.h): one expression
// printer (values, stores, the reductions' accumulators) and the index
// arithmetic both emitters use; codegen_cpu.cpp and codegen_cuda.cpp write
// the loops of their target. Private to backend/.
#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "backend/codegen.h"

namespace thn::codegen {

// The C type a dtype computes in, and the one it is stored as.
std::string ctype(DType d);

std::string stype(DType d);

std::string literal(const Value& v);

// A value converted to dtype d, as the eager cast kernel converts it
// (through the storage type for float16 and bfloat16, which round).
std::string convert(const std::string& x, DType d);

// The accumulator of a reduction: sums and products of floating values in
// double, of integers in int64; extremes in the input's compute type.
DType accumulator(const KExpr& e);

std::string identity(const KExpr& e);

// Whether every value of dtype `from` converts to `to` exactly.
bool widens_exactly(DType from, DType to);

// Whether e is the constant number v (an add's or sub's alpha).
inline bool is_constant(const KExpr& e, double v) {
  return e.kind == KExpr::Kind::Const && (e.constant.is(Type::Float) ? e.constant.raw_float() : double(e.constant.raw_int())) == v;
}

// acc combined with x (both of the accumulator type).
std::string combine(const KExpr& e, const std::string& acc, const std::string& x);

// Value `late` of a later sweep, the same as `early` of an earlier one:
// kept in load `load`'s register cache in between (Emitter::reuses).
struct Reuse {
  size_t load = 0;
  int early = -1, late = -1;
};

// Softmax's max and its sum of exp(x - max) folded in one sweep
// (Emitter::online): accumulators `max` and `sum`, the max's operand
// `value` (x), the sweep `sweep` (the max's).
struct Online {
  size_t max = 0, sum = 0;
  int value = -1, sweep = -1;
};

class Emitter {
 public:
  Emitter(const Kernel& k, Target t);

  std::string render();

  size_t tensors() const { return k_.loads.size() + k_.stores.size(); }
  // Whether tensor t (loads, then stores) is read or written per reduced element.
  bool inner(size_t t) const {
    return t < k_.loads.size() ? k_.loads[t].inner : k_.stores[t - k_.loads.size()].inner;
  }
  // The C type a pointer to dtype d's storage has. On the host a bool is
  // read and written as a byte: GCC vectorises no loop that loads C++'s
  // bool (an attention mask's masked_fill kept the softmax scalar).
  std::string storage(DType d) const { return target_ == Target::Cpu && d == DType::Bool ? "uint8_t" : stype(d); }
  std::string stride(size_t t, const std::string& d) const { return fmt::format("idx_t(st[{} * {} + {}])", t, kMaxKernelDims, d); }

  // Offsets o<t> of the outer tensors from q, over dims [0, nd).
  std::string outer_offsets(const std::string& q) const;

  std::string cpu_pointwise() const;
  // Host: `body` for each q in [0, count) over dims [first, first + dims)
  // (row-major), with offsets <p><t> of the tensors (the inner ones when
  // `only_inner`) from <from><t> (or 0) at q: divisions once per thread,
  // then stepped as an odometer. `parallel_if`: the indices split among
  // threads in static shares when it holds ("" for a serial loop).
  std::string cpu_loop(const std::string& count, const std::string& first, const std::string& dims, char p,
                       const std::string& from, bool only_inner, const std::string& body,
                       const std::string& parallel_if) const;

  // Every tensor contiguous and aligned to its vector (flat == 2): each
  // thread moves `lanes` elements of every tensor per vector access, the
  // body run per lane on registers (its in<t>/out<s> pointers shadowed by
  // the vectors' arrays); the elements past the last whole vector are left
  // to the element loop below (`done`).
  std::string cuda_vectors(int lanes) const;

  std::string cuda_pointwise() const;

  // Accumulators a<k>, one per reduction, set to their identities; with a
  // `size`, arrays of it whose first `lanes` (a variable) are set.
  std::string accumulators(int size = 0, const std::string& lanes = "") const;
  // Whether reduction k is folded in sweep `stage`.
  bool in_sweep(size_t k, int stage) const { return k_.exprs[reduces_[k]].stage - 1 == stage; }
  // Whether a sweep reads a value of the outer phase (an inner value's
  // operand, or what a reduction folds: a broadcast along the reduced dims).
  bool sweep_reads_outer() const {
    for (const KExpr& e : k_.exprs)
      if (e.inner || e.kind == KExpr::Kind::Reduce)
        for (int o : e.operands)
          if (o >= 0 && !k_.exprs[size_t(o)].inner && k_.exprs[size_t(o)].kind != KExpr::Kind::Reduce) return true;
    return false;
  }
  // Sweep `stage` of the inner phase at offsets o<t> of the inner tensors:
  // its values and stores, each of its reductions' operands folded into its
  // accumulator a<k><lane>.
  // (With `kept`: those values read from the register cache instead.)
  // (With `online`: its sum too, when this is its sweep.)
  std::string accumulate(int stage, const std::string& lane = "", const std::vector<Reuse>& kept = {},
                         const Online* online = nullptr) const;
  // The outer tensors' offsets o<t> = b<t> (+ lane * the innermost outer stride).
  std::string outer_at(const std::string& lane = "") const;
  // The outer values that need the first `level` sweeps (with the outer
  // stores when `stores`).
  std::string outer(int level, bool stores, bool lanes = false) const;
  // A single-sweep kernel's outer phase for one lane of a tile of outputs:
  // o<t> = b<t> + lane * the innermost outer stride.
  std::string finish(const std::string& lane) const;
  std::string clauses(int stage) const;
  // Offsets e<t> of the inner tensors: b<t> plus reduced row rq's (every
  // reduced dim but the innermost).
  std::string row_offsets() const;
  // Whether every inner tensor steps by one element along dim d.
  std::string unit_inner(const std::string& d) const;

  // Host. Three loop nests, chosen by the strides:
  //  rows:    the innermost reduced dim is contiguous: per output element
  //           (in parallel when there are many), a vectorised sweep along
  //           it; the one reduction of a single output runs in parallel.
  //  columns: the innermost output dim is contiguous: tiles of adjacent
  //           outputs accumulate together, a vectorised sweep across the
  //           tile per reduced element. A tile is a thread's share of the
  //           row (64 to kLanes outputs): each thread then walks the rows
  //           once, where narrow tiles walked them (and their pages) once
  //           per tile.
  //  strided: per output element, the reduced elements row by row.
  std::string cpu_reduction() const;

  // CUDA: the strategies of codegen_cuda.cpp, chosen per call by `mode`.
  std::string cuda_reduction() const;
  std::vector<size_t> folded(int stage) const;
  // (`online`: its sum folded with its max when both are in ks)
  std::string warp_fold(const std::vector<size_t>& ks, bool xor_, const Online* online = nullptr) const;
  std::string block_fold(const std::vector<size_t>& ks, bool every, const Online* online = nullptr) const;
  // (`cache`: with the row cache; `online`: this sweep also folds its sum)
  std::string row_sweep(int stage, const std::string& first, const std::string& step, int lanes, bool cache = true,
                        const Online* online = nullptr) const;
  std::vector<std::string> signatures() const;
  std::optional<Online> online() const;
  std::string online_step(const Online& o) const;
  std::vector<size_t> cached_loads() const;
  // A value `early` (of an earlier sweep) kept in load `load`'s register
  // cache for sweep `late`, which reads it there instead of computing it.
  std::vector<Reuse> reuses() const;
  int cache_vectors(int lanes) const;
  std::string split_workspace(const std::string& slots, bool splittable) const;
  std::string combine_parts(const std::string& slot, const std::string& slots, const std::string& width,
                            const std::string& lane, int vector = 0, const std::string& first = "0",
                            const std::string& step = "1") const;
  std::string row_cache(const std::string& step, int lanes) const;

  static std::string indent(const std::string& s, int n);

  std::string v(int e) const { return fmt::format("v{}", e); }

  // operand i of an op, in the op's compute type
  std::string arg(const KExpr& e, size_t i) const;

  // The expressions of one phase and sweep (inner) or level (outer), in
  // dependency order, with its stores when `with_stores`. With `lanes`,
  // reduced values are read from r<k> (set per lane).
  std::string statements(bool inner, int stage = 0, bool lanes = false, bool with_stores = true,
                         const std::vector<Reuse>& kept = {}) const;
  // The stores of one phase: an inner sweep's, or every outer one.
  std::string stores(bool inner, int stage) const;

  std::string value(const KExpr& e, bool lanes = false) const;

  std::string op(const KExpr& e) const;

 private:
  const Kernel& k_;
  Target target_;
  // Accumulator k = a<k> folds reduces_[k]'s operand (operand_[k]); Reduce
  // expression i reads accumulator_[i]. Reductions that fold the same
  // values the same way share one (layer norm's mean and its variance's
  // mean: one sum of x, once as float, once widened to double).
  std::vector<size_t> reduces_;
  std::vector<int> operand_;
  std::vector<int> accumulator_;
};

}  // namespace thn::codegen
