// The builtins of language v2's values: dict, type, repr, format, divmod,
// reversed, map, filter, hash, id, callable, getattr / setattr / hasattr
// (on thn objects only), dir, help, super, staticmethod, object and the
// exception classes; each value's attribute names (dir, completion and
// AttributeError's suggestion).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "interp/interpreter.h"
#include "interp/objects.h"
#include "interp/shorthands.h"
#include "runtime/op_registry.h"

namespace thn {

namespace {

void args_check(const char* name, const CallArgs& a, size_t lo, size_t hi) { method_arity(name, a, lo, hi); }

const std::string& attr_name(const char* fn, const Value& v) {
  if (!v.is(Type::Str)) fail(ErrorKind::TypeError, "{}(): attribute name must be string, not '{}'", fn, type_name(v));
  return v.as_str();
}

// The type of a value: its class for an instance, else the builtin type.
Value type_of(const Value& v) {
  switch (v.type()) {
    case Type::Instance: return Value(Type::Class, v.obj<InstanceObj>().cls);
    case Type::Bool: return Value(TypeTag::Bool);
    case Type::Int: return Value(TypeTag::Int);
    case Type::Float: return Value(TypeTag::Float);
    case Type::Str: return Value(TypeTag::Str);
    case Type::List: return Value(TypeTag::List);
    case Type::Tuple: return Value(TypeTag::Tuple);
    case Type::Dict: return Value(TypeTag::Dict);
    case Type::Tensor: return Value(TypeTag::Tensor);
    case Type::DType: return Value(TypeTag::DType);
    case Type::Device: return Value(TypeTag::Device);
    default: {
      // Types without a value of their own print as Python names them.
      return make_class(type_name(v), "builtins");
    }
  }
}

}  // namespace

void no_attribute(const Value& obj, const std::string& name) {
  std::string message = obj.is(Type::Class)    ? fmt::format("type object '{}' has no attribute '{}'", obj.obj<ClassObj>().name, name)
                        : obj.is(Type::Module) ? fmt::format("module '{}' has no attribute '{}'", obj.obj<ModuleObj>().name, name)
                                               : fmt::format("'{}' object has no attribute '{}'", type_name(obj), name);
  throw Error(ErrorKind::AttributeError, std::move(message)).with_lazy_note([obj, name] {
    return did_you_mean(name, attribute_names(obj));
  });
}

std::vector<std::string> attribute_names(const Value& obj) {
  std::vector<std::string> names;
  if (obj.is(Type::Tensor)) {
    names = tensor_member_names();
    for (const Shorthand& sh : tensor_shorthands()) names.emplace_back(sh.name);
  } else if (obj.is(Type::Module)) {
    for (const auto& [name, v] : obj.obj<ModuleObj>().globals)
      if (!name.starts_with("__")) names.push_back(name);
  } else if (obj.is(Type::DType)) {
    names = {"is_floating_point", "itemsize"};
  } else if (obj.is(Type::Device)) {
    names = {"type"};
  } else if (obj.is(Type::List)) {
    names = {"append", "clear", "copy", "count", "extend", "index", "insert", "pop", "remove", "reverse", "sort"};
  } else if (obj.is(Type::Tuple)) {
    names = {"count", "index"};
    if (const std::string& rt = obj.obj<ListObj>().return_type; !rt.empty())
      for (std::string_view f : return_fields(rt)) names.emplace_back(f);
  } else if (obj.is(Type::Str)) {
    names = {"center", "count",  "endswith", "find",  "format",     "index",      "isalnum", "isalpha",
             "isdigit", "isspace", "join",   "ljust", "lower",  "lstrip", "replace", "rfind",  "rjust",
             "rstrip", "split",   "splitlines", "startswith", "strip", "upper",   "zfill"};
  } else if (obj.is(Type::Dict)) {
    names = {"clear", "copy", "get", "items", "keys", "pop", "setdefault", "update", "values"};
  } else if (obj.is(Type::Instance) || obj.is(Type::Class)) {
    if (obj.is(Type::Instance))
      obj.obj<InstanceObj>().dict.obj<DictObj>().each([&](const Value& k, const Value&) { names.push_back(k.as_str()); });
    for (const ClassObj* c = obj.is(Type::Class) ? &obj.obj<ClassObj>() : obj.obj<InstanceObj>().cls.get(); c; c = c->base.get())
      c->dict.obj<DictObj>().each([&](const Value& k, const Value&) {
        if (!k.as_str().starts_with("__")) names.push_back(k.as_str());
      });
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// help(x): a function's signature and docstring (a jit function's, an
// op's signature from the op table), a class's methods, else x's attributes.
std::string help_text(Interpreter& in, const Value& v) {
  auto docstring = [](const ast::Body& body) -> std::string {
    if (body.empty() || body[0]->kind != ast::StmtKind::ExprStmt) return "";
    const auto* e = static_cast<const ast::ExprStmt&>(*body[0]).value.get();
    if (e->kind != ast::ExprKind::Constant || static_cast<const ast::Constant*>(e)->type != ast::Constant::Type::Str) return "";
    std::string out;
    std::string_view doc = static_cast<const ast::Constant*>(e)->s;
    while (!doc.empty()) {
      const size_t nl = doc.find('\n');
      std::string_view l = doc.substr(0, nl);
      l.remove_prefix(std::min(l.size(), l.find_first_not_of(' ')));
      out.append("    ").append(l).append("\n");
      if (nl == std::string_view::npos) break;
      doc.remove_prefix(nl + 1);
    }
    return out;
  };
  auto signature = [&](const FunctionObj& f) {
    std::vector<std::string> ps;
    for (size_t i = 0; i < f.def->params.size(); ++i) {
      const ast::Param& p = f.def->params[i];
      std::string s = p.star ? "*" : p.dstar ? "**" : "";
      s += p.name;
      if (i < f.has_default.size() && f.has_default[i]) s.append("=").append(in.repr(f.defaults[i]));
      ps.push_back(s);
    }
    return fmt::format("{}({})\n{}", f.def->name, fmt::join(ps, ", "), docstring(f.def->body));
  };
  if (v.is(Type::Builtin)) {
    const Value inner = v.obj<BuiltinObj>().wrapped();
    if (inner.is(Type::Function))
      return fmt::format("Help on {}:\n\n{}", v.obj<BuiltinObj>().repr(), signature(inner.obj<FunctionObj>()));
    if (const OpDef* op = find_function(v.obj<BuiltinObj>().name))
      return fmt::format("Help on built-in function {}:\n\n{}{}\n", op->name, op->name, op->signature);
  }
  if (v.is(Type::Function)) return fmt::format("Help on function {}:\n\n{}", v.obj<FunctionObj>().def->name, signature(v.obj<FunctionObj>()));
  if (v.is(Type::Method) && v.obj<MethodObj>().fn.is(Type::Function))
    return fmt::format("Help on {}:\n\n{}", in.repr(v), signature(v.obj<MethodObj>().fn.obj<FunctionObj>()));
  std::string text = "Help on " + (v.is(Type::Class) || v.is(Type::Module) ? in.repr(v) : type_name(v) + " object") + ":\n\n";
  for (auto& n : attribute_names(v)) text += "    " + n + "\n";
  return text;
}

void install_object_builtins(Interpreter& in) {
  auto& b = in.builtins();
  b["dict"] = Value(TypeTag::Dict);
  b["object"] = Value(TypeTag::Object);
  b["__type_object"] = make_builtin("object", [](Interpreter&, CallArgs& a) {
    args_check("object", a, 0, 0);
    static const Value object_class = make_class("object", "builtins");
    return Value(Type::Instance, std::make_shared<InstanceObj>(std::static_pointer_cast<ClassObj>(object_class.object())));
  });
  b["__type_dict"] = make_builtin("dict", [](Interpreter& in, CallArgs& a) {
    if (a.args.size() > 1) fail(ErrorKind::TypeError, "dict expected at most 1 argument, got {}", a.args.size());
    Value d = make_dict();
    if (!a.args.empty()) in.dict_update(d.obj<DictObj>(), a.args[0]);
    for (auto& [k, v] : a.kwargs) d.obj<DictObj>().set(Value::str(k), v);
    return d;
  });
  for (auto& [name, cls] : exception_classes()) b[name] = cls;
  b["no_grad"] = grad_mode_class(false);
  b["enable_grad"] = grad_mode_class(true);
  install_autograd_builtins(b);
  b["type"] = make_builtin("type", [](Interpreter&, CallArgs& a) {
    args_check("type", a, 1, 1);
    return type_of(a.args[0]);
  });
  b["repr"] = make_builtin("repr", [](Interpreter& in, CallArgs& a) {
    args_check("repr", a, 1, 1);
    return Value::str(in.repr(a.args[0]));
  });
  b["format"] = make_builtin("format", [](Interpreter& in, CallArgs& a) {
    args_check("format", a, 1, 2);
    std::string spec;
    if (a.args.size() > 1) {
      if (!a.args[1].is(Type::Str))
        fail(ErrorKind::TypeError, "format() argument 2 must be str, not {}", type_name(a.args[1]));
      spec = a.args[1].as_str();
    }
    return Value::str(in.format(a.args[0], spec));
  });
  b["divmod"] = make_builtin("divmod", [](Interpreter& in, CallArgs& a) {
    args_check("divmod", a, 2, 2);
    return Value::tuple({in.binary(ast::BinOp::FloorDiv, a.args[0], a.args[1]), in.binary(ast::BinOp::Mod, a.args[0], a.args[1])});
  });
  b["reversed"] = make_builtin("reversed", [](Interpreter& in, CallArgs& a) {
    args_check("reversed", a, 1, 1);
    if (a.args[0].is(Type::Dict) || !(a.args[0].is_sequence() || a.args[0].is(Type::Range) || a.args[0].is(Type::Str) || a.args[0].is(Type::Tensor)))
      fail(ErrorKind::TypeError, "'{}' object is not reversible", type_name(a.args[0]));
    std::vector<Value> items = in.iterate(a.args[0]);
    std::reverse(items.begin(), items.end());
    return Value::list(std::move(items));
  });
  b["map"] = make_builtin("map", [](Interpreter& in, CallArgs& a) {
    if (a.args.size() < 2) fail(ErrorKind::TypeError, "map() must have at least two arguments.");
    if (std::any_of(a.args.begin() + 1, a.args.end(), Interpreter::draws)) {
      auto it = std::make_shared<IteratorObj>();  // calling f only as it is taken
      it->kind = IteratorObj::Kind::Map;
      it->items = a.args[0];
      for (size_t i = 1; i < a.args.size(); ++i) it->sources.push_back(make_iterator(in, a.args[i]));
      return Value(Type::Iterator, it);
    }
    std::vector<std::vector<Value>> seqs;
    for (size_t i = 1; i < a.args.size(); ++i) seqs.push_back(in.iterate(a.args[i]));
    size_t n = SIZE_MAX;
    for (auto& s : seqs) n = std::min(n, s.size());
    std::vector<Value> out;
    for (size_t i = 0; i < n; ++i) {
      CallArgs call;
      for (auto& s : seqs) call.args.push_back(s[i]);
      out.push_back(in.call(a.args[0], call));
    }
    return Value::list(std::move(out));
  });
  b["filter"] = make_builtin("filter", [](Interpreter& in, CallArgs& a) {
    args_check("filter", a, 2, 2);
    std::vector<Value> out;
    for (const Value& x : in.iterate(a.args[1])) {
      bool keep;
      if (a.args[0].is_none()) {
        keep = in.truth(x);
      } else {
        CallArgs call{{x}, {}};
        keep = in.truth(in.call(a.args[0], call));
      }
      if (keep) out.push_back(x);
    }
    return Value::list(std::move(out));
  });
  b["hash"] = make_builtin("hash", [](Interpreter&, CallArgs& a) {
    args_check("hash", a, 1, 1);
    return Value(hash_value(a.args[0]));
  });
  b["id"] = make_builtin("id", [](Interpreter&, CallArgs& a) {
    args_check("id", a, 1, 1);
    const Value& v = a.args[0];
    return Value(v.object() ? int64_t(reinterpret_cast<uintptr_t>(v.object().get())) : int64_t(hash_value(v)));
  });
  b["callable"] = make_builtin("callable", [](Interpreter& in, CallArgs& a) {
    args_check("callable", a, 1, 1);
    const Value& v = a.args[0];
    bool yes = v.is(Type::Function) || v.is(Type::Builtin) || v.is(Type::Method) || v.is(Type::Class) ||
               v.is(Type::TypeObj) || v.is(Type::StaticMethod) ||
               (v.is(Type::Instance) && !in.special(v, "__call__").is(Type::Unbound));
    return Value(yes);
  });
  b["getattr"] = make_builtin("getattr", [](Interpreter& in, CallArgs& a) {
    args_check("getattr", a, 2, 3);
    const std::string& name = attr_name("getattr", a.args[1]);
    if (a.args.size() == 3) {
      try {
        return in.getattr(a.args[0], name);
      } catch (Error& e) {
        if (e.kind() != ErrorKind::AttributeError) throw;
        return a.args[2];
      }
    }
    return in.getattr(a.args[0], name);
  });
  b["hasattr"] = make_builtin("hasattr", [](Interpreter& in, CallArgs& a) {
    args_check("hasattr", a, 2, 2);
    const std::string& name = attr_name("hasattr", a.args[1]);
    try {
      in.getattr(a.args[0], name);
      return Value(true);
    } catch (Error& e) {
      if (e.kind() != ErrorKind::AttributeError) throw;
      return Value(false);
    }
  });
  b["setattr"] = make_builtin("setattr", [](Interpreter& in, CallArgs& a) {
    args_check("setattr", a, 3, 3);
    in.setattr(a.args[0], attr_name("setattr", a.args[1]), a.args[2]);
    return Value();
  });
  b["delattr"] = make_builtin("delattr", [](Interpreter& in, CallArgs& a) {
    args_check("delattr", a, 2, 2);
    in.delattr(a.args[0], attr_name("delattr", a.args[1]));
    return Value();
  });
  b["dir"] = make_builtin("dir", [](Interpreter&, CallArgs& a) {
    args_check("dir", a, 1, 1);
    std::vector<Value> names;
    for (auto& n : attribute_names(a.args[0])) names.push_back(Value::str(n));
    return Value::list(std::move(names));
  });
  b["help"] = make_builtin("help", [](Interpreter& in, CallArgs& a) {
    args_check("help", a, 1, 1);
    std::fputs(help_text(in, a.args[0]).c_str(), in.out());
    return Value();
  });
  b["iter"] = make_builtin("iter", [](Interpreter& in, CallArgs& a) {
    args_check("iter", a, 1, 1);
    const Value& x = a.args[0];
    return make_iterator(in, x);
  });
  // next(it[, default]): StopIteration (or the default) once it is used up.
  b["next"] = make_builtin("next", [](Interpreter& in, CallArgs& a) {
    args_check("next", a, 1, 2);
    // (an instance with __next__ is an iterator too)
    if (a.args[0].is(Type::Instance) && !in.special(a.args[0], "__next__").is(Type::Unbound)) {
      CallArgs none;
      try {
        return in.call(in.special(a.args[0], "__next__"), none);
      } catch (Error& e) {
        if (a.args.size() < 2 || !is_stop_iteration(in, e)) throw;
        return a.args[1];
      }
    }
    if (!a.args[0].is(Type::Iterator)) fail(ErrorKind::TypeError, "'{}' object is not an iterator", type_name(a.args[0]));
    if (std::optional<Value> x = a.args[0].obj<IteratorObj>().take()) return *x;
    if (a.args.size() == 2) return a.args[1];
    raise_stop_iteration();
  });
  b["staticmethod"] = make_builtin("staticmethod", [](Interpreter&, CallArgs& a) {
    args_check("staticmethod", a, 1, 1);
    auto s = std::make_shared<StaticMethodObj>();
    s->fn = a.args[0];
    return Value(Type::StaticMethod, s);
  });
  // super(): the class whose body defined the running method, and its first argument.
  b["super"] = make_builtin("super", [](Interpreter& in, CallArgs& a) {
    auto s = std::make_shared<SuperObj>();
    if (a.args.size() == 2) {
      if (!a.args[0].is(Type::Class)) fail(ErrorKind::TypeError, "super() argument 1 must be a type, not {}", type_name(a.args[0]));
      s->cls = std::static_pointer_cast<ClassObj>(a.args[0].object());
      s->self = a.args[1];
      return Value(Type::Super, s);
    }
    args_check("super", a, 0, 0);
    const Frame* f = in.current_frame();
    const FunctionObj* fn = f ? f->function : nullptr;
    std::shared_ptr<ClassObj> owner = fn ? fn->owner.lock() : nullptr;
    if (!owner) fail(ErrorKind::RuntimeError, "super(): __class__ cell not found");
    if (f->slots.empty() || fn->def->params.empty() || f->slots[0].is(Type::Unbound))
      fail(ErrorKind::RuntimeError, "super(): no arguments");
    s->cls = owner;
    s->self = f->slots[0];
    return Value(Type::Super, s);
  });
}

}  // namespace thn
