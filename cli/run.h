#pragma once
// `thn run FILE [--interpret]`: runs a script; errors go to stderr as a thn
// traceback plus the located message. Returns the process exit code.
namespace thn {

int run_command(int argc, char** argv);
// `thn kernels FILE --target cpu|cuda [--arch sm_90]`: runs the script and
// compiles every kernel of each new trace of its jit functions for the
// target (for CUDA, with NVRTC: no GPU needed); a compile error exits 1.
int kernels_command(int argc, char** argv);

}  // namespace thn
