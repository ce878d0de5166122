#pragma once
// `thn fuzz --seed S --count N [--start K] [--device cpu|cuda] [--out DIR]
// [-j JOBS] [--emit]`: differential fuzzing. Runs the generated programs of
// cli/fuzz_gen.h with --interpret and with jit (every pass verified) in
// child processes; a program whose outputs differ beyond rounding, that only
// one path fails on or fails differently, that crashes or hangs, or whose
// cache hits and misses break the call keys is reduced by delta debugging
// and written to DIR with its original. A progress bar on a terminal, one
// summary line at the end; exit 1 when any program failed.
namespace thn {

int fuzz_command(int argc, char** argv);

}  // namespace thn
