#pragma once
// jit(f): a callable with f's signature backed by a cache of (prologue,
// computation) entries. A call runs the cached prologues, most recently hit
// first; the first that passes runs its computation, else f is traced again
// and a new entry is added. Also the introspection builtins: last_traces,
// last_prologue, last_execution_trace, cache_hits, cache_misses.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "backend/compile_queue.h"
#include "interp/interpreter.h"
#include "passes/pipeline.h"

namespace thn {

struct JitOptions {
  bool stats = false;          // --stats: jit_stats() at the end of the run
  bool print_traces = false;   // print the prologue and every pass's trace of each new trace (stderr)
  bool emit_trace = false;     // print each new execution trace (stdout)
  bool emit_kernels = false;   // print the generated host source of each new trace (stdout)
  // Called with each new execution trace (thn kernels compiles its kernels for a target).
  std::function<void(const std::string& fn, const Trace& t)> on_trace;
  bool time_passes = false;    // print tracing and pass times of each new trace (stderr)
  bool keep_alive = false;     // the registry keeps every jit function (thn graph reads them after the run)
  std::optional<CompileMode> compile;  // how kernels compile, unless jit(..., compile=) says (else THN_COMPILE's)
  PipelineOptions pipeline;
};

// The jit functions made under one set of options, for --stats.
struct JitRegistry;

// Makes `jit` trace and compile (InterpOptions::make_jit), and eager ops on
// CUDA tensors run as one-op fusions (jit/eager_cuda.h).
std::shared_ptr<JitRegistry> install_jit(InterpOptions& opts, const JitOptions& jit);
// The introspection builtins (cache_hits, cache_misses, compile_pending:
// the function's kernels still compiling, last_traces, last_prologue,
// last_execution_trace). `interpreted` (--interpret, where
// jit(f) is f): they take any function and report an interpreted call's
// values: no hits, no misses, no traces, empty text.
void install_jit_builtins(Interpreter& in, bool interpreted = false);
// Per jit function: calls, traces, cache hits; of the last call, the
// write-back copies and temporaries of its buffer plan and the buffers it
// allocated (counted at run time, library ops' internal copies included).
std::string jit_stats(const JitRegistry& r);

// The REPL's `:mode`: with the switch on, every jit function made under r
// runs its function in the interpreter (as `--interpret` would).
void set_interpret(JitRegistry& r, bool on);

// A jit function and its last call, for the REPL's :trace and :emit and for
// `thn graph`. The pointers stay valid until the function's next call.
struct JitView {
  const void* id = nullptr;  // the function's identity
  std::string name;
  int64_t calls = 0;
  std::string prologue;                             // printed; empty until the first call
  const std::vector<PassRecord>* passes = nullptr;  // the trace as traced and after each pass
  const Trace* computation = nullptr;               // the execution trace
};
// The jit function behind v; nullopt when v is not one.
std::optional<JitView> jit_view(const Value& v);
// The jit functions made under r that are still alive, in order of creation.
std::vector<JitView> jit_functions(const JitRegistry& r);

}  // namespace thn
