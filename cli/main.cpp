// The thn command.
#include <fmt/format.h>
#include <malloc.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "build_config.h"
#include "backend/kernel_cache.h"
#include "cli/bench.h"
#include "cli/difftest.h"
#include "cli/fuzz.h"
#include "cli/graph.h"
#include "cli/ops_doc.h"
#include "cli/repl.h"
#include "cli/run.h"
#include "runtime/cuda.h"

namespace {

const char* kUsage = R"(usage: thn <command> [options]   or   thn FILE.thn [options]

commands:
  run FILE [--interpret] [--stats] [--emit=ast|trace|kernels] ...
                            run a thn script (thn run --help for its options; `thn FILE` is the same)
  repl [--interpret]        the interactive shell (also plain `thn`)
  bench [FILE] [--device cpu|cuda]
                            time the benchmark suite (or FILE): interpreter vs jit, first call, kernels, bytes
  cache [--info|--clear]    the kernel cache: its folder, entries and size; --clear empties it
  difftest FILE...          run scripts with --interpret and with jit, report where outputs differ
  fuzz [--seed S] [--count N] [--out DIR] ...
                            random programs run with --interpret and with jit; failures reduced to DIR
  graph FILE --fn NAME [-o OUT.svg|OUT.png|OUT.dot]
                            draw a jit function's fused execution trace (Graphviz; DOT text without it)
  kernels FILE --target cpu|cuda [--arch sm_NN]
                            run a script, compiling every kernel of its jit traces for the target
  docs-ops [--check FILE]   print docs/ops.md from the op table (or check FILE against it)
  --version                 print the version and the backends this build has
  --help                    print this help
)";

int version() {
  std::cout << "thn " << THN_VERSION << "\n";
  std::cout << "backends: cpu (eager, host C++ kernels)";
  if (THN_HAVE_CUDA_TOOLKIT) std::cout << "; CUDA kernels compiled by NVRTC (toolkit " << THN_CUDA_VERSION << ")";
  else std::cout << "; CUDA backend off (no CUDA toolkit at build time)";
  std::cout << "\n";
  std::string why;
  if (thn::cuda::available(&why)) {
    const thn::cuda::DeviceInfo& d = thn::cuda::device_info();
    std::cout << fmt::format("GPU: {} ({}, {} SMs, {:.1f} GiB, peak {:.0f} GB/s; driver CUDA {}.{})\n", d.name, d.arch(),
                             d.multiprocessors, double(d.memory_bytes) / double(1 << 30), d.peak_gbps,
                             d.driver_version / 1000, d.driver_version % 1000 / 10);
  } else {
    std::cout << "GPU: none (" << why << ")\n";
  }
  return 0;
}

// `thn cache [--info|--clear]`.
int cache(int argc, char** argv) {
  const std::string arg = argc > 2 ? argv[2] : "--info";
  if (argc > 3 || (arg != "--info" && arg != "--clear")) {
    std::fprintf(stderr, "usage: thn cache [--info|--clear]\n");
    return 2;
  }
  try {
    const bool clear = arg == "--clear";
    const thn::CacheSummary c = clear ? thn::clear_cache() : thn::cache_summary();
    const std::string size = c.bytes >= (1 << 20) ? fmt::format("{:.1f} MiB", double(c.bytes) / (1 << 20))
                                                  : fmt::format("{:.1f} KiB", double(c.bytes) / (1 << 10));
    std::cout << "kernel cache: " << c.dir << "\n";
    std::cout << fmt::format("{}{} entries ({} host kernel modules, {} CUDA images), {} files, {}\n",
                             clear ? "removed " : "", c.host_modules + c.device_images, c.host_modules,
                             c.device_images, c.files, size);
  } catch (const thn::Error& e) {
    std::fprintf(stderr, "thn cache: %s\n", e.what());
    return 1;
  }
  return 0;
}

const char* kCommands[] = {"run", "repl", "bench", "cache", "difftest", "fuzz", "graph", "kernels", "docs-ops"};

}  // namespace

namespace {

int command(int argc, char** argv) {
  if (argc == 1) return thn::repl_command(argc, argv);
  std::string cmd = argv[1];
  if (cmd == "--version") return version();
  if (cmd == "--help" || cmd == "-h") {
    std::cout << kUsage;
    return 0;
  }
  if (cmd == "run") return thn::run_command(argc, argv);
  if (cmd == "repl") return thn::repl_command(argc, argv);
  if (cmd == "difftest") return thn::difftest_command(argc, argv);
  if (cmd == "fuzz") return thn::fuzz_command(argc, argv);
  if (cmd == "kernels") return thn::kernels_command(argc, argv);
  if (cmd == "graph") return thn::graph_command(argc, argv);
  if (cmd == "bench") return thn::bench_command(argc, argv);
  if (cmd == "cache") return cache(argc, argv);
  if (cmd == "docs-ops") {
    if (argc == 2) return thn::print_ops_doc(std::cout);
    if (argc == 4 && std::strcmp(argv[2], "--check") == 0) return thn::check_ops_doc(argv[3]);
  }
  // `thn FILE.thn [options]`, as `python file.py`: `thn run FILE [options]`.
  std::error_code ec;
  if (!cmd.starts_with("-") &&
      (cmd.ends_with(".thn") || cmd.find('/') != std::string::npos || std::filesystem::is_regular_file(cmd, ec))) {
    std::vector<char*> args{argv[0], const_cast<char*>("run")};
    args.insert(args.end(), argv + 1, argv + argc);
    args.push_back(nullptr);
    return thn::run_command(argc + 1, args.data());
  }
  if (cmd == "docs-ops") {
    std::cerr << "usage: thn docs-ops [--check FILE]\n";
    return 2;
  }
  std::vector<std::string> names(std::begin(kCommands), std::end(kCommands));
  names.insert(names.end(), {"--help", "--version"});
  std::string note = thn::did_you_mean(cmd, names, false);
  for (const std::string& n : names)  // a slip of two keys (`rnu`) too, which Python's rule does not count as close
    for (size_t i = 0; note.empty() && i + 1 < cmd.size(); ++i)
      if (std::string t = cmd; (std::swap(t[i], t[i + 1]), t == n)) note = fmt::format(". Did you mean '{}'?", n);
  std::cerr << "thn: unknown command '" << cmd << "'" << note << "\n" << kUsage;
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // Tracing and the passes make and drop many small objects: a heap that
  // grows in large steps and is not trimmed after every burst of frees
  // spends a tenth less time in the kernel's page faults (bench/jit).
  mallopt(M_TOP_PAD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  int rc = command(argc, argv);
  // Output that could not be written (a full disk, a closed pipe) fails
  // the run, as Python's does, instead of passing for success.
  std::cout.flush();
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
    std::fprintf(stderr, "thn: cannot write the output: %s\n", errno ? std::strerror(errno) : "write error");
    if (rc == 0) rc = 1;
  }
  return rc;
}
