#include "backend/launch.h"

#include <fmt/format.h>

#include <algorithm>

#include "runtime/cuda.h"
#include "runtime/elementwise.h"
#include "runtime/loops.h"
#include "runtime/progress.h"

namespace thn {

namespace {

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


// Where a kernel finds t's first element.
void* address(const Tensor& t) {
  return t.device().type == DeviceType::CPU ? t.raw_data() : reinterpret_cast<void*>(uintptr_t(t.device_address()));
}

}  // namespace

namespace {

bool is_inner(const Kernel& k, size_t t) {
  return t < k.loads.size() ? k.loads[t].inner : k.stores[t - k.loads.size()].inner;
}

// Whether every inner tensor steps by one element along dim d of the call.
bool unit_inner(const Kernel& k, const KernelCall& c, int32_t d) {
  for (size_t t = 0; t < c.data.size(); ++t)
    if (is_inner(k, t) && c.strides[t * kMaxKernelDims + size_t(d)] != 1) return false;
  return true;
}

}  // namespace

bool reduces_rows(const Kernel& k, const KernelCall& c) { return k.reduction && c.rnd == 1 && unit_inner(k, c, c.nd); }

bool reduces_columns(const Kernel& k, const KernelCall& c) {
  return k.reduction && c.nd > 0 && unit_inner(k, c, c.nd - 1);
}

std::vector<Kernel> lower_fusions(const Trace& t) {
  std::vector<Kernel> ks;
  for (const BoundSymbol& b : t.body)
    if (is_fusion(b)) ks.push_back(lower_fusion(b, fmt::format("thn_fusion{}", ks.size())));
  return ks;
}

CompiledFusion::CompiledFusion(const BoundSymbol& f, Kernel k, Device device)
    : k_(std::move(k)),
      device_(device),
      fallback_(eager_fusion(f)),
      lanes_(device.type == DeviceType::CUDA ? vector_lanes(k_) : 1) {
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
  memos_.resize(views_.size());
  for (size_t i = 0; i < views_.size(); ++i) {
    if (!views_[i]) continue;
    std::function<bool(const Value&)> symbolic = [&](const Value& v) {
      if (v.is_sequence()) return std::any_of(v.items().begin(), v.items().end(), symbolic);
      return v.is_proxy() && !v.is(Type::Tensor);
    };
    memos_[i].constant = std::none_of(k_.loads[i].chain.begin(), k_.loads[i].chain.end(), [&](const BoundSymbol& b) {
      return std::any_of(b.args.begin(), b.args.end(), symbolic);
    });
  }
  for (const Value& o : f.out.items()) out_sizes_.push_back(tensor_proxy(o).sizes);
  // The first output's sizes as this call's: a constant, or the fusion's
  // argument that is that size's proxy (-1 - its index); nullopt when one
  // is neither (then a fusion without loads runs its prims one by one).
  out_dims_.emplace();
  for (const Value& s : out_sizes_.empty() ? std::vector<Value>{} : out_sizes_[0]) {
    if (!s.is_proxy()) {
      out_dims_->push_back(s.raw_int());
      continue;
    }
    auto arg = std::find_if(f.args.begin(), f.args.end(), [&](const Value& a) { return a.is_proxy() && &a.symbolic() == &s.symbolic(); });
    if (arg == f.args.end()) {
      out_dims_.reset();
      break;
    }
    out_dims_->push_back(-1 - int64_t(arg - f.args.begin()));
  }
  for (const KExpr& e : k_.exprs)
    extremes_ |= e.kind == KExpr::Kind::Reduce && (e.prim.sym.op->id == OpId::amax || e.prim.sym.op->id == OpId::amin);
  for (const KStore& st : k_.stores) {
    std::vector<bool>& feeds = feeds_.emplace_back(k_.loads.size());
    std::vector<int> todo{st.expr};
    std::vector<bool> seen(k_.exprs.size());
    while (!todo.empty()) {
      const int e = todo.back();
      todo.pop_back();
      if (e < 0 || seen[size_t(e)]) continue;
      seen[size_t(e)] = true;
      const KExpr& x = k_.exprs[size_t(e)];
      if (x.kind == KExpr::Kind::Load) feeds[size_t(x.index)] = true;
      todo.insert(todo.end(), x.operands.begin(), x.operands.end());
    }
  }
}

// Per leaf, the bytes its loads read: their sum where they lie apart in
// memory (x[:n] and x[n:]), else the largest (a lower bound).
void CompiledFusion::note_loaded(const std::vector<Tensor>& loads, std::span<int64_t> loaded) const {
  struct Span {
    int64_t first, end, bytes;
  };
  std::vector<std::vector<Span>> spans(loaded.size());
  for (size_t i = 0; i < loads.size(); ++i) {
    const Tensor& t = loads[i];
    if (k_.loads[i].leaf >= loaded.size() || t.numel() == 0) continue;
    int64_t extent = 1;
    for (size_t d = 0; d < t.sizes().size(); ++d) extent += (t.sizes()[d] - 1) * std::abs(t.strides()[d]);
    spans[k_.loads[i].leaf].push_back({t.offset(), t.offset() + extent, distinct_bytes(Value::tensor(t))});
  }
  for (size_t l = 0; l < spans.size(); ++l) {
    std::vector<Span>& s = spans[l];
    std::sort(s.begin(), s.end(), [](const Span& a, const Span& b) { return a.first < b.first; });
    int64_t sum = 0, most = 0;
    bool apart = true;
    for (size_t k = 0; k < s.size(); ++k) {
      apart = apart && (k == 0 || s[k - 1].end <= s[k].first);
      sum += s[k].bytes;
      most = std::max(most, s[k].bytes);
    }
    loaded[l] = apart ? sum : most;
  }
}

bool CompiledFusion::Plan::matches(const std::vector<Tensor>& loads, std::span<const Value> into) const {
  if (loads.size() != dtypes.size()) return false;
  for (size_t i = 0; i < loads.size(); ++i)
    if (loads[i].dtype() != dtypes[i] || loads[i].sizes() != sizes[i] || loads[i].strides() != strides[i]) return false;
  size_t k = loads.size();
  for (size_t s = 0; s < given.size(); ++s) {
    const bool g = s < into.size() && !into[s].is_none();
    if (g != bool(given[s])) return false;
    if (!g) continue;
    const Tensor& t = into[s].as_tensor();
    if (t.sizes() != sizes[k] || t.strides() != strides[k]) return false;
    ++k;
  }
  return true;
}

// The plan of a call on these loads and targets; nullptr where the region
// must run eagerly.
std::unique_ptr<CompiledFusion::Plan> CompiledFusion::plan(const std::vector<Tensor>& loads, std::span<const Value> leaves,
                                                           std::span<const Value> into) const {
  auto p = std::make_unique<Plan>();
  // Loads have their phase's shape, but for 0-dim operands (a wrapped
  // number, masked_fill's value), which broadcast. The index space is the
  // reduction's input; without one, the outputs' shape.
  Dims shape, outer;
  std::vector<char> reduced;  // per dim of shape
  for (size_t i = 0; i < loads.size(); ++i)
    if (k_.loads[i].inner == k_.reduction) shape = broadcast_shapes(shape, loads[i].sizes());
  if (k_.reduction && std::none_of(k_.loads.begin(), k_.loads.end(), [](const KLoad& l) { return l.inner; })) return nullptr;
  if (!k_.reduction && loads.empty()) {  // (the outputs' sizes, symbolic ones from the arguments)
    if (!out_dims_) return nullptr;
    for (int64_t d : *out_dims_) shape.push_back(d >= 0 ? d : leaves[size_t(-1 - d)].as_int());
    p->reusable = false;
  }
  reduced.assign(shape.size(), 0);
  for (int64_t d : k_.reduced)
    if (d < int64_t(shape.size())) reduced[size_t(d)] = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d]) outer.push_back(shape[d]);
    else if (k_.keepdim) outer.push_back(1);
  }
  // Every tensor's strides over `shape`: outer ones step 0 along reduced dims.
  auto over_shape = [&](const Dims& sizes, const Dims& strides, bool inner) {
    if (inner || !k_.reduction) return broadcast_strides(sizes, strides, shape);
    Dims st = broadcast_strides(sizes, strides, outer), full;
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
  std::vector<Dims> strides;
  for (size_t i = 0; i < loads.size(); ++i) {
    p->sizes.push_back(loads[i].sizes());
    p->strides.push_back(loads[i].strides());
    p->dtypes.push_back(loads[i].dtype());
    strides.push_back(over_shape(loads[i].sizes(), loads[i].strides(), k_.loads[i].inner));
  }
  for (size_t s = 0; s < k_.stores.size(); ++s) {
    const KStore& st = k_.stores[s];
    const Dims& at = st.inner || !k_.reduction ? shape : outer;
    Dims sizes, out;
    if (s < into.size() && !into[s].is_none()) {
      const Tensor& o = into[s].as_tensor();
      sizes = o.sizes();
      out = o.strides();
      p->sizes.push_back(sizes);
      p->strides.push_back(out);
      p->given.push_back(1);
    } else {
      // (laid out as eager lays out a result: like the inputs it is
      // computed from, not every tensor the kernel reads)
      std::vector<Tensor> like;
      for (size_t i = 0; i < loads.size(); ++i)
        if (feeds_[s][i] && k_.loads[i].inner == st.inner && loads[i].sizes() == at) like.push_back(loads[i]);
      sizes = at;
      out = st.contiguous ? contiguous_strides(at) : output_strides(at, like);
      p->given.push_back(0);
    }
    p->fresh.emplace_back(sizes, out);
    strides.push_back(over_shape(sizes, out, st.inner));
  }
  std::vector<size_t> kept, gone;
  for (size_t d = 0; d < shape.size(); ++d) (reduced[d] ? gone : kept).push_back(d);
  Merged o(shape, strides, kept), r(shape, strides, gone);
  if (numel_of(o.sizes) == 0) {
    p->empty = true;
    return p;
  }
  if (k_.reduction && numel_of(r.sizes) == 0 && extremes_) return nullptr;  // PyTorch's error
  if (k_.reduction && r.sizes.empty()) {
    r.sizes.push_back(1);
    for (Dims& st : r.strides) st.push_back(0);
  }
  if (o.sizes.size() + r.sizes.size() > size_t(kMaxKernelDims)) return nullptr;
  KernelCall& c = p->call;
  c.n = numel_of(o.sizes);
  c.rn = numel_of(r.sizes);
  c.nd = int32_t(o.sizes.size());
  c.rnd = int32_t(r.sizes.size());
  c.flat = o.flat && !k_.reduction ? 1 : 0;
  c.sizes = o.sizes;
  c.sizes.insert(c.sizes.end(), r.sizes.begin(), r.sizes.end());
  c.strides.assign(strides.size() * kMaxKernelDims, 0);
  for (size_t t = 0; t < strides.size(); ++t) {
    int64_t touched = 1;
    for (size_t d = 0; d < c.sizes.size(); ++d) {
      int64_t s = d < o.sizes.size() ? o.strides[t][d] : r.strides[t][d - o.sizes.size()];
      c.strides[t * kMaxKernelDims + d] = s;
      if (s != 0) touched *= c.sizes[d];
    }
    p->bytes += touched * itemsize(dtype_of(*p, t));
  }
  return p;
}

// CUDA's vector paths: where every tensor (a reduction: every inner one)
// starts at a multiple of its vector, given the call's addresses.
void CompiledFusion::vectorize(KernelCall& c, const Plan& p) const {
  auto aligned = [&](size_t t) {
    return reinterpret_cast<uintptr_t>(c.data[t]) % uintptr_t(lanes_ * itemsize(dtype_of(p, t))) == 0;
  };
  if (!k_.reduction) {
    bool all = c.flat != 0;
    for (size_t t = 0; t < c.data.size() && all; ++t) all = aligned(t);
    if (all) c.flat = 2;
    return;
  }
  // A reduction's rows, or (one sweep) its columns: vector loads when every
  // inner tensor's rows, or every row of its columns, start at a multiple
  // of its vector (whole vectors of adjacent outputs, for columns).
  const bool rows = reduces_rows(k_, c), columns = !rows && k_.stages == 1 && reduces_columns(k_, c);
  const int32_t along = rows ? c.nd : c.nd - 1;  // the contiguous dim
  bool vectors = rows || (columns && c.sizes[size_t(c.nd) - 1] % lanes_ == 0);
  for (size_t t = 0; t < c.data.size() && vectors; ++t) {
    if (!is_inner(k_, t)) continue;
    vectors = aligned(t);
    for (int32_t d = 0; d < c.nd + c.rnd; ++d)
      if (d != along) vectors = vectors && c.strides[t * kMaxKernelDims + size_t(d)] % lanes_ == 0;
  }
  if (vectors) c.flat = 2;
  else if (columns) c.flat = 0;
}

Tensor CompiledFusion::view_of(size_t load, Interpreter& in, std::span<const Value> leaves) const {
  ViewMemo& m = memos_[load];
  const Tensor& leaf = leaves[k_.loads[load].leaf].as_tensor();
  if (m.valid && leaf.dtype() == m.leaf_dtype && leaf.sizes() == m.leaf_sizes && leaf.strides() == m.leaf_strides &&
      leaf.offset() == m.leaf_offset)
    return Tensor(leaf.storage(), m.offset, m.sizes, m.strides, m.dtype);
  Tensor v = views_[load]->run(in, leaves).as_tensor();
  // (A reshape that copies gives a new tensor: not a view to remember.)
  m.valid = m.constant && v.storage() == leaf.storage();
  if (m.valid)
    m = {true, true, leaf.sizes(), leaf.strides(), v.sizes(), v.strides(), leaf.offset(), v.offset(), leaf.dtype(), v.dtype()};
  return v;
}

std::vector<Value> CompiledFusion::run(Interpreter& in, std::span<const Value> leaves, std::span<const Value> into,
                                       std::span<int64_t> loaded) const {
  std::vector<Tensor> loads;
  loads.reserve(k_.loads.size());
  for (size_t i = 0; i < k_.loads.size(); ++i) {
    const Value& leaf = leaves[k_.loads[i].leaf];
    loads.push_back(views_[i] ? view_of(i, in, leaves) : leaf.as_tensor());
  }
  for (Tensor& t : loads) {
    // A wrapped number beside CUDA tensors (0-dim, or expanded: one value)
    // comes over as its value; other operands on another device run the
    // region eagerly (PyTorch's error, where it has one).
    if (t.device() != device_ && t.device().type == DeviceType::CPU && is_one_value(t))
      t = t.numel() ? broadcast_to(cuda::to_device(one_value(t), device_), t.sizes()) : empty(t.sizes(), t.dtype(), device_);
    if (t.device() != device_) return fallback_->run(in, leaves, into, loaded);
  }
  for (size_t s = 0; s < into.size(); ++s)
    if (!into[s].is_none() && into[s].as_tensor().device() != device_) return fallback_->run(in, leaves, into, loaded);
  // The last call's plan where the layouts are its own (a training step's
  // fusions see the same ones every call), else a new one.
  std::unique_ptr<Plan> made;
  const Plan* p = plan_ && plan_->matches(loads, into) ? plan_.get() : nullptr;
  if (!p) {
    made = plan(loads, leaves, into);
    if (!made) return fallback_->run(in, leaves, into, loaded);
    p = made.get();
  }
  KernelCall c = p->call;
  std::vector<Value> outs;
  for (const Tensor& t : loads) c.data.push_back(address(t));
  for (size_t s = 0; s < k_.stores.size(); ++s) {
    Tensor o = p->given[s] ? into[s].as_tensor()
                           : empty_strided(p->fresh[s].first, p->fresh[s].second, k_.stores[s].dtype, device_);
    c.data.push_back(address(o));
    outs.push_back(Value::tensor(std::move(o)));
  }
  if (made && made->reusable) plan_ = std::move(made);
  if (p->empty) return outs;
  if (!loaded.empty()) note_loaded(loads, loaded);
  if (lanes_ > 1) vectorize(c, *p);
  c.fs.assign(k_.scalars.size() + 1, 0);
  c.is.assign(k_.scalars.size() + 1, 0);
  for (size_t s = 0; s < k_.scalars.size(); ++s) {
    const Value& v = leaves[k_.scalars[s].first];
    if (v.is(Type::Float)) c.fs[s] = v.raw_float();
    else c.is[s] = v.raw_int();
  }
  if (!launch(c)) return fallback_->run(in, leaves, into, loaded);
  exec_counters().kernels++;
  exec_counters().bytes += p->bytes;
  return outs;
}

std::vector<Value> TieredFusion::run(Interpreter& in, std::span<const Value> leaves, std::span<const Value> into,
                                     std::span<int64_t> loaded) const {
  if (finish_ && job_->done()) switch_over();
  return (compiled_ ? *compiled_ : *eager_).run(in, leaves, into, loaded);
}

void TieredFusion::switch_over() const {
  Finish finish = std::exchange(finish_, nullptr);
  std::string error = job_->error();
  if (error.empty()) {
    try {
      compiled_ = finish(*job_);
      return;
    } catch (const Error& e) {
      error = e.what();
    }
  }
  // (A job cancelled at exit or by a Ctrl-C is no kernel's failure.)
  if (job_->cancelled() || job_->reported.exchange(true)) return;
  clear_status();
  std::fprintf(stderr, "thn: a kernel did not compile, so its fusion runs op by op: %s\n", error.c_str());
}

FusionKernels compile_fusions(const Trace& t, CompileMode mode, const KernelJobFor& job_for, const KernelFinish& finish,
                              std::vector<std::shared_ptr<const CompileJob>>* started) {
  if (mode == CompileMode::Eager) return {};  // (the executor runs every fusion op by op)
  std::vector<Kernel> ks = lower_fusions(t);
  std::vector<std::shared_ptr<CompileJob>> jobs;
  for (Kernel& k : ks) {
    // Named alike, identical kernels have one source (and one job).
    k.name = "thn_kernel";
    bool fresh = false;
    jobs.push_back(job_for(k, &fresh));
    if (fresh && started) started->push_back(jobs.back());
  }
  FusionKernels out;
  size_t k = 0;
  for (const BoundSymbol& b : t.body) {
    if (!is_fusion(b)) continue;
    if (mode == CompileMode::Sync) {
      jobs[k]->wait();
      jobs[k]->result();  // (its error, raised)
      out.push_back(finish(b, ks[k], *jobs[k]));
    } else {
      out.push_back(std::make_shared<TieredFusion>(
          b, jobs[k], [f = b, kernel = ks[k], finish](const CompileJob& job) { return finish(f, kernel, job); }));
    }
    ++k;
  }
  return out;
}

}  // namespace thn
