#include "ir/tracer.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <unordered_set>

#include "ir/decompose.h"
#include "ir/executor.h"
#include "ir/shape_rules.h"
#include "runtime/cuda.h"
#include "runtime/error.h"
#include "runtime/random.h"

namespace thn {

// ---- proxies ----

void NumberProxy::concrete_use() const {
  if (tracer) tracer->make_static(const_cast<NumberProxy&>(*this));
}

bool NumberProxy::depends_on_data() const { return constraint == Constraint::Dynamic; }

void TensorProxy::concrete_use() const {
  if (tracer) tracer->data_dependent("the data of a tensor is not known while tracing");
  fail(ErrorKind::RuntimeError,
       "jit: a tensor computed while tracing was stored outside the jitted function; return it instead");
}

// ---- tracer ----

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

// Whether a list item is still the one it was: Python's `is` (a number,
// bool or None by value, a proxy by its symbol).
// The stand-in value of a number of tensor data (Constraint::Dynamic): one,
// which no code reads (make_static refuses) and no check trips on.
Value placeholder(Type type) {
  return type == Type::Float ? Value(1.0) : type == Type::Bool ? Value(true) : Value(int64_t(1));
}

bool same_item(const Value& a, const Value& b) {
  if (a.type() != b.type() || a.is_proxy() != b.is_proxy()) return false;
  if (a.is_proxy()) return &a.symbolic() == &b.symbolic();
  if (a.object() || b.object()) return a.object() == b.object();
  return to_repr(a) == to_repr(b);
}

}  // namespace


struct Tracer::Links {
  std::vector<TraceResult::OutputLink>& out;
  std::unordered_map<const Object*, std::vector<int>> arguments;  // the traced argument lists' paths
  std::unordered_map<const Object*, std::vector<int>> seen;       // lists output so far, at their paths
};

Tracer::Tracer(Interpreter& in, TraceOptions opts) : in_(in), opts_(opts) {}

Tracer::~Tracer() {
  // Proxies that escaped (stored somewhere by the traced code) turn into
  // plain values; the meta tensors go (cached traces keep only
  // metadata).
  for (auto& n : numbers_) n->tracer = nullptr;
  for (auto& t : tensors_) {
    t->tracer = nullptr;
    t->meta = Tensor();
  }
}

void Tracer::data_dependent(const std::string& what) const {
  fail(ErrorKind::RuntimeError,
       "jit: {}: a jitted function cannot branch on, index with or convert tensor values "
       "(use where() or move this out of the jitted function)",
       what);
}

void Tracer::make_static(NumberProxy& p) {
  if (p.constraint == Constraint::Static) return;
  if (p.depends_on_data()) data_dependent("a number computed from tensor data is needed as a Python value");
  p.constraint = Constraint::Static;
  guards_.push_back({Value::proxy(p.value, numbers_[size_t(p.id)]), p.value, false});
}

Value Tracer::new_tensor(Tensor meta, Device device, const std::string& name) {
  auto p = std::make_shared<TensorProxy>();
  p->id = next_id_++;
  p->tracer = this;
  p->name = name;
  for (int64_t s : meta.sizes()) p->sizes.push_back(Value(s));
  p->dtype_ = meta.dtype();
  p->device_ = device;
  p->meta = std::move(meta);
  tensors_.push_back(p);
  return Value::proxy(Value(Type::Tensor, nullptr), p);
}

Tensor Tracer::meta_of(const Tensor& t) {
  // One meta storage per storage of the inputs: tensors that share memory
  // share it, with their own offsets and strides. Its kernels are the host's
  // (KernelDeviceScope names the proxy's device); its proxy keeps the device.
  auto& meta = input_storages_[t.storage().get()];
  if (!meta) {
    meta = std::make_shared<Storage>(t.storage()->nbytes(), kCPU, /*meta=*/true);
    meta_inputs_.insert(meta.get());
  }
  return Tensor(meta, t.offset(), t.sizes(), t.strides(), t.dtype());
}

Value Tracer::input_tensor(const Tensor& t, const std::string& name) {
  Value v = new_tensor(meta_of(t), t.device(), name);
  if (!opts_.symbolic_shapes) return v;
  // Sizes 0 and 1 stay static (broadcasting and emptiness depend on them);
  // larger ones become symbolic, guarded to stay >= 2.
  auto& p = tensor_proxy(v);
  bool any = false;
  for (size_t d = 0; d < p.sizes.size(); ++d) {
    int64_t s = p.sizes[d].raw_int();
    if (s < 2 || (opts_.auto_shapes && !opts_.dynamic_sizes.count({name, int64_t(d)}))) continue;
    auto n = std::make_shared<NumberProxy>();
    n->origin = NumberProxy::Origin::Size;
    n->type = Type::Int;
    n->value = Value(s);
    n->set_tensor(v);
    n->dim = int64_t(d);
    n->sized = true;
    n->id = int(numbers_.size());
    n->tracer = this;
    numbers_.push_back(n);
    p.sizes[d] = Value::proxy(Value(s), n);
    assume(number_node(NumberOp::ge, {p.sizes[d], Value(int64_t(2))}));
    any = true;
  }
  if (any) record(Symbol::of(PrimId::shape), {v}, Value::tuple(p.sizes));
  return v;
}

Value Tracer::flatten(const Value& arg, int parent, int index, const std::string& name,
                      std::vector<InputLeaf>& leaves) {
  InputLeaf leaf;
  leaf.parent = parent;
  leaf.index = index;
  leaf.value = arg;
  leaf.name = name;
  int self = int(leaves.size());
  leaf_objects_.push_back(arg.object().get());
  if (arg.is(Type::Tensor)) {
    leaf.kind = InputLeaf::Tensor;
    leaf.proxy = input_tensor(arg.as_tensor(), name);
    input_leaf_[leaf.proxy.object().get()] = self;
    trace_.inputs.push_back(leaf.proxy);
    leaves.push_back(leaf);
    return leaf.proxy;
  }
  if (arg.is_number() && (opts_.symbolic_numbers || opts_.dynamic_numbers.count(name))) {
    auto n = std::make_shared<NumberProxy>();
    n->type = arg.type();
    n->value = arg;
    n->name = name;
    n->id = int(numbers_.size());
    n->tracer = this;
    numbers_.push_back(n);
    leaf.kind = InputLeaf::Number;
    leaf.proxy = Value::proxy(arg, n);
    trace_.inputs.push_back(leaf.proxy);
    leaves.push_back(leaf);
    return leaf.proxy;
  }
  if (arg.is(Type::List)) {
    auto [it, fresh] = list_index_.try_emplace(arg.object().get(), lists_.size());
    if (!fresh) {
      leaf.kind = InputLeaf::Same;
      leaf.same = lists_[it->second].leaf;
      leaves.push_back(leaf);
      return lists_[it->second].list;
    }
    // Known before its items, so an item that is this list is the same one.
    lists_.push_back({self, Value::list({}), {}});
  }
  if (arg.is_sequence()) {
    leaf.kind = InputLeaf::Sequence;
    leaves.push_back(leaf);
    std::vector<Value> items;
    for (size_t i = 0; i < arg.items().size(); ++i)
      items.push_back(flatten(arg.items()[i], self, int(i), fmt::format("{}_{}", name, i), leaves));
    if (!arg.is(Type::List)) return arg.like(std::move(items));
    ListArgument& l = lists_[list_index_.at(arg.object().get())];
    l.list.items() = items;
    l.items = std::move(items);
    return l.list;
  }
  leaf.kind = arg.is_number() ? InputLeaf::Number : InputLeaf::Constant;
  leaves.push_back(leaf);
  return arg;
}

TraceResult Tracer::trace(const Value& fn, const std::vector<Value>& params, const std::vector<std::string>& names) {
  auto start = std::chrono::steady_clock::now();
  TraceResult r;
  CallArgs args;
  // A thn function's keyword-only parameters are passed by name; a builtin
  // takes every parameter positionally.
  const auto* f = fn.is(Type::Function) ? &fn.obj<FunctionObj>() : nullptr;
  for (size_t i = 0; i < params.size(); ++i) {
    Value v = flatten(params[i], -1, int(i), names[i], r.leaves);
    if (f && f->def->params[i].kwonly) args.kwargs.emplace_back(names[i], std::move(v));
    else args.args.push_back(std::move(v));
  }

  Value out;
  std::exception_ptr failed;
  {
    // Tracing must leave the generator where it was.
    PhiloxState rng = philox_get_state();
    struct Restore {
      Interpreter& in;
      OpDispatch* prev;
      PhiloxState rng;
      ~Restore() {
        in.set_dispatch(prev);
        philox_set_state(rng);
      }
    } restore{in_, in_.set_dispatch(this), rng};
    try {
      out = in_.call(fn, args);
    } catch (...) {
      failed = std::current_exception();
    }
  }
  if (failed) {
    // Eager would have run the ops before the failure: their prints, their
    // writes and their errors of data (the first of which is then the error).
    std::vector<Value> inputs;
    for (const InputLeaf& l : r.leaves)
      if (!l.proxy.is_none()) inputs.push_back(l.value);
    TraceExecutor(trace_).run(in_, inputs);
    std::rethrow_exception(failed);
  }
  // A list argument the code changed: its new items become outputs.
  auto argument_path = [&r](int leaf) {
    std::vector<int> path;
    for (int k = leaf; k >= 0; k = r.leaves[size_t(k)].parent) path.insert(path.begin(), r.leaves[size_t(k)].index);
    return path;
  };
  std::vector<const ListArgument*> changed;
  for (const ListArgument& l : lists_) {
    const std::vector<Value>& now = l.list.items();
    bool same = now.size() == l.items.size();
    for (size_t i = 0; same && i < now.size(); ++i) same = same_item(now[i], l.items[i]);
    if (same) continue;
    r.list_updates.push_back(argument_path(l.leaf));
    changed.push_back(&l);
  }
  Links links{r.output_links, {}, {}};
  for (const ListArgument& l : lists_) links.arguments.emplace(l.list.object().get(), argument_path(l.leaf));
  std::vector<int> path;
  if (changed.empty()) {
    trace_.output = link_output(out, path, false, links);
  } else {
    std::vector<Value> outputs;
    path.push_back(0);
    outputs.push_back(link_output(out, path, false, links));
    for (const ListArgument* l : changed) {
      path.back() = int(outputs.size());
      outputs.push_back(link_output(l->list, path, true, links));
    }
    trace_.output = Value::tuple(std::move(outputs));
  }

  bool writes_input = false;
  for (const BoundSymbol& b : trace_.body) {
    if (b.sym.mutates() && aliases_input(tensor_proxy(b.args[b.sym.op ? size_t(b.sym.op->schema.self_index) : 0]).meta))
      writes_input = true;
  }
  r.depends_on_overlap = writes_input;
  std::vector<Value> outs;
  collect_proxies(trace_.output, outs);
  for (const Value& o : outs)
    if (o.is(Type::Tensor) && aliases_input(tensor_proxy(o).meta)) r.depends_on_overlap = true;

  std::vector<Value> proxies;
  for (const Value& v : trace_.inputs)
    if (is_tensor_proxy(v)) proxies.push_back(v);
  for (const auto& [proxy, tensor] : trace_.captured) proxies.push_back(proxy);
  std::vector<const Tensor*> tensors;
  for (const Value& v : proxies) tensors.push_back(&tensor_proxy(v).meta);
  std::vector<int> pattern = overlap_pattern(tensors);
  for (size_t i = 0; i < pattern.size(); ++i) trace_.inputs_overlap |= pattern[i] != int(i);
  if (trace_.inputs_overlap && writes_input) record_storage_groups(proxies, pattern);

  // The layouts the prologue guarantees (jit/prologue.cpp): contiguity, and
  // exact strides when some decision depended on them; captured tensors are
  // guarded by identity.
  auto layout = [&](const Value& v, bool exact) {
    if (!is_tensor_proxy(v)) return;
    auto& p = tensor_proxy(v);
    for (const Value& s : p.sizes)
      if (s.is_proxy()) return;
    if (p.meta.is_contiguous()) p.strides = contiguous_strides(p.meta.sizes());
    else if (exact || depends_on_strides_) p.strides = p.meta.strides();
  };
  for (const Value& v : trace_.inputs) layout(v, false);
  for (const auto& [proxy, tensor] : trace_.captured) layout(proxy, true);

  trace_.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  r.trace = std::move(trace_);
  r.guards = std::move(guards_);
  r.externals = std::move(externals_);
  r.identities = std::move(identities_);
  r.depends_on_strides = depends_on_strides_;
  r.depends_on_offset = depends_on_offset_;
  return r;
}

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

std::shared_ptr<const std::vector<TraceEntry>> Tracer::calls() {
  std::vector<TraceEntry> now = in_.traced_calls();
  auto same = [](const TraceEntry& a, const TraceEntry& b) {
    return a.function == b.function && a.loc.source == b.loc.source && a.loc.line == b.loc.line &&
           a.loc.col == b.loc.col;
  };
  if (!calls_ || !std::equal(now.begin(), now.end(), calls_->begin(), calls_->end(), same))
    calls_ = std::make_shared<const std::vector<TraceEntry>>(std::move(now));
  return calls_;
}

BoundSymbol& Tracer::record(Symbol sym, std::vector<Value> args, Value out, bool whole) {
  BoundSymbol b;
  b.sym = sym;
  b.args = std::move(args);
  b.out = std::move(out);
  if (const Frame* f = in_.current_frame(); f && f->loc) static_cast<Loc&>(b.loc) = *f->loc;
  b.loc.calls = calls();
  if (!whole) decompose(*this, b);
  trace_.body.push_back(std::move(b));
  return trace_.body.back();
}


namespace {
// A string naming a device ("cpu", "cuda", "cuda:0"): to()'s and device='s.
bool device_string(const Value& v) {
  if (!v.is(Type::Str) || v.is_proxy()) return false;
  const std::string& s = v.as_str();
  return s == "cpu" || s == "cuda" || s.starts_with("cuda:");
}
}  // namespace

Value Tracer::on_meta(const Value& v) {
  if (v.is_proxy()) return v.is(Type::Tensor) ? Value::tensor(tensor_proxy(v).meta) : v.without_proxy();
  if (v.is(Type::Device) || device_string(v)) return Value(kCPU);  // meta tensors are the host's
  if (v.is(Type::Tensor)) return Value::tensor(tensor_proxy(traced(v)).meta);
  return map_open(v, [this](const Value& x) { return on_meta(x); });
}

Value Tracer::link_output(const Value& v, std::vector<int>& path, bool update_root, Links& links) {
  if (!v.is_sequence()) return traced(v);
  if (v.is(Type::List) && !update_root) {
    if (auto a = links.arguments.find(v.object().get()); a != links.arguments.end()) {
      links.out.push_back({path, a->second, true});
      return Value();
    }
    auto [it, fresh] = links.seen.try_emplace(v.object().get(), path);
    if (!fresh) {
      links.out.push_back({path, it->second, false});
      return Value();
    }
  }
  std::vector<Value> items;
  for (size_t i = 0; i < v.items().size(); ++i) {
    path.push_back(int(i));
    items.push_back(link_output(v.items()[i], path, false, links));
    path.pop_back();
  }
  return v.like(std::move(items));
}

bool Tracer::same_tensor(const Value& a, const Value& b) {
  if (a.object() == b.object()) return true;
  // Proxies made by the trace are new objects, as eager's results are; an
  // input proxy stands for its argument, a captured one for its tensor, and
  // a tensor from outside is itself.
  struct Id {
    const Object* object;
    int leaf = -1;
    const Value* outside = nullptr;
  };
  auto id = [&](const Value& v) -> Id {
    if (!v.is_proxy()) return {v.object().get(), -1, &v};
    if (auto it = input_leaf_.find(v.object().get()); it != input_leaf_.end())
      return {leaf_objects_[size_t(it->second)], it->second};
    for (const auto& [proxy, tensor] : trace_.captured)
      if (proxy.object() == v.object()) return {tensor.object().get(), -1, &tensor};
    return {v.object().get()};
  };
  Id x = id(a), y = id(b);
  bool same = x.object == y.object;
  if (x.leaf < 0) std::swap(x, y);
  // Nothing to guard unless an argument is compared with an argument or a
  // tensor from outside (those are checked by identity already).
  if (x.leaf < 0 || (y.leaf < 0 && !y.outside)) return same;
  IdentityGuard g{x.leaf, y.leaf, y.leaf < 0 ? *y.outside : Value(), "", same};
  if (y.leaf < 0) {
    auto name = external_names_.find(y.object);
    g.name = name != external_names_.end() ? name->second : "a tensor from outside";
  }
  for (const IdentityGuard& h : identities_)
    if (h.a == g.a && h.b == g.b && h.object.object() == g.object.object()) return same;
  identities_.push_back(std::move(g));
  return same;
}

Value Tracer::traced(const Value& v) {
  if (v.is_proxy()) return v;
  if (v.is(Type::Tensor)) {
    // A tensor from outside the trace (a global, a closure variable): the
    // trace reads it where it is, the prologue checks the name still holds it.
    auto [it, fresh] = captured_.try_emplace(v.object().get());
    if (fresh) {
      auto name = external_names_.find(v.object().get());
      std::string n = name != external_names_.end() ? name->second : fmt::format("c{}", trace_.captured.size());
      it->second = new_tensor(meta_of(v.as_tensor()), v.as_tensor().device(), n);
      trace_.captured.emplace_back(it->second, v);
    }
    return it->second;
  }
  return map_open(v, [this](const Value& x) { return traced(x); });
}

template <class F> Value Tracer::map_open(const Value& v, F f) {
  if (!v.is_sequence()) return map_items(v, f);
  // A list that holds itself is no op's argument: to_ivalue reports it.
  if (std::find(open_.begin(), open_.end(), v.object().get()) != open_.end()) return v;
  open_.push_back(v.object().get());
  struct Close {
    std::vector<const Object*>& open;
    ~Close() { open.pop_back(); }
  } close{open_};
  return map_items(v, f);
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
// operands'), or a permutation, unsqueeze, squeeze or reshape of one. Then its strides are products of its sizes in a fixed
// order, and as sizes are symbolic only when at least 2, comparisons of its
// strides come out the same on every call. (A slice, select or expand can
// make a tensor contiguous for one size only: x[:, :2] when x has 2 columns.)
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

void Tracer::make_static_all(const Value& v) {
  if (v.is_proxy() && v.is_number()) v.as_int();  // concrete use: guarded by value
  else if (v.is_sequence()) for (const Value& x : v.items()) make_static_all(x);
  else if (v.is(Type::Slice)) {
    auto& s = v.obj<SliceObj>();
    for (const Value* x : {&s.start, &s.stop, &s.step}) make_static_all(*x);
  }
}

Value Tracer::wrap_result(const IValue& r, Device device) {
  if (r.is_tensor()) return new_tensor(r.to_tensor(), device);
  if (r.is_list()) {
    std::vector<Value> items;
    for (const IValue& x : r.to_list().items) items.push_back(wrap_result(x, device));
    return r.to_list().is_tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
  }
  return from_ivalue(r);
}

// ---- numbers ----

void Tracer::assume(const Value& predicate) {
  if (!in_.truth(predicate.without_proxy())) throw std::logic_error("Tracer::assume: the predicate is false");
  guards_.push_back({predicate, Value(true), true});
}

Value Tracer::record_number_op(NumberOp op, std::vector<Value> operands) {
  Value v = number_node(op, std::move(operands));
  record(Symbol::of(op), number_proxy(v).operands, v);
  return v;
}

Value Tracer::number_node(NumberOp op, std::vector<Value> operands) {
  std::vector<Value> plain;
  bool dynamic = false;
  for (const Value& v : operands) {
    plain.push_back(v.without_proxy());
    dynamic |= v.is_proxy() && number_proxy(v).depends_on_data();
  }
  // A number of tensor data has no value while tracing: the result is a
  // stand-in of Python's result type, which the run computes.
  Value result = dynamic ? placeholder(dynamic_result_type(op, operands)) : eval_number_op(in_, op, plain);
  auto n = std::make_shared<NumberProxy>();
  n->origin = NumberProxy::Origin::Op;
  n->type = result.type();
  n->value = result;
  n->constraint = dynamic ? Constraint::Dynamic : Constraint::Constrainable;
  n->op = op;
  n->operands = std::move(operands);
  n->id = int(numbers_.size());
  n->tracer = this;
  numbers_.push_back(n);
  return Value::proxy(result, n);
}

Type Tracer::dynamic_result_type(NumberOp op, const std::vector<Value>& operands) const {
  const Type a = operands[0].type(), b = operands.size() > 1 ? operands[1].type() : a;
  const bool floating = a == Type::Float || b == Type::Float;
  switch (op) {
    case NumberOp::truediv: case NumberOp::to_float: case NumberOp::math_sqrt: case NumberOp::math_exp:
    case NumberOp::math_log: case NumberOp::math_sin: case NumberOp::math_cos: case NumberOp::math_tanh:
      return Type::Float;
    case NumberOp::to_int: case NumberOp::round: case NumberOp::math_floor: case NumberOp::math_ceil: return Type::Int;
    case NumberOp::not_: case NumberOp::to_bool: return Type::Bool;
    case NumberOp::bitand_: case NumberOp::bitor_: case NumberOp::bitxor:
      return a == Type::Bool && b == Type::Bool ? Type::Bool : Type::Int;
    case NumberOp::pow: {
      // int ** int is a float for a negative exponent: a type of the value.
      if (floating) return Type::Float;
      const Value& e = operands[1];
      if (e.is_proxy() && number_proxy(e).depends_on_data())
        data_dependent("the type of int ** int depends on the sign of an exponent computed from tensor data");
      return e.without_proxy().as_int() < 0 ? Type::Float : Type::Int;
    }
    case NumberOp::min: case NumberOp::max:
      if (a != b) data_dependent("min/max of an int and a float has the type of the one a tensor's value picks");
      return a;
    case NumberOp::abs: case NumberOp::neg: case NumberOp::pos: case NumberOp::invert:
      return a == Type::Float ? Type::Float : Type::Int;
    default:
      if (is_comparison(op)) return Type::Bool;
      return floating ? Type::Float : Type::Int;  // + - * // % << >>
  }
}

Value Tracer::number_op(Interpreter&, NumberOp op, std::span<const Value> operands) {
  return record_number_op(op, std::vector<Value>(operands.begin(), operands.end()));
}

bool Tracer::truth(const Value& v) {
  if (v.is(Type::Tensor)) data_dependent("the truth value of a tensor is not known while tracing");
  auto& n = number_proxy(v);
  if (n.depends_on_data()) data_dependent("a branch depends on a number computed from tensor data");
  bool b = in_.truth(v.without_proxy());
  if (n.constraint != Constraint::Static) guards_.push_back({v, Value(b), true});
  return b;
}

Value Tracer::wrap_number(const Value& n) {
  Value out = new_tensor(wrap_scalar(to_ivalue(n.without_proxy()).to_scalar()), kCPU);
  tensor_proxy(out).meta.set_wrapped_number(true);
  record(Symbol::of(PrimId::wrap_number), {n}, out);
  return out;
}

void Tracer::print(Interpreter&, std::span<const Value> args, const std::string& sep, const std::string& end) {
  // The trace's print step prints on every run (and, when tracing fails
  // later, on the run of the steps before the failure).
  std::vector<Value> a;
  for (const Value& v : args) a.push_back(traced(v));
  a.push_back(Value::str(sep));
  a.push_back(Value::str(end));
  record(Symbol::of(PrimId::print), std::move(a), Value());
}

void Tracer::external_load(const std::string& name, const Value& slot) {
  for (const ExternalGuard& g : externals_)
    if (g.slot == &slot) return;
  ExternalGuard g{name, &slot, slot, {}};
  if (slot.is(Type::List)) g.items = slot.items();
  externals_.push_back(std::move(g));
  if (slot.is(Type::Tensor)) external_names_.try_emplace(slot.object().get(), name);
  if (slot.is_sequence())
    for (size_t i = 0; i < slot.items().size(); ++i)
      if (slot.items()[i].is(Type::Tensor))
        external_names_.try_emplace(slot.items()[i].object().get(), fmt::format("{}_{}", name, i));
}

// ---- tensors ----

namespace {

// Parameters whose numbers only flow into values (x * flag, clamp(min=lo)):
// they may stay symbolic. Every other number (a dim, a size, a count, a
// creation argument) shapes the result, and a static-shape trace needs it exact.
bool is_value_param(const OpDef& op, const Param& p) {
  if (op.family == OpFamily::Creation || op.family == OpFamily::Random) return p.name == "fill_value";
  return p.type == ParamType::Operand || p.type == ParamType::Scalar || p.type == ParamType::Float ||
         p.type == ParamType::Tensor || p.type == ParamType::TensorList;
}

}  // namespace

bool data_dependent_shape(const OpDef& op) { return op.id == OpId::nonzero || op.id == OpId::masked_select; }

Value Tracer::item(const Value& self) {
  const TensorProxy& p = tensor_proxy(self);
  if (p.meta.numel() != 1) fail(ErrorKind::ValueError, "only one element tensors can be converted to Python scalars");
  // No value while tracing (the number is Dynamic: no code may read it).
  Value value = placeholder(p.dtype() == DType::Bool ? Type::Bool : is_floating(p.dtype()) ? Type::Float : Type::Int);
  auto n = std::make_shared<NumberProxy>();
  n->origin = NumberProxy::Origin::Item;
  n->type = value.type();
  n->value = value;
  n->constraint = Constraint::Dynamic;
  n->set_tensor(self);
  n->id = int(numbers_.size());
  n->tracer = this;
  numbers_.push_back(n);
  Value v = Value::proxy(value, n);
  record(Symbol::of(PrimId::item), {self}, v);
  return v;
}

Value Tracer::attribute(const OpDef& op, const Value& self, std::span<const Value> args, const CallArgs& kw) {
  auto& p = tensor_proxy(self);
  std::string_view name = op.name;
  if (name == "shape") return Value::size(p.sizes);
  if (name == "stride") depends_on_strides_ = true;
  if (name == "storage_offset") depends_on_offset_ = true;
  if (name == "dtype") return Value(p.dtype());
  if (name == "device") return Value(p.device());
  if (name == "is_cuda") return Value(p.device().type == DeviceType::CUDA);
  if (name == "ndim" || name == "dim") return Value(int64_t(p.sizes.size()));
  if (name == "size") {
    Value dim = !args.empty() ? args[0] : kw.kwargs.empty() ? Value() : kw.kwargs[0].second;
    if (dim.is_none()) return Value::size(p.sizes);
    if (!dim.is_int_like()) fail(ErrorKind::TypeError, "size(): argument 'dim' must be int, not {}", type_name(dim));
    return p.sizes[size_t(wrap_dim(dim.as_int(), int64_t(p.sizes.size())))];
  }
  if (name == "numel") {
    Value n(int64_t(1));
    for (const Value& s : p.sizes) n = s.is_proxy() || n.is_proxy() ? record_number_op(NumberOp::mul, {n, s}) : Value(n.raw_int() * s.raw_int());
    return n;
  }
  if (name == "item") return item(self);
  if (name == "tolist") data_dependent("tolist() needs the data of a tensor");
  std::vector<IValue> pos;
  for (const Value& a : args) pos.push_back(meta_ivalue(a));
  Kwargs kws;
  for (const auto& [k, v] : kw.kwargs) kws.emplace_back(k, meta_ivalue(v));
  if (name == "result_type") {  // a function (of dtypes and ranks alone: no layout)
    pos.insert(pos.begin(), IValue(p.meta));
    return from_ivalue(call_op(op, std::nullopt, pos, kws));
  }
  // stride(), is_contiguous(), storage_offset(): facts of this call's layout.
  // (is_contiguous() of an input, whose contiguity the prologue checks, or of
  // a layout that is the same on every call the trace serves, is a fact of
  // every call.)
  auto is_input = [&] { return input_leaf_.count(self.object().get()) > 0; };
  if (name != "is_contiguous" || !(is_input() || structural_layout(self))) static_layout(p);
  return present_result(op.name, from_ivalue(call_op(op, IValue(p.meta), pos, kws)));
}

namespace {

// Where an op's tensor result lives: the device it names (creation, `to`),
// else the device of its tensor operands (CUDA if any is: a CPU operand
// beside one is a wrapped number).
Device result_device(const OpDef& op, std::span<const Value> args) {
  // x.to(other): other's device.
  if (op.id == OpId::to && args.size() > 1 && args[1].is_proxy() && args[1].is(Type::Tensor))
    return tensor_proxy(args[1]).device();
  std::optional<Device> named;
  bool cuda = false;
  std::function<void(const Value&)> visit = [&](const Value& v) {
    if (v.is(Type::Device)) named = v.as_device();
    else if (device_string(v)) named = parse_device(v.as_str());
    else if (v.is_proxy() && v.is(Type::Tensor)) cuda |= tensor_proxy(v).device().type == DeviceType::CUDA;
    else if (v.is_sequence()) for (const Value& x : v.items()) visit(x);
  };
  for (const Value& a : args) visit(a);
  return named ? *named : cuda ? Device{DeviceType::CUDA} : kCPU;
}

// PyTorch's one-device check (runtime/op_registry.cpp) on the proxies'
// devices: their meta tensors are all the host's.
void check_one_device(std::span<const Value> args) {
  std::optional<Device> first;
  std::function<void(const Value&)> visit = [&](const Value& v) {
    if (v.is_sequence()) {
      for (const Value& x : v.items()) visit(x);
      return;
    }
    if (!is_tensor_proxy(v)) return;
    const TensorProxy& p = tensor_proxy(v);
    if (p.device().type == DeviceType::CPU && joins_any_device(p.meta, true)) return;
    if (!first) first = p.device();
    else if (*first != p.device()) fail_two_devices(*first, p.device());
  };
  for (const Value& a : args) visit(a);
}

}  // namespace

Value Tracer::call(const OpDef& op, const Value* self, std::span<const Value> args, const CallArgs& kw, bool inplace) {
  // Introspection (x.shape, x.item(), ...); T and mT are views, recorded below.
  if (op.family == OpFamily::Attribute && op.schema.returns != "Tensor") {
    const Value* t = self ? self : args.empty() ? nullptr : &args[0];
    if (t && t->is(Type::Tensor)) return attribute(op, traced(*t), self ? args : args.subspan(1), kw);
  }
  if (data_dependent_shape(op)) data_dependent(fmt::format("{}() has a shape that depends on tensor data", op.name));

  // Bind on the meta tensors: PyTorch's argument errors, and each parameter's source.
  std::vector<IValue> pos;
  pos.reserve(args.size());
  for (const Value& a : args) pos.push_back(meta_ivalue(a));
  Kwargs kws;
  for (const auto& [k, v] : kw.kwargs) kws.emplace_back(k, meta_ivalue(v));
  std::optional<IValue> s;
  if (self) s = meta_ivalue(*self);
  std::vector<ArgSource> sources;
  Args bound = bind_args(op, s, pos, kws, inplace, &sources);
  if (where_alone(op, bound)) data_dependent("where(condition) has a shape that depends on tensor data");

  const Schema& schema = op.schema;
  std::vector<Value> targs(schema.params.size());
  for (size_t i = 0; i < schema.params.size(); ++i) {
    const ArgSource& src = sources[i];
    switch (src.kind) {
      case ArgSource::Default:
        // The default (a creation op's device may be `thn run --device`'s),
        // on the host like a given device (the meta tensors are the host's).
        targs[i] = from_ivalue(bound[i]);
        if (bound[i].is_device() && bound[i].to_device() != kCPU) {
          std::vector<IValue> values;
          for (size_t k = 0; k < bound.size(); ++k) values.push_back(k == i ? IValue(kCPU) : bound[k]);
          bound = Args(bound.schema(), std::move(values), bound.inplace());
        }
        break;
      case ArgSource::Self: targs[i] = traced(*self); break;
      case ArgSource::Keyword: targs[i] = traced(kw.kwargs[src.index].second); break;
      case ArgSource::Positional:
        if (schema.params[i].varargs && args[src.index].is_int_like()) {
          std::vector<Value> items;
          for (uint32_t k = 0; k < src.count; ++k) items.push_back(traced(args[src.index + k]));
          targs[i] = Value::tuple(std::move(items));
        } else {
          targs[i] = traced(args[src.index]);
        }
        break;
    }
  }

  // A number taken from a tensor has no value while tracing: a parameter
  // that shapes the result (arange's end) cannot take one; one that only
  // scales values (alpha, a fill value, a clamp bound) takes its item(). An
  // op with such a number runs whole (eager's kernel, with eager's checks of
  // the value: "value cannot be converted ... without overflow").
  bool dynamic = false;
  for (size_t i = 0; i < targs.size(); ++i) {
    const Param& p = schema.params[i];
    if (p.type == ParamType::Scalar && is_tensor_proxy(targs[i])) {
      if (!is_value_param(op, p))
        data_dependent(fmt::format("{}() takes '{}' from the value of a tensor", op.name, p.name));
      targs[i] = item(targs[i]);
    }
    std::vector<Value> ps;
    collect_proxies(targs[i], ps);
    for (const Value& n : ps) dynamic |= n.is_number() && number_proxy(n).depends_on_data();
    // fill_'s and masked_fill's value, a 0-dim tensor of another dtype, is
    // checked by its value to fit the receiver's dtype.
    if ((op.id == OpId::fill_ || op.id == OpId::masked_fill) && p.name == "value" && is_tensor_proxy(targs[i]) &&
        !tensor_proxy(targs[i]).meta.is_wrapped_number() &&
        tensor_proxy(targs[i]).dtype() != tensor_proxy(targs[0]).dtype())
      dynamic = true;
  }
  if (checks_one_device(op)) check_one_device(targs);
  // Whether a reshape of a non-contiguous tensor is a view or a copy depends
  // on its strides, which the prologue then checks; under symbolic shapes,
  // for a layout that is the same on every call, on sizes (guarded below).
  const bool reshape = op.id == OpId::reshape || op.id == OpId::flatten || op.id == OpId::unflatten ||
                       op.id == OpId::view;
  bool structural_reshape = false;
  if (reshape && views_non_contiguous(tensor_proxy(targs[0]).meta)) {
    structural_reshape = opts_.symbolic_shapes && structural_layout(targs[0]);
    if (!structural_reshape) {
      depends_on_strides_ = true;
      static_layout(tensor_proxy(targs[0]));
    }
  }
  const Device device = result_device(op, targs);
  IValue result = [&] {  // on the meta tensors: eager shapes, dtypes and errors (the device's)
    KernelDeviceScope scope(device);
    MetaScope meta;
    return op.impl(bound);
  }();
  // x.float() of a float32 x is x (the prologue guards the dtype); the
  // meta tensors are all the host's, so x.to("cpu") of a CUDA x is not.
  if (!inplace && result.is_tensor() && is_tensor_proxy(targs[0]) &&
      tensor_proxy(targs[0]).device() == device &&
      returns_input(op, tensor_proxy(targs[0]).meta, result.to_tensor()))
    return self ? *self : args[0];
  Value out = inplace ? targs[size_t(schema.self_index)] : wrap_result(result, device);
  // Under shapes="symbolic" a shape rule gives the outputs symbolic sizes;
  // an op without one (or whose rule disagrees with the eager result) makes
  // the sizes of its inputs static instead.
  bool symbolic = opts_.symbolic_shapes && apply_shape_rule(*this, op, targs, out, inplace);
  if (structural_reshape) {
    const TensorProxy& in = tensor_proxy(targs[0]);
    const bool view = result.to_tensor().storage() == in.meta.storage();
    if (!symbolic || in.meta.numel() == 0 ||
        reshape_is_view(*this, in.sizes, in.meta.strides(), tensor_proxy(out).sizes) != view) {
      depends_on_strides_ = true;  // (the guards above are then true but not needed)
      static_layout(in);  // (out too, where it views in)
    }
  }
  for (size_t i = 0; i < targs.size(); ++i)
    if (!is_value_param(op, schema.params[i]) && !(symbolic && consumes_symbolic(op, schema.params[i])))
      make_static_all(targs[i]);
  if (opts_.symbolic_shapes && !symbolic)
    for (const Value& a : targs) {
      std::vector<Value> ps;
      collect_proxies(a, ps);
      for (const Value& t : ps)
        if (t.is(Type::Tensor)) make_static_all(Value::tuple(tensor_proxy(t).sizes));
    }
  // A write whose result depends on eager's loop order runs as eager's op.
  bool ordered = (inplace || op.name.ends_with('_')) && loop_order_write(tensor_proxy(targs[size_t(schema.self_index)]).meta, targs);
  if (inplace) {
    record(Symbol::of(op, true), std::move(targs), Value(), /*whole=*/ordered || dynamic);
    return self ? *self : args[0];
  }
  record(Symbol::of(op, false), std::move(targs), out, /*whole=*/ordered || dynamic);
  // copy_, fill_, zero_ return their receiver, as in eager.
  if (op.name.ends_with('_') && self) return *self;
  return present_result(op.name, out);
}

namespace {
bool is_mask(const Value& v) {
  return v.is(Type::Tensor) && v.is_proxy() && tensor_proxy(v).dtype() == DType::Bool;
}
// A 0-dim integer tensor as an index: PyTorch selects by its value (a view
// whose offset is the value), which the metadata cannot tell.
bool has_tensor_bound(const Value& v) {
  if (!v.is(Type::Slice)) return false;
  const auto& s = v.obj<SliceObj>();
  return s.start.is(Type::Tensor) || s.stop.is(Type::Tensor) || s.step.is(Type::Tensor);
}
bool is_number_index(const Value& v) {
  return is_tensor_proxy(v) && tensor_proxy(v).sizes.empty() && is_integral(tensor_proxy(v).dtype(), false);
}
}  // namespace

// Under shapes="symbolic", the sizes of t[idx] (basic_index_rule); for
// another index, or without symbolic shapes, nullopt, with t's sizes made
// static.
std::optional<std::vector<Value>> Tracer::symbolic_index_sizes(const Value& t, const std::vector<Value>& idx) {
  if (!opts_.symbolic_shapes) return std::nullopt;
  const std::vector<Value>& sizes = tensor_proxy(t).sizes;
  auto out = basic_index_rule(*this, sizes, idx);
  if (!out) out = tensor_index_sizes(sizes, idx);
  if (!out) {
    // Sizes of the indexed tensor and of the index tensors, all exact.
    make_static_all(Value::tuple(sizes));
    for (const Value& v : idx)
      if (is_tensor_proxy(v)) make_static_all(Value::tuple(tensor_proxy(v).sizes));
  }
  return out;
}

// x[idx], x[:, idx], x[..., idx] with one integer tensor idx and full
// slices elsewhere: the dim it indexes is replaced by idx's sizes.
std::optional<std::vector<Value>> Tracer::tensor_index_sizes(const std::vector<Value>& sizes,
                                                             const std::vector<Value>& idx) const {
  auto full = [](const Value& v) {
    if (!v.is(Type::Slice)) return false;
    const auto& s = v.obj<SliceObj>();
    return s.start.is_none() && s.stop.is_none() && s.step.is_none();
  };
  std::optional<size_t> at;
  for (size_t k = 0; k < idx.size(); ++k) {
    if (full(idx[k])) continue;
    if (at || !is_tensor_proxy(idx[k]) || !is_integral(tensor_proxy(idx[k]).dtype(), false)) return std::nullopt;
    at = k;
  }
  if (!at || idx.size() > sizes.size()) return std::nullopt;
  std::vector<Value> out(sizes.begin(), sizes.begin() + long(*at));
  const std::vector<Value>& is = tensor_proxy(idx[*at]).sizes;
  out.insert(out.end(), is.begin(), is.end());
  out.insert(out.end(), sizes.begin() + long(*at) + 1, sizes.end());
  return out;
}

Value Tracer::getitem(const Value& tensor, std::span<const Value> index) {
  std::vector<Value> idx;
  for (const Value& v : index) {
    if (is_mask(v)) data_dependent("indexing with a boolean mask gives a shape that depends on tensor data");
    idx.push_back(traced(v));
    if (is_number_index(idx.back())) data_dependent("indexing with a 0-dim tensor selects by its value");
    if (has_tensor_bound(idx.back())) data_dependent("a slice bound is the value of a tensor");
    make_static_all(idx.back());
  }
  Value t = traced(tensor);
  std::vector<Value> sidx;
  for (const Value& v : idx) sidx.push_back(on_meta(v));
  Value r = [&] {  // (first: its errors come before the rule's guards)
    MetaScope meta;
    return eager_.getitem(on_meta(t), sidx);
  }();
  Value out = new_tensor(r.as_tensor(), tensor_proxy(t).device());
  if (auto sizes = symbolic_index_sizes(t, idx)) {
    const Dims& real = r.as_tensor().sizes();
    bool same = sizes->size() == real.size();
    for (size_t d = 0; same && d < real.size(); ++d) same = (*sizes)[d].raw_int() == real[d];
    if (!same) throw std::logic_error("basic_index_rule: sizes that differ from eager's");
    tensor_proxy(out).sizes = std::move(*sizes);
  }
  std::vector<Value> args{t};
  args.insert(args.end(), idx.begin(), idx.end());
  record(Symbol::of(PrimId::getitem), std::move(args), out);
  return out;
}

void Tracer::setitem(const Value& tensor, std::span<const Value> index, const Value& value) {
  std::vector<Value> idx;
  for (const Value& v : index) {
    if (is_mask(v)) data_dependent("assigning through a boolean mask depends on tensor data");
    idx.push_back(traced(v));
    if (is_number_index(idx.back())) data_dependent("indexing with a 0-dim tensor selects by its value");
    if (has_tensor_bound(idx.back())) data_dependent("a slice bound is the value of a tensor");
    make_static_all(idx.back());
  }
  Value t = traced(tensor), val = traced(value);
  std::vector<Value> sidx;
  for (const Value& v : idx) sidx.push_back(on_meta(v));
  bool ordered = loop_order_write(tensor_proxy(t).meta, std::span<const Value>(&val, 1));
  {
    MetaScope meta;
    eager_.setitem(on_meta(t), sidx, on_meta(val));
  }
  std::optional<std::vector<Value>> view = symbolic_index_sizes(t, idx);
  if (view && is_tensor_proxy(val)) {
    // The value broadcasts to the view: each of its sizes other than 1 is
    // guarded equal to the view's (else a later call would fail in the
    // trace's expand, not with eager's error).
    const std::vector<Value>& vs = tensor_proxy(val).sizes;
    for (size_t k = 1; k <= std::min(vs.size(), view->size()); ++k) {
      const Value &a = vs[vs.size() - k], &b = (*view)[view->size() - k];
      const bool one = !a.is_proxy() && a.raw_int() == 1;
      if ((a.is_proxy() || b.is_proxy()) && !one && !(a.is_proxy() && b.is_proxy() && &b.symbolic() == &a.symbolic()))
        assume(number_node(NumberOp::eq, {b, a}));
    }
  }
  std::vector<Value> args{t};
  args.insert(args.end(), idx.begin(), idx.end());
  args.push_back(val);
  BoundSymbol& b = record(Symbol::of(PrimId::setitem_), std::move(args), Value());
  if (ordered) b.subsymbols.clear();
}

}  // namespace thn
