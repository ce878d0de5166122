#pragma once
// docs/ops.md, generated from the op table (runtime/ops.def).
#include <ostream>

namespace thn {
int print_ops_doc(std::ostream& out);
// 0 when the file equals what print_ops_doc writes; 1 (and a hint) otherwise.
int check_ops_doc(const char* path);
}  // namespace thn
