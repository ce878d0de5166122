#include "interp/value.h"

#include <algorithm>

#include "frontend/unicode.h"
#include "interp/interpreter.h"
#include "interp/objects.h"
#include "runtime/format.h"

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace thn {

uint64_t globals_deleted = 0;

namespace {
std::mutex registry_mutex;  // guards the registry (a list may die on another thread at exit)
Container* registry_head = nullptr;
std::atomic<size_t> registry_count{0};
}  // namespace

void Container::enroll() {
  std::lock_guard lock(registry_mutex);
  if (enrolled_) return;
  enrolled_ = true;
  next_ = registry_head;
  if (registry_head) registry_head->prev_ = this;
  registry_head = this;
  registry_count.fetch_add(1, std::memory_order_relaxed);
}

void Container::unenroll() {
  std::lock_guard lock(registry_mutex);
  if (!enrolled_) return;
  enrolled_ = false;
  if (prev_) prev_->next_ = next_;
  else registry_head = next_;
  if (next_) next_->prev_ = prev_;
  registry_count.fetch_sub(1, std::memory_order_relaxed);
}

size_t live_containers() { return registry_count.load(std::memory_order_relaxed); }

Container* container_of(const Value& v) {
  if (v.is_proxy() || !v.object()) return nullptr;
  if (v.is(Type::List) || v.is(Type::Tuple)) return static_cast<ListObj*>(v.object().get());
  if (v.is(Type::Function)) return static_cast<FunctionObj*>(v.object().get());
  if (v.is(Type::Dict)) return static_cast<DictObj*>(v.object().get());
  if (v.is(Type::Instance)) return static_cast<InstanceObj*>(v.object().get());
  if (v.is(Type::Method)) return container_of(v.obj<MethodObj>().self);
  return nullptr;
}

void visit_containers(const std::vector<Value>& values, const std::function<void(Container*)>& f) {
  for (const Value& v : values)
    if (Container* c = container_of(v)) f(c);
}

ListObj::ListObj(std::vector<Value> v) : items(std::move(v)) { enroll(); }
ListObj::~ListObj() { unenroll(); }
void ListObj::visit(const std::function<void(Container*)>& f) const { visit_containers(items, f); }
void ListObj::clear() { std::vector<Value>().swap(items); }

FunctionObj::~FunctionObj() { unenroll(); }
void FunctionObj::close_over(std::shared_ptr<Frame> frame) {
  env = std::move(frame);
  env->enroll_frame();
  enroll();
}
void FunctionObj::visit(const std::function<void(Container*)>& f) const {
  visit_containers(defaults, f);
  if (env) f(env.get());
}
void FunctionObj::clear() {
  std::vector<Value>().swap(defaults);
  env.reset();
}

size_t collect_cycles() {
  std::vector<std::shared_ptr<const void>> garbage;
  std::vector<Container*> cleared;
  {
    std::lock_guard lock(registry_mutex);
    // References from outside the containers: all, less those they hold.
    std::unordered_map<Container*, long> outside;
    for (Container* o = registry_head; o; o = o->next_)
      if (long n = o->uses(); n > 0) outside.emplace(o, n);  // 0: being made or freed
    auto held = [&](Container* c) { return outside.count(c) > 0; };  // registered and alive
    for (auto& [o, n] : outside)
      o->visit([&](Container* c) {
        if (held(c)) --outside[c];
      });
    // Everything reachable from a container referenced from outside stays.
    std::vector<Container*> stack;
    std::unordered_map<Container*, bool> reached;
    for (auto& [o, n] : outside)
      if (n > 0) {
        stack.push_back(o);
        reached[o] = true;
      }
    while (!stack.empty()) {
      Container* o = stack.back();
      stack.pop_back();
      o->visit([&](Container* c) {
        if (held(c) && !reached[c]) {
          reached[c] = true;
          stack.push_back(c);
        }
      });
    }
    for (auto& [o, n] : outside)
      if (!reached[o])
        if (auto p = o->keep()) {
          garbage.push_back(std::move(p));
          cleared.push_back(o);
        }
  }
  // Outside the lock: clearing frees containers, whose destructors take it.
  for (Container* o : cleared) o->clear();
  size_t freed = garbage.size();
  garbage.clear();
  return freed;
}

Value Value::str(std::string s) { return Value(Type::Str, std::make_shared<StrObj>(std::move(s))); }
Value Value::list(std::vector<Value> items) { return Value(Type::List, std::make_shared<ListObj>(std::move(items))); }
Value Value::tuple(std::vector<Value> items) {
  return Value(Type::Tuple, std::make_shared<ListObj>(std::move(items)));
}
Value Value::size(std::vector<Value> items) {
  auto obj = std::make_shared<ListObj>(std::move(items));
  obj->is_size = true;
  return Value(Type::Tuple, std::move(obj));
}
Value Value::like(std::vector<Value> items) const {
  const auto& o = static_cast<const ListObj&>(*obj_);
  if (type_ == Type::List) {  // (a dict's view stays one)
    Value v = list(std::move(items));
    v.obj<ListObj>().view = o.view;
    return v;
  }
  auto obj = std::make_shared<ListObj>(std::move(items));
  obj->is_size = o.is_size;
  obj->return_type = o.return_type;
  return Value(Type::Tuple, std::move(obj));
}
bool Value::same_kind(const Value& other) const {
  if (type_ != other.type_) return false;
  if (type_ != Type::Tuple) return true;
  const auto &a = static_cast<const ListObj&>(*obj_), &b = static_cast<const ListObj&>(*other.obj_);
  return a.is_size == b.is_size && a.return_type == b.return_type;
}
Value Value::tensor(Tensor t) { return Value(Type::Tensor, std::make_shared<TensorObj>(std::move(t))); }

const std::string& Value::as_str() const { return static_cast<const StrObj&>(*obj_).s; }
std::vector<Value>& Value::items() const { return static_cast<ListObj&>(*obj_).items; }
bool Value::is_size() const { return type_ == Type::Tuple && static_cast<const ListObj&>(*obj_).is_size; }
const Tensor& Value::as_tensor() const {
  concrete();
  return static_cast<const TensorObj&>(*obj_).t;
}
Value Value::without_proxy() const {
  Value v = *this;
  if (proxy_ && type_ != Type::Tensor) {
    v.proxy_ = false;
    v.obj_.reset();
  }
  return v;
}

int64_t RangeObj::length() const {
  if (step > 0 && start < stop) return (stop - start - 1) / step + 1;
  if (step < 0 && start > stop) return (start - stop - 1) / (-step) + 1;
  return 0;
}

Value make_builtin(std::string name, NativeFn fn) {
  return Value(Type::Builtin, std::make_shared<BuiltinObj>(std::move(name), std::move(fn)));
}

const char* type_tag_name(TypeTag t) {
  switch (t) {
    case TypeTag::Int: return "int";
    case TypeTag::Float: return "float";
    case TypeTag::Bool: return "bool";
    case TypeTag::Str: return "str";
    case TypeTag::List: return "list";
    case TypeTag::Tuple: return "tuple";
    case TypeTag::Tensor: return "Tensor";
    case TypeTag::DType: return "dtype";
    case TypeTag::Device: return "device";
    case TypeTag::Dict: return "dict";
    case TypeTag::Object: return "object";
  }
  return "type";
}

namespace {
InstanceRepr instance_repr = nullptr;
}  // namespace
void set_instance_repr(InstanceRepr f) { instance_repr = f; }

std::string type_name(const Value& v) {
  switch (v.type()) {
    case Type::None: return "NoneType";
    case Type::Bool: return "bool";
    case Type::Int: return "int";
    case Type::Float: return "float";
    case Type::Str: return "str";
    case Type::List: return "list";
    case Type::Tuple: return v.is_size() ? "torch.Size" : "tuple";
    case Type::Tensor: return "Tensor";
    case Type::DType: return "torch.dtype";
    case Type::Device: return "torch.device";
    case Type::Function: return "function";
    case Type::Builtin: return "builtin_function_or_method";
    case Type::Module: return "module";
    case Type::Range: return "range";
    case Type::Slice: return "slice";
    case Type::Ellipsis: return "ellipsis";
    case Type::TypeObj: return "type";
    case Type::Dict: return "dict";
    case Type::Class: return "type";
    case Type::Instance: return v.obj<InstanceObj>().cls->name;
    case Type::Method: return "method";
    case Type::StaticMethod: return "staticmethod";
    case Type::Super: return "super";
    case Type::Iterator: return "iterator";
    case Type::Unbound: break;
  }
  return "object";
}

std::string repr_string(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (size_t i = 0; i < s.size();) {
    const char32_t c = next_char(s, i);
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == char32_t(quote)) out += std::string("\\") + char(c);
    else if (char_is_printable(c)) append_char(out, c);
    else if (c < 0x100) out += fmt::format("\\x{:02x}", uint32_t(c));
    else if (c < 0x10000) out += fmt::format("\\u{:04x}", uint32_t(c));
    else out += fmt::format("\\U{:08x}", uint32_t(c));
  }
  return out + quote;
}

// A list or tuple's repr is written into one string as the walk goes (a
// nested list's text is not copied once per level), with the sequences in
// progress in a set: a list that contains itself prints as [...], as in
// Python, and nesting past Python's recursion limit is its RecursionError.
namespace {

struct ReprWalk {
  std::unordered_set<const Object*> in_progress;
  int depth = 0;
};
thread_local ReprWalk repr_walk;

void sequence_repr(std::string& out, const Value& v) {
  const Object* self = v.object().get();
  const bool list = v.is(Type::List);
  if (repr_walk.in_progress.count(self)) {
    out += list ? "[...]" : v.is(Type::Dict) ? "{...}" : "(...)";
    return;
  }
  if (repr_walk.depth >= 1000)
    fail(ErrorKind::RecursionError, "maximum recursion depth exceeded while getting the repr of an object");
  struct Enter {
    const Object* self;
    Enter(const Object* s) : self(s) {
      repr_walk.in_progress.insert(s);
      ++repr_walk.depth;
    }
    ~Enter() {
      repr_walk.in_progress.erase(self);
      --repr_walk.depth;
    }
  } enter(self);
  if (v.is(Type::Dict)) {
    out += "{";
    bool first = true;
    // (by position, each entry copied first: an object's __repr__ may
    // change the dict, as Python's repr goes on with what is there then)
    const DictObj& d = v.obj<DictObj>();
    for (size_t i = 0; i < d.entries.size(); ++i) {
      if (!d.entries[i].live) continue;
      const Value k = d.entries[i].key, x = d.entries[i].value;
      if (!first) out += ", ";
      first = false;
      if (k.is(Type::Tuple)) sequence_repr(out, k);
      else out += to_repr(k);
      out += ": ";
      if (x.is(Type::List) || x.is(Type::Tuple) || x.is(Type::Dict)) sequence_repr(out, x);
      else out += to_repr(x);
    }
    out += "}";
    return;
  }
  if (!list && !v.is_size()) {
    if (auto& rt = v.obj<ListObj>().return_type; !rt.empty()) {
      const auto f = return_fields(rt);
      out += fmt::format("torch.return_types.{}(\n{}={},\n{}={})", rt, f[0], to_repr(v.items()[0]), f[1],
                         to_repr(v.items()[1]));
      return;
    }
  }
  const char* view = v.obj<ListObj>().view;
  if (view) out += std::string(view) + "(";
  out += list ? "[" : v.is_size() ? "torch.Size([" : "(";
  const std::vector<Value>& items = v.items();
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    const Value x = items[i];  // (a copy: an object's __repr__ may change the list)
    if (x.is(Type::List) || x.is(Type::Tuple) || x.is(Type::Dict)) sequence_repr(out, x);
    else out += to_repr(x);
  }
  out += list ? "]" : v.is_size() ? "])" : items.size() == 1 ? ",)" : ")";
  if (view) out += ")";
}

}  // namespace

std::string to_repr(const Value& v) {
  switch (v.type()) {
    case Type::None: return "None";
    case Type::Bool: return v.as_bool() ? "True" : "False";
    case Type::Int: return std::to_string(v.as_int());
    case Type::Float: return repr_float(v.as_float());
    case Type::Str: return repr_string(v.as_str());
    case Type::List: case Type::Tuple: case Type::Dict: {
      std::string out;
      sequence_repr(out, v);
      return out;
    }
    case Type::Class: {
      auto& c = v.obj<ClassObj>();
      return c.module == "builtins" ? "<class '" + c.name + "'>" : "<class '" + c.module + "." + c.name + "'>";
    }
    case Type::Instance: return instance_repr ? instance_repr(v, true) : "<" + type_name(v) + " object>";
    case Type::Method: {
      auto& m = v.obj<MethodObj>();
      std::string name = m.fn.is(Type::Function) ? m.fn.obj<FunctionObj>().def->name : "?";
      return "<bound method " + type_name(m.self) + "." + name + " of " + to_repr(m.self) + ">";
    }
    case Type::StaticMethod: return "<staticmethod(" + to_repr(v.obj<StaticMethodObj>().fn) + ")>";
    case Type::Iterator: return "<iterator object>";
    case Type::Super: return "<super: <class '" + v.obj<SuperObj>().cls->name + "'>, <" + type_name(v.obj<SuperObj>().self) + " object>>";
    case Type::Tensor: return tensor_repr(v.as_tensor());
    case Type::DType: return "torch." + std::string(dtype_name(v.as_dtype()));
    case Type::Device: return "device(type='" + v.as_device().str() + "')";
    case Type::Function: return "<function " + v.obj<FunctionObj>().def->name + ">";
    case Type::Builtin: return v.obj<BuiltinObj>().repr();
    case Type::Module: {
      auto& m = v.obj<ModuleObj>();
      return m.path.empty() ? "<module '" + m.name + "' (built-in)>" : "<module '" + m.name + "' from '" + m.path + "'>";
    }
    case Type::Range: {
      auto& r = v.obj<RangeObj>();
      return r.step == 1 ? fmt::format("range({}, {})", r.start, r.stop)
                         : fmt::format("range({}, {}, {})", r.start, r.stop, r.step);
    }
    case Type::Slice: {
      auto& s = v.obj<SliceObj>();
      return "slice(" + to_repr(s.start) + ", " + to_repr(s.stop) + ", " + to_repr(s.step) + ")";
    }
    case Type::Ellipsis: return "Ellipsis";
    case Type::Unbound: return "<unbound>";
    case Type::TypeObj: {
      const TypeTag t = v.as_type();
      const bool torch = t == TypeTag::Tensor || t == TypeTag::DType || t == TypeTag::Device;
      return std::string("<class '") + (torch ? "torch." : "") + type_tag_name(t) + "'>";
    }
  }
  return "?";
}

std::string to_str(const Value& v) {
  if (v.is(Type::Str)) return v.as_str();
  if (v.is(Type::Instance) && instance_repr) return instance_repr(v, false);
  if (v.is(Type::Device)) return v.as_device().str();
  return to_repr(v);
}

namespace {

// `open`: the lists and tuples being converted around v (one that holds
// itself has no IValue).
IValue to_ivalue(const Value& v, std::vector<const Object*>& open) {
  switch (v.type()) {
    case Type::None: return IValue();
    case Type::Bool: return IValue(v.as_bool());
    case Type::Int: return IValue(v.as_int());
    case Type::Float: return IValue(v.as_float());
    case Type::Str: return IValue(v.as_str());
    case Type::DType: return IValue(v.as_dtype());
    case Type::Device: return IValue(v.as_device());
    case Type::Tensor: return IValue(v.as_tensor());
    case Type::List: case Type::Tuple: {
      if (std::find(open.begin(), open.end(), v.object().get()) != open.end())
        fail(ErrorKind::TypeError, "self-referential lists are incompatible: a list that contains itself has no tensor value");
      open.push_back(v.object().get());
      std::vector<IValue> items;
      items.reserve(v.items().size());
      for (auto& x : v.items()) items.push_back(to_ivalue(x, open));
      open.pop_back();
      return IValue::list(std::move(items), v.is(Type::Tuple));
    }
    case Type::Range: {
      auto& r = v.obj<RangeObj>();
      std::vector<IValue> items;
      for (int64_t i = 0, n = r.length(); i < n; ++i) items.push_back(IValue(r.at(i)));
      return IValue::list(std::move(items));
    }
    case Type::TypeObj:
      // Python's int, float and bool name dtypes, as PyTorch accepts them.
      if (v.as_type() == TypeTag::Int) return IValue(DType::Int64);
      if (v.as_type() == TypeTag::Float) return IValue(DType::Float64);
      if (v.as_type() == TypeTag::Bool) return IValue(DType::Bool);
      break;
    default: break;
  }
  fail(ErrorKind::TypeError, "a '{}' object cannot be passed to a tensor op", type_name(v));
}

}  // namespace

IValue to_ivalue(const Value& v) {
  std::vector<const Object*> open;
  return to_ivalue(v, open);
}

Value present_result(std::string_view op, Value result) {
  if (!result.is(Type::Tuple)) return result;
  if (op == "shape" || op == "size") return Value::size(result.items());
  if ((op == "max" || op == "min" || op == "sort" || op == "topk" || op == "cummax" || op == "cummin") && result.items().size() == 2)
    return return_tuple(std::string(op), result.items());
  return result;
}

Value return_tuple(std::string type, std::vector<Value> items) {
  Value pair = Value::tuple(std::move(items));
  pair.obj<ListObj>().return_type = std::move(type);
  return pair;
}

std::array<std::string_view, 2> return_fields(std::string_view type) {
  if (type == "aminmax") return {"min", "max"};
  return {"values", "indices"};
}

Value from_ivalue(const IValue& v) {
  const auto& r = v.rep();
  switch (r.index()) {
    case 0: return Value();
    case 1: return Value(v.to_bool());
    case 2: return Value(v.to_int());
    case 3: return Value(v.to_double());
    case 4: return Value::str(v.to_string());
    case 5: return Value(v.to_dtype());
    case 6: return Value(v.to_device());
    case 7: return Value::tensor(v.to_tensor());
    default: {
      std::vector<Value> items;
      items.reserve(v.to_list().items.size());
      for (auto& x : v.to_list().items) items.push_back(from_ivalue(x));
      return v.to_list().is_tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
    }
  }
}

Value BuiltinObj::wrapped() const { return Value(); }
}  // namespace thn
