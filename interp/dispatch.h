#pragma once
// The one interface through which the evaluator touches tensors. The eager
// implementation runs the runtime's kernels; the tracer (issue 4) implements
// the same interface over proxies, so one evaluator serves both.
#include <optional>
#include <span>

#include "interp/value.h"
#include "runtime/op_registry.h"

namespace thn {

class OpDispatch {
 public:
  virtual ~OpDispatch() = default;
  // An op of the table, called as a function (self empty) or a method.
  virtual Value call(const OpDef& op, const Value* self, std::span<const Value> args, const CallArgs& kw,
                     bool inplace) = 0;
  virtual Value getitem(const Value& tensor, std::span<const Value> index) = 0;
  virtual void setitem(const Value& tensor, std::span<const Value> index, const Value& value) = 0;
  // bool(t) for `if t:` and friends.
  virtual bool truth(const Value& tensor) = 0;
};

class EagerDispatch : public OpDispatch {
 public:
  Value call(const OpDef& op, const Value* self, std::span<const Value> args, const CallArgs& kw,
             bool inplace) override;
  Value getitem(const Value& tensor, std::span<const Value> index) override;
  void setitem(const Value& tensor, std::span<const Value> index, const Value& value) override;
  bool truth(const Value& tensor) override;
};

}  // namespace thn
