#include "cli/run.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>

#include "build_config.h"
#include "runtime/progress.h"
#include "frontend/parser.h"
#include "frontend/resolve.h"
#include "interp/interpreter.h"
#include "interp/objects.h"
#include "backend/cpu.h"
#include "backend/cuda.h"
#include "jit/jit.h"
#include "runtime/cuda.h"

namespace thn {

// The evaluator recurses on the C++ stack; give it room for Python's
// recursion limit (1000 thn frames) and deeply nested expressions.
constexpr size_t kStackBytes = size_t(1) << 30;

namespace {

// Ctrl-C while a script runs: KeyboardInterrupt at the next statement (or
// in a wait on a kernel compiler); a second one, before that, kills.
void on_sigint(int) {
  if (interrupt_requested()) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    return;
  }
  request_interrupt();
}

}  // namespace

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
}

int on_big_stack(std::function<int()> body) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kStackBytes);
  struct Job {
    std::function<int()> body;
    int rc = 1;
  } job{std::move(body)};
  pthread_t thread;
  auto entry = [](void* p) -> void* {
    auto* j = static_cast<Job*>(p);
    j->rc = j->body();
    return nullptr;
  };
  if (pthread_create(&thread, &attr, entry, &job) != 0) return job.body();
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  return job.rc;
}

std::string stdlib_dir() {
  if (const char* env = std::getenv("THN_STDLIB")) return env;
  return std::string(THN_SOURCE_DIR) + "/stdlib";
}

namespace {

// Outermost frame first; like Python, a line repeated more than three times
// in a row (deep recursion) is summarised.
void print_traceback(const TracedError& e) {
  std::string out = "Traceback (most recent call last):\n";
  std::string prev;
  int same = 0;
  auto summarise = [&] {
    if (same > 3) out += fmt::format("  [Previous line repeated {} more time{}]\n", same - 3, same == 4 ? "" : "s");
  };
  for (auto it = e.trace.rbegin(); it != e.trace.rend(); ++it) {
    const Loc& l = it->loc;
    std::string entry = l.source ? fmt::format("  File \"{}\", line {}, in {}\n", l.source->path, l.line, it->function)
                                 : fmt::format("  in {}\n", it->function);
    if (l.source) {
      std::string_view text = l.source->line(l.line);
      size_t start = text.find_first_not_of(" \t");
      if (start != std::string_view::npos) entry += fmt::format("    {}\n", printable(text.substr(start)));
    }
    if (entry == prev) {
      if (++same <= 3) out += entry;
      continue;
    }
    summarise();
    prev = entry;
    same = 1;
    out += entry;
  }
  summarise();
  std::fputs(out.c_str(), stderr);
}

}  // namespace

bool stderr_colour() {
  const char* no_colour = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return isatty(2) && !(no_colour && *no_colour) && !(term && std::strcmp(term, "dumb") == 0);
}

std::string error_hint(ErrorKind kind, std::string_view message) {
  if (kind == ErrorKind::TabError)
    return "thn indents with spaces only: set your editor to insert spaces (`expand -i -t 4 FILE` converts a file)";
  if (message.starts_with("jit: ") && message.find("cannot branch on") != std::string_view::npos)
    return "inside jit, choose between tensors with where(cond, a, b), or decide outside the jitted function and "
           "pass the decision in as a number";
  if (message.starts_with("No module named 'torch") || message == "name 'torch' is not defined")
    return "thn's names are PyTorch's without the prefix: zeros(3) for torch.zeros(3), x.sum() as ever; "
           "torch.nn.functional is `import nn`, torch.optim `import optim`, torch.cuda `import cuda`";
  if (message.starts_with("CUDA is not available"))
    return "run on the CPU (leave out device=\"cuda\" and .to(\"cuda\")); `thn --version` shows the GPU thn sees";
  return "";
}

std::optional<int> system_exit() {
  try {
    throw;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::SystemExit) return std::nullopt;
    // Python's rule: the exception's code is None (no argument, or None): 0;
    // an int (a bool too): that status; anything else is printed, status 1.
    const Value exc = exception_value(e);
    const Value* args = exc.is(Type::Instance) ? dict_get(exc.obj<InstanceObj>().dict, "args") : nullptr;
    Value code;
    if (args && args->is_sequence() && args->items().size() == 1) code = args->items()[0];
    else if (args && args->is_sequence() && args->items().size() > 1) code = *args;
    if (code.is_none()) return 0;
    if (code.is_int_like()) return int(code.as_int() & 0xff);  // (the status the shell sees, as Python's)
    std::fflush(stdout);
    std::fprintf(stderr, "%s\n", to_str(code).c_str());
    return 1;
  } catch (...) {
    return std::nullopt;
  }
}

ErrorKind report_error() {
  std::fflush(stdout);
  const bool colour = stderr_colour();
  auto located = [&](const LocatedError& e) {
    std::fprintf(stderr, "%s\n", format_located(e.loc(), e.kind_name(), e.what() + e.note(), colour).c_str());
  };
  ErrorKind kind = ErrorKind::RuntimeError;
  std::string message;
  try {
    throw;
  } catch (TracedError& e) {
    print_traceback(e);
    located(e);
    kind = e.kind(), message = e.what();
  } catch (LocatedError& e) {
    located(e);
    kind = e.kind(), message = e.what();
  } catch (Error& e) {
    std::fprintf(stderr, "thn: %s: %s%s\n", e.kind_name(), e.what(), e.note().c_str());
    kind = e.kind(), message = e.what();
  } catch (std::exception& e) {
    std::fprintf(stderr, "thn: internal error: %s\n", e.what());
  }
  std::string hint = error_hint(kind, message);
  if (!hint.empty()) std::fprintf(stderr, "%s %s\n", colour ? "\x1b[1;36mhint:\x1b[0m" : "hint:", hint.c_str());
  return kind;
}

bool script_exists(const std::string& file) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(file, ec)) return true;
  const bool exists = std::filesystem::exists(file, ec);
  const char* why = !exists ? "No such file or directory"
                    : std::filesystem::is_directory(file, ec) ? "Is a directory"
                                                               : "not a regular file";
  std::fprintf(stderr, "thn: can't open file '%s': %s\n", file.c_str(), why);
  return false;
}

int run_script(const RunOptions& run, const std::function<int(const JitRegistry&)>& after) {
  const std::string& path = run.file;
  InterpOptions opts;
  std::filesystem::path script(path);
  opts.module_path = {script.parent_path().empty() ? "." : script.parent_path().string(), stdlib_dir()};
  opts.library_dir = stdlib_dir();
  opts.out = run.out;
  std::shared_ptr<JitRegistry> jits;
  if (!run.interpret) jits = install_jit(opts, run.jit);
  Interpreter interp(opts);  // outlives the error: locations point into its sources
  install_jit_builtins(interp, run.interpret);
  struct Stats {  // --stats: reported however the script ends
    const std::shared_ptr<JitRegistry>& jits;
    std::string* into;
    ~Stats() {
      std::fflush(stdout);
      if (!jits) return;
      if (into) *into = jit_stats(*jits);
      else {
        clear_status();  // (a compile progress line)
        std::fputs(jit_stats(*jits).c_str(), stderr);
      }
    }
  } stats{jits, run.stats_into};
  try {
    if (run.emit_ast) {
      std::unique_ptr<ast::Module> m = parse(Source::load(path));
      resolve(*m);
      std::fputs(ast::print_ast(*m).c_str(), stdout);
    }
    interp.run_file(path);
    std::fflush(run.out);
  } catch (...) {
    if (std::optional<int> code = system_exit()) return *code;
    // (Stopped by Ctrl-C: the shell's 128 + SIGINT, as Python's.)
    return report_error() == ErrorKind::KeyboardInterrupt ? 130 : 1;
  }
  return after && jits ? after(*jits) : 0;
}

bool use_device(const std::string& device, const char* command, const char* usage) {
  if (device != "cpu" && device != "cuda") {
    std::fprintf(stderr, "%s: --device takes cpu or cuda%s\n%s", command,
                 device.empty() ? "" : fmt::format(", not '{}'", device).c_str(), usage);
    return false;
  }
  if (device == "cuda") {
    if (std::string why; !cuda::available(&why)) {
      std::fprintf(stderr, "%s: --device cuda: CUDA is not available: %s\n", command, why.c_str());
      return false;
    }
    set_default_device(Device{DeviceType::CUDA});
  }
  return true;
}

void unknown_argument(const char* command, const std::string& arg, const std::vector<std::string>& options,
                      const char* usage) {
  std::string note = arg.starts_with("-") ? did_you_mean(arg, options, false) : "";
  std::fprintf(stderr, "%s: unknown option or extra argument: %s%s\n%s", command, arg.c_str(), note.c_str(), usage);
}

const char* kRunUsage =
    "usage: thn run FILE [--interpret] [--print-traces] [--emit=ast|trace|kernels] [--print-after=PASS|all] [--time-passes]\n"
    "               [--verify-each] [--stats] [--device cpu|cuda]\n"
    "  --device cuda: tensors made without a device (zeros, randn, tensor, ...) are made on the GPU\n";

int run_command(int argc, char** argv) {
  RunOptions run;
  std::string& file = run.file;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", kRunUsage);
      return 0;
    } else if (arg == "--interpret") {
      run.interpret = true;
    } else if (arg == "--print-traces") {
      run.jit.print_traces = true;
    } else if (arg == "--time-passes") {
      run.jit.time_passes = true;
    } else if (arg == "--stats") {
      run.jit.stats = true;
    } else if (arg == "--device") {
      if (!use_device(i + 1 < argc ? argv[++i] : "", "thn run", kRunUsage)) return 2;
    } else if (arg == "--verify-each") {
      run.jit.pipeline.verify_each = true;
    } else if (arg == "--emit=ast") {
      run.emit_ast = true;
    } else if (arg == "--emit=trace") {
      run.jit.emit_trace = true;
    } else if (arg == "--emit=kernels") {
      run.jit.emit_kernels = true;
    } else if (arg.starts_with("--print-after=")) {
      std::string pass = arg.substr(14);
      const auto& names = pass_names();
      if (pass != "all" && std::find(names.begin(), names.end(), pass) == names.end()) {
        std::fprintf(stderr, "thn run: unknown pass '%s' (passes: %s, or all)\n", pass.c_str(),
                     fmt::format("{}", fmt::join(names, ", ")).c_str());
        return 2;
      }
      run.jit.pipeline.print_after = pass;
    } else if (arg.starts_with("-") || !file.empty()) {
      unknown_argument("thn run", arg,
                       {"--interpret", "--print-traces", "--time-passes", "--stats", "--device", "--verify-each",
                        "--emit=ast", "--emit=trace", "--emit=kernels", "--print-after=", "--help"},
                       kRunUsage);
      return 2;
    } else {
      file = arg;
    }
  }
  if (file.empty()) {
    std::fprintf(stderr, "%s", kRunUsage);
    return 2;
  }
  if (!script_exists(file)) return 2;
  catch_interrupts();
  return on_big_stack([&] { return run_script(run); });
}

const char* kKernelsUsage = "usage: thn kernels FILE --target cpu|cuda [--arch sm_NN] [--print]\n";

int kernels_command(int argc, char** argv) {
  RunOptions run;
  std::string target, arch;
  bool print = false;  // the kernels' source (without the prelude) on stdout
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--target" || arg == "--arch") && i + 1 < argc) {
      (arg == "--target" ? target : arch) = argv[++i];
    } else if (arg == "--print") {
      print = true;
    } else if (arg.starts_with("-") || !run.file.empty()) {
      unknown_argument("thn kernels", arg, {"--target", "--arch", "--print"}, kKernelsUsage);
      return 2;
    } else {
      run.file = arg;
    }
  }
  if (run.file.empty() || (target != "cpu" && target != "cuda") || (!arch.empty() && target != "cuda")) {
    std::fprintf(stderr, "%s", kKernelsUsage);
    return 2;
  }
  if (!script_exists(run.file)) return 2;
  if (target == "cuda" && !have_nvrtc()) {
    std::fprintf(stderr, "thn kernels: this build has no CUDA backend (no CUDA toolkit at build time)\n");
    return 1;
  }
  if (target == "cuda" && !arch.empty()) {
    if (std::string problem = arch_problem(arch); !problem.empty()) {
      std::fprintf(stderr, "thn kernels: %s\n", problem.c_str());
      return 2;
    }
  }
  int traces = 0, kernels = 0;
  std::string compiled_for = target == "cpu" ? "the host" : "";
  run.jit.compile = CompileMode::Eager;  // (the script's fusions run op by op: the kernels compile here)
  Progress progress(stdout);  // (the count of traces is known as they come)
  run.jit.on_trace = [&](const std::string& name, const Trace& t) {
    int n = 0;
    for (const BoundSymbol& b : t.body) n += is_fusion(b);
    if (n == 0) return;
    progress.show(0, 0, fmt::format("compiling {} kernel{} of {} (trace {}) for {}", n, n == 1 ? "" : "s", name,
                                    traces + 1, target));

    Target tg = target == "cpu" ? Target::Cpu : Target::Cuda;
    if (print) progress.clear();
    if (print) std::printf("// kernels of %s\n%s", name.c_str(), kernel_source(t, tg, false).c_str());
    if (target == "cpu") {
      compile_cpu(t, CompileMode::Sync);  // (each kernel, as jit compiles them)
    } else {
      CudaImage img = nvrtc_compile(kernel_source(t, tg), arch);
      compiled_for = img.arch + (img.cubin ? " (cubin)" : " (PTX)");
    }
    progress.clear();
    ++traces;
    kernels += n;
  };
  int rc = on_big_stack([&] { return run_script(run); });
  progress.clear();
  if (rc == 0)
    std::printf("kernels: %d kernel%s of %d trace%s compiled for %s\n", kernels, kernels == 1 ? "" : "s", traces,
                traces == 1 ? "" : "s", compiled_for.empty() ? "cuda" : compiled_for.c_str());
  return rc;
}

}  // namespace thn
