#pragma once
// The trace IR: a straight-line program of bound symbols over proxies. A
// symbol is a language op of the op table (printed `ltorch.NAME`, in-place
// `ltorch.NAME_`) or a prim (printed `prims.NAME`): Python's number
// operations (THN_NUMBER_OPS) and the few tensor prims below.
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "frontend/source.h"
#include "ir/proxy.h"
#include "runtime/op_registry.h"

namespace thn {

// X(name, namespace): the symbols that are not rows of the op table.
//   shape        i0, i1 = prims.shape(t): the sizes of an input (symbolic shapes)
//   item         a tensor's single element as a Python number (dynamic)
//   wrap_number  a Python number as a 0-dim wrapped tensor (`2 - t`)
//   convert_element_type(t, dtype): t in another dtype
//   slice        slice(t, starts, ends, steps): a strided view, one range per dim
//   as_strided   as_strided(t, sizes, strides, offset): the view of t's storage
//                with these sizes and strides, `offset` elements past t's
//                start (inputs that share memory are views of one range)
//   copy_into_view(base, src, steps): a copy of base with src written into
//                the view that `steps` (view prims, replayed) select
//   index_put    index_put(t, index..., v): a copy of t with t[index...] = v
//                for an index with tensors (advanced indexing, eager's
//                scatter); in place when the buffer plan lets it update t
//   copy_to_out_ copy_to_out_(computed, out): the write-back of a mutated
//                input; the buffer plan may let computed's producer write
//                into out directly
//   getitem      ltorch.getitem(t, index...): indexing (basic: a view; advanced: a gather)
//   setitem_     ltorch.setitem_(t, index..., v): t[index...] = v
//   print        ltorch.print(args..., sep, end)
//   fusion       (outs...) = prims.fusion(leaves...): a fusion region
//                (passes/fusion.h); its prims are its subsymbols, compiled
//                into one kernel
#define THN_TENSOR_PRIMS(X)                                                                      \
  X(shape, prims) X(item, prims) X(wrap_number, prims) X(convert_element_type, prims) X(slice, prims) \
  X(as_strided, prims) X(copy_into_view, prims) X(index_put, prims) X(copy_to_out_, prims)                                             \
  X(getitem, ltorch) X(setitem_, ltorch) X(print, ltorch) X(fusion, prims)

// Rows of the op table that are also prims: their eager kernel is the prim's
// meaning, under the prim contract (operands already converted to one
// computation dtype and broadcast to one shape, dims normalised, defaults
// explicit). Every Unary and Binary op is one; so are these.
#define THN_PRIM_OPS(X)                                                                              \
  X(where) X(clamp) X(lerp) X(addcmul) X(addcdiv) X(masked_fill) X(copy_) X(full) X(empty) X(arange) X(linspace) X(eye)     \
  X(tensor) X(manual_seed) X(rand) X(randn) X(randint) X(multinomial) X(to) X(sum) X(prod) X(amax) X(amin) X(argmax) \
  X(argmin) X(var) X(std) X(all) X(any) X(cumsum) X(cumprod) X(reshape) X(permute) X(unsqueeze) X(squeeze)      \
  X(expand) X(diagonal) X(clone) X(contiguous) X(cat) X(index_select) X(gather) X(index_copy)       \
  X(index_add) X(scatter) X(scatter_add) X(tril) X(triu) X(flip) X(roll) X(repeat) X(matmul) X(linear)

enum class PrimId : uint8_t {
#define THN_X(name, py, n) name,
  THN_NUMBER_OPS(THN_X)
#undef THN_X
#define THN_X(name, ns) name,
  THN_TENSOR_PRIMS(THN_X)
#undef THN_X
};

bool is_prim_op(const OpDef& op);

struct Symbol {
  const OpDef* op = nullptr;  // an op of the op table, or null for the PrimIds
  PrimId prim{};
  bool inplace = false;
  bool is_prim = false;  // op is used as a prim (is_prim_op)
  static Symbol of(const OpDef& op, bool inplace) { return {&op, {}, inplace, false}; }
  static Symbol of(PrimId p) { return {nullptr, p, false, false}; }
  static Symbol of(NumberOp op) { return {nullptr, PrimId(int(op)), false, false}; }
  static Symbol prim_op(const OpDef& op);  // logic_error unless is_prim_op(op)
  bool is_number_op() const { return !op && prim <= PrimId(int(kLastNumberOp)); }
  // Must run, and in order: it writes memory, draws random numbers or prints.
  bool has_side_effect() const {
    return mutates() || (op && op->family == OpFamily::Random) || (!op && prim == PrimId::print);
  }
  // A prim writes into its first operand (prims.copy_).
  bool mutates() const {
    return inplace || (op && op->name.ends_with('_')) || (!op && (prim == PrimId::setitem_ || prim == PrimId::copy_to_out_));
  }
  // A view prim: its result shares its first operand's memory.
  bool is_view() const;
  // An elementwise prim the executor can run into any tensor of the
  // result's dtype and sizes (the buffer plan's `into`).
  bool writes_into_any() const;
  // A prim with an in-place form that updates its operand 0 (index_copy,
  // copy_into_view, ...): `into` may be that operand.
  bool updates_operand0() const;
  std::string name() const;  // "ltorch.add_", "prims.mul"
};

struct BoundSymbol {
  Symbol sym;
  // Language ops: one value per schema parameter, in order (defaults filled
  // in). Prims: their operands. Values are proxies or constants, nested in
  // lists/tuples as the op takes them.
  std::vector<Value> args;
  Value out;  // what it defines: a proxy, a list/tuple of proxies, or None
  // Its decomposition into prims (ir/decompose.h); empty for prims and for
  // ops that have none (ops that return an alias of their input, say).
  std::vector<BoundSymbol> subsymbols;
  Place loc;
  // Set by the buffer plan. `into`: the tensor whose memory the result is
  // written into (an input being updated, or an operand whose value dies
  // here); None: a new buffer. A fusion has one entry per output (a tuple). `frees`: the values whose last use this is,
  // dropped after it.
  Value into;
  std::vector<Value> frees;
};

// What alias analysis knows of a tensor value's memory.
struct Layout {
  Value base;                    // the value owning the memory: an input, a computed tensor, or itself
  std::vector<int64_t> strides;  // exact strides when known (static sizes, known input layout); else empty
  bool may_copy = false;         // an alias of base, or a copy of it (contiguous, to: decided at run time)
  std::optional<int64_t> offset;  // with strides: where its first element is in base's memory, in elements
};

// Tensor inputs that share one range of memory: `members` (input or
// captured proxies) with static `sizes` and `strides`, each `offsets[k]`
// elements past the range's start, the range `extent` elements long.
struct StorageGroup {
  std::vector<Value> members;
  std::vector<std::vector<int64_t>> sizes, strides;
  std::vector<int64_t> offsets;
  int64_t extent = 0;
};

// Everything a trace is but its body (Trace::shell copies it alone).
struct TraceHeader {
  std::string name = "computation";
  std::vector<Value> inputs;  // proxies, named after the arguments they flatten
  Value output;
  // Tensors the traced code read from module globals or enclosing frames:
  // (proxy, the tensor itself). The prologue guards that each name still
  // holds the same tensor; the executor binds the proxy to it.
  std::vector<std::pair<Value, Value>> captured;
  // Two tensor inputs (arguments or captured) share memory on this call;
  // the prologue guards the pattern when the trace mutates an input.
  bool inputs_overlap = false;
  // When the trace writes into inputs that share memory: each set of inputs
  // whose memory ranges connect, or an input that overlaps itself, with the
  // layout the prologue guarantees (the members' sizes are made static).
  // Functionalize makes each member a view of one base, the group's range.
  std::vector<StorageGroup> storage_groups;
  // Set by functionalize: the only writes are the write-backs into inputs
  // at the end (copy_to_out_, copy_); false while in-place ops remain (a
  // trace whose inputs share memory is run in program order).
  bool functional = false;
  // Set by alias analysis: every tensor value's layout (views name the
  // value whose memory they share).
  std::unordered_map<const Symbolic*, Layout> layouts;
  std::string constructed_by = "tracing";
  double ms = 0;
};

struct Trace : TraceHeader {
  std::vector<BoundSymbol> body;

  // This trace with an empty body: what a pass that builds a new body starts
  // from (a copy of the body would be thrown away).
  Trace shell() const {
    Trace t;
    static_cast<TraceHeader&>(t) = *this;
    return t;
  }
};

// The value owning v's memory by alias analysis (Trace::layouts): v itself
// unless it is a view (or may be an alias) of another value.
inline const Symbolic* memory_owner(const Trace& t, const Value& v) {
  auto it = t.layouts.find(&v.symbolic());
  return it == t.layouts.end() ? &v.symbolic() : &it->second.base.symbolic();
}

// The dtype a pointwise prim computes in: its (already promoted) tensor
// operands' dtype; where and masked_fill compute in their result's.
inline DType prim_compute_dtype(const BoundSymbol& b) {
  if (b.sym.op && (b.sym.op->id == OpId::where || b.sym.op->id == OpId::masked_fill))
    return tensor_proxy(b.out).dtype();
  for (const Value& a : b.args)
    if (is_tensor_proxy(a)) return tensor_proxy(a).dtype();
  return tensor_proxy(b.out).dtype();
}

inline bool is_fusion(const BoundSymbol& b) { return !b.sym.op && b.sym.prim == PrimId::fusion; }

// A step the executor runs as a library kernel (matmul, a gather, a
// write-back copy): not a fusion, a view, number arithmetic or a shape read.
inline bool is_library(const Symbol& s) {
  return !s.is_view() && !s.is_number_op() && (s.op || (s.prim != PrimId::fusion && s.prim != PrimId::shape));
}

// A reduction prim a fused kernel computes: prims.sum/prod/amax/amin(x,
// dims, keepdim) of one tensor.
inline bool is_fusible_reduction(const BoundSymbol& b) {
  if (!b.sym.op || !b.sym.is_prim || b.args.size() < 2 || !is_tensor_proxy(b.args[0]) || !is_tensor_proxy(b.out))
    return false;
  switch (b.sym.op->id) {
    case OpId::sum: case OpId::prod: case OpId::amax: case OpId::amin: return true;
    default: return false;
  }
}

// The dims a reduction prim reduces (None, one int or a list of ints),
// wrapped and sorted, and whether it keeps them as size 1.
inline std::vector<int64_t> reduced_dims(const BoundSymbol& b) {
  int64_t rank = int64_t(tensor_proxy(b.args[0]).sizes.size());
  std::vector<int64_t> dims;
  const Value& d = b.args[1];
  if (d.is_none() || (d.is_sequence() && d.items().empty())) {
    for (int64_t i = 0; i < rank; ++i) dims.push_back(i);
    return dims;
  }
  auto wrap = [&](const Value& v) { return v.raw_int() < 0 ? v.raw_int() + rank : v.raw_int(); };
  if (d.is_sequence())
    for (const Value& v : d.items()) dims.push_back(wrap(v));
  else
    dims.push_back(wrap(d));
  std::sort(dims.begin(), dims.end());
  return dims;
}
inline bool reduction_keepdim(const BoundSymbol& b) { return b.args.size() > 2 && b.args[2].is(Type::Bool) && b.args[2].raw_int(); }

// The values of `prims` (a fusion's members, in program order) computed
// from one of their reductions, the reductions' own outputs included: what
// a fused kernel can compute only after its reduction loop.
std::unordered_set<const Symbolic*> reduced_values(const std::vector<const BoundSymbol*>& prims);

// In a functional trace, the write-back of an updated input:
// prims.copy_to_out_(computed, x) or prims.copy_(x, computed).
inline bool is_write_back(const BoundSymbol& b) {
  return (!b.sym.op && b.sym.prim == PrimId::copy_to_out_) || (b.sym.op && b.sym.is_prim && b.sym.op->id == OpId::copy_);
}
inline const Value& write_back_target(const BoundSymbol& b) { return b.args[b.sym.op ? 0 : 1]; }
inline const Value& write_back_source(const BoundSymbol& b) { return b.args[b.sym.op ? 1 : 0]; }

// Python-like text: a `# Constructed by` line, the signature, a type comment
// per input and per defined value, decompositions as indented comments.
// Proxies are renumbered in order of definition (t0, t1, ...; i0, f0, b0 for
// numbers), so printed traces are stable across runs.
// The arguments of b as a trace prints them, each by `render`: a language
// op's positional parameters in order and keyword-only ones as name=value,
// leaving out trailing defaults.
std::string shown_args(const BoundSymbol& b, const std::function<std::string(const Value&)>& render);
std::string print_trace(const Trace& t);
// The names print_trace gives the values (inputs by name, then t0, i0, ...).
std::unordered_map<const Symbolic*, std::string> value_names(const Trace& t);

// f called on each item of a list, tuple, torch.Size or slice (a slice's
// start, stop and step); on nothing for another value.
template <class F> void for_each_item(const Value& v, F f) {
  if (v.is(Type::Slice)) {
    auto& s = v.obj<SliceObj>();
    for (const Value* x : {&s.start, &s.stop, &s.step}) f(*x);
  } else if (v.is_sequence()) {
    for (const Value& x : v.items()) f(x);
  }
}

// v with f applied to the items of a list, tuple, torch.Size or slice (the
// same kind of container, or v itself when no item changed); v otherwise.
template <class F> Value map_items(const Value& v, F f) {
  if (!v.is_sequence() && !v.is(Type::Slice)) return v;
  std::vector<Value> in;
  for_each_item(v, [&](const Value& x) { in.push_back(x); });
  std::vector<Value> out;
  bool changed = false;
  for (const Value& x : in) {
    out.push_back(f(x));
    changed |= out.back().object() != x.object() || out.back().is_proxy() != x.is_proxy();
  }
  if (!changed) return v;
  if (v.is(Type::Slice)) {
    auto s = std::make_shared<SliceObj>();
    s->start = out[0];
    s->stop = out[1];
    s->step = out[2];
    return Value(Type::Slice, s);
  }
  return v.like(std::move(out));
}

// v with every proxy found in `rename` replaced (through lists, tuples, slices).
Value substitute(const Value& v, const std::unordered_map<const Symbolic*, Value>& rename);

// The symbol printed as `name` ("prims.slice"); logic_error if none.
Symbol symbol_named(std::string_view name);

// f on each proxy a value holds, in order (through lists, tuples and a
// slice's bounds: x[k:]).
template <class F> void for_each_proxy(const Value& v, F&& f) {
  if (v.is_proxy()) f(v);
  else for_each_item(v, [&](const Value& x) { for_each_proxy(x, f); });
}
// f on each proxy of each value, in order.
template <class F> void for_each_proxy(const std::vector<Value>& vs, F&& f) {
  for (const Value& v : vs) for_each_proxy(v, f);
}

// The proxies a value holds, in order (for_each_proxy's).
void collect_proxies(const Value& v, std::vector<Value>& out);

}  // namespace thn
