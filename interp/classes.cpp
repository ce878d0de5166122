// Classes, instances and exceptions: `class`, attribute access on objects,
// `try` / `except` / `finally`, `raise` and `del`.
#include <new>
#include <stdexcept>

#include "interp/interpreter.h"
#include "interp/objects.h"

namespace thn {

using namespace ast;

namespace {

// The attribute `name` of class `cls` as read through `self` (an instance,
// or none when read from the class): functions bind to self, static
// methods unwrap.
Value bind(const Value& attr, const Value& self) {
  if (attr.is(Type::StaticMethod)) return attr.obj<StaticMethodObj>().fn;
  if (self.is_none() || !attr.is(Type::Function)) return attr;
  auto m = std::make_shared<MethodObj>();
  m->self = self;
  m->fn = attr;
  return Value(Type::Method, m);
}

std::string exception_str(Interpreter& in, const Value& exc) {
  const Value* args = dict_get(exc.obj<InstanceObj>().dict, "args");
  if (!args || !args->is(Type::Tuple)) return "";
  auto& items = args->items();
  if (items.empty()) return "";
  if (items.size() == 1) {
    // KeyError('w') prints as 'w', as in Python.
    if (exc.obj<InstanceObj>().cls->kind == ErrorKind::KeyError) return in.repr(items[0]);
    return in.str(items[0]);
  }
  return in.repr(*args);
}

std::string instance_repr(const Value& v, bool repr) {
  Interpreter* in = Interpreter::running();
  auto& inst = v.obj<InstanceObj>();
  if (in) {
    Value m = in->special(v, repr ? "__repr__" : "__str__");
    if (m.is(Type::Unbound) && !repr) m = in->special(v, "__repr__");
    if (!m.is(Type::Unbound)) {
      CallArgs none;
      Value s = in->call(m, none);
      if (!s.is(Type::Str))
        fail(ErrorKind::TypeError, "__{}__ returned non-string (type {})", repr ? "repr" : "str", type_name(s));
      return s.as_str();
    }
    if (inst.cls->is_exception()) {
      if (!repr) return exception_str(*in, v);
      const Value* args = dict_get(inst.dict, "args");
      std::string a = args && args->is(Type::Tuple) ? in->repr(*args) : "()";
      if (args && args->is(Type::Tuple) && args->items().size() == 1) a.erase(a.size() - 2, 1);  // ('x',) -> ('x')
      return inst.cls->name + a;
    }
  }
  return fmt::format("<{}.{} object at {}>", inst.cls->module, inst.cls->name, fmt::ptr(&inst));
}

const bool installed = (set_instance_repr(instance_repr), true);

}  // namespace

std::string Interpreter::str(const Value& v) { return to_str(v); }
std::string Interpreter::repr(const Value& v) { return to_repr(v); }

// ---- classes ----

Value Interpreter::exec_class(const ClassDef& c, Frame& f) {
  auto cls = std::make_shared<ClassObj>();
  cls->name = c.name;
  cls->module = f.module->name;
  cls->dict = make_dict();
  Value base = c.base ? eval(*c.base, f) : Value();
  if (base.is(Type::TypeObj) && base.as_type() == TypeTag::Object) base = Value();  // class A(object): as class A:
  if (!base.is_none()) {
    f.loc = &c.base->loc;
    if (!base.is(Type::Class)) fail(ErrorKind::TypeError, "a class can only inherit from a class, not from {} '{}'", type_name(base), to_repr(base));
    cls->base = std::static_pointer_cast<ClassObj>(base.object());
    cls->kind = cls->base->kind;
  }
  // The body runs in a frame of its own; what it binds lands in the class's dict.
  auto frame = std::make_shared<Frame>();
  Frame& body = *frame;
  body.slots.resize(c.locals.size(), Value::unbound());
  body.env = f.name == std::string_view("<module>") ? nullptr : f.shared_from_this();
  body.module = f.module;
  body.name = c.name.c_str();
  body.loc = &c.loc;
  body.class_ns = cls->dict;
  body.caller = current_;
  body.in_trace = dispatch_->tracing();
  Frame* caller = std::exchange(current_, &body);
  Value ret;
  try {
    exec(c.body, body, ret);
  } catch (...) {
    current_ = caller;
    rethrow_with_frame(body);  // the class body is a frame of the traceback, as in Python
  }
  current_ = caller;
  cls->dict.obj<DictObj>().each([&](const Value&, const Value& v) {
    if (v.is(Type::Function)) v.obj<FunctionObj>().owner = cls;
    if (v.is(Type::StaticMethod) && v.obj<StaticMethodObj>().fn.is(Type::Function))
      v.obj<StaticMethodObj>().fn.obj<FunctionObj>().owner = cls;
  });
  return Value(Type::Class, cls);
}

Value Interpreter::instantiate(const Value& cls_value, CallArgs& args) {
  auto cls = std::static_pointer_cast<ClassObj>(cls_value.object());
  Value self(Type::Instance, std::make_shared<InstanceObj>(cls));
  const Value* init = cls->lookup("__init__");
  if (cls->is_exception()) {  // exceptions keep their arguments
    self.obj<InstanceObj>().dict.obj<DictObj>().set(Value::str("args"), Value::tuple(args.args));
    if (!init) return self;
  }
  if (!init) {
    if (!args.args.empty() || !args.kwargs.empty()) fail(ErrorKind::TypeError, "{}() takes no arguments", cls->name);
    return self;
  }
  Value result = call(bind(*init, self), args);
  if (!result.is_none()) fail(ErrorKind::TypeError, "__init__() should return None, not '{}'", type_name(result));
  return self;
}

Value Interpreter::special(const Value& obj, const char* name) {
  if (!obj.is(Type::Instance)) return Value::unbound();
  const Value* m = obj.obj<InstanceObj>().cls->lookup(name);
  return m ? bind(*m, obj) : Value::unbound();
}

Value Interpreter::object_attr(const Value& obj, const std::string& name) {
  switch (obj.type()) {
    case Type::Instance: {
      auto& inst = obj.obj<InstanceObj>();
      if (const Value* v = inst.dict.obj<DictObj>().find(Value::str(name))) return *v;
      if (const Value* v = inst.cls->lookup(name)) return bind(*v, obj);
      if (name == "__class__") return Value(Type::Class, inst.cls);
      if (name == "__dict__") return inst.dict;
      if ((name == "__cause__" || name == "__context__") && inst.cls->is_exception()) return Value();
      return Value::unbound();
    }
    case Type::Class: {
      auto& cls = obj.obj<ClassObj>();
      if (const Value* v = cls.lookup(name)) return bind(*v, Value());
      if (name == "__name__") return Value::str(cls.name);
      if (name == "__base__") return cls.base ? Value(Type::Class, cls.base) : Value();
      return Value::unbound();
    }
    case Type::Super: {
      auto& s = obj.obj<SuperObj>();
      if (s.cls->base)
        if (const Value* v = s.cls->base->lookup(name)) return bind(*v, s.self);
      if (name == "__init__" && s.cls->is_exception()) {  // BaseException.__init__ keeps its arguments
        Value self = s.self;
        return make_builtin("__init__", [self](Interpreter&, CallArgs& a) {
          if (!a.kwargs.empty()) fail(ErrorKind::TypeError, "{}() takes no keyword arguments", type_name(self));
          self.obj<InstanceObj>().dict.obj<DictObj>().set(Value::str("args"), Value::tuple(a.args));
          return Value();
        });
      }
      if (name == "__init__")  // object.__init__
        return make_builtin("__init__", [](Interpreter&, CallArgs&) { return Value(); });
      return Value::unbound();
    }
    case Type::Method:
      if (name == "__self__") return obj.obj<MethodObj>().self;
      if (name == "__func__") return obj.obj<MethodObj>().fn;
      return Value::unbound();
    case Type::Function:
      if (name == "__name__") return Value::str(obj.obj<FunctionObj>().def->name);
      return Value::unbound();
    case Type::Builtin:
      if (name == "__name__") return Value::str(obj.obj<BuiltinObj>().name);
      return Value::unbound();
    case Type::TypeObj: {
      // int.__name__; str.lower, list.append, dict.get: the method taking
      // its object as the first argument (key=str.lower).
      const TypeTag t = obj.as_type();
      const char* type = type_tag_name(t);
      if (name == "__name__") return Value::str(type);
      const Value sample = t == TypeTag::Str ? Value::str("") : t == TypeTag::List ? Value::list({}) : t == TypeTag::Tuple ? Value::tuple({})
                           : t == TypeTag::Dict ? make_dict() : Value::unbound();
      if (sample.is(Type::Unbound)) return Value::unbound();
      try {
        getattr(sample, name);
      } catch (Error&) {
        return Value::unbound();
      }
      return make_builtin(name, [sample, type, name](Interpreter& in, CallArgs& a) {
        if (a.args.empty()) fail(ErrorKind::TypeError, "unbound method {}.{}() needs an argument", type, name);
        const Value self = a.args[0];
        if (self.type() != sample.type())
          fail(ErrorKind::TypeError, "descriptor '{}' for '{}' objects doesn't apply to a '{}' object", name, type, type_name(self));
        a.args.erase(a.args.begin());
        return in.call(in.getattr(self, name), a);
      });
    }
    default: return Value::unbound();
  }
}

void Interpreter::setattr(const Value& obj, const std::string& name, const Value& v) {
  if (obj.is(Type::Instance)) return obj.obj<InstanceObj>().dict.obj<DictObj>().set(Value::str(name), v);
  if (obj.is(Type::Class)) return obj.obj<ClassObj>().dict.obj<DictObj>().set(Value::str(name), v);
  if (obj.is(Type::Tensor) && set_autograd_attribute(*this, obj, name, v)) return;
  if (obj.is(Type::Tensor) && name == "data") {
    // t.data = u: not a thn operation (it would rebind storage under the tracer's feet).
    fail(ErrorKind::AttributeError, "attribute 'data' of 'Tensor' objects cannot be assigned in thn; use t.copy_(u)");
  }
  fail(ErrorKind::AttributeError, "'{}' object attribute '{}' is read-only", type_name(obj), name);
}

void Interpreter::delattr(const Value& obj, const std::string& name) {
  DictObj* d = obj.is(Type::Instance) ? &obj.obj<InstanceObj>().dict.obj<DictObj>()
               : obj.is(Type::Class) ? &obj.obj<ClassObj>().dict.obj<DictObj>() : nullptr;
  if (!d) fail(ErrorKind::AttributeError, "'{}' object attribute '{}' is read-only", type_name(obj), name);
  if (!d->erase(Value::str(name)))
    no_attribute(obj, name);
}

bool Interpreter::isinstance(const Value& v, const Value& cls) {
  if (cls.is(Type::Tuple)) {
    for (const Value& c : cls.items())
      if (isinstance(v, c)) return true;
    return false;
  }
  if (!cls.is(Type::Class)) return false;
  const ClassObj* c = v.is(Type::Instance) ? v.obj<InstanceObj>().cls.get() : nullptr;
  return c && c->derives_from(cls.obj<ClassObj>());
}

// ---- exceptions ----

namespace {

// Whether `except spec` catches exc; spec is a class or a tuple of them.
bool catches(Interpreter& in, const Value& exc, const Value& spec) {
  auto check = [](const Value& c) {
    if (!c.is(Type::Class) || !c.obj<ClassObj>().is_exception())
      fail(ErrorKind::TypeError, "catching classes that do not inherit from BaseException is not allowed");
  };
  if (spec.is(Type::Tuple)) {
    for (const Value& c : spec.items()) check(c);
  } else {
    check(spec);
  }
  return in.isinstance(exc, spec);
}

}  // namespace

Interpreter::Flow Interpreter::exec_try(const Try& t, Frame& f, Value& ret) {
  if (t.finalbody.empty()) return exec_handlers(t, f, ret);
  Flow flow = Flow::Normal;
  std::exception_ptr pending;
  try {
    flow = exec_handlers(t, f, ret);
  } catch (Error&) {
    pending = std::current_exception();
  }
  // finally runs on every way out; a break, continue or return in it drops
  // the exception in flight, as in Python.
  Value saved = ret;
  Flow after = exec(t.finalbody, f, ret);
  if (after != Flow::Normal) return after;
  ret = saved;
  if (pending) std::rethrow_exception(pending);
  return flow;
}

Interpreter::Flow Interpreter::exec_handlers(const Try& t, Frame& f, Value& ret) {
  Flow flow;
  try {
    struct InTry {  // (jit's tracer asks: a trace cannot raise into this try's handlers)
      const Try*& at;
      const Try* saved;
      ~InTry() { at = saved; }
    } in_try{try_in_trace_, try_in_trace_};
    if (dispatch_->tracing()) try_in_trace_ = &t;
    try {
      flow = exec(t.body, f, ret);
    } catch (const std::bad_alloc&) {  // (an allocation the sizes did not foresee failing)
      fail(ErrorKind::MemoryError, "out of memory");
    } catch (const std::length_error& e) {  // (a size past what a vector holds, as PyTorch's)
      fail(ErrorKind::RuntimeError, "{}", e.what());
    }
  } catch (Error& e) {
    if (t.handlers.empty()) throw;
    // What only tracing cannot do (`jit: cannot branch on ...`) is no
    // exception of the program: eager would not raise it, so no handler sees it.
    if (dispatch_->tracing() && std::string_view(e.what()).starts_with("jit: ")) throw;
    std::exception_ptr error = std::current_exception();
    Value exc = exception_value(e);
    const Loc* raised_at = f.loc;  // an error no handler takes stays placed where it was raised
    for (auto& h : t.handlers) {
      if (h.type) {
        Value spec = eval(*h.type, f);
        f.loc = &h.loc;
        if (!catches(*this, exc, spec)) continue;
      }
      if (h.name) store_name(*h.name, exc, f);
      handling_.push_back(error);
      struct Pop {
        std::vector<std::exception_ptr>& v;
        ~Pop() { v.pop_back(); }
      } pop{handling_};
      Flow out = exec(h.body, f, ret);
      if (h.name) {  // Python unbinds the name when the handler ends
        if (h.name->scope == Scope::Global && f.module->globals.erase(h.name->id)) ++globals_deleted;
        else if (h.name->scope == Scope::Class) f.class_ns.obj<DictObj>().erase(Value::str(h.name->id));
        else name_slot(*h.name, f) = Value::unbound();
      }
      return out;
    }
    f.loc = raised_at;
    throw;
  }
  if (flow == Flow::Normal && !t.orelse.empty()) return exec(t.orelse, f, ret);
  return flow;
}

void Interpreter::exec_raise(const Raise& r, Frame& f) {
  if (!r.exc) {
    if (handling_.empty()) fail(ErrorKind::RuntimeError, "No active exception to reraise");
    std::rethrow_exception(handling_.back());
  }
  Value exc = eval(*r.exc, f);
  Value cause = r.cause ? eval(*r.cause, f) : Value();
  f.loc = &r.loc;
  auto exception = [&](Value& v) {  // an instance of an exception class (a class is called)
    if (v.is(Type::Class) && v.obj<ClassObj>().is_exception()) {
      CallArgs none;
      v = instantiate(v, none);
    }
    return v.is(Type::Instance) && v.obj<InstanceObj>().cls->is_exception();
  };
  if (!exception(exc)) fail(ErrorKind::TypeError, "exceptions must derive from BaseException");
  if (!cause.is_none() && !exception(cause)) fail(ErrorKind::TypeError, "exception causes must derive from BaseException");
  // __cause__ (raise ... from) and __context__ (the exception being handled).
  DictObj& attrs = exc.obj<InstanceObj>().dict.obj<DictObj>();
  if (r.cause) attrs.set(Value::str("__cause__"), cause);
  if (!handling_.empty()) {
    try {
      std::rethrow_exception(handling_.back());
    } catch (Error& e) {
      Value context = exception_value(e);
      if (context.object() != exc.object()) attrs.set(Value::str("__context__"), context);
    }
  }
  auto& cls = *exc.obj<InstanceObj>().cls;
  throw RaisedError(*cls.kind, str(exc), r.loc, exc, cls.name);  // (its __str__, when it has one)
}

// ---- del ----

void Interpreter::exec_delete(const Expr& target, Frame& f) {
  f.loc = &target.loc;
  switch (target.kind) {
    case ExprKind::Name: {
      auto& n = static_cast<const Name&>(target);
      load_name(n, f);  // NameError / UnboundLocalError when it is not bound
      if (n.scope == Scope::Global && f.module->globals.erase(n.id)) ++globals_deleted;
      else if (n.scope == Scope::Class) f.class_ns.obj<DictObj>().erase(Value::str(n.id));
      else name_slot(n, f) = Value::unbound();
      return;
    }
    case ExprKind::Subscript: {
      auto& s = static_cast<const Subscript&>(target);
      Value obj = eval(*s.value, f);
      Value idx = eval_subscript_index(s, f);
      f.loc = &s.loc;
      delitem(obj, idx);
      return;
    }
    default: {
      auto& a = static_cast<const Attribute&>(target);
      Value obj = eval(*a.value, f);
      f.loc = &a.loc;
      delattr(obj, a.attr);
    }
  }
}

}  // namespace thn
