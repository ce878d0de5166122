// The backward pass (torch.autograd's engine): the graph autograd.cpp
// records, run from a root to its leaves, each step's rule
// (stdlib/autograd.thn) given its result's gradients; and the function
// transforms grad(f) and value_and_grad(f) built on it.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "interp/autograd.h"
#include "interp/autograd_graph.h"
#include "interp/interpreter.h"
#include "interp/objects.h"
#include "interp/shorthands.h"
#include "runtime/dtype.h"

namespace thn {

using namespace autograd_graph;

namespace autograd_graph {

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

}  // namespace autograd_graph

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


}  // namespace

namespace autograd_graph {

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

}  // namespace autograd_graph

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

// Whether root's graph reaches a leaf that requires grad besides those of
// `fresh` (a closure's weight, an argument argnums leaves out).
bool reaches_leaf_besides(const Value& root, const std::unordered_set<const Object*>& fresh) {
  const AutogradMeta* m = autograd_of(root);
  if (!m || !m->requires_grad) return false;
  if (!m->step) return !fresh.count(root.object().get());
  std::vector<const GradStep*> todo{m->step.get()};
  std::unordered_set<const GradStep*> seen{m->step.get()};
  while (!todo.empty()) {
    const GradStep* s = todo.back();
    todo.pop_back();
    for (const GradStep::Edge& e : s->edges) {
      if (e.step) {
        if (seen.insert(e.step.get()).second) todo.push_back(e.step.get());
      } else if (e.requires_grad && !fresh.count(e.tensor)) {
        return true;
      }
    }
  }
  return false;
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
  std::unordered_set<const Object*> fresh;    // the leaves made here
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
      fresh.insert(leaf.object().get());
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
  // A tensor from outside the arguments that requires grad and that the
  // value depends on: the gradients (and the value) stay differentiable with
  // respect to it, as torch.func's (a gradient penalty trains the weights).
  const bool outside = outer && reaches_leaf_besides(value, fresh);
  if (requires_grad(value))
    leaves = leaf_gradients(in, value, Value(), false, !targets.empty() || outside, targets.empty() ? nullptr : &targets);
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
  Value shown = outside ? value : detached(in, value);  // (the value, outside the graph of the arguments' leaves)
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

}  // namespace thn
