#pragma once
// Values of the thn language: Python's scalars, strings, lists and tuples,
// functions and modules, plus dtypes, devices and tensors. Scalars are held
// inline; everything else is a reference-counted object, shared the way
// Python shares objects (two names for one list see the same list).
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "frontend/ast.h"
#include "runtime/ivalue.h"

namespace thn {

class Interpreter;
struct Frame;

enum class Type : uint8_t {
  None, Bool, Int, Float, Str, List, Tuple, Tensor, DType, Device, Function, Builtin, Module, Range, Slice,
  Ellipsis, TypeObj, Dict, Class, Instance, Method, StaticMethod, Super, Iterator,
  Unbound  // a local slot not yet assigned
};

struct Object {
  virtual ~Object() = default;
};

// A value the jit tracer follows symbolically (ir/: a TensorProxy or a
// NumberProxy). A number proxy still holds this call's value inline; code
// that reads it through as_int()/as_float()/as_bool() makes it static (the
// tracer guards its value), and reading a tensor proxy's data is an error:
// such code was not written with tracing in mind, so it must not bake a
// value into a trace silently.
struct AutogradMeta;
struct Symbolic : Object {
  virtual void concrete_use() const = 0;
  // A tensor proxy's autograd while tracing (interp/autograd.h); the tracer
  // drops it when the trace is done (a step holds its result: a cycle).
  std::shared_ptr<AutogradMeta> autograd;
  // A tensor proxy's meta storage (shared as the storages it stands for
  // are: autograd's version counters); null for other values.
  virtual std::shared_ptr<Storage> storage() const { return nullptr; }
};

// The builtin types that are values (`int`, `list`, `Tensor`): isinstance
// reads them, calling them converts, and int/float/bool also serve as dtypes.
enum class TypeTag : uint8_t { Int, Float, Bool, Str, List, Tuple, Tensor, DType, Device, Dict, Object };
const char* type_tag_name(TypeTag t);  // the type's __name__: int, ..., Tensor, dtype, device, dict, object

class Value {
 public:
  Value() : type_(Type::None), i_(0) {}
  static Value none() { return Value(); }
  Value(bool b) : type_(Type::Bool), i_(b) {}
  Value(int64_t i) : type_(Type::Int), i_(i) {}
  Value(int i) : type_(Type::Int), i_(i) {}
  Value(double f) : type_(Type::Float), f_(f) {}
  Value(DType d) : type_(Type::DType), dtype_(d) {}
  Value(Device d) : type_(Type::Device), device_(d) {}
  Value(TypeTag t) : type_(Type::TypeObj), tag_(t) {}
  Value(Type t, std::shared_ptr<Object> o) : type_(t), i_(0), obj_(std::move(o)) {}
  static Value str(std::string s);
  static Value list(std::vector<Value> items);
  static Value tuple(std::vector<Value> items);
  static Value size(std::vector<Value> items);  // torch.Size: a tuple that prints as torch.Size([...])
  // A list or tuple of this one's kind (a torch.Size, a torch.return_types
  // pair) holding `items`.
  Value like(std::vector<Value> items) const;
  // Both lists, or tuples of one kind (plain, torch.Size, one return_types).
  bool same_kind(const Value& other) const;
  static Value tensor(Tensor t);
  static Value unbound() {
    Value v;
    v.type_ = Type::Unbound;
    return v;
  }
  // A tracer's proxy: `concrete` is a number holding this call's value or a
  // tensor (the proxy's own object stands in for it).
  static Value proxy(Value concrete, std::shared_ptr<Symbolic> p) {
    concrete.obj_ = std::move(p);
    concrete.proxy_ = true;
    return concrete;
  }
  static Value ellipsis() {
    Value v;
    v.type_ = Type::Ellipsis;
    return v;
  }

  Type type() const { return type_; }
  bool is(Type t) const { return type_ == t; }
  bool is_none() const { return type_ == Type::None; }
  bool is_number() const { return type_ == Type::Bool || type_ == Type::Int || type_ == Type::Float; }
  bool is_int_like() const { return type_ == Type::Bool || type_ == Type::Int; }
  bool is_sequence() const { return type_ == Type::List || type_ == Type::Tuple; }

  bool is_proxy() const { return proxy_; }
  const Symbolic& symbolic() const { return static_cast<const Symbolic&>(*obj_); }
  Value without_proxy() const;  // a number proxy's value as a plain number

  bool as_bool() const { concrete(); return i_ != 0; }
  int64_t as_int() const { concrete(); return i_; }  // Bool or Int
  double as_float() const { concrete(); return raw_float(); }
  // The value without telling the tracer: for the tracer itself.
  int64_t raw_int() const { return i_; }
  double raw_float() const { return type_ == Type::Float ? f_ : double(i_); }
  DType as_dtype() const { return dtype_; }
  Device as_device() const { return device_; }
  TypeTag as_type() const { return tag_; }
  const std::string& as_str() const;
  std::vector<Value>& items() const;  // List or Tuple
  bool is_size() const;
  const Tensor& as_tensor() const;  // not for tensor proxies
  template <class T> T& obj() const { return static_cast<T&>(*obj_); }
  const std::shared_ptr<Object>& object() const { return obj_; }

 private:
  void concrete() const {
    if (proxy_) [[unlikely]] symbolic().concrete_use();
  }

  Type type_;
  bool proxy_ = false;
  union {
    int64_t i_;
    double f_;
    DType dtype_;
    Device device_;
    TypeTag tag_;
  };
  std::shared_ptr<Object> obj_;
};

struct StrObj : Object {
  std::string s;
  explicit StrObj(std::string v) : s(std::move(v)) {}
};
// Objects whose references can form cycles that counting never frees:
// lists and tuples (`l.append(l)`), closures, and the frames closures read
// their names from (frame -> local -> closure -> frame). Each is made by
// make_shared and registered (lists when made, closures and frames when a
// closure is made), and collect_cycles() frees those only cycles keep
// alive. A derived class calls enroll() once it is ready to be visited and
// unenroll() first thing in its destructor.
struct Container {
  Container() = default;
  Container(const Container&) = delete;
  Container& operator=(const Container&) = delete;
  virtual ~Container() = default;

  // The containers this one holds a counted reference to, each as often as
  // it holds it.
  virtual void visit(const std::function<void(Container*)>& f) const = 0;
  // Its shared_ptr's use count (0 while being made or freed), and a new
  // reference to it.
  virtual long uses() const = 0;
  virtual std::shared_ptr<const void> keep() = 0;
  // Drops every reference it holds (it is garbage).
  virtual void clear() = 0;

 protected:
  void enroll();
  void unenroll();

 private:
  friend size_t collect_cycles();
  Container *prev_ = nullptr, *next_ = nullptr;  // the registry
  bool enrolled_ = false;
};
// The container a value is (a list, a tuple or an enrolled closure), or null.
Container* container_of(const Value& v);
// Calls f on the container of each of `values` that is one.
void visit_containers(const std::vector<Value>& values, const std::function<void(Container*)>& f);

// Lists and tuples.
struct ListObj : Object, Container, std::enable_shared_from_this<ListObj> {
  std::vector<Value> items;
  bool is_size = false;
  std::string return_type;  // "max": a torch.return_types.max (values, indices) pair (return_fields)
  const char* view = nullptr;  // "dict_keys", ...: a dict view's items, printed as the view
  explicit ListObj(std::vector<Value> v);
  ~ListObj() override;
  void visit(const std::function<void(Container*)>& f) const override;
  long uses() const override { return weak_from_this().use_count(); }
  std::shared_ptr<const void> keep() override { return weak_from_this().lock(); }
  void clear() override;
};
// CPython's trial deletion over the registered containers: one referenced
// more often than other containers reference it is reachable from outside,
// and so is everything it holds; the others drop their references, which
// frees them. Returns how many were freed. The interpreter runs it at the
// end and whenever the number of containers has doubled since the last run.
size_t collect_cycles();
size_t live_containers();
struct AutogradMeta;  // interp/autograd.h
struct TensorObj : Object {
  Tensor t;
  std::shared_ptr<AutogradMeta> autograd;  // null until autograd first touches it
  explicit TensorObj(Tensor v) : t(std::move(v)) {}
};
struct RangeObj : Object {
  int64_t start, stop, step;
  RangeObj(int64_t a, int64_t b, int64_t s) : start(a), stop(b), step(s) {}
  int64_t length() const;
  int64_t at(int64_t i) const { return start + i * step; }
};
struct SliceObj : Object {
  Value start, stop, step;
};

struct ModuleObj;
struct ClassObj;
// A function defined in thn: its AST, defaults evaluated at `def` time, the
// frame it was defined in (for reading enclosing names) and its module.
// A closure (one with an env) is a Container.
struct FunctionObj : Object, Container, std::enable_shared_from_this<FunctionObj> {
  const ast::FunctionDef* def;
  std::vector<Value> defaults;  // one per parameter; None-typed holes where there is no default
  std::vector<bool> has_default;
  std::shared_ptr<Frame> env;
  ModuleObj* module;
  std::weak_ptr<ClassObj> owner;  // the class whose body defined it (for super())
  ~FunctionObj() override;
  void close_over(std::shared_ptr<Frame> frame);  // sets env; enrolls both
  void visit(const std::function<void(Container*)>& f) const override;
  long uses() const override { return weak_from_this().use_count(); }
  std::shared_ptr<const void> keep() override { return weak_from_this().lock(); }
  void clear() override;
};

struct CallArgs {
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;
};
// A function implemented in C++: builtins, module functions, tensor ops and
// bound methods. `self` is set for bound methods.
using NativeFn = std::function<Value(Interpreter&, CallArgs&)>;
struct BuiltinObj : Object {
  std::string name;
  NativeFn fn;
  BuiltinObj(std::string n, NativeFn f) : name(std::move(n)), fn(std::move(f)) {}
  virtual std::string repr() const { return "<built-in function " + name + ">"; }
  virtual Value wrapped() const;  // the thn function a jit function traces; else None
};

// How many module globals were deleted (del, an except clause's name) in
// this process: jit's guards hold pointers to globals, which a deletion
// frees, so a trace made before one checks its globals no more.
extern uint64_t globals_deleted;

struct ModuleObj : Object {
  std::string name;
  std::string path;  // empty for built-in modules
  bool library = false;  // loaded from InterpOptions::library_dir
  std::unordered_map<std::string, Value> globals;
  std::unique_ptr<ast::Module> ast;
  std::shared_ptr<Frame> frame;  // module-level comprehension slots
};

Value make_builtin(std::string name, NativeFn fn);

// Python's type name, for messages: 'int', 'list', 'Tensor', 'function'...
std::string type_name(const Value& v);
// str() and repr() of a class instance: its __str__ / __repr__ when it has
// one (installed by the interpreter), else <module.Class object at 0x...>.
using InstanceRepr = std::string (*)(const Value& v, bool repr);
void set_instance_repr(InstanceRepr f);
// str() and repr() as Python prints them.
std::string to_str(const Value& v);
std::string to_repr(const Value& v);
std::string repr_string(const std::string& s);

// Conversions at the op boundary.
IValue to_ivalue(const Value& v);
Value from_ivalue(const IValue& v);
// An op's result as PyTorch presents it: shape and size() give a torch.Size,
// max/min over a dim a torch.return_types pair with .values and .indices.
Value present_result(std::string_view op, Value result);
// A torch.return_types.TYPE pair, and the names of its two fields:
// (min, max) for aminmax, else (values, indices).
Value return_tuple(std::string type, std::vector<Value> items);
std::array<std::string_view, 2> return_fields(std::string_view type);

}  // namespace thn
