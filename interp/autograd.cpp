#include "interp/autograd.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "interp/interpreter.h"
#include "interp/objects.h"
#include "interp/shorthands.h"
#include "runtime/dtype.h"

namespace thn {

// One recorded op: what its rule is called with.
struct GradStep {
  std::string op;             // the op's name ("mul"), or "getitem"
  const OpDef* def = nullptr;  // null for getitem
  bool method = false;        // called as a method: args[0] is the receiver
  std::vector<Value> args;    // as given (the receiver first)
  std::vector<std::pair<std::string, Value>> kwargs;
  // The result's tensor, without autograd (the result's own object would be
  // a cycle); while tracing, the result's proxy itself (the tracer breaks
  // the cycle when the trace is done).
  Value result;
  // Where each argument tensor's gradient goes, as it was when the step was
  // recorded (an in-place op gives its tensor a new history afterwards):
  // the step that made it and which of its results, or nothing for a leaf.
  struct Edge {
    const Object* tensor;
    std::shared_ptr<GradStep> step;
    size_t output = 0;
    bool requires_grad = false;
  };
  std::vector<Edge> edges;
  const Edge* edge(const Value& t) const {
    for (const Edge& e : edges)
      if (e.tensor == t.object().get()) return &e;
    return nullptr;
  }
  uint64_t order;  // recording order: backward runs later steps first
  bool freed = false;
  bool ran = false;  // a backward pass ran its rule
  // The storages of the tensors it saved, and their versions then.
  std::vector<std::pair<std::shared_ptr<Storage>, uint64_t>> versions;
  // Results whose .grad a backward pass sets (retain_grad()): which one, and its autograd.
  std::vector<std::pair<size_t, std::weak_ptr<AutogradMeta>>> retained;
};

namespace {

uint64_t steps_recorded = 0;

// The storage whose version counter a tensor's in-place writes bump (a
// proxy's meta storage while tracing: shared as the real ones are).
std::shared_ptr<Storage> storage_of(const Value& t) {
  return t.is_proxy() ? t.symbolic().storage() : t.as_tensor().storage();
}
// Whether any tensor has required grad in this process: until one has, ops,
// indexing and jit calls skip looking for one.
bool ever_required = false;

// Each tensor in v (lists and tuples followed).
template <class F> void each_tensor(const Value& v, F&& f) {
  if (v.is(Type::Tensor)) f(v);
  else if (v.is_sequence())
    for (const Value& x : v.items()) each_tensor(x, f);
}

bool any_requires_grad(const Value* self, std::span<const Value> args, const CallArgs& kw) {
  bool any = false;
  auto check = [&](const Value& t) { any |= requires_grad(t); };
  if (self) each_tensor(*self, check);
  for (const Value& a : args) each_tensor(a, check);
  for (const auto& [k, v] : kw.kwargs) each_tensor(v, check);
  return any;
}

std::string step_name(const std::string& op) {
  if (op == "setitem") return "CopySlices";  // (PyTorch's names)
  if (op == "copy_") return "CopyBackwards";
  std::string out;
  bool up = true;
  for (char c : op) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? char(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out + "Backward0";
}

Value detached(Interpreter& in, const Value& x) {
  CallArgs none;
  return in.call(in.getattr(x, "detach"), none);
}

// A tensor's (or, while tracing, a proxy's) dtype and sizes (ints, or size proxies).
DType dtype(Interpreter& in, const Value& t) {
  return t.is_proxy() ? in.getattr(t, "dtype").as_dtype() : t.as_tensor().dtype();
}
std::vector<Value> sizes(Interpreter& in, const Value& t) { return in.getattr(t, "shape").items(); }
// Equal sizes on this call. (Two size proxies may stand for one size; where
// code combines them the tracer guards that they are equal.)
bool same_sizes(const std::vector<Value>& a, const std::vector<Value>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].without_proxy().as_int() != b[i].without_proxy().as_int()) return false;
  return true;
}
// A size known to be 1 (a size proxy never is: symbolic sizes are >= 2).
bool is_one(const Value& n) { return !n.is_proxy() && n.as_int() == 1; }

// The result's floating tensors get `step`; the step keeps what its rule reads.
// A view whose memory changed in place since it was taken, when the write
// gave that memory a history the view does not have: refused (its gradient
// would not reach the write's inputs).
void check_fresh_view(Interpreter& in, const Value& t) {
  const AutogradMeta* m = autograd_of(t);
  if (!m || !m->view) return;
  std::shared_ptr<Storage> st = storage_of(t);
  // (a write that recorded no history, under no_grad, leaves the view's
  // own history right: an optimizer's step on a parameter whose slices
  // were taken before)
  if (st && st->version() != m->view_version && in.autograd().rebased(st))
    fail(ErrorKind::NotImplementedError,
         "thn's autograd does not follow a view of a tensor that was changed in place after the view was taken yet: "
         "take the view again after the in-place op");
}

// check_fresh_view for each tensor an op reads.
void check_fresh_views(Interpreter& in, const Value* self, std::span<const Value> args, const CallArgs* kw = nullptr) {
  auto check = [&](const Value& t) { check_fresh_view(in, t); };
  if (self) each_tensor(*self, check);
  for (const Value& a : args) each_tensor(a, check);
  if (kw)
    for (const auto& [k, v] : kw->kwargs) each_tensor(v, check);
}

std::vector<Value> bind(const GradStep& s);

// Whether step's rule reads its result (READS_RESULT, READS_RESULT_IF_TENSOR).
bool reads_result(Interpreter& in, const GradStep& step) {
  const AutogradDispatch::Rules& rules = in.autograd().rules();
  if (!rules.reads_result.count(step.op)) return false;
  auto when = rules.reads_result_if_tensor.find(step.op);
  if (when == rules.reads_result_if_tensor.end() || !step.def) return true;
  const std::vector<Value> bound = bind(step);
  const std::vector<Param>& params = step.def->schema.params;
  for (size_t i = 0; i < params.size() && i < bound.size(); ++i)
    if (params[i].name == when->second) return bound[i].is(Type::Tensor);
  return true;
}

// `written`: the step writes in place, and its arguments were checked before.
void record(Interpreter& in, const std::shared_ptr<GradStep>& step, const Value& result, bool written = false) {
  step->order = ++steps_recorded;
  // (the arguments' histories before the result's: an in-place op's result is its argument)
  auto edge = [&](const Value& t) {
    if (step->edge(t)) return;
    if (!written) check_fresh_view(in, t);
    const AutogradMeta* m = autograd_of(t);
    step->edges.push_back({t.object().get(), m ? m->step : nullptr, m ? m->output : 0, m && m->requires_grad});
  };
  for (const Value& a : step->args) each_tensor(a, edge);
  for (const auto& [k, v] : step->kwargs) each_tensor(v, edge);
  size_t output = 0;
  each_tensor(result, [&](const Value& t) {
    if (is_floating(dtype(in, t))) {
      AutogradMeta* m = autograd_of(t, true);
      m->requires_grad = true;
      m->step = step;
      m->output = output;
    }
    ++output;
  });
  auto plain = [](const Value& t) { return t.is_proxy() ? t : Value::tensor(t.as_tensor()); };
  if (result.is(Type::Tensor)) {
    step->result = plain(result);
  } else {
    std::vector<Value> items;
    each_tensor(result, [&](const Value& t) { items.push_back(plain(t)); });
    step->result = Value::tuple(std::move(items));
  }
  auto save = [&](const Value& t) {
    if (std::shared_ptr<Storage> s = storage_of(t)) step->versions.emplace_back(s, s->version());
  };
  for (const Value& a : step->args) each_tensor(a, save);
  for (const auto& [k, v] : step->kwargs) each_tensor(v, save);
  // (the result may change in place later: that matters to a rule reading it)
  if (reads_result(in, *step)) each_tensor(step->result, save);
}

[[noreturn]] void refuse_in_trace(const std::string& what) {
  fail(ErrorKind::NotImplementedError,
       "jit does not support {} on a tensor inside a jit function yet (differentiate with grad(f) or "
       "value_and_grad(f) there, or run the function without jit)",
       what);
}

void bump_versions(const Value& v) {
  each_tensor(v, [](const Value& t) {
    if (std::shared_ptr<Storage> s = storage_of(t)) s->bump_version();
  });
}

// PyTorch's refusals of an in-place op that needs a gradient, and thn's
// (views: their history would not follow the write).
void check_inplace(const Value& target, const std::string& op) {
  const AutogradMeta* m = autograd_of(target);
  if (!m) return;
  if (m->requires_grad && !m->step)
    fail(ErrorKind::RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation.");
  if (m->view_of_leaf)
    fail(ErrorKind::RuntimeError, "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  if (m->view)
    fail(ErrorKind::NotImplementedError,
         "thn's autograd does not differentiate in-place operations on a view yet ({}): write the result to a new "
         "tensor, or run it under no_grad()",
         op);
}

}  // namespace

bool AutogradMeta::graph_unused() const { return step && !step->ran; }

AutogradMeta* autograd_of(const Value& t, bool create) {
  if (!t.is(Type::Tensor)) return nullptr;
  std::shared_ptr<AutogradMeta>& meta =
      t.is_proxy() ? const_cast<Symbolic&>(t.symbolic()).autograd : t.obj<TensorObj>().autograd;
  if (!meta && create) meta = std::make_shared<AutogradMeta>();
  return meta.get();
}

bool requires_grad(const Value& t) {
  const AutogradMeta* m = autograd_of(t);
  return m && m->requires_grad;
}

void tensors_requiring_grad(const Value& v, const std::string& name, std::vector<std::pair<std::string, Value>>& out,
                            bool first_only) {
  if (!ever_required) return;
  std::unordered_set<const Object*> seen;
  auto walk = [&](auto&& self, const Value& x, const std::string& path) -> void {
    if (first_only && !out.empty()) return;
    if (x.is(Type::Tensor)) {
      if (requires_grad(x)) out.emplace_back(path, x);
      return;
    }
    if (!x.is_sequence() && !x.is(Type::Dict) && !x.is(Type::Instance)) return;
    if (!seen.insert(x.object().get()).second) return;
    if (x.is_sequence()) {
      for (size_t i = 0; i < x.items().size(); ++i) self(self, x.items()[i], fmt::format("{}[{}]", path, i));
      return;
    }
    const DictObj& d = x.is(Type::Dict) ? x.obj<DictObj>() : x.obj<InstanceObj>().dict.obj<DictObj>();
    d.each([&](const Value& k, const Value& item) {
      self(self, item, x.is(Type::Dict) ? fmt::format("{}[{}]", path, to_repr(k)) : fmt::format("{}.{}", path, to_str(k)));
    });
  };
  walk(walk, v, name);
}

bool grad_recording(Interpreter& in) { return ever_required && in.autograd().enabled; }

void refuse_requiring_grad(Interpreter& in, const Value& v, const std::string& name, const std::string& remedy) {
  if (!grad_recording(in)) return;
  std::vector<std::pair<std::string, Value>> found;
  tensors_requiring_grad(v, name, found, true);
  if (!found.empty())
    fail(ErrorKind::NotImplementedError,
         "jit does not differentiate tensors from outside the function yet: '{}' requires grad (take gradients inside "
         "it with grad(f), {}, or pass {}.detach())",
         found[0].first, remedy, found[0].first);
}

Value AutogradDispatch::call(const OpDef& op, const Value* self, std::span<const Value> args, const CallArgs& kw,
                             bool inplace) {
  // tensor(..., requires_grad=True), zeros(..., requires_grad=True): a leaf that requires grad.
  if ((op.family == OpFamily::Creation || op.family == OpFamily::Random) &&
      std::any_of(kw.kwargs.begin(), kw.kwargs.end(), [](const auto& k) { return k.first == "requires_grad"; })) {
    CallArgs rest;
    rest.args = kw.args;
    bool on = false;
    for (const auto& [k, v] : kw.kwargs) {
      if (k != "requires_grad") rest.kwargs.emplace_back(k, v);
      else if (!v.is(Type::Bool)) fail(ErrorKind::TypeError, "{}(): requires_grad must be a bool, not {}", op.name, type_name(v));
      else on = v.as_bool();
    }
    Value r = inner_->call(op, self, args, rest, inplace);
    if (on) set_autograd_attribute(in_, r, "requires_grad", Value(true));
    return r;
  }
  const bool writes = self && (inplace || op.name.ends_with('_'));
  const bool differentiate = enabled && ever_required && op.family != OpFamily::Creation && op.family != OpFamily::Random &&
                             (op.family != OpFamily::Attribute || op.id == OpId::T || op.id == OpId::mT) &&
                             any_requires_grad(self, args, kw);
  if (writes && differentiate) return this->inplace(op, *self, args, kw, inplace);
  Value r = inner_->call(op, self, args, kw, inplace);
  if (writes) bump_versions(*self);
  if (!differentiate) {
    // (a view of a tensor that needs no gradient is one too: a write through
    // it could give its base a history, which a stale view would lack)
    if (ever_required && enabled) check_fresh_views(in_, self, args);
    if (ever_required && !writes && op.family != OpFamily::Creation && op.family != OpFamily::Random) mark_views(r, self, args);
    return r;
  }
  // (an op that returns its argument itself, as contiguous() of a
  // contiguous tensor does, is no step)
  if (r.is(Type::Tensor) && ((self && r.object() == self->object()) ||
                             std::any_of(args.begin(), args.end(), [&](const Value& a) { return a.object() == r.object(); })))
    return r;
  auto step = std::make_shared<GradStep>();
  step->op = std::string(op.name);
  step->def = &op;
  step->method = self != nullptr;
  // (a list argument is saved as a tuple of its items: the list may change,
  // or come to hold the result)
  auto saved = [](const Value& v) { return v.is(Type::List) ? Value::tuple(v.items()) : v; };
  if (self) step->args.push_back(saved(*self));
  for (const Value& a : args) step->args.push_back(saved(a));
  for (const auto& [k, v] : kw.kwargs) step->kwargs.emplace_back(k, saved(v));
  record(in_, step, r);
  mark_views(r, self, args);
  return r;
}

Value AutogradDispatch::inplace(const OpDef& op, const Value& self, std::span<const Value> args, const CallArgs& kw,
                                bool inplace) {
  check_inplace(self, inplace ? std::string(op.name) + "_" : std::string(op.name));
  check_fresh_views(in_, nullptr, args, &kw);
  // The op becomes self's history; its edge for self is self's old one. A
  // rule that reads self's values gets them as they were: a copy taken
  // before the write, carrying self's old history.
  Value before = self;
  if (!rules().shapes_only.count(std::string(op.name))) {
    before = inner_->call(op_named("clone"), nullptr, std::vector<Value>{self}, CallArgs{}, false);
    if (const AutogradMeta* m = autograd_of(self)) {
      AutogradMeta* b = autograd_of(before, true);
      b->requires_grad = m->requires_grad;
      b->step = m->step;
      b->output = m->output;
    }
  }
  Value r = inner_->call(op, &self, args, kw, inplace);
  bump_versions(self);
  note_rebased(self);
  auto step = std::make_shared<GradStep>();
  step->op = std::string(op.name);
  step->def = &op;
  step->method = true;
  // (self read again as another argument, y.mul_(y), is the value before the write too)
  auto saved = [&](const Value& v) {
    return v.is(Type::List) ? Value::tuple(v.items()) : v.is(Type::Tensor) && v.object() == self.object() ? before : v;
  };
  step->args.push_back(before);
  for (const Value& a : args) step->args.push_back(saved(a));
  for (const auto& [k, v] : kw.kwargs) step->kwargs.emplace_back(k, saved(v));
  record(in_, step, self, true);
  return r;
}

void AutogradDispatch::note_rebased(const Value& t) {
  if (rebased_.size() > 4096)
    std::erase_if(rebased_, [](const auto& entry) { return entry.second.expired(); });
  if (std::shared_ptr<Storage> st = storage_of(t)) rebased_[st.get()] = st;
}

bool AutogradDispatch::rebased(const std::shared_ptr<Storage>& st) const {
  auto it = rebased_.find(st.get());
  return it != rebased_.end() && it->second.lock() == st;
}

void AutogradDispatch::mark_views(const Value& r, const Value* self, std::span<const Value> from) {
  std::vector<Value> sources;
  auto add = [&](const Value& t) { sources.push_back(t); };
  if (self) each_tensor(*self, add);
  for (const Value& a : from) each_tensor(a, add);
  each_tensor(r, [&](const Value& t) {
    std::shared_ptr<Storage> st = storage_of(t);
    if (!st) return;
    for (const Value& x : sources) {
      if (x.object() == t.object() || storage_of(x) != st) continue;
      const AutogradMeta* xm = autograd_of(x);
      AutogradMeta* tm = autograd_of(t, true);
      tm->view = true;
      tm->view_version = st->version();
      tm->view_of_leaf |= xm && (xm->view_of_leaf || (xm->requires_grad && !xm->step));
    }
  });
}

const AutogradDispatch::Rules& AutogradDispatch::rules() {
  if (rules_) return *rules_;
  GradMode off(*this, false);
  ModuleObj& m = in_.import_module("autograd");
  Rules r;
  auto names = [&](const char* list, std::unordered_set<std::string>& out) {
    if (auto l = m.globals.find(list); l != m.globals.end() && l->second.is_sequence())
      for (const Value& name : l->second.items())
        if (name.is(Type::Str)) out.insert(name.as_str());
  };
  names("READS_SHAPES", r.shapes_only);
  names("READS_RESULT", r.reads_result);
  if (auto d = m.globals.find("READS_RESULT_IF_TENSOR"); d != m.globals.end() && d->second.is(Type::Dict))
    d->second.obj<DictObj>().each([&](const Value& op, const Value& param) {
      if (op.is(Type::Str) && param.is(Type::Str)) r.reads_result_if_tensor[op.as_str()] = param.as_str();
    });
  if (auto d = m.globals.find("GRADIENT_READS"); d != m.globals.end() && d->second.is(Type::Dict))
    d->second.obj<DictObj>().each([&](const Value& op, const Value& params) {
      if (!op.is(Type::Str) || !params.is(Type::Dict)) return;
      auto& entry = r.gradient_reads[op.as_str()];
      params.obj<DictObj>().each([&](const Value& param, const Value& names) {
        if (!param.is(Type::Str) || !names.is_sequence()) return;
        auto& list = entry[param.as_str()];
        for (const Value& n : names.items())
          if (n.is(Type::Str)) list.push_back(n.as_str());
      });
    });
  return *(rules_ = std::move(r));
}

Value AutogradDispatch::getitem(const Value& tensor, std::span<const Value> index) {
  Value r = inner_->getitem(tensor, index);
  if (!ever_required) return r;
  if (!enabled || !requires_grad(tensor)) {
    if (enabled) check_fresh_views(in_, &tensor, {});
    mark_views(r, nullptr, std::span<const Value>(&tensor, 1));
    return r;
  }
  auto step = std::make_shared<GradStep>();
  step->op = "getitem";
  step->args = {tensor, index.size() == 1 ? index[0] : Value::tuple(std::vector<Value>(index.begin(), index.end()))};
  record(in_, step, r);
  mark_views(r, nullptr, std::span<const Value>(&tensor, 1));
  return r;
}

Value AutogradDispatch::composite(const std::string& op, std::vector<Value> args, const std::function<Value()>& forward) {
  bool any = false;
  for (const Value& a : args) each_tensor(a, [&](const Value& t) { any |= requires_grad(t); });
  if (!enabled || !ever_required || !any) return forward();
  check_fresh_views(in_, nullptr, args);
  Value r;
  {
    GradMode off(*this, false);
    r = forward();
  }
  auto step = std::make_shared<GradStep>();
  step->op = op;
  step->args = std::move(args);
  record(in_, step, r);
  return r;
}

// x[index] = value (PyTorch's CopySlices): x's new history is a step whose
// rule gives x's old history the gradient outside the index, and value the
// gradient at it.
void AutogradDispatch::setitem(const Value& tensor, std::span<const Value> index, const Value& value) {
  bool any = requires_grad(tensor);
  each_tensor(value, [&](const Value& t) { any |= requires_grad(t); });
  if (!enabled || !any) {
    inner_->setitem(tensor, index, value);
    return bump_versions(tensor);
  }
  check_inplace(tensor, "x[index] = value");
  check_fresh_views(in_, nullptr, std::span<const Value>(&value, 1));
  inner_->setitem(tensor, index, value);
  bump_versions(tensor);
  note_rebased(tensor);
  auto step = std::make_shared<GradStep>();
  step->op = "setitem";
  step->args = {tensor, index.size() == 1 ? index[0] : Value::tuple(std::vector<Value>(index.begin(), index.end())),
                value};
  record(in_, step, tensor, true);
}

namespace {

Value op_call(Interpreter& in, const char* name, const Value* self, std::vector<Value> args,
              std::vector<std::pair<std::string, Value>> kwargs = {}) {
  return call_tensor_op(in, name, self, std::move(args), std::move(kwargs));
}

// g summed to x's shape (the dims broadcasting added or stretched), in x's dtype and device.
Value fit(Interpreter& in, const GradStep& s, size_t index, Value g, const Value& x) {
  if (!g.is_proxy() && !x.is_proxy() && g.as_tensor().sizes() == x.as_tensor().sizes() &&
      g.as_tensor().dtype() == x.as_tensor().dtype() && g.as_tensor().device() == x.as_tensor().device())
    return g;
  const std::vector<Value> gs = sizes(in, g), xs = sizes(in, x);
  if (!same_sizes(gs, xs)) {
    const int64_t lead = int64_t(gs.size()) - int64_t(xs.size());
    std::vector<Value> dims;
    bool ok = lead >= 0;
    for (int64_t d = 0; ok && d < int64_t(gs.size()); ++d) {
      const Value& gd = gs[size_t(d)];
      if (d < lead) dims.push_back(Value(d));
      else if (const Value& xd = xs[size_t(d - lead)]; is_one(xd) && !is_one(gd)) dims.push_back(Value(d));
      else ok = same_sizes({gd}, {xd});
    }
    if (!ok)
      fail(ErrorKind::RuntimeError, "Function {} returned an invalid gradient at index {} - got {} but expected shape compatible with {}",
           step_name(s.op), index, to_str(Value::list(gs)), to_str(Value::list(xs)));
    if (!dims.empty()) g = op_call(in, "sum", nullptr, {g, Value::list(dims)}, {{"keepdim", Value(true)}});
    if (!same_sizes(sizes(in, g), xs)) g = op_call(in, "reshape", nullptr, {g, Value::list(xs)});
  }
  const DType xt = dtype(in, x);
  const Device xd = in.getattr(x, "device").as_device();
  if (dtype(in, g) != xt || in.getattr(g, "device").as_device() != xd)
    g = op_call(in, "to", &g, {}, {{"dtype", Value(xt)}, {"device", Value(xd)}});
  return g;
}

// The step's arguments by its op's parameters (getitem: self, index).
std::vector<Value> bind(const GradStep& s) {
  if (!s.def) return s.args;
  const Schema& schema = s.def->schema;
  std::vector<Value> bound(schema.params.size(), Value::unbound());
  size_t next = 0;
  auto place = [&](size_t i, const Value& v) { bound[i] = v; };
  size_t first = 0;
  if (s.method && schema.self_index >= 0) {
    place(size_t(schema.self_index), s.args[0]);
    first = 1;
  }
  for (size_t a = first; a < s.args.size(); ++a) {
    while (next < schema.params.size() && (int(next) == schema.self_index && s.method)) ++next;
    if (next >= schema.params.size() || schema.params[next].kwarg_only) break;
    if (schema.params[next].varargs) break;  // (sizes: never tensors)
    place(next++, s.args[a]);
  }
  for (const auto& [k, v] : s.kwargs)
    for (size_t i = 0; i < schema.params.size(); ++i)
      if (schema.params[i].name == k) place(i, v);
  return bound;
}

// The storages step s's rule reads for the gradients wanted (of the
// arguments that require grad), where GRADIENT_READS says (mul's gradient
// for self reads other only, so a later write into self is no error when
// other needs none); nullopt: all it saved. Its result's are read.
std::optional<std::unordered_set<const Storage*>> values_read(Interpreter& in, const GradStep& s,
                                                              const std::vector<Value>& bound) {
  const auto& reads = in.autograd().rules().gradient_reads;
  auto op = reads.find(s.op);
  if (op == reads.end() || !s.def) return std::nullopt;
  const Schema& schema = s.def->schema;
  std::unordered_set<const Storage*> out;
  auto add = [&](const Value& t) {
    if (std::shared_ptr<Storage> st = storage_of(t)) out.insert(st.get());
  };
  each_tensor(s.result, add);
  for (size_t i = 0; i < bound.size() && i < schema.params.size(); ++i) {
    bool wanted = false;
    each_tensor(bound[i], [&](const Value& t) {
      const GradStep::Edge* e = s.edge(t);
      wanted |= e && e->requires_grad;
    });
    if (!wanted) continue;
    auto param = op->second.find(schema.params[i].name);
    if (param == op->second.end()) return std::nullopt;
    for (const std::string& name : param->second)
      for (size_t j = 0; j < schema.params.size() && j < bound.size(); ++j)
        if (schema.params[j].name == name) each_tensor(bound[j], add);
  }
  return out;
}

// The gradients of the leaves that lead to root, in the order first reached
// (the leaf, its gradient): a backward pass from root with `gradient`.
// A step's result as its rule reads it when the gradients carry a graph:
// the tensors with the step as their history (the step keeps them without
// it: a cycle), so that a rule reading its result (exp's) differentiates.
Value result_in_graph(const std::shared_ptr<GradStep>& s) {
  if (s->result.is_proxy() || s->result.is_none()) return s->result;
  size_t output = 0;
  auto rebuilt = [&](const Value& t) {
    Value r = Value::tensor(t.as_tensor());
    AutogradMeta* m = autograd_of(r, true);
    m->requires_grad = true;
    m->step = s;
    m->output = output++;
    return r;
  };
  if (s->result.is(Type::Tensor)) return rebuilt(s->result);
  std::vector<Value> items;
  for (const Value& t : s->result.items())
    items.push_back(t.is(Type::Tensor) && !t.is_proxy() && is_floating(t.as_tensor().dtype()) ? rebuilt(t) : (++output, t));
  return Value::tuple(std::move(items));
}

// With create_graph the rules run with grad mode on, so the gradients carry
// a graph of their own (a second derivative differentiates them); tensors
// in `targets` take their gradient as leaves do, whatever made them.
std::vector<std::pair<Value, Value>> leaf_gradients(Interpreter& in, const Value& root, Value gradient, bool retain_graph,
                                                    bool create_graph = false,
                                                    const std::unordered_set<const Object*>* targets = nullptr) {
  AutogradMeta* rm = autograd_of(root);
  if (!rm || !rm->requires_grad)
    fail(ErrorKind::RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn");
  GradMode mode(in.autograd(), create_graph);
  retain_graph |= create_graph;
  const std::vector<Value> root_sizes = sizes(in, root);
  if (gradient.is_none()) {
    if (!std::all_of(root_sizes.begin(), root_sizes.end(), is_one))
      fail(ErrorKind::RuntimeError, "grad can be implicitly created only for scalar outputs");
    gradient = op_call(in, "ones_like", nullptr, {root.is_proxy() ? root : Value::tensor(root.as_tensor())});
  } else if (!gradient.is(Type::Tensor) || !same_sizes(sizes(in, gradient), root_sizes)) {
    fail(ErrorKind::RuntimeError, "Mismatch in shape: grad_output[0] has a shape of torch.Size({}) and output[0] has a shape of torch.Size({}).",
         gradient.is(Type::Tensor) ? to_str(Value::list(sizes(in, gradient))) : "[]", to_str(Value::list(root_sizes)));
  }
  // The leaves' gradients, in the order first reached.
  std::vector<std::pair<Value, Value>> leaves;
  auto to_leaf = [&](const Value& x, const Value& g) {
    for (auto& [leaf, sum] : leaves)
      if (leaf.object() == x.object()) {
        sum = op_call(in, "add", nullptr, {sum, g});
        return;
      }
    leaves.emplace_back(x, g);
  };
  if (!rm->step) {
    if (const DType rt = dtype(in, root); dtype(in, gradient) != rt)
      gradient = op_call(in, "to", &gradient, {}, {{"dtype", Value(rt)}});
    to_leaf(root, gradient);
  } else {
    // Every step that leads to the root, latest first.
    std::vector<std::shared_ptr<GradStep>> steps;
    std::unordered_set<const GradStep*> seen{rm->step.get()};
    steps.push_back(rm->step);
    for (size_t i = 0; i < steps.size(); ++i) {
      if (steps[i]->freed)
        fail(ErrorKind::RuntimeError,
             "Trying to backward through the graph a second time (or directly access saved tensors after they have "
             "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
             "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
             "if you need to access saved tensors after calling backward.");
      for (const GradStep::Edge& e : steps[i]->edges)
        if (e.step && seen.insert(e.step.get()).second) steps.push_back(e.step);
    }
    std::sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a->order > b->order; });
    // Each step's gradients, one per tensor of its result (None: none reached it).
    std::unordered_map<const GradStep*, std::vector<Value>> grads;
    auto slot = [&](const GradStep& s, size_t output) -> Value& {
      std::vector<Value>& g = grads[&s];
      if (g.empty()) g.resize(s.result.is(Type::Tensor) ? 1 : s.result.items().size());
      return g[output];
    };
    slot(*rm->step, rm->output) = gradient;
    ModuleObj& rules = in.import_module("autograd");
    // (rules that read shapes only: nothing to check or free)
    const std::unordered_set<std::string>& shapes_only = in.autograd().rules().shapes_only;
    for (const std::shared_ptr<GradStep>& s : steps) {
      auto it = grads.find(s.get());
      if (it == grads.end()) continue;
      // (a result that retains its gradient gets it as a leaf does, from backward())
      for (const auto& [output, retained] : targets ? decltype(s->retained){} : s->retained)
        if (std::shared_ptr<AutogradMeta> m = retained.lock(); m && !it->second.at(output).is_none())
          m->grad = m->grad.is_none() ? it->second[output] : op_call(in, "add", nullptr, {m->grad, it->second[output]});
      const bool keeps_values = !shapes_only.count(s->op);
      const std::vector<Value> bound = bind(*s);
      // (a shapes-only rule still reads an index's values: getitem's and
      // setitem's gradients go where it says)
      std::optional<std::unordered_set<const Storage*>> read = values_read(in, *s, bound);
      if (!keeps_values) {
        read.emplace();
        if (s->op == "getitem" || s->op == "setitem")
          each_tensor(s->args.at(1), [&](const Value& t) {
            if (std::shared_ptr<Storage> st = storage_of(t)) read->insert(st.get());
          });
      }
      for (const auto& [storage, version] : s->versions)
        if (storage->version() != version && (!read || read->count(storage.get())))
          fail(ErrorKind::RuntimeError,
               "one of the variables needed for gradient computation has been modified by an inplace operation: "
               "a tensor saved by {} is at version {}; expected version {} instead",
               step_name(s->op), storage->version(), version);
      auto rule = rules.globals.find(s->op + "_backward");
      if (rule == rules.globals.end())
        fail(ErrorKind::NotImplementedError, "the derivative for '{}' is not implemented.", s->op);
      CallArgs call;
      // (an op with several results gets a tuple of their gradients)
      call.args = {s->result.is(Type::Tensor) ? it->second[0] : Value::tuple(it->second),
                   create_graph ? result_in_graph(s) : s->result};
      call.args.insert(call.args.end(), s->args.begin(), s->args.end());
      // (a method's receiver goes where its op's signature has it: x.where(c, y) is where(c, x, y))
      if (s->method && s->def && s->def->schema.self_index > 0 &&
          size_t(s->def->schema.self_index) < s->args.size()) {
        std::rotate(call.args.begin() + 2, call.args.begin() + 3, call.args.begin() + 3 + s->def->schema.self_index);
      }
      call.kwargs = s->kwargs;
      s->ran = true;
      grads.erase(it);
      const Value out = in.call(rule->second, call);
      if (!out.is_sequence()) fail(ErrorKind::RuntimeError, "{}_backward must return a tuple of gradients", s->op);
      for (size_t i = 0; i < bound.size(); ++i) {
        const Value& x = bound[i];
        const Value g = i < out.items().size() ? out.items()[i] : Value();
        auto flow = [&](const Value& t, const Value& gt) {
          if (!gt.is_none() && !gt.is(Type::Tensor))
            fail(ErrorKind::TypeError, "{}_backward returned a {} where a gradient (a tensor or None) belongs", s->op,
                 type_name(gt));
          const GradStep::Edge* e = s->edge(t);
          if (!e || !e->requires_grad || gt.is_none()) return;  // (None: no gradient, as the shape expand_as reads)
          // (a trace's backward reaching a tensor from outside it: a default
          // value, a global or an attribute, not an argument)
          if (gt.is_proxy() && !t.is_proxy())
            fail(ErrorKind::NotImplementedError,
                 "jit does not differentiate tensors from outside the function yet: a tensor that requires grad reached "
                 "the trace without being an argument (a default value, a global or an attribute): pass it as an argument");
          Value fitted = fit(in, *s, i, gt, t);
          if (!e->step || (targets && targets->count(t.object().get()))) return to_leaf(t, fitted);
          Value& at = slot(*e->step, e->output);
          at = at.is_none() ? fitted : op_call(in, "add", nullptr, {at, fitted});
        };
        if (x.is(Type::Tensor)) flow(x, g);
        else if (x.is_sequence())
          for (size_t j = 0; j < x.items().size(); ++j)
            if (x.items()[j].is(Type::Tensor)) flow(x.items()[j], g.is_sequence() && j < g.items().size() ? g.items()[j] : Value());
      }
      if (!retain_graph && keeps_values) {
        s->freed = true;
        s->edges.clear();
        s->args.clear();
        s->kwargs.clear();
        s->result = Value();
        s->versions.clear();
      }
    }
  }
  return leaves;
}

// x.backward(gradient): the leaves' .grad is set to a gradient of its own,
// or added to in place.
// With create_graph the .grad carries the graph of its computation (added
// out of place, as PyTorch does then).
void backward(Interpreter& in, const Value& root, const Value& gradient, bool retain_graph, bool create_graph) {
  for (auto& [leaf, g] : leaf_gradients(in, root, gradient, retain_graph, create_graph)) {
    AutogradMeta* m = autograd_of(leaf);
    GradMode mode(in.autograd(), create_graph);
    if (m->grad.is_none()) {
      m->grad = op_call(in, "clone", nullptr, {g});
    } else if (create_graph) {
      m->grad = op_call(in, "add", nullptr, {m->grad, g});
    } else {
      call_tensor_op(in, "add", &m->grad, {g}, {}, true);
    }
  }
}

}  // namespace

namespace {

// x with each tensor t replaced by f(t): lists, tuples and dicts rebuilt
// (torch.func's pytrees); any other leaf is `bad`'s error.
template <class F, class B> Value map_tree(const Value& x, F&& f, B&& bad) {
  if (x.is(Type::Tensor)) return f(x);
  if (x.is(Type::List) || x.is(Type::Tuple)) {
    std::vector<Value> items;
    for (const Value& v : x.items()) items.push_back(map_tree(v, f, bad));
    return x.is(Type::List) ? Value::list(std::move(items)) : Value::tuple(std::move(items));
  }
  if (x.is(Type::Dict)) {
    Value d = make_dict();
    x.obj<DictObj>().each([&](const Value& k, const Value& v) { d.obj<DictObj>().set(k, map_tree(v, f, bad)); });
    return d;
  }
  bad(x);
  return x;
}

// grad(f) / value_and_grad(f) called on args: f's value and the gradients
// of the arguments argnums names (torch.func's transforms, eagerly).
Value transformed_call(Interpreter& in, const Value& f, const Value& argnums, bool has_aux, bool with_value, CallArgs& a) {
  std::vector<int64_t> nums;
  if (argnums.is_int_like()) nums.push_back(argnums.as_int());
  else if (argnums.is(Type::Tuple))
    for (const Value& n : argnums.items()) {
      if (!n.is_int_like()) fail(ErrorKind::TypeError, "grad: argnums must be an int or a tuple of ints");
      nums.push_back(n.as_int());
    }
  else fail(ErrorKind::TypeError, "grad: argnums must be an int or a tuple of ints, not {}", type_name(argnums));
  if (nums.empty()) fail(ErrorKind::RuntimeError, "grad: argnums must be non-empty");
  const bool outer = in.autograd().enabled;  // (the caller records: the gradients may carry a graph)
  GradMode on(in.autograd(), true);
  std::vector<Value> trees;  // each argument as f gets it, its tensors fresh leaves
  std::unordered_set<const Object*> targets;  // (or kept: they require grad already)
  for (int64_t& n : nums) {
    const int64_t count = int64_t(a.args.size());
    if (n < -count || n >= count)
      fail(ErrorKind::RuntimeError, "grad: Got argnums={}, but only {} positional inputs", n, count);
    if (n < 0) n += count;
    // Each tensor of the argument (a tensor, or a list, tuple or dict of
    // them) becomes a fresh leaf over the same memory (while tracing, a view
    // of all of it: the trace's value for it is a new proxy).
    // (functorch's errors)
    auto bad = [](const Value& v) {
      fail(ErrorKind::ValueError, "Thing passed to transform API must be Tensor, got <class '{}'>", type_name(v));
    };
    Value& arg = a.args[size_t(n)];
    arg = map_tree(arg, [&](const Value& x) {
      if (!is_floating(dtype(in, x)))
        fail(ErrorKind::RuntimeError, "only Tensors of floating point dtype can require gradients");
      // A tensor that requires grad already (an outer grad's leaf, a value
      // of a graph) while grad mode is on: the gradient stays differentiable
      // with respect to it, as torch.func's (grad(grad(f)) is the second
      // derivative).
      if (outer && requires_grad(x)) {
        targets.insert(x.object().get());
        return x;
      }
      Value leaf = detached(in, x);
      AutogradMeta* m = autograd_of(leaf, true);
      m->requires_grad = true;
      ever_required = true;
      return leaf;
    }, bad);
    trees.push_back(arg);
  }
  Value out = in.call(f, a);
  Value value = out, aux;
  if (has_aux) {
    if (!out.is(Type::Tuple) || out.items().size() != 2)
      fail(ErrorKind::RuntimeError, "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if has_aux is True");
    value = out.items()[0];
    // (aux comes back outside the graph, as torch.func's: its tensors detached)
    aux = map_tree(out.items()[1], [&](const Value& t) { return detached(in, t); }, [](const Value&) {});
  }
  if (!value.is(Type::Tensor) || !sizes(in, value).empty())
    fail(ErrorKind::RuntimeError, "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got {}",
         value.is(Type::Tensor) ? fmt::format("tensor with {} dims", sizes(in, value).size()) : type_name(value));
  // The gradients, in the arguments' structures: each leaf's own (none is
  // zeros; one gradient reaching two leaves is copied for the second, so
  // that no two results share memory).
  std::vector<std::pair<Value, Value>> leaves;
  if (requires_grad(value))
    leaves = leaf_gradients(in, value, Value(), false, !targets.empty(), targets.empty() ? nullptr : &targets);
  std::unordered_set<const Object*> given;
  std::vector<Value> grads;
  for (const Value& tree : trees)
    grads.push_back(map_tree(tree, [&](const Value& x) {
      for (const auto& [leaf, g] : leaves)
        if (leaf.object() == x.object())
          return given.insert(g.object().get()).second ? g : op_call(in, "clone", nullptr, {g});
      return op_call(in, "zeros_like", nullptr, {x});
    }, [](const Value&) {}));
  Value result = argnums.is_int_like() ? grads[0] : Value::tuple(grads);
  Value shown = detached(in, value);  // (the value, outside the graph)
  if (!with_value) return has_aux ? Value::tuple({result, aux}) : result;
  return Value::tuple({has_aux ? Value::tuple({shown, aux}) : shown, result});
}

// grad(f): a builtin that knows f (help() shows f's signature, jit traces
// the transform with f's parameters).
struct TransformObj : BuiltinObj {
  Value function;
  TransformObj(std::string name, NativeFn fn, Value f) : BuiltinObj(std::move(name), std::move(fn)), function(std::move(f)) {}
  Value wrapped() const override { return function.is(Type::Function) ? function : Value(); }
};

Value transform(const char* name, bool with_value) {
  return make_builtin(name, [name, with_value](Interpreter&, CallArgs& a) {
    if (a.args.empty()) fail(ErrorKind::TypeError, "{}() missing 1 required positional argument: 'func'", name);
    Value f = a.args[0], argnums(int64_t(0));
    bool has_aux = false;
    if (a.args.size() > 1) argnums = a.args[1];
    if (a.args.size() > 2) has_aux = a.args[2].is(Type::Bool) && a.args[2].as_bool();
    for (const auto& [k, v] : a.kwargs) {
      if (k == "argnums") argnums = v;
      else if (k == "has_aux") has_aux = v.is(Type::Bool) && v.as_bool();
      else fail(ErrorKind::TypeError, "{}() got an unexpected keyword argument '{}'", name, k);
    }
    return Value(Type::Builtin, std::make_shared<TransformObj>(
                                    name,
                                    [f, argnums, has_aux, with_value](Interpreter& in, CallArgs& call) {
                                      return transformed_call(in, f, argnums, has_aux, with_value, call);
                                    },
                                    f));
  });
}

}  // namespace

void install_autograd_builtins(std::unordered_map<std::string, Value>& b) {
  b["grad"] = transform("grad", false);
  b["value_and_grad"] = transform("value_and_grad", true);
}

Value autograd_attribute(const Value& t, const std::string& name) {
  AutogradMeta* m = autograd_of(t);
  if (name == "requires_grad") return Value(m && m->requires_grad);
  if (name == "grad") return m ? m->grad : Value();
  if (name == "is_leaf") return Value(!m || !m->step);
  if (name == "retains_grad")
    return Value(m && m->step &&
                 std::any_of(m->step->retained.begin(), m->step->retained.end(),
                             [&](const auto& r) { return r.second.lock().get() == m; }));
  if (name == "retain_grad")
    return make_builtin(name, [t](Interpreter&, CallArgs& a) {
      if (!a.args.empty() || !a.kwargs.empty()) fail(ErrorKind::TypeError, "retain_grad() takes no arguments");
      AutogradMeta* m = autograd_of(t);
      if (!m || !m->requires_grad) fail(ErrorKind::RuntimeError, "can't retain_grad on Tensor that has requires_grad=False");
      if (!m->step) return Value();  // (a leaf keeps its gradient anyway)
      const std::shared_ptr<AutogradMeta>& shared =
          t.is_proxy() ? t.symbolic().autograd : t.obj<TensorObj>().autograd;
      for (const auto& r : m->step->retained)
        if (r.second.lock() == shared) return Value();
      m->step->retained.emplace_back(m->output, shared);
      return Value();
    });
  if (name == "grad_fn") return m && m->step ? Value::str(fmt::format("<{}>", step_name(m->step->op))) : Value();
  if (name == "requires_grad_")
    return make_builtin(name, [t](Interpreter& in, CallArgs& a) {
      Value on = a.args.empty() ? Value(true) : a.args[0];
      for (const auto& [k, v] : a.kwargs) {
        if (k != "requires_grad") fail(ErrorKind::TypeError, "requires_grad_() got an unexpected keyword argument '{}'", k);
        on = v;
      }
      set_autograd_attribute(in, t, "requires_grad", on);
      return t;
    });
  if (name == "backward")
    return make_builtin(name, [t](Interpreter& in, CallArgs& a) {
      Value gradient = a.args.size() > 0 ? a.args[0] : Value();
      bool retain = a.args.size() > 1 && in.truth(a.args[1]);
      bool create = a.args.size() > 2 && in.truth(a.args[2]);
      for (const auto& [k, v] : a.kwargs) {
        if (k == "gradient") gradient = v;
        else if (k == "retain_graph") retain = in.truth(v);
        else if (k == "create_graph") create = in.truth(v);
        else fail(ErrorKind::TypeError, "backward() got an unexpected keyword argument '{}'", k);
      }
      if (a.args.size() > 3) fail(ErrorKind::TypeError, "backward() takes at most 3 positional arguments ({} given)", a.args.size());
      backward(in, t, gradient, retain, create);
      return Value();
    });
  return Value::unbound();
}

bool set_autograd_attribute(Interpreter& in, const Value& t, const std::string& name, const Value& v) {
  // (A trace cannot change whether a tensor requires grad: that decided how
  // it was traced. Its .grad it can: jit writes an argument's back.)
  if ((name == "requires_grad" || (name == "grad" && !requires_grad(t))) && t.is_proxy()) {
    const AutogradMeta* m = autograd_of(t);
    if (name == "grad" && v.is_none() && (!m || m->grad.is_none())) return true;  // (None stays None)
    refuse_in_trace(name);
  }
  if (name == "requires_grad") {
    if (!v.is(Type::Bool)) fail(ErrorKind::TypeError, "requires_grad must be a bool, not {}", type_name(v));
    const bool on = v.as_bool();
    AutogradMeta* m = autograd_of(t, true);
    if (m->step && !on)
      fail(ErrorKind::RuntimeError,
           "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
           "subgraph that doesn't require differentiation use var_no_grad = var.detach().");
    if (on && !is_floating(t.as_tensor().dtype()))
      fail(ErrorKind::RuntimeError, "only Tensors of floating point dtype can require gradients");
    m->requires_grad = on || m->step;
    ever_required |= on;
    return true;
  }
  if (name == "grad") {
    if (!v.is_none() && !v.is(Type::Tensor))
      fail(ErrorKind::TypeError, "assigned grad expected to be a Tensor or None but got grad of {}", type_name(v));
    if (v.is(Type::Tensor)) {
      if (dtype(in, v) != dtype(in, t)) fail(ErrorKind::RuntimeError, "assigned grad has data of a different type");
      if (in.getattr(v, "device").as_device() != in.getattr(t, "device").as_device())
        fail(ErrorKind::RuntimeError, "assigned grad has data located on a different device");
      if (!same_sizes(sizes(in, v), sizes(in, t))) fail(ErrorKind::RuntimeError, "assigned grad has data of a different size");
    }
    autograd_of(t, true)->grad = v;
    return true;
  }
  return false;
}

}  // namespace thn
