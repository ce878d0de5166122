#pragma once
// The tree-walking evaluator: the reference semantics of thn. It executes a
// resolved AST over Values; every tensor operation goes through OpDispatch.
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frontend/ast.h"
#include "interp/autograd.h"
#include "interp/dispatch.h"
#include "interp/value.h"

namespace thn {

// A function activation (or a module body).
// A function call's locals. A frame a closure reads its names from is a
// Container (enrolled when the closure is made).
struct Frame : Container, std::enable_shared_from_this<Frame> {
  ~Frame() override { unenroll(); }
  void enroll_frame() { enroll(); }
  void visit(const std::function<void(Container*)>& f) const override;
  long uses() const override { return weak_from_this().use_count(); }
  std::shared_ptr<const void> keep() override { return weak_from_this().lock(); }
  void clear() override;

  std::vector<Value> slots;
  std::shared_ptr<Frame> env;  // the frame the function was defined in
  ModuleObj* module = nullptr;
  const char* name = "<module>";
  const Loc* loc = nullptr;  // what is executing now, for error locations
  bool in_trace = false;     // created while tracing: its locals are the trace's own
  const Frame* caller = nullptr;  // the frame running when this one started
  const FunctionObj* function = nullptr;  // the function this is a call of
  Value class_ns;  // a class body's frame: the class's namespace (a dict)
};

// A runtime error placed in the program: the location where it was raised
// and the frames it unwound through, innermost first.
class TracedError : public LocatedError {
 public:
  TracedError(ErrorKind k, std::string msg, Loc loc) : LocatedError(k, std::move(msg), loc) {}
  std::vector<TraceEntry> trace;
};

// Re-raises the error in flight with frame f added to its traceback (an
// unplaced error placed at f's statement).
[[noreturn]] void rethrow_with_frame(const Frame& f);

struct InterpOptions {
  std::vector<std::string> module_path;  // folders searched by `import`, in order
  // The standard library's folder (one of module_path): its modules' names
  // are the library's own, which jit does not guard but for lists, dicts and
  // objects (as Thunder does not guard torch's), so a prologue shows only
  // the program's names.
  std::string library_dir;
  std::FILE* out = stdout;
  // Makes jit(fn, cache=, shapes=)'s callable; unset, jit is the identity.
  // (compile: "sync", "background", or "" for THN_COMPILE's)
  std::function<Value(Interpreter&, const Value& fn, const std::string& cache, const std::string& shapes,
                      const std::string& compile)>
      make_jit;
};

struct DictObj;

class Interpreter {
 public:
  explicit Interpreter(InterpOptions opts);
  ~Interpreter();

  // Runs a script as __main__. Errors propagate as LocatedError / TracedError.
  void run_file(const std::string& path);
  // Runs `src` as more of an interactive __main__ (the REPL): its names stay
  // for the next input. A lone expression's value is returned; otherwise None.
  Value run_interactive(std::shared_ptr<const Source> src);
  // The interactive __main__ (made on first use).
  ModuleObj& main_module();

  Value call(const Value& fn, CallArgs& args);
  // Binds a call's arguments to fn's parameters as Python does (defaults
  // filled in), into slots[0 .. number of parameters).
  void bind_arguments(const FunctionObj& fn, CallArgs& args, Value* slots);
  // The other way: a call of fn passing `params` (one per parameter, as
  // bind_arguments leaves them): a thn function's keyword-only ones by name,
  // *args and **kwargs spread; a builtin (a transform) takes all positionally.
  static CallArgs call_args_of(const Value& fn, std::vector<Value> params);
  ModuleObj& import_module(const std::string& name);

  // Python semantics shared by the evaluator and the builtins (interp/arith.cpp).
  bool truth(const Value& v);
  // len(v) of an instance: its __len__'s result, which must be an int >= 0
  // (Python's TypeError and ValueError otherwise).
  Value instance_len(const Value& v);
  Value binary(ast::BinOp op, const Value& a, const Value& b);
  Value inplace_binary(ast::BinOp op, const Value& a, const Value& b);  // a op= b
  Value unary(ast::UnaryOp op, const Value& v);
  Value compare(ast::CmpOp op, const Value& a, const Value& b);
  bool equals(const Value& a, const Value& b);
  bool same_object(const Value& a, const Value& b);  // `a is b` for objects
  bool less(const Value& a, const Value& b);  // a < b for sorting, min and max
  std::vector<Value> iterate(const Value& v);  // the items `for` visits, all of them
  // The items `for` visits, one at a time, until step returns false (then
  // false): an iterator, or an object's __iter__ or __getitem__, is drawn
  // from only as far as visited; a list is visited live.
  bool each(const Value& v, const std::function<bool(const Value&)>& step);
  // Whether drawing v's items runs code or uses them up (an iterator, an
  // object): zip, enumerate and map of one are iterators themselves.
  static bool draws(const Value& v) { return v.is(Type::Iterator) || v.is(Type::Instance); }
  int64_t tensor_dim(const Value& t);
  Value tensor_len(const Value& t);  // len(t): t.size(0), symbolic while tracing
  Value getattr(const Value& obj, const std::string& name);
  Value getitem(const Value& obj, const Value& index);
  void setitem(const Value& obj, const Value& index, const Value& v);
  void delitem(const Value& obj, const Value& index);
  // Attributes of class instances and classes (interp/classes.cpp); get
  // returns unbound when there is none.
  Value object_attr(const Value& obj, const std::string& name);
  void setattr(const Value& obj, const std::string& name, const Value& v);
  void delattr(const Value& obj, const std::string& name);
  bool isinstance(const Value& v, const Value& cls);
  // An instance's special method (__call__, __len__, ...) bound to it, or unbound.
  Value special(const Value& obj, const char* name);
  // str(v) and repr(v), calling __str__ / __repr__ of instances.
  std::string str(const Value& v);
  std::string repr(const Value& v);
  // format(v, spec) with Python's format-spec mini-language (interp/format.cpp).
  std::string format(const Value& v, const std::string& spec);
  // The interpreter running on this thread (for str() of instances).
  static Interpreter* running();

  OpDispatch& dispatch() { return *dispatch_; }
  // The eager dispatch's autograd (its grad mode, its tape).
  AutogradDispatch& autograd() { return *autograd_; }
  // The tracer installs itself for the duration of a trace; returns the previous one.
  OpDispatch* set_dispatch(OpDispatch* d) { return std::exchange(dispatch_, d); }
  std::FILE* out() const { return opts_.out; }
  const InterpOptions& options() const { return opts_; }
  // The innermost running frame (its `loc` is the statement executing now).
  const Frame* current_frame() const { return current_; }
  // The try statement (with handlers or finally) innermost among those
  // entered while tracing, still running its body; null when none is.
  const ast::Try* try_in_trace() const { return try_in_trace_; }
  // The frames created while tracing, innermost first, as traceback lines:
  // the calls inside a jitted function that lead to the op it records.
  std::vector<TraceEntry> traced_calls() const;
  std::unordered_map<std::string, Value>& builtins() { return builtins_; }

 private:
  enum class Flow { Normal, Break, Continue, Return };

  Flow exec(const ast::Body& body, Frame& f, Value& ret);
  Flow exec(const ast::Stmt& s, Frame& f, Value& ret);
  Value eval(const ast::Expr& e, Frame& f);
  Value eval_call(const ast::Call& c, Frame& f);
  Value eval_subscript_index(const ast::Subscript& s, Frame& f);
  Value eval_list_comp(const ast::ListComp& c, Frame& f);
  void comp_loop(const ast::ListComp& c, size_t gen, Frame& f, std::vector<Value>& out);
  void assign(const ast::Expr& target, const Value& v, Frame& f);
  Value& name_slot(const ast::Name& n, Frame& f);
  Value load_name(const ast::Name& n, Frame& f);
  std::string name_note(const std::string& id, const Frame& f);
  void store_name(const ast::Name& n, const Value& v, Frame& f);
  Value make_function(const ast::FunctionDef& def, Frame& f);
  Value call_function(const FunctionObj& fn, CallArgs& args);
  Value method(const Value& self, const std::string& name);
  void exec_import(const ast::Stmt& s, Frame& f);
  Flow exec_try(const ast::Try& t, Frame& f, Value& ret);
  Flow exec_handlers(const ast::Try& t, Frame& f, Value& ret);
  [[noreturn]] void exec_raise(const ast::Raise& r, Frame& f);
  void exec_delete(const ast::Expr& target, Frame& f);
  Value exec_class(const ast::ClassDef& c, Frame& f);
  Value decorate(Value v, const std::vector<ast::ExprPtr>& decorators, Frame& f);
  Value instantiate(const Value& cls, CallArgs& args);
  Value eval_fstring(const ast::FString& s, Frame& f);
  // Items of a display or call whose elements may be starred.
  std::vector<Value> eval_items(const std::vector<ast::ExprPtr>& elts, Frame& f);
  Value dict_method(const Value& self, const std::string& name);
 public:
  // d.update(from): from a dict or an iterable of pairs.
  void dict_update(DictObj& d, const Value& from);
 private:
  Value str_method(const Value& self, const std::string& name);
  ModuleObj& load_module(const std::string& name, const std::string& path);

  // First, so destroyed last: frees what reference cycles kept alive.
  struct CollectCyclesLast {
    ~CollectCyclesLast() { collect_cycles(); }
  } collect_last_;
  // collect_cycles() at a statement once this many containers live, or
  // tensors take this many bytes (a cycle may hold large tensors).
  size_t collect_at_ = 10000;
  int64_t collect_bytes_at_ = int64_t(256) << 20;
  InterpOptions opts_;
  std::unique_ptr<OpDispatch> eager_;
  std::unique_ptr<AutogradDispatch> autograd_;  // in front of eager_
  OpDispatch* dispatch_;
  std::unordered_map<std::string, Value> builtins_;
  std::unordered_map<std::string, Value> modules_;  // by name
  std::vector<std::shared_ptr<const Source>> sources_;  // kept alive for locations
  std::vector<std::unique_ptr<ast::Module>> interactive_;  // the REPL's inputs (functions point into them)
  // Calls in progress and sequences being compared (`l == m` of lists that
  // hold themselves recurses until it is a RecursionError, as in Python).
  static constexpr int kMaxDepth = 1000;  // Python's default recursion limit
  int depth_ = 0;
  Frame* current_ = nullptr;
  // The exceptions being handled by `except` clauses, innermost last (a bare
  // `raise` re-raises the last).
  std::vector<std::exception_ptr> handling_;
  const ast::Try* try_in_trace_ = nullptr;
  Interpreter* outer_ = nullptr;  // the interpreter running() named before this one
};

// The attributes getattr accepts on obj, sorted (completion after `obj.`).
std::vector<std::string> attribute_names(const Value& obj);
// AttributeError: "X object has no attribute NAME", the closest attribute suggested.
[[noreturn]] void no_attribute(const Value& obj, const std::string& name);

// (request_interrupt, take_interrupt: runtime/error.h.)

// Installs print, len, range, ..., the tensor API and the math/time modules.
void install_builtins(Interpreter& in);
// The builtins of classes, dicts and strings: dict, type, repr, format,
// getattr, super, staticmethod, the exception classes, ... (interp/builtins_objects.cpp).
void install_object_builtins(Interpreter& in);
// save_npy / load_npy, and the safetensors module (interp/files.cpp).
void install_file_builtins(Interpreter& in);
Value safetensors_module();
// fmt % args (interp/format.cpp).
Value percent_format(Interpreter& in, const std::string& fmt, const Value& args);
Value make_builtin_module(Interpreter& in, const std::string& name);  // None when there is none
// An op by its function name, else its method name (`dim` is x.dim() only).
const OpDef& op_named(const char* name);

}  // namespace thn
