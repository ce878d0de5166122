#include "backend/kernel_ir.h"

#include <fmt/format.h>

#include <map>
#include <unordered_map>

namespace thn {

namespace {

class Lowering {
 public:
  Lowering(const BoundSymbol& f, Kernel& k) : f_(f), k_(k) {
    for (size_t i = 0; i < f.subsymbols.size(); ++i) member_[&f.subsymbols[i].out.symbolic()] = i;
    for (size_t i = 0; i < f.args.size(); ++i)
      if (f.args[i].is_proxy()) leaf_[&f.args[i].symbolic()] = i;
  }

  void run() {
    const std::vector<Value>& outs = f_.out.items();
    for (size_t k = 0; k < outs.size(); ++k) {
      int e = expr(outs[k], {});
      k_.stores.push_back({k, e, tensor_proxy(outs[k]).dtype()});
    }
  }

 private:
  // v's value at the index space's index, reached through `chain` (indices
  // of view prims of the region, applied to v in order).
  int expr(const Value& v, const std::vector<size_t>& chain) {
    auto key = std::make_pair(&v.symbolic(), chain);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    int e = make(v, chain);
    memo_[key] = e;
    return e;
  }

  int add(KExpr e) {
    k_.exprs.push_back(std::move(e));
    return int(k_.exprs.size()) - 1;
  }

  int make(const Value& v, const std::vector<size_t>& chain) {
    auto m = member_.find(&v.symbolic());
    if (m == member_.end()) return leaf(v, chain);
    const BoundSymbol& b = f_.subsymbols[m->second];
    if (b.sym.is_view()) {
      std::vector<size_t> inner{m->second};
      inner.insert(inner.end(), chain.begin(), chain.end());
      return expr(b.args[0], inner);
    }
    KExpr e;
    e.dtype = tensor_proxy(b.out).dtype();
    if (!b.sym.op && b.sym.prim == PrimId::convert_element_type) {
      e.kind = KExpr::Kind::Cast;
      e.operands.push_back(expr(b.args[0], chain));
      return add(std::move(e));
    }
    if (!b.sym.op) throw std::logic_error("kernel IR: no kernel for " + b.sym.name());
    e.kind = KExpr::Kind::Op;
    e.prim = b;
    e.compute = prim_compute_dtype(b);
    for (size_t i = 0; i < b.args.size(); ++i) {
      const Value& a = b.args[i];
      if (a.is_proxy()) e.operands.push_back(a.is(Type::Tensor) ? expr(a, chain) : leaf(a, chain));
      else if (a.is_number() && b.sym.op->schema.params[i].type != ParamType::Str) e.operands.push_back(constant(a));
      else e.operands.push_back(-1);
    }
    return add(std::move(e));
  }

  int constant(const Value& v) {
    KExpr e;
    e.kind = KExpr::Kind::Const;
    e.constant = v;
    e.dtype = v.is(Type::Float) ? DType::Float64 : v.is(Type::Bool) ? DType::Bool : DType::Int64;
    return add(std::move(e));
  }

  int leaf(const Value& v, const std::vector<size_t>& chain) {
    size_t index = leaf_.at(&v.symbolic());
    KExpr e;
    if (!v.is(Type::Tensor)) {
      e.kind = KExpr::Kind::Scalar;
      e.dtype = v.is(Type::Float) ? DType::Float64 : v.is(Type::Bool) ? DType::Bool : DType::Int64;
      e.index = int(k_.scalars.size());
      k_.scalars.push_back({index, e.dtype});
      return add(std::move(e));
    }
    KLoad load;
    load.leaf = index;
    load.dtype = tensor_proxy(v).dtype();
    Value base = v;
    for (size_t c : chain) {
      BoundSymbol view = f_.subsymbols[c];
      view.args[0] = base;
      base = view.out;
      load.chain.push_back(std::move(view));
    }
    e.kind = KExpr::Kind::Load;
    e.dtype = load.dtype;
    e.index = int(k_.loads.size());
    k_.loads.push_back(std::move(load));
    return add(std::move(e));
  }

  const BoundSymbol& f_;
  Kernel& k_;
  std::unordered_map<const Symbolic*, size_t> member_, leaf_;
  std::map<std::pair<const Symbolic*, std::vector<size_t>>, int> memo_;
};

}  // namespace

Kernel lower_fusion(const BoundSymbol& f, const std::string& name) {
  Kernel k;
  k.name = name;
  Lowering(f, k).run();
  return k;
}

}  // namespace thn
