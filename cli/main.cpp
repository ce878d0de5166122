// The thn command.
#include <fmt/format.h>
#include <malloc.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>

#include "build_config.h"
#include "cli/difftest.h"
#include "cli/fuzz.h"
#include "cli/graph.h"
#include "cli/ops_doc.h"
#include "cli/repl.h"
#include "cli/run.h"
#include "runtime/cuda.h"

namespace {

const char* kUsage = R"(usage: thn <command> [options]

commands:
  run FILE [--interpret] [--stats] [--emit=ast|trace|kernels] ...
                            run a thn script (thn run --help for its options)
  repl [--interpret]        the interactive shell (also plain `thn`)
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
  if (cmd == "docs-ops") {
    if (argc == 2) return thn::print_ops_doc(std::cout);
    if (argc == 4 && std::strcmp(argv[2], "--check") == 0) return thn::check_ops_doc(argv[3]);
  }
  std::cerr << "thn: unknown command or arguments: " << cmd << "\n" << kUsage;
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
