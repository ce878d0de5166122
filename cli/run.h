#pragma once
// `thn run FILE [--interpret]`: runs a script; errors go to stderr as a thn
// traceback plus the located message. Returns the process exit code.
#include <functional>
#include <string>

namespace thn {

// Runs body on a thread with a stack deep enough for Python's recursion limit.
int on_big_stack(std::function<int()> body);
// The folder of the .thn standard library ($THN_STDLIB, else the source tree's).
std::string stdlib_dir();
// Prints the exception in flight (inside a catch) as `thn run` does: a
// traceback and the located message on stderr.
void report_error();

int run_command(int argc, char** argv);
// `thn kernels FILE --target cpu|cuda [--arch sm_90]`: runs the script and
// compiles every kernel of each new trace of its jit functions for the
// target (for CUDA, with NVRTC: no GPU needed); a compile error exits 1.
int kernels_command(int argc, char** argv);

}  // namespace thn
