#include "interp/autograd.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "interp/autograd_graph.h"
#include "interp/interpreter.h"
#include "interp/objects.h"
#include "interp/shorthands.h"
#include "runtime/dtype.h"

namespace thn {

namespace autograd_graph {

uint64_t steps_recorded = 0;

// The storage whose version counter a tensor's in-place writes bump (a
// proxy's meta storage while tracing: shared as the real ones are).
std::shared_ptr<Storage> storage_of(const Value& t) {
  return t.is_proxy() ? t.symbolic().storage() : t.as_tensor().storage();
}
bool ever_required = false;

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

}  // namespace autograd_graph

using namespace autograd_graph;

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
                            bool first_only, bool or_grad) {
  if (!ever_required) return;
  std::unordered_set<const Object*> seen;
  auto walk = [&](auto&& self, const Value& x, const std::string& path) -> void {
    if (first_only && !out.empty()) return;
    if (x.is(Type::Tensor)) {
      const AutogradMeta* m = autograd_of(x);
      if (m && (m->requires_grad || (or_grad && !m->grad.is_none()))) out.emplace_back(path, x);
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

Value AutogradDispatch::run_op(const OpDef& op, const Value* self, std::span<const Value> args, const CallArgs& kw,
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
  if (t.is_proxy() && (name == "requires_grad" || (name == "grad" && !requires_grad(t)))) {
    const AutogradMeta* m = autograd_of(t);
    if (name != "grad" || !m || !m->carried) {  // (a carried .grad the trace may set)
      if (name == "grad" && v.is_none() && (!m || m->grad.is_none())) return true;  // (None stays None)
      refuse_in_trace(name);
    }
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
