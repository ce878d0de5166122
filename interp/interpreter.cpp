#include "interp/interpreter.h"

#include <atomic>
#include <filesystem>
#include <new>
#include <stdexcept>

#include "frontend/parser.h"
#include "frontend/resolve.h"
#include "interp/objects.h"

namespace thn {

using namespace ast;

// Re-raises the error in flight with this frame added to its traceback.
void rethrow_with_frame(const Frame& f) {
  Loc here = f.loc ? *f.loc : Loc{};
  try {
    throw;
  } catch (TracedError& e) {
    if (!e.loc().source) e.place(here);  // raised by a builtin, with its exception value
    e.trace.push_back({f.name, here});
    throw;
  } catch (LocatedError& e) {
    // A syntax error in an imported module: keep its place, add the importer.
    TracedError t(e.kind(), e.what(), e.loc());
    t.with_note_of(e);
    t.trace.push_back({f.name, here});
    throw t;
  } catch (Error& e) {
    TracedError t(e.kind(), e.what(), here);
    t.with_note_of(e);
    t.trace.push_back({f.name, here});
    throw t;
  } catch (std::bad_alloc&) {
    TracedError t(ErrorKind::MemoryError, "out of memory", here);
    t.trace.push_back({f.name, here});
    throw t;
  } catch (std::length_error& e) {
    TracedError t(ErrorKind::RuntimeError, e.what(), here);
    t.trace.push_back({f.name, here});
    throw t;
  }
}

namespace {
std::atomic<Interpreter*> running_interpreter{nullptr};
}  // namespace

Interpreter::Interpreter(InterpOptions opts)
    : opts_(std::move(opts)),
      eager_(std::make_unique<EagerDispatch>()),
      autograd_(std::make_unique<AutogradDispatch>(*this, *eager_)),
      dispatch_(autograd_.get()) {
  install_builtins(*this);
  outer_ = running_interpreter.exchange(this);
}
Interpreter::~Interpreter() { running_interpreter.store(outer_); }
Interpreter* Interpreter::running() { return running_interpreter.load(); }

// ---- modules ----

void Interpreter::run_file(const std::string& path) { load_module("__main__", path); }

ModuleObj& Interpreter::main_module() {
  auto it = modules_.find("__main__");
  if (it == modules_.end()) {
    auto m = std::make_shared<ModuleObj>();
    m->name = "__main__";
    m->globals["__name__"] = Value::str("__main__");
    it = modules_.emplace("__main__", Value(Type::Module, m)).first;
  }
  return it->second.obj<ModuleObj>();
}

Value Interpreter::run_interactive(std::shared_ptr<const Source> src) {
  sources_.push_back(src);
  std::unique_ptr<Module> ast = parse(src);
  resolve(*ast);
  auto frame = std::make_shared<Frame>();
  Frame& f = *frame;
  f.module = &main_module();
  f.slots.resize(ast->locals.size(), Value::unbound());
  const Module& m = *interactive_.emplace_back(std::move(ast));
  Value ret, result = Value::none();
  f.caller = current_;
  Frame* caller = std::exchange(current_, &f);
  try {
    if (m.body.size() == 1 && m.body[0]->kind == StmtKind::ExprStmt) {
      f.loc = &m.body[0]->loc;
      result = eval(*static_cast<const ExprStmt&>(*m.body[0]).value, f);
    } else {
      exec(m.body, f, ret);
    }
  } catch (...) {
    current_ = caller;
    rethrow_with_frame(f);
  }
  current_ = caller;
  return result;
}

ModuleObj& Interpreter::import_module(const std::string& name) {
  if (auto it = modules_.find(name); it != modules_.end()) return it->second.obj<ModuleObj>();
  Value builtin = make_builtin_module(*this, name);
  if (!builtin.is_none()) {
    modules_[name] = builtin;
    return builtin.obj<ModuleObj>();
  }
  if (name.find('.') == std::string::npos) {
    for (const auto& dir : opts_.module_path) {
      std::filesystem::path p = std::filesystem::path(dir) / (name + ".thn");
      std::error_code ec;
      if (std::filesystem::is_regular_file(p, ec)) return load_module(name, p.string());
    }
  }
  fail(ErrorKind::ModuleNotFoundError,
       "No module named '{}' (thn imports NAME.thn from the script's folder and stdlib/, and its built-in modules; "
       "Python modules are not supported in thn)",
       name);
}

ModuleObj& Interpreter::load_module(const std::string& name, const std::string& path) {
  bool library = false;
  if (!opts_.library_dir.empty()) {
    std::error_code ec;
    library = std::filesystem::equivalent(std::filesystem::path(path).parent_path(), opts_.library_dir, ec);
  }
  auto src = Source::load(path, library ? name : "");
  sources_.push_back(src);
  auto m = std::make_shared<ModuleObj>();
  m->name = name;
  m->path = path;
  m->library = library;
  m->ast = parse(src);
  resolve(*m->ast);
  m->globals["__name__"] = Value::str(name);
  m->globals["__file__"] = Value::str(path);
  // Registered before it runs, so circular imports see the partial module as in Python.
  modules_[name] = Value(Type::Module, m);
  auto frame = std::make_shared<Frame>();
  Frame& f = *frame;
  f.module = m.get();
  f.slots.resize(m->ast->locals.size(), Value::unbound());
  Value ret;
  f.caller = current_;
  Frame* caller = std::exchange(current_, &f);
  try {
    exec(m->ast->body, f, ret);
  } catch (...) {
    modules_.erase(name);
    current_ = caller;
    rethrow_with_frame(f);
  }
  current_ = caller;
  return *m;
}

void Interpreter::exec_import(const Stmt& s, Frame& f) {
  if (s.kind == StmtKind::Import) {
    for (auto& a : static_cast<const Import&>(s).names) {
      f.loc = &a.loc;
      ModuleObj& m = import_module(a.name);
      store_name(*a.asname, modules_[m.name], f);
    }
    return;
  }
  auto& imp = static_cast<const FromImport&>(s);
  ModuleObj& m = import_module(imp.module);
  if (imp.names.empty()) {  // from m import *
    for (auto& [k, v] : m.globals)
      if (!k.starts_with("_")) f.module->globals[k] = v;
    return;
  }
  for (auto& a : imp.names) {
    f.loc = &a.loc;
    auto it = m.globals.find(a.name);
    if (it == m.globals.end()) {
      if (m.path.empty()) fail(ErrorKind::ImportError, "cannot import name '{}' from '{}' (unknown location)", a.name, m.name);
      fail(ErrorKind::ImportError, "cannot import name '{}' from '{}' ({})", a.name, m.name, m.path);
    }
    store_name(*a.asname, it->second, f);
  }
}

// ---- names ----

Value& Interpreter::name_slot(const Name& n, Frame& f) {
  if (n.scope == Scope::Local) return f.slots[size_t(n.slot)];
  Frame* env = f.env.get();
  for (int d = 1; d < n.depth; ++d) env = env->env.get();
  return env->slots[size_t(n.slot)];
}

// What CPython 3.12 adds to a NameError: `self.x` in a method whose object
// has x, else the closest name the frame sees (its locals, the module's
// globals, the builtins), else the import a module name lacks.
std::string Interpreter::name_note(const std::string& id, const Frame& f) {
  if (f.function && !f.slots.empty() && f.function->def->locals.front() == "self" && f.slots[0].is(Type::Instance) &&
      !object_attr(f.slots[0], id).is(Type::Unbound))
    return fmt::format(". Did you mean: 'self.{}'?", id);
  // The locals, then the globals, then the builtins, each pool on its own
  // (a local is suggested before a closer global, as CPython does).
  auto sorted_keys = [](const std::unordered_map<std::string, Value>& m) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : m) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    return keys;
  };
  for (const std::vector<std::string>& pool :
       {f.function ? f.function->def->locals : std::vector<std::string>{}, sorted_keys(f.module->globals),
        sorted_keys(builtins_)})
    if (std::string note = did_you_mean(id, pool); !note.empty()) return note;
  for (const char* m : {"math", "time", "cuda", "nn", "optim", "safetensors"})
    if (id == m) return fmt::format(". Did you forget to import '{}'?", id);
  return "";
}

Value Interpreter::load_name(const Name& n, Frame& f) {
  if (n.scope == Scope::Class)  // a class body's name, until it is bound there: a global's
    if (const Value* v = f.class_ns.obj<DictObj>().find(Value::str(n.id))) return *v;
  if (n.scope == Scope::Global || n.scope == Scope::Class) {
    auto& g = f.module->globals;
    if (auto it = g.find(n.id); it != g.end()) {
      // A library module's names cannot be rebound (no `global`, module
      // attributes are read-only): only what can change in place (a list,
      // a dict, an object) is guarded there.
      const Value& v = it->second;
      if (dispatch_->tracing() &&
          !(f.module->library && !v.is(Type::List) && !v.is(Type::Dict) && !v.is(Type::Instance)))
        dispatch_->external_load(n.id, v);
      return it->second;
    }
    if (auto it = builtins_.find(n.id); it != builtins_.end()) {
      // (a library module's names cannot be rebound: no guard there)
      if (dispatch_->tracing() && !f.module->library) dispatch_->builtin_load(n.id, g);
      return it->second;
    }
    f.loc = &n.loc;
    throw Error(ErrorKind::NameError, fmt::format("name '{}' is not defined", n.id)).with_note(name_note(n.id, f));
  }
  Value& v = name_slot(n, f);
  if (n.scope != Scope::Local && dispatch_->tracing() && !v.is(Type::Unbound)) {
    Frame* env = f.env.get();
    for (int d = 1; d < n.depth; ++d) env = env->env.get();
    if (!env->in_trace) dispatch_->external_load(n.id, v);
  }
  if (v.is(Type::Unbound)) {
    f.loc = &n.loc;
    if (n.scope == Scope::Local)
      fail(ErrorKind::UnboundLocalError, "cannot access local variable '{}' where it is not associated with a value", n.id);
    fail(ErrorKind::NameError, "cannot access free variable '{}' where it is not associated with a value in enclosing scope", n.id);
  }
  return v;
}

void Interpreter::store_name(const Name& n, const Value& v, Frame& f) {
  if (n.scope == Scope::Global) f.module->globals[n.id] = v;
  else if (n.scope == Scope::Class) f.class_ns.obj<DictObj>().set(Value::str(n.id), v);
  else name_slot(n, f) = v;
}

// ---- statements ----

Interpreter::Flow Interpreter::exec(const Body& body, Frame& f, Value& ret) {
  for (auto& s : body) {
    Flow flow = exec(*s, f, ret);
    if (flow != Flow::Normal) return flow;
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::exec(const Stmt& s, Frame& f, Value& ret) {
  f.loc = &s.loc;
  if (interrupt_requested() && take_interrupt()) fail(ErrorKind::KeyboardInterrupt, "");
  if (live_containers() >= collect_at_ || Storage::live_bytes() >= collect_bytes_at_) [[unlikely]] {
    collect_cycles();
    collect_at_ = std::max<size_t>(10000, 2 * live_containers());
    collect_bytes_at_ = std::max<int64_t>(int64_t(256) << 20, 2 * Storage::live_bytes());
  }
  switch (s.kind) {
    case StmtKind::ExprStmt: eval(*static_cast<const ExprStmt&>(s).value, f); return Flow::Normal;
    case StmtKind::Assign: {
      auto& a = static_cast<const Assign&>(s);
      Value v = eval(*a.value, f);
      for (auto& t : a.targets) assign(*t, v, f);
      return Flow::Normal;
    }
    case StmtKind::AugAssign: {
      auto& a = static_cast<const AugAssign&>(s);
      if (a.target->kind == ExprKind::Subscript) {
        // x[i] op= v: read the item, update it (in place for a tensor view), store it back.
        auto& sub = static_cast<const Subscript&>(*a.target);
        Value obj = eval(*sub.value, f);
        Value idx = eval_subscript_index(sub, f);
        Value rhs = eval(*a.value, f);
        f.loc = &s.loc;
        Value updated = inplace_binary(a.op, getitem(obj, idx), rhs);
        setitem(obj, idx, updated);
        return Flow::Normal;
      }
      if (a.target->kind == ExprKind::Attribute) {
        // x.a op= v: read, update (in place for a tensor), store back.
        auto& at = static_cast<const Attribute&>(*a.target);
        Value obj = eval(*at.value, f);
        f.loc = &at.loc;
        Value cur = getattr(obj, at.attr);
        Value rhs = eval(*a.value, f);
        f.loc = &s.loc;
        Value updated = inplace_binary(a.op, cur, rhs);
        f.loc = &at.loc;
        setattr(obj, at.attr, updated);
        return Flow::Normal;
      }
      auto& n = static_cast<const Name&>(*a.target);
      Value cur = load_name(n, f);
      Value rhs = eval(*a.value, f);
      f.loc = &s.loc;
      // s += "x" where only the name holds the str (and cur, here): appended
      // in place, so a loop of appends is linear (as CPython resizes an
      // unshared str). Nothing else can see the change.
      if (a.op == ast::BinOp::Add && cur.is(Type::Str) && rhs.is(Type::Str) && cur.object().use_count() == 2) {
        cur.obj<StrObj>().s += rhs.as_str();
        return Flow::Normal;
      }
      store_name(n, inplace_binary(a.op, cur, rhs), f);
      return Flow::Normal;
    }
    case StmtKind::If: {
      auto& i = static_cast<const If&>(s);
      return truth(eval(*i.test, f)) ? exec(i.body, f, ret) : exec(i.orelse, f, ret);
    }
    case StmtKind::While: {
      auto& w = static_cast<const While&>(s);
      while (true) {
        f.loc = &s.loc;
        if (!truth(eval(*w.test, f))) break;
        Flow flow = exec(w.body, f, ret);
        if (flow == Flow::Break) return Flow::Normal;
        if (flow == Flow::Return) return flow;
      }
      return exec(w.orelse, f, ret);
    }
    case StmtKind::For: {
      auto& fo = static_cast<const For&>(s);
      Value it = eval(*fo.iter, f);
      // One iteration; false once the loop is left (break or return).
      Flow exit = Flow::Normal;
      auto step = [&](const Value& x) {
        assign(*fo.target, x, f);
        Flow flow = exec(fo.body, f, ret);
        if (flow == Flow::Return || flow == Flow::Break) exit = flow;
        return flow != Flow::Break && flow != Flow::Return;
      };
      if (it.is(Type::Dict)) {  // its keys; a change of its size is Python's RuntimeError
        const auto& d = it.obj<DictObj>();
        size_t n = d.count;
        for (const Value& k : d.keys()) {
          if (!step(k)) break;
          if (d.count != n) {
            f.loc = &fo.iter->loc;
            fail(ErrorKind::RuntimeError, "dictionary changed size during iteration");
          }
        }
      } else {
        each(it, step);  // (a range not materialised; a list live; an iterator one item at a time)
      }
      if (exit == Flow::Break) return Flow::Normal;
      return exit == Flow::Return ? exit : exec(fo.orelse, f, ret);
    }
    case StmtKind::Break: return Flow::Break;
    case StmtKind::Continue: return Flow::Continue;
    case StmtKind::Pass: return Flow::Normal;
    case StmtKind::Return: {
      auto& r = static_cast<const Return&>(s);
      ret = r.value ? eval(*r.value, f) : Value();
      return Flow::Return;
    }
    case StmtKind::FunctionDef: {
      auto& def = static_cast<const FunctionDef&>(s);
      store_name(*def.binding, decorate(make_function(def, f), def.decorators, f), f);
      return Flow::Normal;
    }
    case StmtKind::Import: case StmtKind::FromImport: exec_import(s, f); return Flow::Normal;
    case StmtKind::Try: return exec_try(static_cast<const Try&>(s), f, ret);
    case StmtKind::Raise: exec_raise(static_cast<const Raise&>(s), f);
    case StmtKind::Delete:
      for (auto& t : static_cast<const Delete&>(s).targets) exec_delete(*t, f);
      return Flow::Normal;
    case StmtKind::With: {
      // no_grad() / enable_grad(): autograd's gradient mode for the body
      // (the last item's), back as it was after it, however it ends.
      auto& w = static_cast<const With&>(s);
      bool enabled = autograd_->enabled;
      std::vector<std::pair<Value, const Expr*>> contexts;
      for (auto& item : w.items) {
        Value ctx = eval(*item, f);
        if (ctx.is(Type::Tuple) && item->kind == ExprKind::TupleExpr)  // with (no_grad(), enable_grad()): (3.10's form)
          for (const Value& x : ctx.items()) contexts.emplace_back(x, item.get());
        else
          contexts.emplace_back(ctx, item.get());
      }
      for (auto& [ctx, item] : contexts) {
        f.loc = &item->loc;
        const bool off = ctx.is(Type::Instance) && ctx.obj<InstanceObj>().cls == grad_mode_class(false).object();
        const bool on = ctx.is(Type::Instance) && ctx.obj<InstanceObj>().cls == grad_mode_class(true).object();
        if (!off && !on)
          fail(ErrorKind::TypeError, "'{}' object does not support the context manager protocol (thn's are no_grad() and enable_grad())",
               type_name(ctx));
        enabled = on;
      }
      GradMode mode(*autograd_, enabled);
      return exec(w.body, f, ret);
    }
    case StmtKind::ClassDef: {
      auto& c = static_cast<const ClassDef&>(s);
      store_name(*c.binding, decorate(exec_class(c, f), c.decorators, f), f);
      return Flow::Normal;
    }
    case StmtKind::Assert: {
      auto& a = static_cast<const Assert&>(s);
      if (!truth(eval(*a.test, f))) {
        std::string msg = a.msg ? to_str(eval(*a.msg, f)) : "";
        f.loc = &s.loc;
        throw Error(ErrorKind::AssertionError, msg);
      }
      return Flow::Normal;
    }
  }
  return Flow::Normal;
}

namespace {
// Python's own decorators, which thn does not have: an unknown name among
// them is named as a construct thn leaves out.
const char* python_decorator(const Expr& e) {
  const Expr* root = &e;
  if (root->kind == ExprKind::Call) root = static_cast<const Call&>(*root).func.get();
  if (root->kind != ExprKind::Name) return nullptr;
  static const char* const names[] = {"property", "classmethod", "dataclass", "abstractmethod", "cached_property",
                                      "contextmanager", "lru_cache", "cache", "wraps", "total_ordering"};
  const std::string& id = static_cast<const Name&>(*root).id;
  for (const char* n : names)
    if (id == n) return n;
  return nullptr;
}
}  // namespace

// @a @b def f / class C: a(b(f)), the decorators evaluated first, top down.
Value Interpreter::decorate(Value v, const std::vector<ExprPtr>& decorators, Frame& f) {
  std::vector<Value> decs;
  for (auto& d : decorators) {
    try {
      f.loc = &d->loc;
      decs.push_back(eval(*d, f));
    } catch (Error& e) {
      const char* name = e.kind() == ErrorKind::NameError ? python_decorator(*d) : nullptr;
      if (name)
        e.with_note(fmt::format(": Python's @{} is not supported in thn (its decorators are @jit, @staticmethod "
                                "and functions of the program)", name));
      throw;
    }
  }
  for (size_t i = decs.size(); i-- > 0;) {
    CallArgs args;
    args.args.push_back(v);
    f.loc = &decorators[i]->loc;
    v = call(decs[i], args);
  }
  return v;
}

void Interpreter::assign(const Expr& target, const Value& v, Frame& f) {
  switch (target.kind) {
    case ExprKind::Name: store_name(static_cast<const Name&>(target), v, f); return;
    case ExprKind::Subscript: {
      auto& s = static_cast<const Subscript&>(target);
      Value obj = eval(*s.value, f);
      Value idx = eval_subscript_index(s, f);
      f.loc = &s.loc;
      setitem(obj, idx, v);
      return;
    }
    case ExprKind::TupleExpr: case ExprKind::ListExpr: {
      auto& elts = target.kind == ExprKind::TupleExpr ? static_cast<const TupleExpr&>(target).elts
                                                      : static_cast<const ListExpr&>(target).elts;
      const bool iterable = v.is_sequence() || v.is(Type::Tensor) || v.is(Type::Range) || v.is(Type::Str) ||
                            v.is(Type::Dict) || v.is(Type::Iterator) ||
                            (v.is(Type::Instance) && (!special(v, "__iter__").is(Type::Unbound) ||
                                                      !special(v, "__getitem__").is(Type::Unbound)));
      if (!iterable) fail(ErrorKind::TypeError, "cannot unpack non-iterable {} object", type_name(v));
      std::vector<Value> items = v.is_sequence() ? v.items() : iterate(v);
      size_t star = elts.size();
      for (size_t i = 0; i < elts.size(); ++i)
        if (elts[i]->kind == ExprKind::Starred) star = i;
      if (star < elts.size()) {  // a, *rest, b = items: rest takes what the others leave, as a list
        size_t fixed = elts.size() - 1;
        if (items.size() < fixed)
          fail(ErrorKind::ValueError, "not enough values to unpack (expected at least {}, got {})", fixed, items.size());
        size_t rest = items.size() - fixed;
        for (size_t i = 0; i < star; ++i) assign(*elts[i], items[i], f);
        assign(*static_cast<const Starred&>(*elts[star]).value,
               Value::list(std::vector<Value>(items.begin() + long(star), items.begin() + long(star + rest))), f);
        for (size_t i = star + 1; i < elts.size(); ++i) assign(*elts[i], items[i - 1 + rest], f);
        return;
      }
      if (items.size() > elts.size())
        fail(ErrorKind::ValueError, "too many values to unpack (expected {})", elts.size());
      if (items.size() < elts.size())
        fail(ErrorKind::ValueError, "not enough values to unpack (expected {}, got {})", elts.size(), items.size());
      for (size_t i = 0; i < elts.size(); ++i) assign(*elts[i], items[i], f);
      return;
    }
    default: {
      auto& a = static_cast<const Attribute&>(target);
      Value obj = eval(*a.value, f);
      f.loc = &a.loc;
      setattr(obj, a.attr, v);
    }
  }
}

// ---- expressions ----

Value Interpreter::eval(const Expr& e, Frame& f) {
  switch (e.kind) {
    case ExprKind::Name: {
      auto& n = static_cast<const Name&>(e);
      if (n.scope == Scope::Local) {
        const Value& v = f.slots[size_t(n.slot)];
        if (!v.is(Type::Unbound)) return v;
      }
      return load_name(n, f);
    }
    case ExprKind::Constant: {
      auto& c = static_cast<const Constant&>(e);
      switch (c.type) {
        case Constant::Type::None: return Value();
        case Constant::Type::Bool: return Value(c.b);
        case Constant::Type::Int: return Value(c.i);
        case Constant::Type::Float: return Value(c.f);
        case Constant::Type::Str: return Value::str(c.s);
        case Constant::Type::Ellipsis: return Value::ellipsis();
      }
      return Value();
    }
    case ExprKind::TupleExpr: return Value::tuple(eval_items(static_cast<const TupleExpr&>(e).elts, f));
    case ExprKind::ListExpr: return Value::list(eval_items(static_cast<const ListExpr&>(e).elts, f));
    case ExprKind::Dict: {
      auto& d = static_cast<const ast::Dict&>(e);
      Value out = make_dict();
      auto& dict = out.obj<DictObj>();
      for (size_t i = 0; i < d.keys.size(); ++i) {
        if (!d.keys[i]) {  // {**m}
          Value m = eval(*d.values[i], f);
          f.loc = &d.values[i]->loc;
          if (!m.is(Type::Dict)) fail(ErrorKind::TypeError, "'{}' object is not a mapping", type_name(m));
          m.obj<DictObj>().each([&](const Value& k, const Value& v) { dict.set(k, v); });
          continue;
        }
        Value k = eval(*d.keys[i], f);
        Value v = eval(*d.values[i], f);
        f.loc = &d.keys[i]->loc;
        dict.set(k, std::move(v));
      }
      return out;
    }
    case ExprKind::Lambda: return make_function(*static_cast<const Lambda&>(e).def, f);
    case ExprKind::FString: return eval_fstring(static_cast<const FString&>(e), f);
    case ExprKind::FormattedValue: {
      auto& fv = static_cast<const FormattedValue&>(e);
      Value v = eval(*fv.value, f);
      std::string spec = fv.spec ? eval(*fv.spec, f).as_str() : "";
      f.loc = &fv.loc;
      if (fv.conversion == 's') v = Value::str(str(v));
      if (fv.conversion == 'r' || fv.conversion == 'a') v = Value::str(repr(v));
      return Value::str(format(v, spec));
    }
    case ExprKind::Starred:
      f.loc = &e.loc;
      fail(ErrorKind::SyntaxError, "can't use starred expression here");
    case ExprKind::ListComp: return eval_list_comp(static_cast<const ListComp&>(e), f);
    case ExprKind::Call: return eval_call(static_cast<const Call&>(e), f);
    case ExprKind::Attribute: {
      auto& a = static_cast<const Attribute&>(e);
      Value obj = eval(*a.value, f);
      f.loc = &a.loc;
      return getattr(obj, a.attr);
    }
    case ExprKind::Subscript: {
      auto& s = static_cast<const Subscript&>(e);
      Value obj = eval(*s.value, f);
      Value idx = eval_subscript_index(s, f);
      f.loc = &s.loc;
      return getitem(obj, idx);
    }
    case ExprKind::Slice: {
      auto& s = static_cast<const ast::Slice&>(e);
      auto obj = std::make_shared<SliceObj>();
      if (s.lower) obj->start = eval(*s.lower, f);
      if (s.upper) obj->stop = eval(*s.upper, f);
      if (s.step) obj->step = eval(*s.step, f);
      return Value(Type::Slice, obj);
    }
    case ExprKind::Binary: {
      auto& b = static_cast<const Binary&>(e);
      Value x = eval(*b.lhs, f);
      Value y = eval(*b.rhs, f);
      f.loc = &b.loc;
      return binary(b.op, x, y);
    }
    case ExprKind::Unary: {
      auto& u = static_cast<const Unary&>(e);
      Value x = eval(*u.operand, f);
      f.loc = &u.loc;
      return unary(u.op, x);
    }
    case ExprKind::Not: {
      auto& n = static_cast<const Not&>(e);
      Value x = eval(*n.operand, f);
      f.loc = &n.loc;
      return Value(!truth(x));
    }
    case ExprKind::BoolOp: {
      auto& b = static_cast<const BoolOp&>(e);
      Value x = eval(*b.lhs, f);
      f.loc = &b.loc;
      if (truth(x) != b.is_and) return x;
      return eval(*b.rhs, f);
    }
    case ExprKind::Compare: {
      auto& c = static_cast<const Compare&>(e);
      Value lhs = eval(*c.first, f);
      Value result;
      for (size_t i = 0; i < c.ops.size(); ++i) {
        Value rhs = eval(*c.rest[i], f);
        f.loc = &c.loc;
        result = compare(c.ops[i], lhs, rhs);
        if (i + 1 < c.ops.size() && !truth(result)) return result;
        lhs = std::move(rhs);
      }
      return result;
    }
    case ExprKind::IfExp: {
      auto& i = static_cast<const IfExp&>(e);
      Value t = eval(*i.test, f);
      f.loc = &i.loc;
      return truth(t) ? eval(*i.body, f) : eval(*i.orelse, f);
    }
  }
  return Value();
}

Value Interpreter::eval_subscript_index(const Subscript& s, Frame& f) {
  if (!s.tuple) return eval(*s.index[0], f);
  std::vector<Value> items;
  for (auto& i : s.index) items.push_back(eval(*i, f));
  return Value::tuple(std::move(items));
}

std::vector<Value> Interpreter::eval_items(const std::vector<ExprPtr>& elts, Frame& f) {
  std::vector<Value> items;
  items.reserve(elts.size());
  for (auto& x : elts) {
    if (x->kind != ExprKind::Starred) {
      items.push_back(eval(*x, f));
      continue;
    }
    Value seq = eval(*static_cast<const Starred&>(*x).value, f);
    f.loc = &x->loc;
    std::vector<Value> more = iterate(seq);
    items.insert(items.end(), more.begin(), more.end());
  }
  return items;
}

Value Interpreter::eval_fstring(const FString& s, Frame& f) {
  std::string out;
  for (auto& part : s.parts) {
    Value v = eval(*part, f);
    out += v.as_str();
  }
  return Value::str(std::move(out));
}

Value Interpreter::eval_list_comp(const ListComp& c, Frame& f) {
  std::vector<Value> out;
  comp_loop(c, 0, f, out);
  if (!c.key) return Value::list(std::move(out));
  Value d = make_dict();
  for (size_t i = 0; i + 1 < out.size(); i += 2) d.obj<DictObj>().set(out[i], std::move(out[i + 1]));
  return d;
}

void Interpreter::comp_loop(const ListComp& c, size_t gen, Frame& f, std::vector<Value>& out) {
  if (gen == c.generators.size()) {
    if (c.key) {  // a dict comprehension collects key, value pairs
      out.push_back(eval(*c.key, f));
      f.loc = &c.key->loc;
      hash_value(out.back());
    }
    out.push_back(eval(*c.elt, f));
    return;
  }
  const Comprehension& g = c.generators[gen];
  Value it = eval(*g.iter, f);
  f.loc = &g.iter->loc;
  each(it, [&](const Value& x) {  // (an iterator one item at a time, as Python draws it)
    assign(*g.target, x, f);
    for (auto& cond : g.ifs)
      if (!truth(eval(*cond, f))) return true;
    comp_loop(c, gen + 1, f, out);
    return true;
  });
}

Value Interpreter::eval_call(const Call& c, Frame& f) {
  Value self, fn;
  std::optional<MethodRef> method;  // a tensor method: dispatched without building a bound method
  if (c.func->kind == ExprKind::Attribute) {
    auto& a = static_cast<const Attribute&>(*c.func);
    self = eval(*a.value, f);
    if (self.is(Type::Tensor)) method = find_method(a.attr);
    if (method && method->op->has('A')) method.reset();
    if (!method) {
      f.loc = &a.loc;
      fn = getattr(self, a.attr);
    }
  } else {
    fn = eval(*c.func, f);
  }
  CallArgs args;
  args.args = eval_items(c.args, f);
  for (auto& k : c.keywords) {
    Value v = eval(*k.value, f);
    if (!k.name.empty()) {
      for (auto& [name, _] : args.kwargs)
        if (name == k.name) {
          f.loc = &k.loc;
          fail(ErrorKind::TypeError, "got multiple values for keyword argument '{}'", name);
        }
      args.kwargs.emplace_back(k.name, std::move(v));
      continue;
    }
    f.loc = &k.loc;  // f(**mapping)
    if (!v.is(Type::Dict)) fail(ErrorKind::TypeError, "argument after ** must be a mapping, not {}", type_name(v));
    v.obj<DictObj>().each([&](const Value& key, const Value& x) {
      if (!key.is(Type::Str)) fail(ErrorKind::TypeError, "keywords must be strings");
      for (auto& [name, _] : args.kwargs)
        if (name == key.as_str()) fail(ErrorKind::TypeError, "got multiple values for keyword argument '{}'", name);
      args.kwargs.emplace_back(key.as_str(), x);
    });
  }
  f.loc = &c.loc;
  if (method) return dispatch_->call(*method->op, &self, args.args, args, method->inplace);
  return call(fn, args);
}

}  // namespace thn
