#include "ir/tracer.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <unordered_set>

#include "ir/decompose.h"
#include "ir/executor.h"
#include "interp/objects.h"
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

// Whether a list item is still the one it was: Python's `is` (a number,
// bool or None by value, a proxy by its symbol).
bool same_item(const Value& a, const Value& b) {
  if (a.type() != b.type() || a.is_proxy() != b.is_proxy()) return false;
  if (a.is_proxy()) return &a.symbolic() == &b.symbolic();
  if (a.object() || b.object()) return a.object() == b.object();
  return to_repr(a) == to_repr(b);
}

}  // namespace

struct Tracer::Links {
  std::vector<TraceResult::OutputLink>& out;
  std::unordered_map<const Object*, int> arguments;  // the traced argument lists' leaves
  std::function<std::vector<int>(int)> path_of;      // a leaf's path in the arguments
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
    t->autograd.reset();  // (a step holds its result's proxy: a cycle)
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
  guards_.push_back({Value::proxy(p.value, numbers_[size_t(p.id)]), p.value, false, here()});
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
  if (arg.is(Type::Dict) || arg.is(Type::Instance)) {
    // A dict or an object: the traced code sees a copy holding the leaves'
    // values (an object's copy has the same class). One met again (passed
    // twice, held by two attributes, or holding itself) is the same copy.
    if (auto seen = mapping_index_.find(arg.object().get()); seen != mapping_index_.end()) {
      leaf.kind = InputLeaf::Same;
      leaf.same = seen->second.first;
      leaves.push_back(leaf);
      return seen->second.second;
    }
    leaf.kind = InputLeaf::Mapping;
    const bool object = arg.is(Type::Instance);
    if (object) leaf.contents = guarded_contents(Value(Type::Class, arg.obj<InstanceObj>().cls));
    leaves.push_back(leaf);
    std::vector<std::pair<Value, Value>> entries;
    (object ? arg.obj<InstanceObj>().dict : arg).obj<DictObj>().each(
        [&](const Value& k, const Value& v) { entries.emplace_back(k, v); });
    Value copy = make_dict();
    Value traced = copy;
    if (object) {
      auto inst = std::make_shared<InstanceObj>(arg.obj<InstanceObj>().cls);
      inst->dict = copy;
      traced = Value(Type::Instance, inst);
    }
    mapping_index_.emplace(arg.object().get(), std::make_pair(self, traced));
    for (size_t i = 0; i < entries.size(); ++i) {
      const Value& k = entries[i].first;
      bool word = k.is(Type::Str) && !k.as_str().empty() && k.as_str().size() < 32 &&
                  std::all_of(k.as_str().begin(), k.as_str().end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
      std::string item = name.size() >= 64 ? fmt::format("{}_leaf{}", root_name_, leaves.size())
                         : word ? fmt::format("{}_{}", name, k.as_str()) : fmt::format("{}_{}", name, i);
      entries[i].second = flatten(entries[i].second, self, int(i), item, leaves);
      copy.obj<DictObj>().set(k, entries[i].second);
    }
    mappings_.push_back({self, traced, std::move(entries)});
    return traced;
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
    // An item's name extends its list's (p_0_1); deep in nested lists, where
    // those names would grow with the depth (and every pass over the leaves
    // with their square), it is the parameter's and the leaf's number.
    for (size_t i = 0; i < arg.items().size(); ++i) {
      std::string item = name.size() < 64 ? fmt::format("{}_{}", name, i) : fmt::format("{}_leaf{}", root_name_, leaves.size());
      items.push_back(flatten(arg.items()[i], self, int(i), item, leaves));
    }
    if (!arg.is(Type::List)) return arg.like(std::move(items));
    ListArgument& l = lists_[list_index_.at(arg.object().get())];
    l.list.items() = items;
    l.items = std::move(items);
    return l.list;
  }
  leaf.kind = arg.is_number() ? InputLeaf::Number : InputLeaf::Constant;
  leaf.contents = guarded_contents(arg);
  leaves.push_back(leaf);
  return arg;
}

TraceResult Tracer::trace(const Value& fn, const std::vector<Value>& params, const std::vector<std::string>& names) {
  auto start = std::chrono::steady_clock::now();
  TraceResult r;
  const size_t own = params.size() - (grad_args_.empty() ? 0 : 1);  // fn's parameters
  Value grads;  // the hidden argument's list of .grad, as the trace sees it
  std::vector<Value> traced_params;
  for (size_t i = 0; i < params.size(); ++i) {
    root_name_ = names[i];
    Value v = flatten(params[i], -1, int(i), names[i], r.leaves);
    if (i < own) traced_params.push_back(std::move(v));
    else grads = v.items()[1];
  }
  CallArgs args = Interpreter::call_args_of(fn, std::move(traced_params));

  // The tensors that require grad: autograd leaves, with their .grad (one
  // record shared by the proxies of a tensor met twice: a model's
  // parameter and the same tensor in its optimizer).
  std::vector<std::shared_ptr<AutogradMeta>> grad_metas;
  for (size_t k = 0; k < grad_args_.size(); ++k) {
    auto m = std::make_shared<AutogradMeta>();
    m->requires_grad = requires_grad(grad_args_[k]);
    m->carried = true;
    m->grad = grads.items()[k];
    for (const InputLeaf& l : r.leaves)
      if (l.kind == InputLeaf::Tensor && l.value.object() == grad_args_[k].object())
        const_cast<Symbolic&>(l.proxy.symbolic()).autograd = m;
    grad_metas.push_back(m);
  }
  Value out;
  std::exception_ptr failed;
  {
    // Tracing must leave the generator where it was.
    PhiloxState rng = philox_get_state();
    // The ops reach the tracer through autograd (grad(f) inside the
    // function records its steps on the proxies, and traces their rules).
    struct Restore {
      Interpreter& in;
      OpDispatch* prev;
      OpDispatch* prev_inner;
      PhiloxState rng;
      ~Restore() {
        in.set_dispatch(prev);
        in.autograd().set_inner(prev_inner);
        philox_set_state(rng);
      }
    } restore{in_, in_.set_dispatch(&in_.autograd()), in_.autograd().set_inner(this), rng};
    try {
      out = in_.call(fn, args);
    } catch (const TraceInTry&) {
      throw;  // (nothing of the trace runs: jit runs the function in the interpreter)
    } catch (...) {
      failed = std::current_exception();
    }
  }
  for (size_t k = 0; k < grad_metas.size(); ++k) grads.items()[k] = grad_metas[k]->grad;
  if (failed) {
    // Eager would have run the ops before the failure: their prints, their
    // writes and their errors of data (the first of which is then the error).
    std::vector<Value> inputs;
    for (const InputLeaf& l : r.leaves)
      if (!l.proxy.is_none()) inputs.push_back(l.value);
    // (and the .grad a backward() before the failure left: the trace's output
    // for this run, into jit's hidden list)
    std::vector<Value> left;
    for (const auto& m : grad_metas) left.push_back(m->grad);
    if (!left.empty()) trace_.output = Value::tuple(left);
    const Value got = TraceExecutor(trace_).run(in_, inputs);
    if (!left.empty() && got.is_sequence())
      for (const ListArgument& l : lists_)
        if (l.list.object() == grads.object()) r.leaves[size_t(l.leaf)].value.items() = got.items();
    write_back_before_failure(r.leaves);
    std::rethrow_exception(failed);
  }
  // (after the call: a grad(f) inside may be the first tensor to require grad)
  r.grad_recording = grad_recording(in_);
  // A result that still carries a graph (f(x) with x requiring grad, and no
  // backward() inside): the caller could differentiate it eagerly, but a
  // trace's outputs are plain tensors, so its gradient would be lost.
  {
    std::vector<const Object*> open;
    std::function<void(const Value&)> refuse_graph = [&](const Value& v) {
      if (v.is(Type::Tensor)) {
        if (const AutogradMeta* m = autograd_of(v); m && m->graph_unused())
          fail(ErrorKind::NotImplementedError,
               "jit does not return tensors that carry gradients yet: the result requires grad (call backward() "
               "inside the jit function, take gradients there with grad(f), or call it under no_grad())");
        return;
      }
      if (!v.is_sequence() && !v.is(Type::Dict)) return;
      if (std::find(open.begin(), open.end(), v.object().get()) != open.end()) return;
      open.push_back(v.object().get());
      if (v.is_sequence())
        for (const Value& x : v.items()) refuse_graph(x);
      else
        v.obj<DictObj>().each([&](const Value&, const Value& x) { refuse_graph(x); });
      open.pop_back();
    };
    refuse_graph(out);
  }
  // A list argument the code changed: its new items become outputs.
  auto argument_path = [&r](int leaf) {
    std::vector<int> path;
    for (int k = leaf; k >= 0; k = r.leaves[size_t(k)].parent) path.push_back(r.leaves[size_t(k)].index);
    std::reverse(path.begin(), path.end());
    return path;
  };
  std::vector<Value> changed;  // the changed lists, and the changed dicts' and objects' encoded entries
  // An int or float leaf at `index` of container leaf `parent` that now holds another number.
  auto note_changed = [&r](int parent, size_t index, const Value& before, const Value& now) {
    auto number = [](const Value& v) { return v.is(Type::Int) || v.is(Type::Float); };
    if (before.is_proxy() || !number(before) || !number(now) || (!now.is_proxy() && same_item(now, before))) return;
    for (const InputLeaf& l : r.leaves)
      if (l.parent == parent && size_t(l.index) == index && l.kind == InputLeaf::Number) r.changed_numbers.push_back(l.name);
  };
  for (const ListArgument& l : lists_) {
    const std::vector<Value>& now = l.list.items();
    bool same = now.size() == l.items.size();
    for (size_t i = 0; i < now.size() && i < l.items.size(); ++i) note_changed(l.leaf, i, l.items[i], now[i]);
    for (size_t i = 0; same && i < now.size(); ++i) same = same_item(now[i], l.items[i]);
    if (same) continue;
    r.list_updates.push_back(argument_path(l.leaf));
    changed.push_back(l.list);
  }
  for (const MappingArgument& m : mappings_) {
    const DictObj& now = (m.traced.is(Type::Instance) ? m.traced.obj<InstanceObj>().dict : m.traced).obj<DictObj>();
    bool same = now.count == m.entries.size();
    size_t i = 0;
    now.each([&](const Value& k, const Value& v) {
      const bool key = i < m.entries.size() && key_equals(k, m.entries[i].first);
      if (key) note_changed(m.leaf, i, m.entries[i].second, v);
      same = same && key && same_item(v, m.entries[i].second);
      ++i;
    });
    if (same) continue;
    r.list_updates.push_back(argument_path(m.leaf));
    changed.push_back(encode_shallow(m.traced));
  }
  Links links{r.output_links, {}, argument_path, {}};
  for (const ListArgument& l : lists_) links.arguments.emplace(l.list.object().get(), l.leaf);
  for (const MappingArgument& m : mappings_) links.arguments.emplace(m.traced.object().get(), m.leaf);
  std::vector<int> path;
  if (changed.empty()) {
    trace_.output = link_output(out, path, false, links);
  } else {
    std::vector<Value> outputs;
    path.push_back(0);
    outputs.push_back(link_output(out, path, false, links));
    for (const Value& c : changed) {
      path.back() = int(outputs.size());
      outputs.push_back(link_output(c, path, true, links));
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

// The function raised while tracing: the dicts, objects and lists it
// changed before that keep their changes, as eager's would, where the new
// values are known without running the trace: numbers (a number proxy holds
// this call's value), and arguments' own tensors and containers. One that
// took a tensor computed by the trace keeps its old contents.
void Tracer::write_back_before_failure(const std::vector<InputLeaf>& leaves) {
  std::unordered_map<const Object*, Value> originals;  // a traced copy or input proxy -> the argument
  for (const InputLeaf& l : leaves)
    if (l.proxy.is_proxy() && l.proxy.is(Type::Tensor)) originals.emplace(l.proxy.object().get(), l.value);
  for (const MappingArgument& m : mappings_) originals.emplace(m.traced.object().get(), leaves[size_t(m.leaf)].value);
  for (const ListArgument& l : lists_) originals.emplace(l.list.object().get(), leaves[size_t(l.leaf)].value);
  auto concrete = [&](const Value& v, bool& known) -> Value {
    if (v.is_proxy() && !v.is(Type::Tensor)) return v.without_proxy();
    if (!v.object()) return v;
    if (auto it = originals.find(v.object().get()); it != originals.end()) return it->second;
    if (v.is_proxy()) known = false;
    return v;
  };
  for (const MappingArgument& m : mappings_) {
    const DictObj& now = (m.traced.is(Type::Instance) ? m.traced.obj<InstanceObj>().dict : m.traced).obj<DictObj>();
    bool known = true;
    std::vector<std::pair<Value, Value>> entries;
    now.each([&](const Value& k, const Value& v) { entries.emplace_back(k, concrete(v, known)); });
    if (!known) continue;
    const Value& original = leaves[size_t(m.leaf)].value;
    DictObj& target = (original.is(Type::Instance) ? original.obj<InstanceObj>().dict : original).obj<DictObj>();
    target.clear();
    for (auto& [k, v] : entries) target.set(k, v);
  }
  for (const ListArgument& l : lists_) {
    bool known = true;
    std::vector<Value> items;
    for (const Value& v : l.list.items()) items.push_back(concrete(v, known));
    if (known) leaves[size_t(l.leaf)].value.items() = std::move(items);
  }
}

std::shared_ptr<const std::vector<TraceEntry>> Tracer::calls() {
  // Mostly the last op's calls: compared frame by frame before a new list is made.
  auto same = [](const Frame& f, const TraceEntry& e) {
    const Loc loc = f.loc ? *f.loc : Loc{};
    return e.function == f.name && e.loc.source == loc.source && e.loc.line == loc.line && e.loc.col == loc.col;
  };
  if (calls_) {
    size_t k = 0;
    const Frame* f = in_.current_frame();
    for (; f && f->in_trace && k < calls_->size() && same(*f, (*calls_)[k]); f = f->caller) ++k;
    if (k == calls_->size() && !(f && f->in_trace)) return calls_;
  }
  calls_ = std::make_shared<const std::vector<TraceEntry>>(in_.traced_calls());
  return calls_;
}

Loc Tracer::here() const {
  const Frame* f = in_.current_frame();
  return f && f->loc ? *f->loc : Loc{};
}

BoundSymbol& Tracer::record(Symbol sym, std::vector<Value> args, Value out, bool whole) {
  if (const ast::Try* t = in_.try_in_trace())
    throw TraceInTry{fmt::format("{}:{}", t->loc.source ? t->loc.source->path : "?", t->loc.line)};
  BoundSymbol b;
  b.sym = sym;
  b.args = std::move(args);
  b.out = std::move(out);
  static_cast<Loc&>(b.loc) = here();
  b.loc.calls = calls();
  if (!whole) decompose(*this, b);
  trace_.body.push_back(std::move(b));
  return trace_.body.back();
}

// A tensor proxy of a trace that has ended, kept by the program (appended
// to a global list while tracing): refused, as any use of it outside is.
static void refuse_dead_proxy(const Value& v) {
  if (v.is(Type::Tensor) && !tensor_proxy(v).tracer) tensor_proxy(v).concrete_use();
}

Value Tracer::on_meta(const Value& v) {
  if (v.is_proxy()) {
    refuse_dead_proxy(v);
    return v.is(Type::Tensor) ? Value::tensor(tensor_proxy(v).meta) : v.without_proxy();
  }
  if (v.is(Type::Device) || is_device_string(v)) return Value(kCPU);  // meta tensors are the host's
  if (v.is(Type::Tensor)) return Value::tensor(tensor_proxy(traced(v)).meta);
  return map_open(v, [this](const Value& x) { return on_meta(x); });
}

Value Tracer::link_output(const Value& v, std::vector<int>& path, bool update_root, Links& links) {
  if (v.is(Type::Dict) || v.is(Type::Instance)) {
    // An argument's dict or object comes back as itself; another is encoded
    // (a marked tuple of its entries, decoded after the run).
    if (auto a = links.arguments.find(v.object().get()); a != links.arguments.end()) {
      links.out.push_back({path, links.path_of(a->second), true});
      return Value();
    }
    return link_output(encode_shallow(v), path, false, links);
  }
  if (!v.is_sequence()) return traced(v);
  if (v.is(Type::List) && !update_root) {
    if (auto a = links.arguments.find(v.object().get()); a != links.arguments.end()) {
      links.out.push_back({path, links.path_of(a->second), true});
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
  if (v.is_proxy()) {
    refuse_dead_proxy(v);
    return v;
  }
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

namespace {

// A printed value whose dicts and objects hold tensors, with those encoded
// (encode_shallow: tuples, whose tensors the run substitutes) for the run
// to decode and print.
Value printable(const Value& v, std::vector<const Object*>& open) {
  const bool mapping = v.is(Type::Dict) || v.is(Type::Instance);
  if ((!mapping && !v.is_sequence()) || v.is_proxy()) return v;
  if (std::find(open.begin(), open.end(), v.object().get()) != open.end()) return v;
  open.push_back(v.object().get());
  Value out = mapping ? encode_shallow(v) : v;
  out = map_items(out, [&](const Value& x) { return printable(x, open); });
  open.pop_back();
  return out;
}

}  // namespace

void Tracer::print(Interpreter&, std::span<const Value> args, const std::string& sep, const std::string& end) {
  // The trace's print step prints on every run (and, when tracing fails
  // later, on the run of the steps before the failure).
  std::vector<Value> a;
  std::vector<const Object*> open;
  for (const Value& v : args) a.push_back(traced(printable(v, open)));
  a.push_back(Value::str(sep));
  a.push_back(Value::str(end));
  record(Symbol::of(PrimId::print), std::move(a), Value());
}

void Tracer::external_load(const std::string& name, const Value& slot) {
  for (const ExternalGuard& g : externals_)
    if (g.slot == &slot) return;
  refuse_requiring_grad(in_, slot, name, "read it under no_grad()");
  ExternalGuard g{name, &slot, nullptr, globals_deleted, slot, guarded_contents(slot)};
  externals_.push_back(std::move(g));
  if (slot.is(Type::Tensor)) external_names_.try_emplace(slot.object().get(), name);
  if (slot.is_sequence())
    for (size_t i = 0; i < slot.items().size(); ++i)
      if (slot.items()[i].is(Type::Tensor))
        external_names_.try_emplace(slot.items()[i].object().get(), fmt::format("{}_{}", name, i));
}

void Tracer::builtin_load(const std::string& name, const std::unordered_map<std::string, Value>& globals) {
  for (const ExternalGuard& g : externals_)
    if (!g.slot && g.globals == &globals && g.name == name) return;
  externals_.push_back(ExternalGuard{name, nullptr, &globals, globals_deleted, Value(), {}});
}

bool is_device_string(const Value& v) {
  if (!v.is(Type::Str) || v.is_proxy()) return false;
  const std::string& s = v.as_str();
  return s == "cpu" || s == "cuda" || s.starts_with("cuda:");
}

}  // namespace thn
