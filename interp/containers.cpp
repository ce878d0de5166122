// Methods of lists, tuples and dicts.
#include <algorithm>

#include "interp/interpreter.h"
#include "interp/objects.h"

namespace thn {

void method_arity(const std::string& name, const CallArgs& a, size_t lo, size_t hi) {
  if (!a.kwargs.empty()) fail(ErrorKind::TypeError, "{}() takes no keyword arguments", name);
  if (a.args.size() < lo || a.args.size() > hi) {
    if (lo == hi) fail(ErrorKind::TypeError, "{}() takes exactly {} argument{} ({} given)", name, lo, lo == 1 ? "" : "s", a.args.size());
    if (a.args.size() < lo) fail(ErrorKind::TypeError, "{} expected at least {} argument{}, got {}", name, lo, lo == 1 ? "" : "s", a.args.size());
    fail(ErrorKind::TypeError, "{} expected at most {} argument{}, got {}", name, hi, hi == 1 ? "" : "s", a.args.size());
  }
}

// Methods of lists and tuples.
Value Interpreter::method(const Value& self, const std::string& name) {
  auto need = [name](CallArgs& a, size_t lo, size_t hi) { method_arity(name, a, lo, hi); };
  if (self.is(Type::List)) {
    if (name == "append")
      return make_builtin(name, [self, need](Interpreter&, CallArgs& a) {
        need(a, 1, 1);
        self.items().push_back(a.args[0]);
        return Value();
      });
    if (name == "extend")
      return make_builtin(name, [self, need](Interpreter& in, CallArgs& a) {
        need(a, 1, 1);
        std::vector<Value> extra = in.iterate(a.args[0]);
        self.items().insert(self.items().end(), extra.begin(), extra.end());
        return Value();
      });
    if (name == "insert")
      return make_builtin(name, [self, need](Interpreter&, CallArgs& a) {
        need(a, 2, 2);
        auto& items = self.items();
        int64_t n = int64_t(items.size()), i = a.args[0].as_int();
        if (i < 0) i = std::max<int64_t>(0, i + n);
        items.insert(items.begin() + std::min(i, n), a.args[1]);
        return Value();
      });
    if (name == "pop")
      return make_builtin(name, [self, need](Interpreter&, CallArgs& a) {
        need(a, 0, 1);
        auto& items = self.items();
        if (items.empty()) fail(ErrorKind::IndexError, "pop from empty list");
        int64_t i = a.args.empty() ? int64_t(items.size()) - 1 : seq_index(a.args[0], int64_t(items.size()), "pop");
        Value v = items[size_t(i)];
        items.erase(items.begin() + i);
        return v;
      });
    if (name == "reverse")
      return make_builtin(name, [self, need](Interpreter&, CallArgs& a) {
        need(a, 0, 0);
        std::reverse(self.items().begin(), self.items().end());
        return Value();
      });
    if (name == "copy")
      return make_builtin(name, [self, need](Interpreter&, CallArgs& a) {
        need(a, 0, 0);
        return Value::list(self.items());
      });
    if (name == "clear")
      return make_builtin(name, [self, need](Interpreter&, CallArgs& a) {
        need(a, 0, 0);
        self.items().clear();
        return Value();
      });
    if (name == "remove")
      return make_builtin(name, [self, need](Interpreter& in, CallArgs& a) {
        need(a, 1, 1);
        auto& items = self.items();
        for (size_t i = 0; i < items.size(); ++i)
          if (in.equals(items[i], a.args[0])) {
            items.erase(items.begin() + std::ptrdiff_t(i));
            return Value();
          }
        fail(ErrorKind::ValueError, "list.remove(x): x not in list");
      });
    if (name == "sort")  // sorted()'s order (stable; key=, reverse=), in place
      return make_builtin(name, [self](Interpreter& in, CallArgs& a) {
        if (!a.args.empty()) fail(ErrorKind::TypeError, "sort() takes no positional arguments");
        CallArgs call{{Value::list(self.items())}, a.kwargs};
        Value sorted = in.call(in.builtins().at("sorted"), call);
        self.items() = sorted.items();
        return Value();
      });
  }
  if (self.is_sequence() && (name == "index" || name == "count")) {
    bool is_index = name == "index";
    return make_builtin(name, [self, need, is_index](Interpreter& in, CallArgs& a) {
      need(a, 1, 1);
      int64_t count = 0;
      auto& items = self.items();
      for (size_t i = 0; i < items.size(); ++i) {
        if (!in.equals(items[i], a.args[0])) continue;
        if (is_index) return Value(int64_t(i));
        ++count;
      }
      if (is_index)
        fail(ErrorKind::ValueError, "{} is not in {}", self.is(Type::List) ? to_repr(a.args[0]) : "tuple.index(x): x",
             self.is(Type::List) ? "list" : "tuple");
      return Value(count);
    });
  }
  no_attribute(self, name);
}


namespace {

// d.keys(), d.values(), d.items(): a list that prints as the view would.
Value dict_view(const char* kind, std::vector<Value> items) {
  Value v = Value::list(std::move(items));
  v.obj<ListObj>().view = kind;
  return v;
}

}  // namespace

Value Interpreter::dict_method(const Value& self, const std::string& name) {
  auto need = [name](CallArgs& a, size_t lo, size_t hi) { method_arity(name, a, lo, hi); };
  auto fn = [&](NativeFn f) { return make_builtin(name, std::move(f)); };
  if (name == "keys")
    return fn([self, need](Interpreter&, CallArgs& a) {
      need(a, 0, 0);
      return dict_view("dict_keys", self.obj<DictObj>().keys());
    });
  if (name == "values" || name == "items") {
    bool items = name == "items";
    return fn([self, need, items](Interpreter&, CallArgs& a) {
      need(a, 0, 0);
      std::vector<Value> out;
      self.obj<DictObj>().each([&](const Value& k, const Value& v) {
        out.push_back(items ? Value::tuple({k, v}) : v);
      });
      return dict_view(items ? "dict_items" : "dict_values", std::move(out));
    });
  }
  if (name == "get")
    return fn([self, need](Interpreter&, CallArgs& a) {
      need(a, 1, 2);
      const Value* v = self.obj<DictObj>().find(a.args[0]);
      return v ? *v : a.args.size() > 1 ? a.args[1] : Value();
    });
  if (name == "pop")
    return fn([self, need](Interpreter&, CallArgs& a) {
      need(a, 1, 2);
      auto& d = self.obj<DictObj>();
      const Value* v = d.find(a.args[0]);
      if (!v) {
        if (a.args.size() > 1) return a.args[1];
        raise_key_error(a.args[0]);
      }
      Value out = *v;
      d.erase(a.args[0]);
      return out;
    });
  if (name == "setdefault")
    return fn([self, need](Interpreter&, CallArgs& a) {
      need(a, 1, 2);
      auto& d = self.obj<DictObj>();
      if (const Value* v = d.find(a.args[0])) return *v;
      Value dflt = a.args.size() > 1 ? a.args[1] : Value();
      d.set(a.args[0], dflt);
      return dflt;
    });
  if (name == "update")
    return fn([self](Interpreter& in, CallArgs& a) {
      if (a.args.size() > 1) fail(ErrorKind::TypeError, "update expected at most 1 argument, got {}", a.args.size());
      auto& d = self.obj<DictObj>();
      if (!a.args.empty()) in.dict_update(d, a.args[0]);
      for (auto& [k, v] : a.kwargs) d.set(Value::str(k), v);
      return Value();
    });
  if (name == "copy")
    return fn([self, need](Interpreter&, CallArgs& a) {
      need(a, 0, 0);
      Value out = make_dict();
      self.obj<DictObj>().each([&](const Value& k, const Value& v) { out.obj<DictObj>().set(k, v); });
      return out;
    });
  if (name == "clear")
    return fn([self, need](Interpreter&, CallArgs& a) {
      need(a, 0, 0);
      self.obj<DictObj>().clear();
      return Value();
    });
  no_attribute(self, name);
}

void Interpreter::dict_update(DictObj& d, const Value& from) {
  if (from.is(Type::Dict)) {
    if (&from.obj<DictObj>() == &d) return;
    from.obj<DictObj>().each([&](const Value& k, const Value& v) { d.set(k, v); });
    return;
  }
  int64_t i = 0;
  for (const Value& item : iterate(from)) {
    std::vector<Value> pair = item.is_sequence() ? item.items() : iterate(item);
    if (pair.size() != 2)
      fail(ErrorKind::ValueError, "dictionary update sequence element #{} has length {}; 2 is required", i, pair.size());
    d.set(pair[0], pair[1]);
    ++i;
  }
}

}  // namespace thn
