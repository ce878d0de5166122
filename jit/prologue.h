#pragma once
// The prologue: the checks a call must pass to reuse a computation trace,
// compiled from what tracing recorded (input structure and metadata, guards,
// names read from outside, memory overlap of tensor inputs) into a flat
// program of instructions over two register files. It is never
// re-interpreted from the trace: a check is a switch over a short array.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/tracer.h"

namespace thn {

class Prologue {
 public:
  explicit Prologue(const TraceResult& r);
  // True when every check passes; then `inputs` holds the computation's
  // inputs (the argument values its input proxies stand for).
  bool check(Interpreter& in, std::span<const Value> params, std::vector<Value>& inputs) const;
  // Why `params` fail the checks: the first check that fails, as printed
  // (with the source line of a guard), and what the call has there; "" when
  // every check passes.
  std::string why_not(Interpreter& in, std::span<const Value> params) const;
  // The checks as a printed trace.
  const std::string& text() const { return text_; }

 private:
  enum class Op : uint8_t {
    Param, Item, Entry, Sequence, Mapping, Tensor, Number, Constant, Size, Load, Expr, Assert, External, Overlap, Same,
    SameAs, Distinct
  };
  struct Instr {
    Op op;
    uint8_t type = 0;  // Sequence/Number: the Type; Expr: the NumberOp; Assert: by truth; Same/SameAs: is (1) or is not
    // Sequence: dst indexes kinds_ (an empty sequence of the kind expected).
    int32_t dst = 0, a = 0, b = 0;
  };
  struct TensorMeta {
    DType dtype;
    Device device;
    std::vector<int64_t> sizes;  // -1: symbolic (its guards are separate)
    bool contiguous;
    std::vector<int64_t> strides;  // checked exactly when not empty
    int64_t offset = -1;           // checked when >= 0
  };

  void compile_leaves(const TraceResult& r);
  int compile_expr(const Value& v);
  std::string render(const Value& v) const;
  // Prints a check: the instructions since the last line are its.
  void line(const std::string& s, Loc loc = {}) {
    body_ += "  " + s + "\n";
    ++lines_;
    lines_text_.push_back(s);
    lines_loc_.push_back(loc);
    line_of_.resize(code_.size(), int(lines_text_.size()) - 1);
  }
  // The instruction that fails (-1: none; code_.size(): the parameters or
  // the grad mode), and (where there is one) the value it checked.
  int first_failure(Interpreter& in, std::span<const Value> params, std::vector<Value>& inputs,
                    std::optional<Value>* seen) const;

  size_t params_ = 0;  // the parameters the trace was traced with
  bool grad_recording_ = false;  // TraceResult::grad_recording
  std::vector<Instr> code_;
  std::vector<Value> kinds_;
  // Mapping: a dict's keys, or an object's class and attribute names.
  struct MappingKind {
    std::shared_ptr<const Object> cls;  // null for a dict
    std::vector<Value> keys;
    std::vector<Value> class_contents;  // an object's classes' attributes, all the way down: they may change
  };
  std::vector<MappingKind> mappings_;
  int refs_ = 0;
  std::vector<Value> numbers_;  // register file template: constants filled in
  std::vector<TensorMeta> metas_;
  std::vector<Value> constants_;
  std::vector<std::vector<Value>> constant_contents_;  // a constant's guarded_contents(), when it has any
  std::vector<Value> objects_;  // SameAs: tensors from outside
  std::vector<int> leaf_reg_;   // by input leaf: its ref register
  struct External {
    explicit External(const ExternalGuard& g);
    // The name still holds what the trace read (and, while grad mode is on,
    // no tensor in it has come to require grad: jit refuses those).
    bool holds(bool grad_on) const;
    // What the name holds now (null for a built-in, or when globals were
    // deleted since: the slot may be gone).
    const Value* now() const;
    ExternalGuard guard;
    std::optional<std::weak_ptr<Object>> object;  // what it held, when compared by identity
  };
  std::vector<External> externals_;
  std::vector<int> distinct_;  // Distinct: the argument lists, dicts and objects (their ref registers)
  std::vector<int> overlap_;  // the tensor inputs' (then captured tensors') overlap_pattern() when traced
  OverlapGroups groups_;      // and their overlap_groups() when the trace has storage groups
  std::vector<Tensor> captured_;
  std::unordered_map<const Symbolic*, int> number_reg_;  // a proxy's number register
  std::unordered_map<const Symbolic*, int> tensor_ref_;  // an input tensor proxy's ref register
  std::unordered_map<const Symbolic*, std::string> names_;
  std::string text_, body_;
  int lines_ = 0;  // the checks printed
  std::vector<std::string> lines_text_;
  std::vector<Loc> lines_loc_;
  std::vector<int> line_of_;  // per instruction: its printed check
};

}  // namespace thn
