#include "backend/cpu.h"

#include <fmt/format.h>

#include <algorithm>

#include "runtime/creation.h"
#include "runtime/elementwise.h"

namespace thn {

namespace {

using KernelFn = void (*)(int64_t, int32_t, const int64_t*, void* const*, const int64_t*, const double*,
                          const int64_t*, int32_t, int64_t, int32_t, int32_t);

std::vector<Kernel> lower_all(const Trace& t) {
  std::vector<Kernel> ks;
  for (const BoundSymbol& b : t.body)
    if (is_fusion(b)) ks.push_back(lower_fusion(b, fmt::format("thn_fusion{}", ks.size())));
  return ks;
}

// Sizes and per-tensor strides of some dims of an index space with size-1
// dims dropped and dims merged where every tensor steps through them
// contiguously.
struct Merged {
  Dims sizes;
  std::vector<Dims> strides;  // per tensor, one per kept dim
  bool flat = true;           // at most one dim, every tensor contiguous in it

  Merged(const Dims& shape, const std::vector<Dims>& ts, const std::vector<size_t>& dims) : strides(ts.size()) {
    for (size_t d : dims) {
      if (shape[d] == 1) continue;
      bool merge = !sizes.empty();
      for (size_t t = 0; t < ts.size() && merge; ++t) merge = strides[t].back() == ts[t][d] * shape[d];
      if (merge) {
        sizes.back() *= shape[d];
        for (size_t t = 0; t < ts.size(); ++t) strides[t].back() = ts[t][d];
      } else {
        sizes.push_back(shape[d]);
        for (size_t t = 0; t < ts.size(); ++t) strides[t].push_back(ts[t][d]);
      }
    }
    for (size_t t = 0; t < ts.size(); ++t)
      for (int64_t s : strides[t]) flat = flat && s == 1;
    flat = flat && sizes.size() <= 1;
  }
};

Dims strides_of(const Tensor& t) { return Dims(t.strides().begin(), t.strides().end()); }

class CpuFusion : public FusionKernel {
 public:
  CpuFusion(const BoundSymbol& f, Kernel k, std::shared_ptr<HostModule> m)
      : k_(std::move(k)), module_(std::move(m)), fallback_(eager_fusion(f)) {
    fn_ = reinterpret_cast<KernelFn>(module_->symbol(k_.name));
    for (const KLoad& l : k_.loads) {
      if (l.chain.empty()) {
        views_.push_back(nullptr);
        continue;
      }
      Trace view;
      view.inputs = f.args;
      view.body = l.chain;
      view.output = l.chain.back().out;
      views_.push_back(std::make_unique<TraceExecutor>(view));
    }
    for (const Value& o : f.out.items()) out_sizes_.push_back(tensor_proxy(o).sizes);
    for (const KExpr& e : k_.exprs)
      extremes_ |= e.kind == KExpr::Kind::Reduce && (e.prim.sym.op->id == OpId::amax || e.prim.sym.op->id == OpId::amin);
  }

  std::vector<Value> run(Interpreter& in, std::span<const Value> leaves, std::span<const Value> into) const override {
    std::vector<Tensor> loads;
    for (size_t i = 0; i < k_.loads.size(); ++i) {
      const Value& leaf = leaves[k_.loads[i].leaf];
      loads.push_back(views_[i] ? views_[i]->run(in, leaves).as_tensor() : leaf.as_tensor());
    }
    // Loads have their phase's shape, but for 0-dim operands (a wrapped
    // number, masked_fill's value), which broadcast. The index space is the
    // reduction's input; without one, the outputs' shape.
    Dims shape, outer;
    std::vector<char> reduced;  // per dim of shape
    for (size_t i = 0; i < loads.size(); ++i)
      if (k_.loads[i].inner == k_.reduction) shape = broadcast_shapes(shape, loads[i].sizes());
    if (k_.reduction && std::none_of(k_.loads.begin(), k_.loads.end(), [](const KLoad& l) { return l.inner; }))
      return fallback_->run(in, leaves, into);
    if (!k_.reduction && loads.empty())
      for (const Value& s : out_sizes_[0]) shape.push_back(s.raw_int());
    reduced.assign(shape.size(), 0);
    for (int64_t d : k_.reduced)
      if (d < int64_t(shape.size())) reduced[size_t(d)] = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (!reduced[d]) outer.push_back(shape[d]);
      else if (k_.keepdim) outer.push_back(1);
    }
    // Every tensor's strides over `shape`: outer ones step 0 along reduced dims.
    auto over_shape = [&](const Tensor& t, bool inner) {
      if (inner || !k_.reduction) return strides_of(broadcast_to(t, shape));
      Dims st = strides_of(broadcast_to(t, outer)), full;
      size_t o = 0;
      for (size_t d = 0; d < shape.size(); ++d) {
        if (!reduced[d]) full.push_back(st[o++]);
        else {
          full.push_back(0);
          o += k_.keepdim;
        }
      }
      return full;
    };
    std::vector<Tensor> all;
    std::vector<Dims> strides;
    for (size_t i = 0; i < loads.size(); ++i) {
      all.push_back(loads[i]);
      strides.push_back(over_shape(loads[i], k_.loads[i].inner));
    }
    std::vector<Value> outs;
    for (size_t s = 0; s < k_.stores.size(); ++s) {
      const KStore& st = k_.stores[s];
      const Dims& at = st.inner || !k_.reduction ? shape : outer;
      Tensor o;
      if (s < into.size() && !into[s].is_none()) {
        o = into[s].as_tensor();
      } else {
        std::vector<Tensor> like;
        for (size_t i = 0; i < loads.size(); ++i)
          if (k_.loads[i].inner == st.inner && loads[i].sizes() == at) like.push_back(loads[i]);
        o = empty_strided(at, output_strides(at, like), st.dtype);
      }
      outs.push_back(Value::tensor(o));
      all.push_back(o);
      strides.push_back(over_shape(o, st.inner));
    }
    std::vector<size_t> kept, gone;
    for (size_t d = 0; d < shape.size(); ++d) (reduced[d] ? gone : kept).push_back(d);
    Merged o(shape, strides, kept), r(shape, strides, gone);
    int64_t n = numel_of(o.sizes), rn = numel_of(r.sizes);
    if (n == 0) return outs;
    if (k_.reduction && rn == 0 && extremes_) return fallback_->run(in, leaves, into);  // PyTorch's error
    if (k_.reduction && r.sizes.empty()) {
      r.sizes.push_back(1);
      for (Dims& st : r.strides) st.push_back(0);
    }
    if (o.sizes.size() + r.sizes.size() > size_t(kMaxKernelDims)) return fallback_->run(in, leaves, into);
    Dims sizes = o.sizes;
    sizes.insert(sizes.end(), r.sizes.begin(), r.sizes.end());
    std::vector<int64_t> st(all.size() * kMaxKernelDims, 0);
    std::vector<void*> data;
    int64_t bytes = 0;
    for (size_t t = 0; t < all.size(); ++t) {
      data.push_back(all[t].raw_data());
      int64_t touched = 1;
      for (size_t d = 0; d < sizes.size(); ++d) {
        int64_t s = d < o.sizes.size() ? o.strides[t][d] : r.strides[t][d - o.sizes.size()];
        st[t * kMaxKernelDims + d] = s;
        if (s != 0) touched *= sizes[d];
      }
      bytes += touched * itemsize(all[t].dtype());
    }
    std::vector<double> fs(k_.scalars.size() + 1, 0);
    std::vector<int64_t> is(k_.scalars.size() + 1, 0);
    for (size_t s = 0; s < k_.scalars.size(); ++s) {
      const Value& v = leaves[k_.scalars[s].first];
      if (v.is(Type::Float)) fs[s] = v.raw_float();
      else is[s] = v.raw_int();
    }
    // wide = 1: host kernels index in 64 bits and do not read the flag.
    fn_(n, int32_t(o.sizes.size()), sizes.data(), data.data(), st.data(), fs.data(), is.data(), o.flat && !k_.reduction,
        rn, int32_t(r.sizes.size()), 1);
    exec_counters().kernels++;
    exec_counters().bytes += bytes;
    return outs;
  }

 private:
  Kernel k_;
  std::shared_ptr<HostModule> module_;
  KernelFn fn_ = nullptr;
  std::vector<std::unique_ptr<TraceExecutor>> views_;  // per load: the views its leaf is seen through
  std::vector<std::vector<Value>> out_sizes_;
  bool extremes_ = false;                         // amax/amin: an empty reduction is an error
  std::shared_ptr<const FusionKernel> fallback_;  // more dims than a kernel indexes
};

}  // namespace

std::string kernel_source(const Trace& t, Target target, bool prelude) {
  std::vector<Kernel> ks = lower_all(t);
  return ks.empty() ? std::string() : render_kernels(ks, target, prelude);
}

FusionKernels compile_cpu(const Trace& t, CompileInfo* info) {
  std::vector<Kernel> ks = lower_all(t);
  FusionKernels out;
  if (ks.empty()) return out;
  std::shared_ptr<HostModule> m = host_module(render_kernels(ks, Target::Cpu), info);
  size_t k = 0;
  for (const BoundSymbol& b : t.body)
    if (is_fusion(b)) {
      out.push_back(std::make_shared<CpuFusion>(b, std::move(ks[k]), m));
      ++k;
    }
  return out;
}

}  // namespace thn
