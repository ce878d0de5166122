#pragma once
// The graph reverse mode records (interp/autograd.cpp: a step per op) and
// what its backward pass (interp/backward.cpp) shares with the recording.
// Private to those two.
#include <memory>
#include <string>
#include <vector>

#include "interp/autograd.h"
#include "interp/value.h"

namespace thn {

// One recorded op: what its rule is called with.
struct GradStep {
  std::string op;             // the op's name ("mul"), or "getitem"
  const OpDef* def = nullptr;  // null for getitem
  bool method = false;        // called as a method: args[0] is the receiver
  std::vector<Value> args;    // as given (the receiver first)
  std::vector<std::pair<std::string, Value>> kwargs;
  // The result's tensor, without autograd (the result's own object would be
  // a cycle); while tracing, the result's proxy itself (the tracer breaks
  // the cycle when the trace is done).
  Value result;
  // Where each argument tensor's gradient goes, as it was when the step was
  // recorded (an in-place op gives its tensor a new history afterwards):
  // the step that made it and which of its results, or nothing for a leaf.
  struct Edge {
    const Object* tensor;
    std::shared_ptr<GradStep> step;
    size_t output = 0;
    bool requires_grad = false;
  };
  std::vector<Edge> edges;
  const Edge* edge(const Value& t) const {
    for (const Edge& e : edges)
      if (e.tensor == t.object().get()) return &e;
    return nullptr;
  }
  uint64_t order;  // recording order: backward runs later steps first
  bool freed = false;
  bool ran = false;  // a backward pass ran its rule
  // The storages of the tensors it saved, and their versions then.
  std::vector<std::pair<std::shared_ptr<Storage>, uint64_t>> versions;
  // Results whose .grad a backward pass sets (retain_grad()): which one, and its autograd.
  std::vector<std::pair<size_t, std::weak_ptr<AutogradMeta>>> retained;
};

namespace autograd_graph {

// Whether any tensor has required grad in this process: until one has, ops,
// indexing and jit calls skip looking for one.
extern bool ever_required;

// Each tensor in v (lists and tuples followed).
template <class F> void each_tensor(const Value& v, F&& f) {
  if (v.is(Type::Tensor)) f(v);
  else if (v.is_sequence())
    for (const Value& x : v.items()) each_tensor(x, f);
}

// The storage whose version counter a tensor's in-place writes bump.
std::shared_ptr<Storage> storage_of(const Value& t);
// PyTorch's grad_fn name of an op's step (MulBackward0).
std::string step_name(const std::string& op);
Value detached(Interpreter& in, const Value& x);
// A tensor's (or, while tracing, a proxy's) dtype and sizes (ints, or size proxies).
DType dtype(Interpreter& in, const Value& t);
std::vector<Value> sizes(Interpreter& in, const Value& t);
bool same_sizes(const std::vector<Value>& a, const std::vector<Value>& b);
bool is_one(const Value& n);
[[noreturn]] void refuse_in_trace(const std::string& what);
// The step's arguments by its op's parameters (getitem: self, index).
std::vector<Value> bind(const GradStep& s);
// x.backward(gradient, retain_graph, create_graph).
void backward(Interpreter& in, const Value& root, const Value& gradient, bool retain_graph, bool create_graph);

}  // namespace autograd_graph
}  // namespace thn
