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
//
// While tracing, the same dispatch stands in front of the tracer (the
// tracer sets itself as the inner dispatch): the steps are recorded on
// proxies, and the rules, being thn code, are traced like any code. So
// grad(f) inside a jit function, or jit(grad(f)), is one trace holding the
// forward and the backward, and the passes run over both (Thunder's grad
// transform, by tracing).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
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
  size_t output = 0;               // which tensor of that op's result it is (split's, unbind's, ...)
  // A view made of a tensor of the graph (sharing its memory), and its
  // memory's version then: an in-place op on a view is refused, and so is
  // a view used after its memory changed in place (its history would not
  // follow the write).
  bool view = false;
  bool view_of_leaf = false;  // a view (of a view...) of a leaf that requires grad
  // A trace's argument whose .grad jit carries in and out (it requires grad,
  // or it has a .grad): the trace may read and set it.
  bool carried = false;
  uint64_t view_version = 0;
  // A computed tensor no backward pass has gone through yet (its graph is
  // there to differentiate).
  bool graph_unused() const;
};

class AutogradDispatch : public OpDispatch {
 public:
  AutogradDispatch(Interpreter& in, OpDispatch& inner) : in_(in), inner_(&inner) {}
  Value getitem(const Value& tensor, std::span<const Value> index) override;
  // A shorthand with a rule of its own in stdlib/autograd.thn (OP_backward,
  // where its ops' rules would not give PyTorch's gradient: norm at zero):
  // `forward` run with grad mode off, recorded as one step of `args` (the
  // rule gets them as given) when grad mode is on and one requires grad.
  Value composite(const std::string& op, std::vector<Value> args, const std::function<Value()>& forward);
  void setitem(const Value& tensor, std::span<const Value> index, const Value& value) override;
  bool truth(const Value& v) override { return inner_->truth(v); }
  Value wrap_number(const Value& n) override { return inner_->wrap_number(n); }
  bool tracing() const override { return inner_->tracing(); }
  Value number_op(Interpreter& in, NumberOp op, std::span<const Value> operands) override {
    return inner_->number_op(in, op, operands);
  }
  void print(Interpreter& in, std::span<const Value> args, const std::string& sep, const std::string& end) override {
    inner_->print(in, args, sep, end);
  }
  bool same_tensor(const Value& a, const Value& b) override { return inner_->same_tensor(a, b); }
  void external_load(const std::string& name, const Value& slot) override { inner_->external_load(name, slot); }
  void builtin_load(const std::string& name, const std::unordered_map<std::string, Value>& globals) override {
    inner_->builtin_load(name, globals);
  }

  // The dispatch behind autograd (the eager one, or the tracer while it
  // traces); returns the one before.
  OpDispatch* set_inner(OpDispatch* inner) { return std::exchange(inner_, inner); }

  bool enabled = true;  // grad mode: with no_grad() / enable_grad()

  // What stdlib/autograd.thn says of its rules (loaded on first use): those
  // that read no tensor's values (READS_SHAPES: neither version-checked nor
  // freed) and those that read their op's result (READS_RESULT: the
  // result's version is checked).
  struct Rules {
    std::unordered_set<std::string> shapes_only, reads_result;
    // READS_RESULT_IF_TENSOR: per op, the parameter whose being a tensor
    // makes its rule read the result.
    std::unordered_map<std::string, std::string> reads_result_if_tensor;
    // GRADIENT_READS: per op, per parameter, the parameters its gradient reads.
    std::unordered_map<std::string, std::unordered_map<std::string, std::vector<std::string>>> gradient_reads;
  };
  const Rules& rules();
  // Whether an in-place op that needed a gradient wrote into st (its views
  // taken before then lack that history).
  bool rebased(const std::shared_ptr<Storage>& st) const;

 protected:
  Value run_op(const OpDef& op, const Value* self, std::span<const Value> args, const CallArgs& kw,
               bool inplace) override;

 private:
  void note_rebased(const Value& t);
  // An in-place op whose tensor needs a gradient afterwards.
  Value inplace(const OpDef& op, const Value& self, std::span<const Value> args, const CallArgs& kw, bool inplace);
  // Marks the tensors of r that share memory with a tensor in `from`.
  void mark_views(const Value& r, const Value* self, std::span<const Value> from);

  Interpreter& in_;
  OpDispatch* inner_;
  std::optional<Rules> rules_;
  std::unordered_map<const Storage*, std::weak_ptr<Storage>> rebased_;
};

// Grad mode set for the duration of a scope (no_grad() is `GradMode off(ad, false)`).
struct GradMode {
  AutogradDispatch& ad;
  bool previous;
  GradMode(AutogradDispatch& a, bool on) : ad(a), previous(a.enabled) { a.enabled = on; }
  ~GradMode() { ad.enabled = previous; }
  GradMode(const GradMode&) = delete;
  GradMode& operator=(const GradMode&) = delete;
};

// Tensor t's autograd (made on first use when `create`; null otherwise).
AutogradMeta* autograd_of(const Value& t, bool create = false);
bool requires_grad(const Value& t);
// The tensors that require grad inside v (lists, tuples, dicts and objects
// followed, each container once), with their paths (`name`, `name[0]`,
// `name['w']`, `name.weight`), in the order jit flattens arguments; only
// the first with `first_only`. With `or_grad`, also those that have a
// .grad but no longer require grad (a frozen parameter: its .grad is state
// too).
void tensors_requiring_grad(const Value& v, const std::string& name, std::vector<std::pair<std::string, Value>>& out,
                            bool first_only = false, bool or_grad = false);
// jit's refusal, while grad mode is on, of a tensor that requires grad
// coming into a trace from outside (inside v, named `name`: an argument, or
// a value the function reads): the trace would not carry its gradient back.
// `remedy` ends the message ("call f under no_grad()").
void refuse_requiring_grad(Interpreter& in, const Value& v, const std::string& name, const std::string& remedy);
// Whether grad mode is on and some tensor has required grad in this process.
bool grad_recording(Interpreter& in);

// Tensor attributes and methods that are autograd's: requires_grad, grad,
// is_leaf, grad_fn, requires_grad_(), backward() (detach() is a shorthand).
// Unbound for other names.
Value autograd_attribute(const Value& t, const std::string& name);
// t.requires_grad = b, t.grad = g; false for other names.
bool set_autograd_attribute(Interpreter& in, const Value& t, const std::string& name, const Value& v);

// grad(f, argnums=0, has_aux=False) and value_and_grad(...), as torch.func's
// grad and JAX's value_and_grad ((value, grads)), eagerly: each call of the
// transformed f runs f on fresh leaves and backward() from its value.
void install_autograd_builtins(std::unordered_map<std::string, Value>& builtins);

}  // namespace thn
