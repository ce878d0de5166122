#pragma once
// The trace IR: a straight-line program of bound symbols over proxies. A
// symbol is a language op of the op table (printed `ltorch.NAME`, in-place
// `ltorch.NAME_`) or a prim (printed `prims.NAME`): Python's number
// operations (THN_NUMBER_OPS) and the few tensor prims below.
#include <string>
#include <vector>

#include "frontend/source.h"
#include "ir/proxy.h"
#include "runtime/op_registry.h"

namespace thn {

// X(name): tensor-level prims.
//   shape        i0, i1 = prims.shape(t): the sizes of an input (symbolic shapes)
//   item         a tensor's single element as a Python number (dynamic)
//   wrap_number  a Python number as a 0-dim wrapped tensor (`2 - t`)
//   getitem      t[index...]: basic indexing views, advanced indexing copies
//   setitem_     t[index...] = v, in place
//   print        print(args..., sep, end)
#define THN_TENSOR_PRIMS(X) X(shape) X(item) X(wrap_number) X(getitem) X(setitem_) X(print)

enum class PrimId : uint8_t {
#define THN_X(name, py, n) name,
  THN_NUMBER_OPS(THN_X)
#undef THN_X
#define THN_X(name) name,
  THN_TENSOR_PRIMS(THN_X)
#undef THN_X
};

struct Symbol {
  const OpDef* op = nullptr;  // a language op, or null for a prim
  PrimId prim{};
  bool inplace = false;
  static Symbol of(const OpDef& op, bool inplace) { return {&op, {}, inplace}; }
  static Symbol of(PrimId p) { return {nullptr, p, false}; }
  static Symbol of(NumberOp op) { return {nullptr, PrimId(int(op)), false}; }
  bool is_number_op() const { return !op && prim <= PrimId(int(NumberOp::to_bool)); }
  std::string name() const;  // "ltorch.add_", "prims.mul"
};

struct BoundSymbol {
  Symbol sym;
  // Language ops: one value per schema parameter, in order (defaults filled
  // in). Prims: their operands. Values are proxies or constants, nested in
  // lists/tuples as the op takes them.
  std::vector<Value> args;
  Value out;  // what it defines: a proxy, a list/tuple of proxies, or None
  std::vector<BoundSymbol> subsymbols;  // its decomposition, when it has one
  Loc loc;
};

struct Trace {
  std::string name = "computation";
  std::vector<Value> inputs;  // proxies, named after the arguments they flatten
  std::vector<BoundSymbol> body;
  Value output;
  // Tensors the traced code read from module globals or enclosing frames:
  // (proxy, the tensor itself). The prologue guards that each name still
  // holds the same tensor; the executor binds the proxy to it.
  std::vector<std::pair<Value, Value>> captured;
  std::string constructed_by = "tracing";
  double ms = 0;
};

// Python-like text: a `# Constructed by` line, the signature, a type comment
// per input and per defined value, decompositions as indented comments.
// Proxies are renumbered in order of definition (t0, t1, ...; i0, f0, b0 for
// numbers), so printed traces are stable across runs.
std::string print_trace(const Trace& t);

// The proxies a value holds, in order (through lists and tuples).
void collect_proxies(const Value& v, std::vector<Value>& out);

}  // namespace thn
