#include "jit/eager_cuda.h"

#include <algorithm>
#include <unordered_map>

#include "backend/cuda.h"
#include "backend/cuda_library.h"
#include "jit/trace_cache.h"

namespace thn {

namespace {

// The interpreter one-op traces run under (no script, no frames).
Interpreter& interpreter() {
  static Interpreter in{InterpOptions{}};
  return in;
}

// The op called with every parameter positionally: what the tracer traces.
Value op_function(const OpDef& op, bool inplace) {
  return make_builtin(std::string(op.name), [&op, inplace](Interpreter& in, CallArgs& c) {
    CallArgs kw;
    std::vector<Value> positional;
    for (size_t i = 0; i < c.args.size(); ++i) {
      const Param& p = op.schema.params[i];
      if (p.kwarg_only) kw.kwargs.emplace_back(p.name, c.args[i]);
      else positional.push_back(c.args[i]);
    }
    return in.dispatch().call(op, nullptr, positional, kw, inplace);
  });
}

struct OpCache {
  Value fn;
  std::vector<std::string> names;
  TraceCache cache;
};

OpCache& op_cache(const OpDef& op, bool inplace) {
  static std::unordered_map<int, OpCache> caches;
  OpCache& c = caches[int(op.id) * 2 + inplace];
  if (c.fn.is_none()) {
    // Entries differ in shapes, dtypes and layouts: an eager program with
    // ever new shapes must not make every call check them all.
    c.cache.capacity = 64;
    c.fn = op_function(op, inplace);
    for (const Param& p : op.schema.params) c.names.push_back(p.name);
  }
  return c;
}

// Ops a one-op trace may express: no lists of tensors, no shape that
// depends on data, and no planned `out` (the executor's library steps).
bool traceable(const OpDef& op, const Args& a) {
  switch (op.family) {
    case OpFamily::Unary: case OpFamily::Binary: case OpFamily::Pointwise: case OpFamily::Reduction:
    case OpFamily::View: case OpFamily::Copy: break;
    default: return false;
  }
  if (data_dependent_shape(op) || a.out()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].is_list())
      for (const IValue& e : a[i].to_list().items)
        if (e.is_tensor()) return false;
  return true;
}

// Whether running t only launches kernels: its fusions', and library steps
// that run on the GPU (cuBLAS, the backend's library: max(x, dim)'s
// argmax); any other library step would run on host copies anyway.
bool launches_only(const Trace& t) {
  return std::none_of(t.body.begin(), t.body.end(), [](const BoundSymbol& b) {
    return is_library(b.sym) && !(b.sym.op && library_runs_on_cuda(*b.sym.op));
  });
}

int depth = 0;  // > 0 while a one-op trace runs: its own steps go to the host

// The op's kernels, or nullopt: the registry runs it on host copies.
std::optional<IValue> run_cuda_op(const OpDef& op, const Args& a) {
  if (depth > 0 || !traceable(op, a)) return std::nullopt;
  struct Depth {
    Depth() { ++depth; }
    ~Depth() { --depth; }
  } guard;
  OpCache& c = op_cache(op, a.inplace());
  Interpreter& in = interpreter();
  std::vector<Value> params;
  for (size_t i = 0; i < a.size(); ++i) {
    // A Python number bound to a tensor parameter is a number again: the
    // trace wraps it with its promotion rank, the kernel takes it as a scalar.
    bool number = a[i].is_tensor() && a[i].to_tensor().is_wrapped_number();
    params.push_back(from_ivalue(number ? IValue(a[i].to_tensor().item()) : a[i]));
  }
  std::vector<Value> inputs;
  std::shared_ptr<CacheEntry> e = c.cache.find(in, params, inputs);
  if (!e) {
    TraceResult r;
    try {
      TraceOptions options;
      options.symbolic_numbers = true;
      Tracer tracer(in, options);
      r = tracer.trace(c.fn, params, c.names);
    } catch (const Error&) {
      // Eager's own error (a shape mismatch, a bad argument), raised as eager raises it.
      return std::nullopt;
    } catch (const TraceInTry&) {
      return std::nullopt;  // (an op has no try statement; eager runs it if one ever does)
    }
    e = c.cache.add(r, PipelineOptions{}, true, inputs, CompileMode::Sync);  // (no eager tier below it)
  }
  if (!launches_only(e->computation)) return std::nullopt;
  return to_ivalue(e->executor.run(in, inputs));
}

}  // namespace

void install_eager_cuda() {
  set_cuda_op_handler(run_cuda_op);
  if (have_nvrtc()) install_cuda_library();
}

}  // namespace thn
