#include "jit/jit.h"

#include <fmt/format.h>

#include <memory>
#include <string>
#include <unordered_map>

#include "backend/cpu.h"
#include "jit/eager_cuda.h"
#include "jit/trace_cache.h"
#include "passes/buffer_plan.h"
#include "interp/objects.h"
#include "runtime/error.h"
#include "runtime/threads.h"

namespace thn {

namespace {

// The jit callable: a builtin whose object also holds the cache.
struct JitObj : BuiltinObj {
  Value function;  // the thn function it traces (whose parameters bind a call's arguments)
  Value callee;    // what a trace calls: function, or a transform of it (jit(grad(f)))
  Value self;      // jit(obj.method), jit(obj): the object, its first argument
  TraceOptions trace_opts;
  bool caching = true;
  JitOptions opts;
  std::shared_ptr<const bool> interpret;  // the registry's switch: run f as the interpreter would
  TraceCache cache;
  std::shared_ptr<CacheEntry> last;
  int64_t calls = 0, hits = 0, misses = 0;
  CompileMode compile_mode = CompileMode::Background;
  // The kernel compiles its traces queued first (compiled by this process,
  // loaded from the disk cache, or not done yet), and its CUDA kernels.
  std::vector<std::shared_ptr<const CompileJob>> jobs;
  int64_t cuda_compiled = 0, cuda_loaded = 0;
  int64_t last_allocations = 0, last_bytes = 0;  // storages allocated by the last call's computation
  ExecCounters last_run;                          // kernels and bytes of the last call
  int64_t last_min_bytes = 0;                     // the least any plan could move

  // cache="auto" / shapes="auto": what the last trace's arguments were.
  struct Leaf {
    std::string name;
    InputLeaf::Kind kind;
    Value number;
    DType dtype = DType::Float32;
    Device device;
    Dims sizes;
  };
  bool auto_numbers = false;
  // Why the function runs in the interpreter (a trace recorded steps inside
  // a try statement: TraceInTry); empty while it is compiled.
  std::string interpreted;
  // The last traced call's arguments, per structure (the leaves' names and
  // kinds): a call compares with the last call of its own structure.
  std::unordered_map<std::string, std::vector<Leaf>> last_leaves;

  JitObj(std::string name) : BuiltinObj(std::move(name), nullptr) {}
  Value wrapped() const override { return function; }
  std::string repr() const override {
    const size_t n = cache.entries.size();
    return fmt::format("<jit function {} ({} trace{})>", name, n, n == 1 ? "" : "s");
  }

  // Under "auto": the number arguments and input sizes that differ from the
  // last trace's, in a call of the same structure, become symbolic; whether
  // any did.
  bool learn(const std::vector<InputLeaf>& leaves) {
    std::vector<Leaf> now;
    std::string structure;
    for (const InputLeaf& l : leaves) {
      structure += fmt::format("{}:{};", l.name, int(l.kind));
      Leaf s{l.name, l.kind, l.kind == InputLeaf::Number ? l.value : Value(), DType::Float32, kCPU, {}};
      if (l.kind == InputLeaf::Tensor) {
        const Tensor& t = l.value.as_tensor();
        s.dtype = t.dtype(), s.device = t.device(), s.sizes = t.sizes();
      }
      now.push_back(std::move(s));
    }
    bool learned = false;
    std::vector<Leaf>& last = last_leaves[structure];
    if (last.size() == now.size()) {
      for (size_t i = 0; i < now.size(); ++i) {
        const Leaf &a = last[i], &b = now[i];
        if (a.kind == InputLeaf::Number && auto_numbers && a.number.type() == b.number.type() &&
            to_repr(a.number) != to_repr(b.number))
          learned |= trace_opts.dynamic_numbers.insert(a.name).second;
        if (a.kind == InputLeaf::Tensor && trace_opts.auto_shapes && a.dtype == b.dtype && a.device == b.device &&
            a.sizes.size() == b.sizes.size())
          for (size_t d = 0; d < a.sizes.size(); ++d)
            if (a.sizes[d] != b.sizes[d]) learned |= trace_opts.dynamic_sizes.insert({a.name, int64_t(d)}).second;
      }
    }
    if (!trace_opts.dynamic_sizes.empty()) trace_opts.symbolic_shapes = true;
    last = std::move(now);
    return learned;
  }

  std::vector<std::string> param_names() const {
    std::vector<std::string> names;
    for (const auto& p : function.obj<FunctionObj>().def->params) names.push_back(p.name);
    return names;
  }

  Value call(Interpreter& in, CallArgs& args) {
    // Inside another trace f is traced inline; with the switch on, it is interpreted.
    if (!self.is_none()) args.args.insert(args.args.begin(), self);
    if (in.dispatch().tracing() || *interpret) return in.call(callee, args);
    if (!interpreted.empty()) {
      ++calls;
      return in.call(callee, args);
    }
    const FunctionObj& f = function.obj<FunctionObj>();
    std::vector<Value> params(f.def->params.size());
    in.bind_arguments(f, args, params.data());
    std::vector<std::string> names = param_names();
    // Arguments holding tensors that require grad: the trace differentiates
    // through them (backward() inside reaches them), and their .grad is
    // state it reads and writes. A hidden last argument carries their paths
    // (a constant the prologue checks: which tensors require grad, and which
    // paths are one tensor, decide the trace) and their .grad values (None
    // or tensors: inputs, and, where the trace sets them, outputs).
    std::vector<Value> grad_tensors;
    {
      std::vector<std::pair<std::string, Value>> found;
      for (size_t i = 0; i < params.size(); ++i) tensors_requiring_grad(params[i], names[i], found, false, true);
      std::vector<std::string> paths;
      for (const auto& [path, t] : found) {
        if (autograd_of(t)->step) {
          // (one computed outside: its graph would have to continue outside
          // the trace; with grad mode off it is a plain input)
          if (!grad_recording(in)) continue;
          fail(ErrorKind::NotImplementedError,
               "jit does not differentiate through tensors computed outside the function yet: '{}' has a grad_fn "
               "(pass the leaves it came from, or {}.detach(), or call {} under no_grad())",
               path, path, name);
        }
        auto same = std::find_if(grad_tensors.begin(), grad_tensors.end(), [&](const Value& g) { return g.object() == t.object(); });
        if (same != grad_tensors.end()) {
          paths[size_t(same - grad_tensors.begin())] += " is " + path;
          continue;
        }
        grad_tensors.push_back(t);
        // (one that has a .grad but does not require grad is no leaf of the trace's graph)
        paths.push_back(requires_grad(t) ? path : path + " (.grad only)");
      }
      if (!grad_tensors.empty()) {
        std::vector<Value> grads;
        for (const Value& t : grad_tensors) grads.push_back(autograd_attribute(t, "grad"));
        params.push_back(Value::tuple({Value::str(fmt::format("{}", fmt::join(paths, "\n"))), Value::list(std::move(grads))}));
        names.push_back("grads");
      }
    }
    // The .grad the trace left (the hidden argument's list took them, also
    // when the call raised after a backward()).
    struct GradsBack {
      const std::vector<Value>& tensors;
      const std::vector<Value>& params;
      ~GradsBack() {
        if (tensors.empty()) return;
        const std::vector<Value>& now = params.back().items()[1].items();
        for (size_t i = 0; i < tensors.size() && i < now.size(); ++i)
          if (now[i].is_none() || (now[i].is(Type::Tensor) && !now[i].is_proxy())) autograd_of(tensors[i], true)->grad = now[i];
      }
    } grads_back{grad_tensors, params};
    ++calls;
    std::vector<Value> inputs;
    Value r;
    if ((last = cache.find(in, params, inputs))) {
      ++hits;
      r = decode_mappings(update_lists(params, execute(in, inputs)));
    } else {
      ++misses;
      // (why the last trace does not serve: its first failing check)
      std::string why = cache.entries.empty() ? "" : cache.entries.front()->prologue.why_not(in, params);
      auto trace = [&] {
        Tracer t(in, trace_opts);
        t.differentiate(grad_tensors);
        return t.trace(callee, params, names);
      };
      TraceResult traced;
      try {
        traced = trace();
      } catch (const TraceInTry& t) {
        // Tracing ran on meta tensors and stopped at the try: the call runs
        // now in the interpreter, and so does every later one (its .grad
        // are the interpreter's to set).
        interpreted = fmt::format("a try statement at {} holds tensor operations: an error only their run could "
                                  "raise would skip its except and finally blocks when compiled",
                                  t.at);
        grad_tensors.clear();
        params.resize(f.def->params.size());
        CallArgs eager = Interpreter::call_args_of(callee, std::move(params));
        return in.call(callee, eager);
      }
      // (Tracing runs on metadata: tracing again with what the call showed to
      // vary made symbolic costs what the ops cost.)
      if ((auto_numbers || trace_opts.auto_shapes) && learn(traced.leaves)) traced = trace();
      // Numbers the function itself changes (an optimizer's step count)
      // differ at the next call: symbolic at once, not a trace later.
      std::vector<std::string> counters;
      if (auto_numbers)
        for (const std::string& n : traced.changed_numbers)
          if (trace_opts.dynamic_numbers.insert(n).second) counters.push_back(n);
      if (!counters.empty()) traced = trace();
      note_miss(in, why, counters);
      last = cache.add(std::move(traced), opts.pipeline, caching, inputs, compile_mode);
      jobs.insert(jobs.end(), last->jobs.begin(), last->jobs.end());
      cuda_compiled += last->cuda_compiled, cuda_loaded += last->cuda_loaded;
      report(*last);
      r = decode_mappings(update_lists(params, execute(in, inputs)));
    }
    return r;
  }

  // Why each trace but a plain first one was made (for --stats): a
  // retrace's failing check, and the numbers made symbolic because the
  // function changes them.
  std::vector<std::string> miss_notes;
  void note_miss(Interpreter& in, const std::string& why, const std::vector<std::string>& counters) {
    std::string at;
    if (const Frame* f = in.current_frame(); f && f->loc && f->loc->source)
      at = fmt::format(" at {}:{}", f->loc->source->path, f->loc->line);
    if (why.empty() && counters.empty()) return;  // (the first trace)
    std::string note = fmt::format("trace {} (call {}{})", misses, calls, at);
    note += why.empty() ? ": the first" : ": " + why;
    if (!counters.empty()) {
      const size_t shown = std::min<size_t>(counters.size(), 3);
      note += fmt::format("; symbolic since the function changes them: {}{}",
                          fmt::join(counters.begin(), counters.begin() + long(shown), ", "),
                          counters.size() > shown ? fmt::format(" and {} more", counters.size() - shown) : "");
    }
    miss_notes.push_back(std::move(note));
  }

  // The lists eager would give back as themselves go into the trace's
  // output; then the list arguments the function changed take their new
  // items (the output is the return value, then those items).
  Value update_lists(const std::vector<Value>& params, Value r) const {
    auto at = [](const Value& root, std::span<const int> path) {
      Value v = root;
      for (int i : path) v = child_at(v, size_t(i));
      return v;
    };
    for (const auto& link : last->output_links) {
      Value v = link.argument ? at(params[size_t(link.from[0])], std::span(link.from).subspan(1)) : at(r, link.from);
      if (link.at.empty()) r = v;
      else at(r, std::span(link.at).first(link.at.size() - 1)).items()[size_t(link.at.back())] = v;
    }
    if (last->list_updates.empty()) return r;
    // Every list is found before any changes: a changed list may move another.
    std::vector<Value> lists;
    for (const std::vector<int>& path : last->list_updates)
      lists.push_back(at(params[size_t(path[0])], std::span(path).subspan(1)));
    for (size_t k = 0; k < lists.size(); ++k) {
      const Value& now = r.items()[k + 1];
      if (lists[k].is(Type::List)) lists[k].items() = decode_mappings(now).items();  // (a dict it took comes back as a dict)
      else if (lists[k].is(Type::Dict)) decode_entries_into(lists[k].obj<DictObj>(), now);
      else decode_entries_into(lists[k].obj<InstanceObj>().dict.obj<DictObj>(), now);
    }
    return r.items()[0];
  }

  Value execute(Interpreter& in, const std::vector<Value>& inputs) {
    adapt_threads();
    int64_t before = Storage::allocations(), bytes = Storage::allocated_bytes();
    ExecCounters counters = exec_counters();
    InputTraffic traffic;
    Value r = last->executor.run(in, inputs, &traffic);
    last_allocations = Storage::allocations() - before;
    last_bytes = Storage::allocated_bytes() - bytes;
    last_run = {exec_counters().kernels - counters.kernels, exec_counters().bytes - counters.bytes};
    // A lower bound on what any plan moves: of each input, what one step
    // needed to read of it and what one step wrote into it; every returned
    // tensor that is not an input's memory written once.
    last_min_bytes = 0;
    for (size_t i = 0; i < inputs.size(); ++i) last_min_bytes += traffic.read[i] + traffic.written[i];
    std::vector<Value> outs;
    collect_tensors(r, outs);
    std::vector<const void*> counted;  // (a tensor returned and also written back into a dict is written once)
    for (const Value& o : outs) {
      bool input = false;
      for (const Value& v : inputs) input |= v.is(Type::Tensor) && v.as_tensor().storage() == o.as_tensor().storage();
      const void* s = o.as_tensor().storage().get();
      if (input || std::find(counted.begin(), counted.end(), s) != counted.end()) continue;
      counted.push_back(s);
      last_min_bytes += distinct_bytes(o);
    }
    return r;
  }

  static void collect_tensors(const Value& v, std::vector<Value>& out) {
    if (v.is(Type::Tensor)) out.push_back(v);
    else if (v.is_sequence())
      for (const Value& x : v.items()) collect_tensors(x, out);
  }

  // LANGUAGE.md's line, then what the buffer plan left and what the last
  // call allocated.
  std::string stats() const {
    std::string line = fmt::format("stats: {} calls={} hits={} misses={} kernels={} bytes={} min_bytes={}", name, calls,
                                   hits, misses, last_run.kernels, last_run.bytes, last_min_bytes);
    int64_t compiled = cuda_compiled, loaded = cuda_loaded, compiling = 0;
    for (const auto& j : jobs) {
      if (!j->done()) ++compiling;
      else if (j->failed()) continue;
      else if (j->info().from_disk) ++loaded;
      else if (!j->info().from_memory) ++compiled;
    }
    const std::string kernels = fmt::format(" compiled={} loaded={} compiling={}", compiled, loaded, compiling);
    // (why, on a line of its own: the stats line stays key=value pairs)
    if (!interpreted.empty()) return line + kernels + " interpreted=1\n# " + name + " runs in the interpreter: " + interpreted;
    if (!last) return line + kernels;
    BufferStats b = buffer_stats(last->computation);
    line += fmt::format(" writeback_copies={} temporaries={} new_buffers={} allocations={} allocated_bytes={}",
                        b.writeback_copies, b.temporaries, b.new_buffers, last_allocations, last_bytes) +
            kernels;
    for (const std::string& n : miss_notes) line += "\n# " + name + " " + n;
    return line;
  }

  void report(const CacheEntry& e) const {
    if (opts.print_traces) {
      std::fprintf(stderr, "# jit %s: trace %lld\n%s\n", name.c_str(), (long long)misses, e.prologue.text().c_str());
      std::fputs(print_passes(e.passes).c_str(), stderr);
    }
    if (opts.emit_trace) std::printf("%s\n", e.passes.back().printed().c_str());
    if (opts.emit_kernels) {
      std::string src = kernel_source(e.computation, Target::Cpu);
      std::printf("# jit %s: trace %lld kernels\n%s\n", name.c_str(), (long long)misses,
                  src.empty() ? "# (no fusion)" : src.c_str());
    }
    if (opts.on_trace) opts.on_trace(name, e.computation);
    if (opts.time_passes) {
      std::string line = fmt::format("time-passes: {}:", name);
      for (const PassRecord& p : e.passes) line += fmt::format(" {} {:.3f} ms;", p.pass, p.ms);
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }
};

// The one argument of an introspection builtin; `is_function`: whether it
// is what the builtin takes.
const Value& introspected(const char* fn, CallArgs& a, bool (*is_function)(const Value&)) {
  if (a.args.size() != 1 || !a.kwargs.empty())
    fail(ErrorKind::TypeError, "{}() takes exactly one argument (a jit function)", fn);
  if (!is_function(a.args[0]))
    fail(ErrorKind::TypeError, "{}() expects a function made by jit(), not '{}'", fn, type_name(a.args[0]));
  return a.args[0];
}

JitObj* as_jit(const Value& v) { return v.is(Type::Builtin) ? dynamic_cast<JitObj*>(v.object().get()) : nullptr; }

JitObj& jit_arg(const char* fn, CallArgs& a) {
  return *as_jit(introspected(fn, a, [](const Value& v) { return as_jit(v) != nullptr; }));
}

const CacheEntry& last_entry(const char* fn, JitObj& j) {
  if (!j.interpreted.empty()) fail(ErrorKind::RuntimeError, "{}(): the jit function runs in the interpreter: {}", fn, j.interpreted);
  if (!j.last) fail(ErrorKind::RuntimeError, "{}(): the jit function has not been called yet", fn);
  return *j.last;
}

}  // namespace

struct JitRegistry {
  std::shared_ptr<bool> interpret = std::make_shared<bool>(false);
  // Kept alive after their last use: for --stats' report at exit, and for
  // JitOptions::keep_alive.
  std::vector<std::shared_ptr<JitObj>> kept;
  std::vector<std::weak_ptr<JitObj>> functions;   // every one, in order of creation
};

std::string jit_stats(const JitRegistry& r) {
  std::string out;
  for (const auto& j : r.kept)
    if (j->opts.stats) out += j->stats() + "\n";
  return out;
}

namespace {

JitView view_of(const JitObj& j) {
  JitView v{&j, j.name, j.calls, "", nullptr, nullptr};
  if (j.last) {
    v.prologue = j.last->prologue.text();
    v.passes = &j.last->passes;
    v.computation = &j.last->computation;
  }
  return v;
}

}  // namespace

void set_interpret(JitRegistry& r, bool on) { *r.interpret = on; }

std::optional<JitView> jit_view(const Value& v) {
  auto* j = v.is(Type::Builtin) ? dynamic_cast<JitObj*>(v.object().get()) : nullptr;
  if (!j) return std::nullopt;
  return view_of(*j);
}

std::vector<JitView> jit_functions(const JitRegistry& r) {
  std::vector<JitView> out;
  for (const auto& w : r.functions)
    if (auto j = w.lock()) out.push_back(view_of(*j));
  return out;
}

std::shared_ptr<JitRegistry> install_jit(InterpOptions& opts, const JitOptions& jit) {
  auto registry = std::make_shared<JitRegistry>();
  install_eager_cuda();
  opts.make_jit = [jit, registry](Interpreter&, const Value& fn, const std::string& cache, const std::string& shapes,
                                  const std::string& compile) {
    // jit(grad(f)): the transform traced with f's parameters (passed to it
    // positionally: f may not take keyword-only ones or *args).
    Value function = fn, bound, callee = fn;
    if (fn.is(Type::Builtin) && !dynamic_cast<const JitObj*>(fn.object().get())) {
      function = fn.obj<BuiltinObj>().wrapped();
      if (!function.is(Type::Function)) return fn;  // a builtin runs as it is
      // (f's defaults would be passed positionally, changing what a
      // negative argnums names: such a transform runs as it is)
      for (const ast::Param& p : function.obj<FunctionObj>().def->params)
        if (p.star || p.dstar || p.kwonly || p.default_value) return fn;
    } else if (!fn.is(Type::Function) && !fn.is(Type::Method)) {
      return fn;
    }
    // jit(obj.method) and jit(obj) (its __call__): the function, with obj its first argument.
    if (fn.is(Type::Method)) {
      function = callee = fn.obj<MethodObj>().fn;
      bound = fn.obj<MethodObj>().self;
      if (!function.is(Type::Function)) return fn;
    }
    auto j = std::make_shared<JitObj>(function.obj<FunctionObj>().def->name);
    j->function = function;
    j->callee = callee;
    j->self = bound;
    j->trace_opts.symbolic_numbers = cache == "symbolic";
    j->trace_opts.symbolic_shapes = shapes == "symbolic";
    j->trace_opts.auto_shapes = shapes == "auto";
    j->auto_numbers = cache == "auto";
    j->caching = cache != "none";
    j->compile_mode = compile == "sync"         ? CompileMode::Sync
                      : compile == "background" ? CompileMode::Background
                                                : jit.compile.value_or(default_compile_mode());
    j->opts = jit;
    j->interpret = registry->interpret;
    JitObj* self = j.get();
    j->fn = [self](Interpreter& in, CallArgs& args) { return self->call(in, args); };
    if (jit.stats || jit.keep_alive) registry->kept.push_back(j);
    registry->functions.push_back(j);
    return Value(Type::Builtin, j);
  };
  return registry;
}

void install_jit_builtins(Interpreter& in, bool interpreted) {
  auto& b = in.builtins();
  if (interpreted) {
    auto function_arg = [](const char* fn, CallArgs& a) {
      introspected(fn, a, [](const Value& v) { return v.is(Type::Function) || v.is(Type::Builtin) || v.is(Type::Method); });
    };
    for (const char* name : {"cache_hits", "cache_misses", "compile_pending"})
      b[name] = make_builtin(name, [name, function_arg](Interpreter&, CallArgs& a) {
        function_arg(name, a);
        return Value(int64_t(0));
      });
    b["last_traces"] = make_builtin("last_traces", [function_arg](Interpreter&, CallArgs& a) {
      function_arg("last_traces", a);
      return Value::list({});
    });
    for (const char* name : {"last_prologue", "last_execution_trace"})
      b[name] = make_builtin(name, [name, function_arg](Interpreter&, CallArgs& a) {
        function_arg(name, a);
        return Value::str("");
      });
    return;
  }
  b["cache_hits"] = make_builtin("cache_hits", [](Interpreter&, CallArgs& a) { return Value(jit_arg("cache_hits", a).hits); });
  b["cache_misses"] = make_builtin("cache_misses", [](Interpreter&, CallArgs& a) {
    return Value(jit_arg("cache_misses", a).misses);
  });
  b["compile_pending"] = make_builtin("compile_pending", [](Interpreter&, CallArgs& a) {
    const JitObj& j = jit_arg("compile_pending", a);
    return Value(int64_t(std::count_if(j.jobs.begin(), j.jobs.end(), [](const auto& job) { return !job->done(); })));
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
