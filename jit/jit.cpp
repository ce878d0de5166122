#include "jit/jit.h"

#include <fmt/format.h>

#include <memory>

#include "ir/executor.h"
#include "ir/tracer.h"
#include "jit/prologue.h"
#include "passes/buffer_plan.h"
#include "runtime/error.h"

namespace thn {

namespace {

struct CacheEntry {
  Prologue prologue;
  Trace computation;
  TraceExecutor executor;
  std::vector<PassRecord> passes;
  CacheEntry(const TraceResult& r, Trace t, std::vector<PassRecord> p)
      : prologue(r), computation(std::move(t)), executor(computation), passes(std::move(p)) {}
};

// The jit callable: a builtin whose object also holds the cache.
struct JitObj : BuiltinObj {
  Value function;  // the thn function it traces
  TraceOptions trace_opts;
  bool caching = true;
  JitOptions opts;
  std::vector<std::shared_ptr<CacheEntry>> entries;  // most recently hit first
  std::shared_ptr<CacheEntry> last;
  int64_t calls = 0, hits = 0, misses = 0;
  int64_t last_allocations = 0, last_bytes = 0;  // storages allocated by the last call's computation

  JitObj(std::string name) : BuiltinObj(std::move(name), nullptr) {}

  std::vector<std::string> param_names() const {
    std::vector<std::string> names;
    for (const auto& p : function.obj<FunctionObj>().def->params) names.push_back(p.name);
    return names;
  }

  Value call(Interpreter& in, CallArgs& args) {
    if (in.dispatch().tracing()) return in.call(function, args);  // inside another trace: traced inline
    const FunctionObj& f = function.obj<FunctionObj>();
    std::vector<Value> params(f.def->params.size());
    in.bind_arguments(f, args, params.data());
    ++calls;
    std::vector<Value> inputs;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (!entries[i]->prologue.check(in, params, inputs)) continue;
      ++hits;
      std::rotate(entries.begin(), entries.begin() + long(i), entries.begin() + long(i) + 1);
      last = entries[0];
      return execute(in, inputs);
    }
    ++misses;
    Tracer tracer(in, trace_opts);
    TraceResult r = tracer.trace(function, params, param_names());
    std::vector<PassRecord> records;
    Trace t = run_pipeline(r.trace, opts.pipeline, records);
    auto entry = std::make_shared<CacheEntry>(r, std::move(t), std::move(records));
    report(*entry);
    if (caching) entries.insert(entries.begin(), entry);
    last = entry;
    inputs.clear();
    for (const InputLeaf& l : r.leaves)
      if (l.proxy.is_proxy()) inputs.push_back(l.value);
    return execute(in, inputs);
  }

  Value execute(Interpreter& in, const std::vector<Value>& inputs) {
    int64_t before = Storage::allocations(), bytes = Storage::allocated_bytes();
    Value r = last->executor.run(in, inputs);
    last_allocations = Storage::allocations() - before;
    last_bytes = Storage::allocated_bytes() - bytes;
    return r;
  }

  std::string stats() const {
    std::string line = fmt::format("stats: jit {}: {} call{}, {} trace{}, {} cache hit{}", name, calls,
                                   calls == 1 ? "" : "s", misses, misses == 1 ? "" : "s", hits, hits == 1 ? "" : "s");
    if (!last) return line;
    BufferStats b = buffer_stats(last->computation);
    return line + fmt::format("; last call: {} write-back cop{}, {} temporar{} ({} new buffer{}), {} allocation{} ({} bytes)",
                              b.writeback_copies, b.writeback_copies == 1 ? "y" : "ies", b.temporaries,
                              b.temporaries == 1 ? "y" : "ies", b.new_buffers, b.new_buffers == 1 ? "" : "s",
                              last_allocations, last_allocations == 1 ? "" : "s", last_bytes);
  }

  void report(const CacheEntry& e) const {
    if (opts.print_traces) {
      std::fprintf(stderr, "# jit %s: trace %lld\n%s\n", name.c_str(), (long long)misses, e.prologue.text().c_str());
      for (const PassRecord& p : e.passes) std::fprintf(stderr, "%s\n", p.printed().c_str());
    }
    if (opts.emit_trace) std::printf("%s\n", e.passes.back().printed().c_str());
    if (opts.time_passes) {
      std::string line = fmt::format("time-passes: {}:", name);
      for (const PassRecord& p : e.passes) line += fmt::format(" {} {:.3f} ms;", p.pass, p.ms);
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }
};

JitObj& jit_arg(const char* fn, CallArgs& a) {
  if (a.args.size() != 1 || !a.kwargs.empty())
    fail(ErrorKind::TypeError, "{}() takes exactly one argument (a jit function)", fn);
  auto* j = a.args[0].is(Type::Builtin) ? dynamic_cast<JitObj*>(a.args[0].object().get()) : nullptr;
  if (!j) fail(ErrorKind::TypeError, "{}() expects a function made by jit(), not '{}'", fn, type_name(a.args[0]));
  return *j;
}

const CacheEntry& last_entry(const char* fn, JitObj& j) {
  if (!j.last) fail(ErrorKind::RuntimeError, "{}(): the jit function has not been called yet", fn);
  return *j.last;
}

}  // namespace

struct JitRegistry {
  std::vector<std::shared_ptr<JitObj>> functions;  // in order of creation (kept for the report)
};

std::string jit_stats(const JitRegistry& r) {
  std::string out;
  for (const auto& j : r.functions) out += j->stats() + "\n";
  return out;
}

std::shared_ptr<JitRegistry> install_jit(InterpOptions& opts, const JitOptions& jit) {
  auto registry = std::make_shared<JitRegistry>();
  opts.make_jit = [jit, registry](Interpreter&, const Value& fn, const std::string& cache, const std::string& shapes) {
    if (!fn.is(Type::Function)) return fn;  // a builtin runs as it is
    auto j = std::make_shared<JitObj>(fn.obj<FunctionObj>().def->name);
    j->function = fn;
    j->trace_opts.symbolic_numbers = cache == "symbolic";
    j->trace_opts.symbolic_shapes = shapes == "symbolic";
    j->caching = cache != "none";
    j->opts = jit;
    JitObj* self = j.get();
    j->fn = [self](Interpreter& in, CallArgs& args) { return self->call(in, args); };
    if (jit.stats) registry->functions.push_back(j);
    return Value(Type::Builtin, j);
  };
  return registry;
}

void install_jit_builtins(Interpreter& in) {
  auto& b = in.builtins();
  b["cache_hits"] = make_builtin("cache_hits", [](Interpreter&, CallArgs& a) { return Value(jit_arg("cache_hits", a).hits); });
  b["cache_misses"] = make_builtin("cache_misses", [](Interpreter&, CallArgs& a) {
    return Value(jit_arg("cache_misses", a).misses);
  });
  b["last_traces"] = make_builtin("last_traces", [](Interpreter&, CallArgs& a) {
    std::vector<Value> out;
    for (const PassRecord& p : last_entry("last_traces", jit_arg("last_traces", a)).passes) out.push_back(Value::str(p.printed()));
    return Value::list(std::move(out));
  });
  b["last_prologue"] = make_builtin("last_prologue", [](Interpreter&, CallArgs& a) {
    return Value::str(last_entry("last_prologue", jit_arg("last_prologue", a)).prologue.text());
  });
  b["last_execution_trace"] = make_builtin("last_execution_trace", [](Interpreter&, CallArgs& a) {
    return Value::str(last_entry("last_execution_trace", jit_arg("last_execution_trace", a)).passes.back().printed());
  });
}

}  // namespace thn
