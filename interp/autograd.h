#pragma once
// Reverse-mode automatic differentiation in the interpreter (issue 43), as
// torch.autograd: a tape of the ops run on tensors that require grad, and
// backward() over it.
//
// Every op reaches tensors through OpDispatch. AutogradDispatch stands in
// front of the eager dispatch: while grad mode is on (no_grad() turns it
// off), an op with a tensor argument that requires grad runs, and its
// floating results get a GradStep: the op's name, its arguments as given
// (so the argument tensors, and through their own steps the whole graph),
// and its result. backward() runs the steps that lead to a tensor, the
// latest first, calling each op's rule (stdlib/autograd.thn, OP_backward)
// through the interpreter, and accumulates the gradients of leaves into
// their .grad. In-place ops bump their storage's version; a step whose
// saved tensors changed since is PyTorch's error at backward.
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "interp/dispatch.h"

namespace thn {

struct GradStep;

// What autograd knows of one tensor object (TensorObj::autograd).
struct AutogradMeta {
  bool requires_grad = false;
  Value grad;                      // a leaf's accumulated gradient; None before
  std::shared_ptr<GradStep> step;  // the op that made it; null for a leaf
};

class AutogradDispatch : public OpDispatch {
 public:
  explicit AutogradDispatch(OpDispatch& inner) : inner_(inner) {}
  Value call(const OpDef& op, const Value* self, std::span<const Value> args, const CallArgs& kw,
             bool inplace) override;
  Value getitem(const Value& tensor, std::span<const Value> index) override;
  void setitem(const Value& tensor, std::span<const Value> index, const Value& value) override;
  bool truth(const Value& v) override { return inner_.truth(v); }
  Value wrap_number(const Value& n) override { return inner_.wrap_number(n); }

  bool enabled = true;  // grad mode: with no_grad() / enable_grad()

 private:
  OpDispatch& inner_;
};

// Tensor t's autograd (made on first use when `create`; null otherwise).
AutogradMeta* autograd_of(const Value& t, bool create = false);
bool requires_grad(const Value& t);
// The path (`name`, `name[0]`, `name['w']`, `name.weight`) of a tensor
// requiring grad inside v, if any: jit refuses them until it differentiates.
std::optional<std::string> requiring_grad(const Value& v, const std::string& name);

// Tensor attributes and methods that are autograd's: requires_grad, grad,
// is_leaf, grad_fn, requires_grad_(), backward() (detach() is a shorthand).
// Unbound for other names.
Value autograd_attribute(const Value& t, const std::string& name);
// t.requires_grad = b, t.grad = g; false for other names.
bool set_autograd_attribute(const Value& t, const std::string& name, const Value& v);

// grad(f, argnums=0, has_aux=False) and value_and_grad(...), as torch.func's
// grad and JAX's value_and_grad ((value, grads)), eagerly: each call of the
// transformed f runs f on fresh leaves and backward() from its value.
void install_autograd_builtins(std::unordered_map<std::string, Value>& builtins);

}  // namespace thn
