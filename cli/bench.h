#pragma once
// `thn bench [FILE] [--device cpu|cuda]`: the benchmark suite (or FILE), its
// workloads timed with the interpreter and with jit, as a labelled table.

namespace thn {

int bench_command(int argc, char** argv);

}  // namespace thn
