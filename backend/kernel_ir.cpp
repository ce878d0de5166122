#include "backend/kernel_ir.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_set>
#include <unordered_map>

namespace thn {

namespace {

class Lowering {
 public:
  Lowering(const BoundSymbol& f, Kernel& k) : f_(f), k_(k) {
    for (size_t i = 0; i < f.subsymbols.size(); ++i) member_[&f.subsymbols[i].out.symbolic()] = i;
    for (size_t i = 0; i < f.args.size(); ++i)
      if (f.args[i].is_proxy()) leaf_[&f.args[i].symbolic()] = i;
    std::vector<const BoundSymbol*> prims;
    for (const BoundSymbol& m : f.subsymbols) {
      prims.push_back(&m);
      if (!is_fusible_reduction(m) || k_.reduction) continue;
      k_.reduction = true;
      k_.reduced = reduced_dims(m);
      k_.keepdim = reduction_keepdim(m);
      output_ = m.out;
      input_ = m.args[0];
    }
    after_ = reduced_values(prims);
    // The sweeps a value needs done first: a reduction's is its operand's
    // plus its own.
    for (const BoundSymbol& m : f.subsymbols) {
      std::vector<Value> ps;
      for (const Value& a : m.args) collect_proxies(a, ps);
      int l = 0;
      for (const Value& p : ps)
        if (auto it = level_.find(&p.symbolic()); it != level_.end()) l = std::max(l, it->second);
      level_[&m.out.symbolic()] = l + int(is_fusible_reduction(m));
    }
  }

  void run() {
    const std::vector<Value>& outs = f_.out.items();
    for (size_t k = 0; k < outs.size(); ++k) {
      // Stored per reduced element: a value of the input's shape, in the
      // sweep after the reductions it needs.
      bool inner = k_.reduction && !same_sizes(tensor_proxy(outs[k]), tensor_proxy(output_));
      int stage = inner ? level(outs[k]) : 0;
      int e = expr(outs[k], {}, inner, stage);
      auto m = member_.find(&outs[k].symbolic());
      const BoundSymbol* def = m == member_.end() ? nullptr : &f_.subsymbols[m->second];
      // (a copy's result, and full's: new storage, contiguous as eager's)
      bool fresh = def && def->sym.op && (def->sym.op->family == OpFamily::Copy || def->sym.op->id == OpId::full);
      k_.stores.push_back({k, e, tensor_proxy(outs[k]).dtype(), inner, stage, fresh});
      if (inner) k_.stages = std::max(k_.stages, stage + 1);
    }
  }

 private:
  // Whether a value of the reduction output's shape, expanded to its
  // input's, is the output's element for every reduced element: its dims
  // stand where the kept dims are.
  bool reduced_dims_align() const {
    if (k_.keepdim) return true;
    std::vector<int64_t> dims = k_.reduced;
    std::sort(dims.begin(), dims.end());
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] != int64_t(i)) return false;
    return true;
  }

  int level(const Value& v) const {
    auto it = level_.find(&v.symbolic());
    return it == level_.end() ? 0 : it->second;
  }

  // v's value at the index (the reduction input's in sweep `stage`, when
  // inner), reached through `chain` (indices of view prims of the region,
  // applied to v in order).
  int expr(const Value& v, const std::vector<size_t>& chain, bool inner, int stage) {
    if (!inner) stage = level(v);
    auto key = std::make_tuple(&v.symbolic(), chain, inner, stage);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    int e = make(v, chain, inner, stage);
    memo_[key] = e;
    return e;
  }

  int add(KExpr e, bool inner, int stage) {
    e.inner = inner;
    e.stage = stage;
    k_.exprs.push_back(std::move(e));
    return int(k_.exprs.size()) - 1;
  }

  int make(const Value& v, const std::vector<size_t>& chain, bool inner, int stage) {
    // A value computed from a reduction and not of the input's shape is one
    // per index, whatever view of it an inner value reads (passes/fusion
    // admits broadcasts only).
    if (after_.count(&v.symbolic()) && (inner || !chain.empty()) &&
        !same_sizes(tensor_proxy(v), tensor_proxy(input_)))
      return expr(v, {}, false, 0);
    auto m = member_.find(&v.symbolic());
    if (m == member_.end()) return leaf(v, chain, inner, stage);
    const BoundSymbol& b = f_.subsymbols[m->second];
    if (b.sym.is_view()) {
      // A value of the reduction's output shape broadcast over the reduced
      // elements (softmax's max, layer norm's mean) is one per output
      // element: read once outside the sweeps, which then stay contiguous.
      // (expand aligns dims from the right: the operand's dims are the
      // output's, in order, with keepdim or when the reduced dims lead)
      if (inner && chain.empty() && b.sym.op && b.sym.op->id == OpId::expand && reduced_dims_align() &&
          same_sizes(tensor_proxy(b.args[0]), tensor_proxy(output_)) &&
          same_sizes(tensor_proxy(b.out), tensor_proxy(input_)))
        return expr(b.args[0], {}, false, 0);
      std::vector<size_t> viewed{m->second};
      viewed.insert(viewed.end(), chain.begin(), chain.end());
      return expr(b.args[0], viewed, inner, stage);
    }
    // A copy (clone, contiguous) reads its operand where it is used.
    if (b.sym.op && b.sym.op->family == OpFamily::Copy) return expr(b.args[0], chain, inner, stage);
    KExpr e;
    e.dtype = tensor_proxy(b.out).dtype();
    if (!b.sym.op && b.sym.prim == PrimId::convert_element_type) {
      e.kind = KExpr::Kind::Cast;
      e.operands.push_back(expr(b.args[0], chain, inner, stage));
      return add(std::move(e), inner, stage);
    }
    if (!b.sym.op && b.sym.prim == PrimId::wrap_number) {  // the number, as its 0-dim tensor's dtype
      e.kind = KExpr::Kind::Cast;
      e.operands.push_back(b.args[0].is_proxy() ? leaf(b.args[0], {}, inner, stage) : constant(b.args[0], inner, stage));
      return add(std::move(e), inner, stage);
    }
    if (!b.sym.op) throw std::logic_error("kernel IR: no kernel for " + b.sym.name());
    if (b.sym.op->id == OpId::full) {  // its constant fill value (args[1]) everywhere, converted as eager's fill converts it
      e.kind = KExpr::Kind::Cast;
      e.operands.push_back(constant(b.args[1], inner, stage));
      return add(std::move(e), inner, stage);
    }
    e.prim = b;
    e.compute = prim_compute_dtype(b);
    if (is_fusible_reduction(b)) {
      // Folded in the sweep before its level, read after it.
      e.kind = KExpr::Kind::Reduce;
      e.operands.push_back(expr(b.args[0], {}, true, stage - 1));
      k_.stages = std::max(k_.stages, stage);
      return add(std::move(e), false, stage);
    }
    e.kind = KExpr::Kind::Op;
    for (size_t i = 0; i < b.args.size(); ++i) {
      const Value& a = b.args[i];
      if (a.is_proxy()) e.operands.push_back(a.is(Type::Tensor) ? expr(a, chain, inner, stage) : leaf(a, chain, inner, stage));
      else if (a.is_number() && b.sym.op->schema.params[i].type != ParamType::Str) e.operands.push_back(constant(a, inner, stage));
      else e.operands.push_back(-1);
    }
    return add(std::move(e), inner, stage);
  }

  int constant(const Value& v, bool inner, int stage) {
    KExpr e;
    e.kind = KExpr::Kind::Const;
    e.constant = v;
    e.dtype = v.is(Type::Float) ? DType::Float64 : v.is(Type::Bool) ? DType::Bool : DType::Int64;
    return add(std::move(e), inner, stage);
  }

  int leaf(const Value& v, const std::vector<size_t>& chain, bool inner, int stage) {
    size_t index = leaf_.at(&v.symbolic());
    KExpr e;
    if (!v.is(Type::Tensor)) {
      // A number leaf: one scalar argument however often it is read.
      e.kind = KExpr::Kind::Scalar;
      e.dtype = v.is(Type::Float) ? DType::Float64 : v.is(Type::Bool) ? DType::Bool : DType::Int64;
      auto [slot, fresh] = scalar_.try_emplace(index, int(k_.scalars.size()));
      if (fresh) k_.scalars.push_back({index, e.dtype});
      e.index = slot->second;
      return add(std::move(e), inner, stage);
    }
    // One tensor argument per view of a leaf, read in every sweep that needs it.
    auto [slot, fresh] = load_.try_emplace(std::make_tuple(index, chain, inner), int(k_.loads.size()));
    if (fresh) {
      KLoad load;
      load.leaf = index;
      load.dtype = tensor_proxy(v).dtype();
      load.inner = inner;
      Value base = v;
      for (size_t c : chain) {
        BoundSymbol view = f_.subsymbols[c];
        view.args[0] = base;
        base = view.out;
        load.chain.push_back(std::move(view));
      }
      auto one = [](const Value& size) { return !size.is_proxy() && size.raw_int() == 1; };
      const std::vector<Value>& sizes = tensor_proxy(base).sizes;
      if (sizes.empty()) {
        load.row_broadcast = true;
      } else if (!load.chain.empty() && load.chain.back().sym.op && load.chain.back().sym.op->id == OpId::expand) {
        const std::vector<Value>& before = tensor_proxy(load.chain.back().args[0]).sizes;
        load.row_broadcast = !before.empty() && one(before.back()) && !one(sizes.back());
      }
      k_.loads.push_back(std::move(load));
    }
    e.kind = KExpr::Kind::Load;
    e.dtype = tensor_proxy(v).dtype();
    e.index = slot->second;
    return add(std::move(e), inner, stage);
  }

  const BoundSymbol& f_;
  Kernel& k_;
  std::unordered_map<const Symbolic*, size_t> member_, leaf_;
  std::unordered_set<const Symbolic*> after_;  // values computed from a reduction
  std::unordered_map<const Symbolic*, int> level_;
  std::unordered_map<size_t, int> scalar_;  // number leaf -> scalar slot
  Value output_, input_;                    // of the first reduction
  std::map<std::tuple<const Symbolic*, std::vector<size_t>, bool, int>, int> memo_;
  std::map<std::tuple<size_t, std::vector<size_t>, bool>, int> load_;  // (leaf, chain, inner) -> load
};

}  // namespace

int vector_lanes(const Kernel& k) {
  int64_t widest = 1;
  for (const KLoad& l : k.loads)
    if (l.inner || !k.reduction) widest = std::max(widest, itemsize(l.dtype));
  for (const KStore& s : k.stores)
    if (s.inner || !k.reduction) widest = std::max(widest, itemsize(s.dtype));
  return int(16 / widest);
}

bool needs_wide_index(std::span<const int64_t> sizes, std::span<const int64_t> strides, size_t row) {
  constexpr int64_t kLimit = int64_t(1) << 30;
  int64_t count = 1;
  for (int64_t s : sizes) {
    if (s == 0) return false;
    count = s >= kLimit || count > kLimit / s ? kLimit : count * s;
  }
  if (count >= kLimit) return true;
  for (size_t t = 0; row > 0 && t + row <= strides.size(); t += row) {
    int64_t furthest = 0;
    for (size_t d = 0; d < sizes.size() && d < row; ++d) {
      int64_t step = strides[t + d] < 0 ? -strides[t + d] : strides[t + d];
      if (step != 0 && (sizes[d] - 1) > (kLimit - furthest) / step) return true;
      furthest += (sizes[d] - 1) * step;
    }
    if (furthest >= kLimit) return true;
  }
  return false;
}

Kernel lower_fusion(const BoundSymbol& f, const std::string& name) {
  Kernel k;
  k.name = name;
  Lowering(f, k).run();
  return k;
}

}  // namespace thn
