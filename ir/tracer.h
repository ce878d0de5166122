#pragma once
// The tracer: the interpreter's own evaluator run with this OpDispatch.
// Tensor arguments become TensorProxies, number arguments NumberProxies
// (cache="symbolic") or constants, and every op is recorded in a Trace while
// the runtime's own implementation also runs on the proxies' *meta tensors*
// (runtime/tensor.h: metadata and storage identity, no bytes): shapes,
// dtypes, views and errors are exactly the eager ones, and tracing costs
// what the number of ops costs, never reads the caller's data and never
// touches device memory. What only values tell (an index out of range) is
// checked when the trace runs, at the same line (TraceExecutor).
// Where the traced code relies on a number (a branch, a loop count, a shape)
// the tracer records a guard; where it relies on tensor *data* (`if
// x.sum() > 0:`) it raises a located error, after running the part of the
// trace recorded so far on the real inputs, so that what the code printed
// and any error of data before that point are eager's.
// (ir/tracer.cpp: arguments, the trace and its outputs; tracer_ops.cpp: ops
// and indexing; tracer_numbers.cpp: numbers and guards; tracer_memory.cpp:
// shared memory and layouts.)
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "interp/interpreter.h"
#include "ir/trace.h"

namespace thn {

struct TraceOptions {
  bool symbolic_numbers = false;  // cache="symbolic": every number argument
  bool symbolic_shapes = false;   // shapes="symbolic" (every input size >= 2), or "auto" with a dynamic size
  // cache="auto" / shapes="auto": the number arguments, and the input sizes
  // (leaf name, dim), that earlier calls showed to vary; only those are
  // symbolic (with symbolic_shapes, only dynamic_sizes' sizes when
  // auto_shapes).
  bool auto_shapes = false;
  std::set<std::string> dynamic_numbers;
  std::set<std::pair<std::string, int64_t>> dynamic_sizes;
};

// One node of the call's arguments, flattened in the order the prologue
// checks them: a parameter, an item of a list/tuple argument, or a value of
// a dict argument or an attribute of an object argument (Thunder's pytrees).
struct InputLeaf {
  // Same: a list, dict or object met before (passed twice, or holding
  // itself); the traced code sees one, so the prologue checks it is still
  // the same object.
  // Mapping: a dict or a class instance; its keys (attribute names) and its
  // class are checked, its values are leaves in insertion order.
  enum Kind : uint8_t { Tensor, Number, Sequence, Constant, Same, Mapping } kind = Constant;
  int parent = -1;  // the Sequence or Mapping leaf holding it; -1 for a parameter
  int index = 0;    // parameter index, item index, or entry index (insertion order)
  int same = -1;    // Same: the leaf of that list
  Value value;      // the argument itself
  std::string name;  // x, or p_0 for item 0 of p
  Value proxy;      // Tensor leaves, and Number leaves under cache="symbolic"
  // As the call found them (the traced code may change them): a Mapping
  // leaf of an object, its classes' attributes all the way down; a Constant
  // (a bound method, an iterator), guarded_contents().
  std::vector<Value> contents;
};

// A predicate the trace assumed: `expr` (a number proxy built from inputs)
// evaluates to `expected` (compared by truth for branch predicates, by value
// and type when the number was made static).
struct Guard {
  Value expr;
  Value expected;
  bool by_truth = true;
  Loc loc;  // the statement that assumed it
};

// A name read from outside the traced code, and what it held.
struct ExternalGuard {
  std::string name;
  // Where the name lives; null for a built-in, whose guard is that
  // `globals` still lack the name.
  const Value* slot = nullptr;
  const std::unordered_map<std::string, Value>* globals = nullptr;
  uint64_t deleted = 0;  // globals_deleted when traced
  Value expected;
  std::vector<Value> items;  // guarded_contents(): a list's items, a dict's or object's entries, all the way down
};

// What the trace assumed about the identity of an argument tensor (`a is b`
// was asked): leaf `a` is (or is not) leaf `b`, or, with b = -1, `object` (a
// tensor from outside, named `name`).
struct IdentityGuard {
  int a = -1, b = -1;
  Value object;
  std::string name;
  bool same = false;
};

// What the tracer throws when the traced code records a step inside a try
// statement (one with handlers or finally): an error that only the trace's
// run can raise (an index out of range) would skip them, so jit runs the
// function in the interpreter instead. `at` names the try.
struct TraceInTry {
  std::string at;
};

struct TraceResult {
  Trace trace;
  std::vector<InputLeaf> leaves;
  std::vector<Guard> guards;
  std::vector<ExternalGuard> externals;
  std::vector<IdentityGuard> identities;
  // The trace writes into an input or returns an alias of one, so how the
  // tensor inputs share memory is part of what it assumed.
  bool depends_on_overlap = false;
  // Grad mode was on while some tensor had required grad (autograd recorded
  // steps on the proxies): a trace of the other mode is another trace.
  bool grad_recording = false;
  // The trace depends on the exact strides of non-contiguous inputs (a
  // reshape that is a view or a copy by them, stride()) or on the storage
  // offsets of the inputs (storage_offset()).
  bool depends_on_strides = false, depends_on_offset = false;
  // The list, dict and object arguments the function changed (append, item
  // assignment, `self.step += 1`, ...), each by its path: the parameter's
  // index, then item or entry indices. The trace's output is then a tuple of
  // the return value and each one's new contents (a list's items; a dict's
  // or object's entries, encoded as dicts are in outputs), which the
  // caller's arguments take after every run.
  std::vector<std::vector<int>> list_updates;
  // The number leaves (int or float items and entries of list, dict and
  // object arguments, by leaf name) that the function set to another value:
  // counters (an optimizer's step), which the next call sees changed.
  std::vector<std::string> changed_numbers;
  // Lists the caller gets back as themselves, as eager returns them: an
  // argument list in the output (`return xs`), or a list the output holds
  // twice or inside itself. The trace outputs None at `at` (a path of item
  // indices into its output); the caller puts there the argument at `from`
  // (parameter index, then item indices) or the output's item at `from`.
  struct OutputLink {
    std::vector<int> at, from;
    bool argument;
  };
  std::vector<OutputLink> output_links;
};

// The overlap pattern of tensors: for each, the index of the first earlier
// tensor whose memory range overlaps its own, its own index, or -1 for an
// expanded tensor (one that overlaps itself). The tracer
// decides functionalization by it and the prologue guards it.
std::vector<int> overlap_pattern(std::span<const Tensor* const> tensors);

// Tensors grouped by shared memory: the connected sets of overlapping
// memory ranges in one storage. Per tensor: its group's smallest index, its
// storage offset past the group's range start, and the range's length (an
// empty tensor is alone, with a range of 0). The prologue guards `group` and
// `offset` of a trace that functionalizes writes across inputs.
struct OverlapGroups {
  std::vector<int> group;
  std::vector<int64_t> offset, extent;
};
OverlapGroups overlap_groups(std::span<const Tensor* const> tensors);

// A string naming a device ("cpu", "cuda", "cuda:0"): to()'s and device='s.
bool is_device_string(const Value& v);

// An op whose result's shape depends on tensor data (nonzero,
// masked_select): no trace can record it.
bool data_dependent_shape(const OpDef& op);

class Tracer : public OpDispatch {
 public:
  Tracer(Interpreter& in, TraceOptions opts);
  ~Tracer() override;

  // Traces fn (a thn function, or a builtin taking every parameter
  // positionally) called with `params` (bound, defaults applied), named `names`.
  TraceResult trace(const Value& fn, const std::vector<Value>& params, const std::vector<std::string>& names);
  // The argument tensors that require grad (jit's): their proxies become
  // autograd leaves. params' last is then not fn's but jit's hidden
  // (paths, grads): a list of each one's .grad, which takes the .grad the
  // trace leaves (a changed list argument: an output).
  void differentiate(std::vector<Value> tensors) { grad_args_ = std::move(tensors); }

  Value getitem(const Value& tensor, std::span<const Value> index) override;
  bool mask_assign(const Value& tensor, const Value& mask, const Value& value);
  void setitem(const Value& tensor, std::span<const Value> index, const Value& value) override;
  bool truth(const Value& v) override;
  bool tracing() const override { return true; }
  Value number_op(Interpreter& in, NumberOp op, std::span<const Value> operands) override;
  Value wrap_number(const Value& n) override;
  void print(Interpreter& in, std::span<const Value> args, const std::string& sep, const std::string& end) override;
  void external_load(const std::string& name, const Value& slot) override;
  void builtin_load(const std::string& name, const std::unordered_map<std::string, Value>& globals) override;
  bool same_tensor(const Value& a, const Value& b) override;

  // Called by proxies whose concrete value some code read.
  void make_static(NumberProxy& p);
  [[noreturn]] void data_dependent(const std::string& what) const;

  // A number operation on proxies: recorded in the trace (shape arithmetic
  // the computation needs), or only built (a guard's expression).
  Value record_number_op(NumberOp op, std::vector<Value> operands);
  Value number_node(NumberOp op, std::vector<Value> operands);
  // Guards that `predicate` (a number proxy) is true, as it is on this call.
  void assume(const Value& predicate);

 protected:
  Value run_op(const OpDef& op, const Value* self, std::span<const Value> args, const CallArgs& kw,
               bool inplace) override;

 private:
  Value flatten(const Value& arg, int parent, int index, const std::string& name, std::vector<InputLeaf>& leaves);
  std::string root_name_;  // the parameter flatten is in
  // The trace's output for `v` at `path`: proxies, with None where an
  // OutputLink puts a list (an update root is not linked itself).
  struct Links;
  Value link_output(const Value& v, std::vector<int>& path, bool update_root, Links& links);
  void write_back_before_failure(const std::vector<InputLeaf>& leaves);
  // A proxy of `meta` (a meta tensor, or a number's real 0-dim tensor)
  // on `device`.
  Value new_tensor(Tensor meta, Device device, const std::string& name = "");
  Value input_tensor(const Tensor& t, const std::string& name);
  // The meta tensor of an input or captured tensor.
  Tensor meta_of(const Tensor& t);
  Value on_meta(const Value& v);  // proxies replaced by their values (tensors: meta tensors)
  Value traced(const Value& v);  // what the trace records for v (captured tensors registered)
  IValue meta_ivalue(const Value& v) { return to_ivalue(on_meta(v)); }
  Value wrap_result(const IValue& r, Device device);
  Value attribute(const OpDef& op, const Value& self, std::span<const Value> args, const CallArgs& kw);
  void make_static_all(const Value& v);
  void static_layout(const TensorProxy& p);
  bool views_non_contiguous(const Tensor& t) const;
  bool structural_layout(const Value& t) const;
  // An index as the trace records it (a mask, a 0-dim tensor or a tensor
  // slice bound refused: what they select depends on data; `mask` says so).
  std::vector<Value> traced_index(const Value& tensor, std::span<const Value> index, const char* mask);
  std::optional<std::vector<Value>> symbolic_index_sizes(const Value& t, const std::vector<Value>& idx);
  std::optional<std::vector<Value>> tensor_index_sizes(const std::vector<Value>& sizes,
                                                       const std::vector<Value>& idx) const;
  // Records an op with its decomposition into prims, or `whole` (it runs
  // as eager's op: its result depends on eager's loop order, or on a number
  // of tensor data whose checks only the run can make).
  BoundSymbol& record(Symbol sym, std::vector<Value> args, Value out, bool whole = false);
  // The statement being traced (for a guard's location).
  Loc here() const;
  // t.item(): a Dynamic number (no value while tracing), recorded.
  Value item(const Value& t);
  // Python's result type of a number op with a Dynamic operand.
  Type dynamic_result_type(NumberOp op, const std::vector<Value>& operands) const;
  // Guards the predicate that decides a number op's result type where the
  // values decide it (the sign of an int exponent; which of an int and a
  // float min/max picks).
  void guard_result_type(NumberOp op, const std::vector<Value>& operands);
  // The interpreter's traced calls now, shared with the last op's when the
  // same.
  std::shared_ptr<const std::vector<TraceEntry>> calls();
  bool aliases_input(const Tensor& meta) const;
  // Whether an in-place write into dst reads one of `operands` through
  // memory it shares with dst but not element for element (eager allows
  // it where PyTorch cannot tell, x.addcmul_(x[0], x[0]) on a strided x):
  // the result is eager's loop order's, so the op is recorded without its
  // decomposition and the trace runs in program order.
  bool loop_order_write(const Tensor& dst, std::span<const Value> operands) const;
  // Trace::storage_groups from the tensor inputs (then captured tensors)
  // and their overlap pattern.
  void record_storage_groups(const std::vector<Value>& proxies, const std::vector<int>& pattern);

  Interpreter& in_;
  TraceOptions opts_;
  std::vector<Value> grad_args_;
  EagerDispatch eager_;
  Trace trace_;
  std::vector<Guard> guards_;
  std::vector<ExternalGuard> externals_;
  std::vector<std::shared_ptr<NumberProxy>> numbers_;
  std::vector<std::shared_ptr<TensorProxy>> tensors_;
  // The list arguments as the traced code sees them, with their items at
  // the start: by leaf index.
  struct ListArgument {
    int leaf;
    Value list;
    std::vector<Value> items;
  };
  std::vector<ListArgument> lists_;
  // Dict and object arguments as the traced code sees them (copies holding
  // the proxies), with their entries at the start.
  struct MappingArgument {
    int leaf;
    Value traced;
    std::vector<std::pair<Value, Value>> entries;
  };
  std::vector<MappingArgument> mappings_;
  // an argument dict or object -> its Mapping leaf and the copy the traced code sees
  std::unordered_map<const Object*, std::pair<int, Value>> mapping_index_;
  std::unordered_map<const Object*, size_t> list_index_;  // an argument list -> its lists_ entry
  std::unordered_map<const Object*, int> input_leaf_;      // an input tensor proxy -> its leaf
  std::vector<const Object*> leaf_objects_;                // by leaf: the argument's object
  std::vector<IdentityGuard> identities_;
  std::vector<const Object*> open_;  // the sequences map_open is inside
  // map_items, keeping an item that is a sequence around it as it is.
  template <class F> Value map_open(const Value& v, F f);
  // An input's storage -> its meta storage; the meta storages of inputs.
  std::unordered_map<const Storage*, std::shared_ptr<Storage>> input_storages_;
  std::unordered_set<const Storage*> meta_inputs_;
  std::unordered_map<const Object*, Value> captured_;  // outside tensor -> its proxy
  std::unordered_map<const Object*, std::string> external_names_;
  std::shared_ptr<const std::vector<TraceEntry>> calls_;
  int next_id_ = 0;
  bool depends_on_strides_ = false, depends_on_offset_ = false;
};

}  // namespace thn
