#pragma once
// Text forms of values as Python and PyTorch 1.13 print them, character for
// character, so that a thn program's output can be diffed against PyTorch's.
#include <string>

#include "runtime/tensor.h"

namespace thn {

// CPython's repr(float): the shortest digits that read back as `v`, in fixed
// notation unless the decimal exponent is below -4 or at least 16
// ("0.0001", "1e-05", "1234567890123456.0", "1e+16", "-0.0", "inf", "nan").
std::string repr_float(double v);

// What print(t) shows in PyTorch 1.13 with the default print options
// (precision 4, threshold 1000, edgeitems 3, linewidth 80, sci_mode None):
// the algorithm of torch/_tensor_str.py, including its choice of integer,
// fixed or scientific notation, its summarization with "..." and its
// dtype/size/device suffixes.
std::string tensor_repr(const Tensor& t);

}  // namespace thn
