#include "backend/cpu.h"

#include <fmt/format.h>

#include "runtime/creation.h"
#include "runtime/elementwise.h"

namespace thn {

namespace {

using KernelFn = void (*)(int64_t, int32_t, const int64_t*, void* const*, const int64_t*, const double*,
                          const int64_t*, int32_t);

std::vector<Kernel> lower_all(const Trace& t) {
  std::vector<Kernel> ks;
  for (const BoundSymbol& b : t.body)
    if (is_fusion(b)) ks.push_back(lower_fusion(b, fmt::format("thn_fusion{}", ks.size())));
  return ks;
}

// Sizes and per-tensor strides of an index space with size-1 dims dropped
// and dims merged where every tensor steps through them contiguously.
struct Launch {
  Dims sizes;
  std::vector<Dims> strides;  // per tensor, one per kept dim
  bool flat = true;

  Launch(const Dims& shape, const std::vector<Tensor>& ts) : strides(ts.size()) {
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) continue;
      bool merge = !sizes.empty();
      for (size_t t = 0; t < ts.size() && merge; ++t) merge = strides[t].back() == ts[t].strides()[d] * shape[d];
      if (merge) {
        sizes.back() *= shape[d];
        for (size_t t = 0; t < ts.size(); ++t) strides[t].back() = ts[t].strides()[d];
      } else {
        sizes.push_back(shape[d]);
        for (size_t t = 0; t < ts.size(); ++t) strides[t].push_back(ts[t].strides()[d]);
      }
    }
    for (size_t t = 0; t < ts.size(); ++t)
      for (int64_t s : strides[t]) flat = flat && s == 1;
    flat = flat && sizes.size() <= 1;
  }
};

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
  }

  std::vector<Value> run(Interpreter& in, std::span<const Value> leaves, std::span<const Value> into) const override {
    std::vector<Tensor> ts;
    for (size_t i = 0; i < k_.loads.size(); ++i) {
      const Value& leaf = leaves[k_.loads[i].leaf];
      ts.push_back(views_[i] ? views_[i]->run(in, leaves).as_tensor() : leaf.as_tensor());
    }
    // Loads have the index space's shape, but for 0-dim operands (a
    // wrapped number, masked_fill's value), which broadcast.
    Dims shape;
    if (ts.empty())
      for (const Value& s : out_sizes_[0]) shape.push_back(s.raw_int());
    for (const Tensor& t : ts) shape = broadcast_shapes(shape, t.sizes());
    for (Tensor& t : ts)
      if (t.sizes() != shape) t = broadcast_to(t, shape);
    std::vector<Value> outs;
    std::vector<Tensor> all = ts;
    for (size_t s = 0; s < k_.stores.size(); ++s) {
      const KStore& st = k_.stores[s];
      Tensor o;
      if (s < into.size() && !into[s].is_none()) o = into[s].as_tensor();
      else o = empty_strided(shape, output_strides(shape, ts), st.dtype);
      outs.push_back(Value::tensor(o));
      all.push_back(o);
    }
    int64_t n = numel_of(shape);
    if (n == 0) return outs;
    Launch l(shape, all);
    if (l.sizes.size() > size_t(kMaxKernelDims)) return fallback_->run(in, leaves, into);
    std::vector<int64_t> strides(all.size() * kMaxKernelDims, 0);
    std::vector<void*> data;
    int64_t bytes = 0;
    for (size_t t = 0; t < all.size(); ++t) {
      data.push_back(all[t].raw_data());
      int64_t touched = 1;
      for (size_t d = 0; d < l.sizes.size(); ++d) {
        strides[t * kMaxKernelDims + d] = l.strides[t][d];
        if (l.strides[t][d] != 0) touched *= l.sizes[d];
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
    fn_(n, int32_t(l.sizes.size()), l.sizes.data(), data.data(), strides.data(), fs.data(), is.data(), l.flat);
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
  std::shared_ptr<const FusionKernel> fallback_;  // more dims than a kernel indexes
};

}  // namespace

std::string kernel_source(const Trace& t, Target target) {
  std::vector<Kernel> ks = lower_all(t);
  return ks.empty() ? std::string() : render_kernels(ks, target);
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
