#pragma once
// `thn run FILE [--interpret]`: runs a script; errors go to stderr as a thn
// traceback plus the located message. Returns the process exit code.
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jit/jit.h"
#include "runtime/error.h"

namespace thn {

// Runs body on a thread with a stack deep enough for Python's recursion limit.
int on_big_stack(std::function<int()> body);
// The folder of the .thn standard library ($THN_STDLIB, else the source tree's).
std::string stdlib_dir();
// Prints the exception in flight (inside a catch) as `thn run` does: a
// traceback, the located message and, for the commonest mistakes, a
// one-line hint, on stderr (in colour when stderr_colour()). Its kind.
ErrorKind report_error();
// Inside a catch: for a SystemExit in flight (exit(), quit(), raise
// SystemExit(code)), the exit status (a message is printed, status 1);
// nullopt for any other error.
std::optional<int> system_exit();
// Ctrl-C from here on raises KeyboardInterrupt in the program (a second
// one before it is seen kills the process).
void catch_interrupts();
// Whether stderr gets ANSI colour: a terminal, NO_COLOR unset or empty and
// TERM not "dumb".
bool stderr_colour();
// The hint for an error of this kind and message, or "" (tabs in
// indentation, a tensor branch inside jit, CUDA without a GPU).
std::string error_hint(ErrorKind kind, std::string_view message);

// Whether FILE is a regular file; if not, says so on stderr.
bool script_exists(const std::string& file);

struct RunOptions {
  std::string file;
  bool interpret = false;    // jit is the identity: the reference path
  bool emit_ast = false;     // print the script's resolved AST before running it
  std::FILE* out = stdout;   // where the script prints
  std::string* stats_into = nullptr;  // --stats' lines go here, not to stderr
  JitOptions jit;
};
// Runs a script as `thn run` does; when it ran cleanly, `after` (if set)
// sees its jit functions and gives the exit code.
int run_script(const RunOptions& run, const std::function<int(const JitRegistry&)>& after = {});

int run_command(int argc, char** argv);
// `--device cpu|cuda` of a command: cuda makes tensors made without a
// device CUDA tensors. False (the reason said on stderr) when the device is
// neither or CUDA is not available.
bool use_device(const std::string& device, const char* command, const char* usage);
// "COMMAND: unknown option or extra argument: ARG", with the closest of a
// command's options suggested, and its usage.
void unknown_argument(const char* command, const std::string& arg, const std::vector<std::string>& options,
                      const char* usage);
// `thn kernels FILE --target cpu|cuda [--arch sm_90]`: runs the script and
// compiles every kernel of each new trace of its jit functions for the
// target (for CUDA, with NVRTC: no GPU needed); a compile error exits 1.
int kernels_command(int argc, char** argv);

}  // namespace thn
