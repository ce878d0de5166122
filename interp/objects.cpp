#include "interp/objects.h"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <unordered_set>

namespace thn {

// ---- hashing (CPython's numeric hash, so equal numbers hash alike) ----

namespace {

constexpr uint64_t kModulus = (uint64_t(1) << 61) - 1;  // CPython's _PyHASH_MODULUS

int64_t hash_int(int64_t v) {
  uint64_t m = v < 0 ? uint64_t(-(v + 1)) + 1 : uint64_t(v);
  int64_t h = int64_t(m % kModulus);
  if (v < 0) h = -h;
  return h == -1 ? -2 : h;
}

int64_t hash_float(double v) {
  if (std::isinf(v)) return v > 0 ? 314159 : -314159;
  if (std::isnan(v)) return 0;
  int e;
  double m = std::frexp(v, &e);
  int sign = 1;
  if (m < 0) {
    sign = -1;
    m = -m;
  }
  uint64_t x = 0;
  while (m) {  // 28 bits at a time, as CPython's _Py_HashDouble
    x = ((x << 28) & kModulus) | x >> (61 - 28);
    m *= 268435456.0;
    e -= 28;
    uint64_t y = uint64_t(m);
    m -= double(y);
    x += y;
    if (x >= kModulus) x -= kModulus;
  }
  e = e >= 0 ? e % 61 : 61 - 1 - ((-1 - e) % 61);
  x = ((x << e) & kModulus) | x >> (61 - e);
  int64_t h = int64_t(x) * sign;
  return h == -1 ? -2 : h;
}

// CPython's tuple hash (xxHash-based, 3.8+).
int64_t hash_tuple(const std::vector<Value>& items) {
  const uint64_t p1 = 11400714785074694791ULL, p2 = 14029467366897019727ULL, p5 = 2870177450012600261ULL;
  uint64_t acc = p5;
  for (const Value& x : items) {
    uint64_t lane = uint64_t(hash_value(x));
    acc += lane * p2;
    acc = (acc << 31) | (acc >> 33);
    acc *= p1;
  }
  acc += items.size() ^ (p5 ^ 3527539UL);
  if (acc == uint64_t(-1)) return 1546275796;
  return int64_t(acc);
}

}  // namespace

int64_t hash_value(const Value& v) {
  switch (v.type()) {
    case Type::None: return 0x5f3759df;
    case Type::Bool: case Type::Int: return hash_int(v.as_int());
    case Type::Float: {
      double f = v.as_float();
      if (f == std::floor(f) && std::fabs(f) < 9.2e18) return hash_int(int64_t(f));
      return hash_float(f);
    }
    case Type::Str: return int64_t(std::hash<std::string>()(v.as_str()) >> 1);
    case Type::Tuple: return hash_tuple(v.items());
    case Type::List: case Type::Dict: fail(ErrorKind::TypeError, "unhashable type: '{}'", type_name(v));
    case Type::DType: return int64_t(v.as_dtype()) + 1000003;
    case Type::TypeObj: return int64_t(v.as_type()) + 2000003;
    default: return int64_t(reinterpret_cast<uintptr_t>(v.object().get()) >> 4);
  }
}

bool key_equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    // (A float has no identity in thn, so a NaN key is found by any NaN:
    // CPython finds it by the same float object, as `d[x]` with the x the
    // key was stored with does.)
    if (a.is(Type::Float) && b.is(Type::Float) && std::isnan(a.as_float()) && std::isnan(b.as_float())) return true;
    if (a.is(Type::Float) || b.is(Type::Float)) return a.as_float() == b.as_float();
    return a.as_int() == b.as_int();
  }
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case Type::None: case Type::Ellipsis: return true;
    case Type::Str: return a.as_str() == b.as_str();
    case Type::Tuple: {
      auto &x = a.items(), &y = b.items();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!key_equals(x[i], y[i])) return false;
      return true;
    }
    case Type::DType: return a.as_dtype() == b.as_dtype();
    case Type::TypeObj: return a.as_type() == b.as_type();
    default: return a.object() == b.object();
  }
}

// ---- dicts ----

Value* DictObj::find(const Value& key) {
  auto [lo, hi] = index.equal_range(hash_value(key));
  for (auto it = lo; it != hi; ++it)
    if (key_equals(entries[it->second].key, key)) return &entries[it->second].value;
  return nullptr;
}

void DictObj::set(const Value& key, Value v) {
  if (Value* slot = find(key)) {
    *slot = std::move(v);
    return;
  }
  index.emplace(hash_value(key), entries.size());
  entries.push_back(Entry{key, std::move(v), true});
  ++count;
}

bool DictObj::erase(const Value& key) {
  auto [lo, hi] = index.equal_range(hash_value(key));
  for (auto it = lo; it != hi; ++it) {
    Entry& e = entries[it->second];
    if (!key_equals(e.key, key)) continue;
    e.live = false;
    e.key = Value();
    e.value = Value();
    index.erase(it);
    --count;
    if (entries.size() > 8 && count * 2 < entries.size()) {  // compact
      std::vector<Entry> kept;
      kept.reserve(count);
      index.clear();
      for (Entry& x : entries)
        if (x.live) {
          index.emplace(hash_value(x.key), kept.size());
          kept.push_back(std::move(x));
        }
      entries = std::move(kept);
    }
    return true;
  }
  return false;
}

std::vector<Value> DictObj::keys() const {
  std::vector<Value> out;
  out.reserve(count);
  each([&](const Value& k, const Value&) { out.push_back(k); });
  return out;
}

void DictObj::visit(const std::function<void(Container*)>& f) const {
  for (const Entry& e : entries) {
    if (Container* c = container_of(e.key)) f(c);
    if (Container* c = container_of(e.value)) f(c);
  }
}

void DictObj::clear() {
  std::vector<Entry>().swap(entries);
  index.clear();
  count = 0;
}

Value make_dict() { return Value(Type::Dict, std::make_shared<DictObj>()); }

Value* dict_get(const Value& dict, const std::string& key) {
  return dict.obj<DictObj>().find(Value::str(key));
}

// ---- dicts and objects in jit outputs ----

namespace {

// Whether v is, or a list or tuple inside it holds, a value `match` takes
// (each sequence visited once: a list may hold itself).
bool holds(const Value& v, bool (*match)(const Value&), std::vector<const Object*>& open) {
  if (match(v)) return true;
  if (!v.is_sequence() || v.is_proxy()) return false;
  if (std::find(open.begin(), open.end(), v.object().get()) != open.end()) return false;
  open.push_back(v.object().get());
  bool found = false;
  for (const Value& x : v.items())
    if ((found = holds(x, match, open))) break;
  open.pop_back();
  return found;
}

bool is_encoded(const Value& v) {
  if (!v.is(Type::Tuple) || v.is_proxy()) return false;
  const std::string& t = v.obj<ListObj>().return_type;
  return t == "__dict__" || t == "__object__";
}

}  // namespace

Value encode_shallow(const Value& v) {
  const DictObj& d = (v.is(Type::Instance) ? v.obj<InstanceObj>().dict : v).obj<DictObj>();
  std::vector<Value> keys, values;
  d.each([&](const Value& k, const Value& x) {
    keys.push_back(k);
    values.push_back(x);
  });
  if (v.is(Type::Dict)) return return_tuple("__dict__", {Value::tuple(std::move(keys)), Value::tuple(std::move(values))});
  return return_tuple("__object__", {Value(Type::Class, v.obj<InstanceObj>().cls), Value::tuple(std::move(keys)),
                                     Value::tuple(std::move(values))});
}

void decode_entries_into(DictObj& d, const Value& encoded) {
  d.clear();
  const auto& items = encoded.items();
  const auto& keys = items[items.size() - 2].items();
  const auto& values = items.back().items();
  for (size_t i = 0; i < keys.size(); ++i) d.set(keys[i], decode_mappings(values[i]));
}

namespace {

Value decode(const Value& v, std::vector<const Object*>& open) {
  if (is_encoded(v)) {
    Value d = make_dict();
    decode_entries_into(d.obj<DictObj>(), v);
    if (v.obj<ListObj>().return_type == "__dict__") return d;
    auto inst = std::make_shared<InstanceObj>(std::static_pointer_cast<ClassObj>(v.items()[0].object()));
    inst->dict = d;
    return Value(Type::Instance, inst);
  }
  if (!v.is_sequence() || v.is_proxy() || std::find(open.begin(), open.end(), v.object().get()) != open.end()) return v;
  std::vector<const Object*> probe;
  if (!holds(v, is_encoded, probe)) return v;
  open.push_back(v.object().get());
  std::vector<Value> items;
  for (const Value& x : v.items()) items.push_back(decode(x, open));
  open.pop_back();
  if (v.is(Type::List)) {  // a list keeps its identity (output links may point at it)
    v.items() = std::move(items);
    return v;
  }
  return v.like(std::move(items));
}

}  // namespace

Value decode_mappings(const Value& v) {
  std::vector<const Object*> open;
  return decode(v, open);
}

namespace {

void dict_entries(const Value& dict, std::vector<Value>& out) {
  dict.obj<DictObj>().each([&](const Value& k, const Value& x) {
    out.push_back(k);
    out.push_back(x);
  });
}

}  // namespace

std::vector<Value> class_contents(const ClassObj& cls) {
  std::vector<Value> out;
  for (const ClassObj* c = &cls; c; c = c->base.get()) {
    out.push_back(Value::str(c->name));
    dict_entries(c->dict, out);
  }
  return out;
}

std::vector<Value> shallow_contents(const Value& v) {
  if (v.is(Type::List)) return v.items();
  if (v.is(Type::Method)) return {v.obj<MethodObj>().self, v.obj<MethodObj>().fn};
  if (v.is(Type::Iterator)) {
    const auto& it = v.obj<IteratorObj>();
    std::vector<Value> out{Value(int64_t(it.kind)), Value(int64_t(it.next)), it.items, Value(it.count)};
    out.insert(out.end(), it.sources.begin(), it.sources.end());
    return out;
  }
  std::vector<Value> out;
  if (v.is(Type::Dict)) dict_entries(v, out);
  if (v.is(Type::Instance)) {
    out = class_contents(*v.obj<InstanceObj>().cls);
    out.push_back(Value::ellipsis());  // (between the classes' attributes and the object's)
    dict_entries(v.obj<InstanceObj>().dict, out);
  }
  return out;
}

std::vector<Value> guarded_contents(const Value& v) {
  auto open = [](const Value& x) {
    return x.is_sequence() || x.is(Type::Dict) || x.is(Type::Instance) || x.is(Type::Class) || x.is(Type::Method) ||
           x.is(Type::Iterator);
  };
  if (!open(v)) return {};  // (most guards: a constant)
  std::vector<Value> out;
  std::unordered_set<const Object*> seen;
  auto walk = [&](auto&& self, const Value& x) -> void {
    if (!open(x)) return;
    if (!seen.insert(x.object().get()).second) return;  // (met before: its identity is all a cycle adds)
    const std::vector<Value> items = x.is(Type::Tuple)   ? x.items()
                                     : x.is(Type::Class) ? class_contents(x.obj<ClassObj>())
                                                         : shallow_contents(x);
    out.push_back(Value(int64_t(items.size())));
    out.insert(out.end(), items.begin(), items.end());
    for (const Value& item : items) self(self, item);
  };
  walk(walk, v);
  return out;
}

Value make_iterator(Interpreter& in, const Value& x) {
  if (x.is(Type::Iterator)) return x;
  auto it = std::make_shared<IteratorObj>();
  if (x.is(Type::Instance)) {
    if (Value iter = in.special(x, "__iter__"); !iter.is(Type::Unbound)) {
      // __iter__'s result: an instance with __next__ (often x itself), or
      // a built-in iterable
      CallArgs none;
      Value r = in.call(iter, none);
      if (!r.is(Type::Instance)) return make_iterator(in, r);
      if (in.special(r, "__next__").is(Type::Unbound))
        fail(ErrorKind::TypeError, "iter() returned non-iterator of type '{}'", type_name(r));
      it->kind = IteratorObj::Kind::Next;
      it->items = r;
      return Value(Type::Iterator, it);
    }
  }
  it->items = x.is(Type::List) || x.is(Type::Tuple) ? x : Value::list(in.iterate(x));
  return Value(Type::Iterator, it);
}

namespace {
const Value& stop_iteration_class() {
  static const Value cls = [] {
    for (const auto& [name, c] : exception_classes())
      if (name == "StopIteration") return c;
    return Value();
  }();
  return cls;
}
}  // namespace

void raise_stop_iteration() {
  throw RaisedError(ErrorKind::RuntimeError, "", Loc{}, make_exception(stop_iteration_class(), {}), "StopIteration");
}

bool is_stop_iteration(Interpreter& in, const Error& e) { return in.isinstance(exception_value(e), stop_iteration_class()); }

std::optional<Value> IteratorObj::take() {
  switch (kind) {
    case Kind::Items:
      if (next >= items.items().size()) return std::nullopt;
      return items.items()[next++];
    case Kind::Enumerate: {
      std::optional<Value> x = sources[0].obj<IteratorObj>().take();
      if (!x) return std::nullopt;
      return Value::tuple({Value(count++), *x});
    }
    case Kind::Next: {
      Interpreter& in = *Interpreter::running();
      CallArgs none;
      try {
        return in.call(in.special(items, "__next__"), none);
      } catch (Error& e) {
        if (!is_stop_iteration(in, e)) throw;
        return std::nullopt;
      }
    }
    case Kind::Zip: case Kind::Map: {
      std::vector<Value> row;  // (each source in turn, as Python's zip: the first used up ends it)
      for (const Value& s : sources) {
        std::optional<Value> x = s.obj<IteratorObj>().take();
        if (!x) return std::nullopt;
        row.push_back(*x);
      }
      if (row.empty()) return std::nullopt;
      if (kind == Kind::Zip) return Value::tuple(std::move(row));
      CallArgs call{std::move(row), {}};
      return Interpreter::running()->call(items, call);
    }
  }
  return std::nullopt;
}

const Value& child_at(const Value& v, size_t i) {
  if (v.is_sequence()) return v.items()[i];
  const DictObj& d = v.is(Type::Instance) ? v.obj<InstanceObj>().dict.obj<DictObj>() : v.obj<DictObj>();
  if (d.entries.size() == d.count) return d.entries[i].value;
  for (const DictObj::Entry& e : d.entries)
    if (e.live && i-- == 0) return e.value;
  throw std::out_of_range("child_at: no such entry");
}

// ---- classes and instances ----

Value make_class(std::string name, std::string module) {
  auto c = std::make_shared<ClassObj>();
  c->name = std::move(name);
  c->module = std::move(module);
  c->dict = make_dict();
  return Value(Type::Class, c);
}

const Value* ClassObj::lookup(const std::string& name) const {
  Value key = Value::str(name);
  for (const ClassObj* c = this; c; c = c->base.get())
    if (const Value* v = c->dict.obj<DictObj>().find(key)) return v;
  return nullptr;
}

bool ClassObj::derives_from(const ClassObj& other) const {
  for (const ClassObj* c = this; c; c = c->base.get())
    if (c == &other) return true;
  return false;
}

bool ClassObj::is_exception() const {
  const ClassObj* c = this;
  while (c->base) c = c->base.get();
  return c->name == "BaseException" && c->kind;
}

InstanceObj::InstanceObj(std::shared_ptr<ClassObj> c) : cls(std::move(c)), dict(make_dict()) { enroll(); }

void InstanceObj::visit(const std::function<void(Container*)>& f) const {
  if (dict.object()) f(static_cast<DictObj*>(dict.object().get()));
}

void InstanceObj::clear() { dict = Value(); }

// ---- exceptions ----

namespace {

struct ExceptionTable {
  std::vector<std::pair<std::string, Value>> classes;
  std::unordered_map<int, Value> by_kind;

  Value add(const std::string& name, const char* base, std::optional<ErrorKind> kind) {
    Value v = make_class(name, "builtins");
    auto& c = v.obj<ClassObj>();
    c.kind = kind;
    if (base)
      for (auto& [n, b] : classes)
        if (n == base) c.base = std::static_pointer_cast<ClassObj>(b.object());
    classes.emplace_back(name, v);
    if (kind) by_kind.emplace(int(*kind), v);
    return v;
  }

  ExceptionTable() {
    using K = ErrorKind;
    // Python's hierarchy; the abstract classes stand for RuntimeError when raised bare.
    add("BaseException", nullptr, K::RuntimeError);
    add("Exception", "BaseException", K::RuntimeError);
    add("KeyboardInterrupt", "BaseException", K::KeyboardInterrupt);
    add("StopIteration", "Exception", K::RuntimeError);
    add("SystemExit", "BaseException", K::SystemExit);
    add("ArithmeticError", "Exception", K::RuntimeError);
    add("LookupError", "Exception", K::RuntimeError);
    add("RuntimeError", "Exception", K::RuntimeError);
    add("ZeroDivisionError", "ArithmeticError", K::ZeroDivisionError);
    add("OverflowError", "ArithmeticError", K::OverflowError);
    add("IndexError", "LookupError", K::IndexError);
    add("KeyError", "LookupError", K::KeyError);
    add("ValueError", "Exception", K::ValueError);
    add("TypeError", "Exception", K::TypeError);
    add("NameError", "Exception", K::NameError);
    add("UnboundLocalError", "NameError", K::UnboundLocalError);
    add("AttributeError", "Exception", K::AttributeError);
    add("AssertionError", "Exception", K::AssertionError);
    add("NotImplementedError", "RuntimeError", K::NotImplementedError);
    add("RecursionError", "RuntimeError", K::RecursionError);
    add("ImportError", "Exception", K::ImportError);
    add("ModuleNotFoundError", "ImportError", K::ModuleNotFoundError);
    add("SyntaxError", "Exception", K::SyntaxError);
    add("IndentationError", "SyntaxError", K::IndentationError);
    add("TabError", "IndentationError", K::TabError);
    add("MemoryError", "Exception", K::MemoryError);
    add("OSError", "Exception", K::OSError);
    add("FileNotFoundError", "OSError", K::FileNotFoundError);
    // RuntimeError stands for its kind, not the abstract classes added before it.
    for (auto& [n, v] : classes)
      if (n == "RuntimeError") by_kind[int(K::RuntimeError)] = v;
  }
};

const ExceptionTable& table() {
  static const ExceptionTable t;
  return t;
}

}  // namespace

const std::vector<std::pair<std::string, Value>>& exception_classes() { return table().classes; }

Value grad_mode_class(bool enabled) {
  static const Value classes[2] = {make_class("no_grad", "torch"), make_class("enable_grad", "torch")};
  return classes[enabled];
}

Value exception_class(ErrorKind k) { return table().by_kind.at(int(k)); }

Value make_exception(const Value& cls, std::vector<Value> args) {
  auto inst = std::make_shared<InstanceObj>(std::static_pointer_cast<ClassObj>(cls.object()));
  inst->dict.obj<DictObj>().set(Value::str("args"), Value::tuple(std::move(args)));
  return Value(Type::Instance, inst);
}

void raise_key_error(const Value& key) {
  throw RaisedError(ErrorKind::KeyError, to_repr(key), Loc{}, make_exception(exception_class(ErrorKind::KeyError), {key}),
                    "KeyError");
}

Value exception_value(const Error& e) {
  if (auto* r = dynamic_cast<const RaisedError*>(&e)) return r->exception;
  std::vector<Value> args;
  if (*e.what()) args.push_back(Value::str(e.what()));
  return make_exception(exception_class(e.kind()), std::move(args));
}

}  // namespace thn
