#pragma once
// `thn run FILE [--interpret]`: runs a script; errors go to stderr as a thn
// traceback plus the located message. Returns the process exit code.
namespace thn {

int run_command(int argc, char** argv);

}  // namespace thn
