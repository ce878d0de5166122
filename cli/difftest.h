#pragma once
// `thn difftest FILE...`: runs each script with `--interpret` (the reference)
// and with jit, and reports the first line of stdout that differs (numbers
// compared with a dtype-aware tolerance, see cli/output_compare.h), a
// different exit status, or a different error message. Returns 1 when any
// file differs, 2 on a usage error, else 0. `thn fuzz` runs its programs
// through the same pieces.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/output_compare.h"

namespace thn {

struct RunResult {
  int status = 0;  // the exit code, or 128 + the signal that killed it
  std::string out, err;
  bool timed_out = false;  // killed at the deadline
};

// Runs this executable as `thn run FILE --interpret` or, on the jit side,
// `thn run FILE --verify-each` (every trace checked after every pass), plus
// `extra` arguments, without a shell so any file name works, with stdin from
// /dev/null, killed after `timeout_s` seconds when that is positive. nullopt
// (errno set) when it cannot be started.
std::optional<RunResult> run_self(const std::string& file, bool interpret, const std::vector<std::string>& extra = {},
                                  double timeout_s = 0);

// The `FILE:LINE:COL: Kind: message` line of an error: the last line of
// stderr that is not indented (the source line and caret under it are).
std::string error_message(std::string_view err);

// Every way the two runs of `file` differ, one report per way ("" when they
// agree): the first line of stdout that does not match, the exit status, the
// error message.
std::string differences(const std::string& file, const RunResult& interpreted, const RunResult& jitted,
                        double tolerance = kOutputTolerance);

int difftest_command(int argc, char** argv);

}  // namespace thn
