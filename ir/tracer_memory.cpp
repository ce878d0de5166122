// The tracer's view of memory: which tensors share it, how (the overlap
// pattern and groups the prologue guards), and which layouts are the same on
// every call the trace serves.
#include <algorithm>
#include <functional>

#include "ir/tracer.h"

namespace thn {

namespace {

// The elements a tensor's memory spans: [first, end) in its storage.
std::pair<int64_t, int64_t> memory_range(const Tensor& t) {
  int64_t extent = t.numel() == 0 ? 0 : 1;
  for (int64_t d = 0; d < t.dim(); ++d) extent += (t.sizes()[size_t(d)] - 1) * t.strides()[size_t(d)];
  return {t.offset(), t.offset() + extent};
}

// The tensors' indices ordered by storage, then by index.
std::vector<size_t> by_storage(std::span<const Tensor* const> tensors, bool then_by_start) {
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    auto pa = tensors[a]->storage().get(), pb = tensors[b]->storage().get();
    if (pa != pb) return std::less<>()(pa, pb);
    if (then_by_start && tensors[a]->offset() != tensors[b]->offset()) return tensors[a]->offset() < tensors[b]->offset();
    return a < b;
  });
  return order;
}

// Whether an in-place write into dst that reads src gives a result that
// depends on the order the elements are written (eager's loop order):
// they share memory, but not element for element.
bool order_dependent(const Tensor& dst, const Tensor& src) {
  if (dst.storage() != src.storage() || dst.numel() == 0 || src.numel() == 0) return false;
  if (dst.offset() == src.offset() && dst.sizes() == src.sizes() && dst.strides() == src.strides()) return false;
  auto [a0, a1] = memory_range(dst);
  auto [b0, b1] = memory_range(src);
  return a0 < b1 && b0 < a1;
}

}  // namespace

OverlapGroups overlap_groups(std::span<const Tensor* const> tensors) {
  size_t n = tensors.size();
  OverlapGroups g{std::vector<int>(n), std::vector<int64_t>(n, 0), std::vector<int64_t>(n, 0)};
  std::vector<size_t> order = by_storage(tensors, true), members;
  int64_t start = 0, end = 0;
  auto close = [&] {
    int leader = int(*std::min_element(members.begin(), members.end()));
    for (size_t m : members) {
      g.group[m] = leader;
      g.offset[m] = tensors[m]->offset() - start;
      g.extent[m] = end - start;
    }
    members.clear();
  };
  for (size_t j : order) {
    auto [first, last] = memory_range(*tensors[j]);
    if (first == last) {  // empty: shares nothing
      g.group[j] = int(j);
      continue;
    }
    bool joins = !members.empty() && tensors[members.back()]->storage() == tensors[j]->storage() && first < end;
    if (!members.empty() && !joins) close();
    if (members.empty()) start = first, end = last;
    end = std::max(end, last);
    members.push_back(j);
  }
  if (!members.empty()) close();
  return g;
}

std::vector<int> overlap_pattern(std::span<const Tensor* const> tensors) {
  size_t n = tensors.size();
  std::vector<int> pattern(n);
  for (size_t i = 0; i < n; ++i) pattern[i] = int(i);
  std::vector<size_t> order = by_storage(tensors, false);
  auto range = [&](size_t i) { return memory_range(*tensors[i]); };
  for (size_t k = 1; k < n; ++k) {
    size_t j = order[k];
    for (size_t q = k; q-- > 0 && tensors[order[q]]->storage() == tensors[j]->storage();) {
      auto [a0, a1] = range(order[q]);
      auto [b0, b1] = range(j);
      if (a0 < b1 && b0 < a1 && a1 > a0 && b1 > b0) pattern[j] = std::min(pattern[j], int(order[q]));
    }
  }
  // An expanded tensor (a stride 0 over a size > 1) overlaps itself: one
  // write lands in several of its elements.
  for (size_t i = 0; i < n; ++i) {
    const Tensor& t = *tensors[i];
    if (t.numel() == 0) continue;  // empty: overlaps nothing
    for (int64_t d = 0; d < t.dim(); ++d)
      if (t.strides()[size_t(d)] == 0 && t.sizes()[size_t(d)] > 1) pattern[i] = -1;
  }
  return pattern;
}

bool Tracer::loop_order_write(const Tensor& dst, std::span<const Value> operands) const {
  std::vector<Value> ps;
  for (const Value& a : operands) collect_proxies(a, ps);
  for (const Value& p : ps)
    if (is_tensor_proxy(p) && order_dependent(dst, tensor_proxy(p).meta)) return true;
  return false;
}

void Tracer::record_storage_groups(const std::vector<Value>& proxies, const std::vector<int>& pattern) {
  std::vector<const Tensor*> tensors;
  for (const Value& v : proxies) tensors.push_back(&tensor_proxy(v).meta);
  OverlapGroups g = overlap_groups(tensors);
  std::vector<StorageGroup> groups;
  for (size_t leader = 0; leader < proxies.size(); ++leader) {
    std::vector<size_t> members;
    for (size_t j = leader; j < proxies.size(); ++j)
      if (g.group[j] == int(leader)) members.push_back(j);
    if (members.empty() || (members.size() == 1 && pattern[leader] >= 0)) continue;
    StorageGroup s;
    s.extent = g.extent[leader];
    for (size_t j : members) {
      const auto& p = tensor_proxy(proxies[j]);
      if (p.dtype() != tensor_proxy(proxies[leader]).dtype()) return;  // program order then
      s.members.push_back(proxies[j]);
      s.offsets.push_back(g.offset[j]);
      s.strides.push_back(p.meta.strides());
      s.sizes.emplace_back();
      for (const Value& d : p.sizes) s.sizes.back().push_back(d.as_int());  // a symbolic size is guarded static
    }
    groups.push_back(std::move(s));
  }
  trace_.storage_groups = std::move(groups);
}

bool Tracer::aliases_input(const Tensor& meta) const {
  return meta.defined() && meta_inputs_.count(meta.storage().get()) > 0;
}

// A tensor's layout (its strides, offset, contiguity) is a function of its
// own sizes and of those of the tensors it views (x[:, 0].stride() of the
// dims x[:, 0] dropped): all made static (p is among the tensors sharing
// its storage).
void Tracer::static_layout(const TensorProxy& p) {
  for (const auto& q : tensors_)
    if (q->meta.storage() == p.meta.storage())
      for (const Value& s : q->sizes) make_static_all(s);
}

// Whether t's layout is the same on every call the trace serves, given its
// sizes: every tensor input is contiguous (the prologue checks), and t is an
// input or a fresh result of an op (whose layout PyTorch derives from its
// operands'), or a permutation, unsqueeze, squeeze or reshape of one. Then
// its strides are products of its sizes in a fixed order, and as sizes are
// symbolic only when at least 2, comparisons of its strides come out the
// same on every call. (A slice, select or expand can make a tensor
// contiguous for one size only: x[:, :2] when x has 2 columns.)
bool Tracer::structural_layout(const Value& t) const {
  for (const Value& v : trace_.inputs)
    if (is_tensor_proxy(v) && !tensor_proxy(v).meta.is_contiguous()) return false;
  if (!trace_.captured.empty()) return false;
  const Symbolic* at = &t.symbolic();
  for (auto b = trace_.body.rbegin(); b != trace_.body.rend(); ++b) {
    std::vector<Value> outs;
    collect_proxies(b->out, outs);
    if (std::none_of(outs.begin(), outs.end(), [&](const Value& o) { return &o.symbolic() == at; })) continue;
    if (!b->sym.op) return false;  // getitem and the other prims
    if (b->sym.op->family != OpFamily::View && b->sym.op->family != OpFamily::Attribute) return true;
    switch (b->sym.op->id) {
      case OpId::permute: case OpId::transpose: case OpId::t: case OpId::T: case OpId::mT: case OpId::movedim:
      case OpId::unsqueeze: case OpId::squeeze: case OpId::reshape: case OpId::view: case OpId::flatten:
      case OpId::unflatten:
        if (!is_tensor_proxy(b->args[0])) return false;
        at = &b->args[0].symbolic();
        continue;
      default: return false;
    }
  }
  // An input, contiguous by the prologue's check (a captured tensor's layout
  // is whatever it is).
  return std::any_of(trace_.inputs.begin(), trace_.inputs.end(),
                     [&](const Value& v) { return is_tensor_proxy(v) && &v.symbolic() == at; });
}

// Whether t is, or views, a non-contiguous tensor of the trace: then
// whether a reshape of it is a view or a copy depends on strides.
bool Tracer::views_non_contiguous(const Tensor& t) const {
  if (!t.is_contiguous()) return true;
  for (const auto& q : tensors_)
    if (q->meta.storage() == t.storage() && !q->meta.is_contiguous()) return true;
  return false;
}

}  // namespace thn
