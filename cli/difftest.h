#pragma once
// `thn difftest FILE...`: runs each script with `--interpret` (the reference)
// and with jit, and reports the first line of stdout that differs (numbers
// compared with a dtype-aware tolerance, see cli/output_compare.h), a
// different exit status, or a different error message. Returns 1 when any
// file differs, 2 on a usage error, else 0.
namespace thn {

int difftest_command(int argc, char** argv);

}  // namespace thn
