// Calls of thn functions: making them (defaults, closures), binding
// arguments as Python does, running a call in its frame, and the frame's
// release when the call ends.
#include "interp/interpreter.h"
#include "interp/objects.h"

namespace thn {

using namespace ast;


Value Interpreter::make_function(const FunctionDef& def, Frame& f) {
  auto fn = std::make_shared<FunctionObj>();
  fn->def = &def;
  fn->module = f.module;
  for (auto& p : def.params) {
    fn->has_default.push_back(p.default_value != nullptr);
    fn->defaults.push_back(p.default_value ? eval(*p.default_value, f) : Value());
  }
  // A function defined inside a function reads its names through `env`.
  // (The frame then holds the function and the function the frame: a cycle
  // release() or the cycle collector frees.)
  if (f.name != std::string_view("<module>") || def.reads_module_frame) fn->close_over(f.shared_from_this());
  return Value(Type::Function, fn);
}

CallArgs Interpreter::call_args_of(const Value& fn, std::vector<Value> params) {
  CallArgs args;
  const auto* f = fn.is(Type::Function) ? &fn.obj<FunctionObj>() : nullptr;
  for (size_t i = 0; i < params.size(); ++i) {
    const ast::Param* p = f ? &f->def->params[i] : nullptr;
    Value& v = params[i];
    if (p && p->star) {  // *args: its items, positionally
      for (const Value& x : v.items()) args.args.push_back(x);
    } else if (p && p->dstar) {  // **kwargs: its entries, by name
      v.obj<DictObj>().each([&](const Value& k, const Value& x) { args.kwargs.emplace_back(k.as_str(), x); });
    } else if (p && p->kwonly) {
      args.kwargs.emplace_back(p->name, std::move(v));
    } else {
      args.args.push_back(std::move(v));
    }
  }
  return args;
}

Value Interpreter::call(const Value& fn, CallArgs& args) {
  switch (fn.type()) {
    case Type::Function: return call_function(fn.obj<FunctionObj>(), args);
    case Type::Builtin: return fn.obj<BuiltinObj>().fn(*this, args);
    case Type::Method: {
      auto& m = fn.obj<MethodObj>();
      args.args.insert(args.args.begin(), m.self);
      return call(m.fn, args);
    }
    case Type::StaticMethod: return call(fn.obj<StaticMethodObj>().fn, args);
    case Type::Class: return instantiate(fn, args);
    case Type::Instance: {
      // (its __call__, which may be an instance too: as many hops as
      // Python's recursion limit allows)
      Value target = fn;
      for (int hops = 0; target.is(Type::Instance); ++hops) {
        if (hops >= kMaxDepth) fail(ErrorKind::RecursionError, "maximum recursion depth exceeded while calling a Python object");
        Value c = special(target, "__call__");
        if (c.is(Type::Unbound)) fail(ErrorKind::TypeError, "'{}' object is not callable", type_name(target));
        target = c;
      }
      return call(target, args);
    }
    case Type::TypeObj: {
      auto it = builtins_.find(std::string("__type_") + type_tag_name(fn.as_type()));
      if (it != builtins_.end()) return it->second.obj<BuiltinObj>().fn(*this, args);
      break;
    }
    default: break;
  }
  fail(ErrorKind::TypeError, "'{}' object is not callable", type_name(fn));
}

void Interpreter::bind_arguments(const FunctionObj& fn, CallArgs& args, Value* slots) {
  const FunctionDef& def = *fn.def;
  const auto& params = def.params;
  const std::string& name = def.qualname.empty() ? def.name : def.qualname;
  // Bind arguments the way Python does, with Python's messages.
  std::vector<bool> bound(params.size(), false);
  size_t n_positional = 0;
  int star = -1, dstar = -1;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].star) star = int(i);
    else if (params[i].dstar) dstar = int(i);
    else if (!params[i].kwonly && star < 0) ++n_positional;
  }
  if (args.args.size() > n_positional && star < 0) {
    size_t required = 0;
    for (size_t i = 0; i < n_positional; ++i) required += !fn.has_default[i];
    std::string takes = required == n_positional ? std::to_string(n_positional)
                                                 : fmt::format("from {} to {}", required, n_positional);
    fail(ErrorKind::TypeError, "{}() takes {} positional argument{} but {} {} given", name, takes,
         n_positional == 1 ? "" : "s", args.args.size(), args.args.size() == 1 ? "was" : "were");
  }
  size_t given = std::min(args.args.size(), n_positional);
  for (size_t i = 0; i < given; ++i) {
    slots[i] = std::move(args.args[i]);
    bound[i] = true;
  }
  if (star >= 0) {
    slots[star] = Value::tuple(std::vector<Value>(std::make_move_iterator(args.args.begin() + long(given)),
                                                  std::make_move_iterator(args.args.end())));
    bound[size_t(star)] = true;
  }
  Value extra;
  if (dstar >= 0) {
    extra = make_dict();
    slots[dstar] = extra;
    bound[size_t(dstar)] = true;
  }
  for (auto& [k, v] : args.kwargs) {
    size_t i = 0;
    while (i < params.size() && (params[i].name != k || params[i].star || params[i].dstar)) ++i;
    if (i == params.size()) {
      if (dstar < 0) {
        std::vector<std::string> names;
        for (const auto& p : params)
          if (!p.star && !p.dstar) names.push_back(p.name);
        unexpected_keyword(name, k, names);
      }
      if (extra.obj<DictObj>().find(Value::str(k)))
        fail(ErrorKind::TypeError, "{}() got multiple values for keyword argument '{}'", name, k);
      extra.obj<DictObj>().set(Value::str(k), std::move(v));
      continue;
    }
    if (bound[i]) fail(ErrorKind::TypeError, "{}() got multiple values for argument '{}'", name, k);
    slots[i] = std::move(v);
    bound[i] = true;
  }
  // Python names the missing positional parameters, else the keyword-only ones.
  std::vector<std::string> missing;
  bool missing_kwonly = false;
  for (int pass = 0; pass < 2 && missing.empty(); ++pass) {
    for (size_t i = 0; i < params.size(); ++i) {
      if (bound[i] || params[i].kwonly != (pass == 1)) continue;
      if (fn.has_default[i]) slots[i] = fn.defaults[i];
      else missing.push_back("'" + params[i].name + "'");
    }
    missing_kwonly = pass == 1;
  }
  if (!missing.empty()) {
    std::string list = missing.back();
    if (missing.size() == 2) list = missing[0] + " and " + missing[1];
    if (missing.size() > 2) {
      list.clear();
      for (size_t i = 0; i + 1 < missing.size(); ++i) list += missing[i] + ", ";
      list += "and " + missing.back();
    }
    fail(ErrorKind::TypeError, "{}() missing {} required {}argument{}: {}", name, missing.size(),
         missing_kwonly ? "keyword-only " : "positional ", missing.size() == 1 ? "" : "s", list);
  }
}

namespace {

// A nested function kept in a local of the frame it closes over is a cycle
// (frame -> slot -> function -> env -> frame) that reference counting never
// frees. When a call ends:
// - if nothing but such functions holds the frame, and nothing but the frame
//   holds them, the slots are cleared (a nested helper that did not escape);
// - if something else still holds it (a closure that escaped), only the
//   locals some inner function reads are kept. A closure that escapes and
//   reads its own name (a recursive one) keeps its cycle, which the cycle
//   collector frees once nothing else holds it.
void release(std::shared_ptr<Frame>& frame, const FunctionDef& def) {
  if (frame.use_count() == 1) return;  // freed right after
  long held_by_own_functions = 0;
  bool escaped = false;
  for (const Value& v : frame->slots)
    if (v.is(Type::Function) && v.obj<FunctionObj>().env == frame) {
      escaped |= v.object().use_count() != 1;
      ++held_by_own_functions;
    }
  if (!escaped && held_by_own_functions > 0 && frame.use_count() == 1 + held_by_own_functions) {
    frame->slots.clear();
    return;
  }
  for (size_t i = 0; i < frame->slots.size(); ++i)
    if (i >= def.captured_slots.size() || !def.captured_slots[i]) frame->slots[i] = Value::unbound();
}

}  // namespace

void Frame::visit(const std::function<void(Container*)>& f) const {
  visit_containers(slots, f);
  if (env) f(env.get());
}

void Frame::clear() {
  std::vector<Value>().swap(slots);
  env.reset();
}

std::vector<TraceEntry> Interpreter::traced_calls() const {
  std::vector<TraceEntry> out;
  for (const Frame* f = current_; f && f->in_trace; f = f->caller) out.push_back({f->name, f->loc ? *f->loc : Loc{}});
  return out;
}

Value Interpreter::call_function(const FunctionObj& fn, CallArgs& args) {
  const FunctionDef& def = *fn.def;
  auto frame = std::make_shared<Frame>();
  Frame& f = *frame;
  f.slots.resize(def.locals.size(), Value::unbound());
  f.env = fn.env;
  f.module = fn.module;
  f.name = def.name.c_str();
  f.function = &fn;
  f.loc = &def.loc;
  f.in_trace = dispatch_->tracing();
  bind_arguments(fn, args, f.slots.data());

  if (depth_ >= kMaxDepth) fail(ErrorKind::RecursionError, "maximum recursion depth exceeded");
  ++depth_;
  f.caller = current_;
  Frame* caller = std::exchange(current_, &f);
  Value ret;
  try {
    exec(def.body, f, ret);
  } catch (...) {
    --depth_;
    current_ = caller;
    try {
      rethrow_with_frame(f);
    } catch (...) {
      release(frame, def);
      throw;
    }
  }
  --depth_;
  current_ = caller;
  release(frame, def);
  return ret;
}

}  // namespace thn
