#pragma once
// The CUDA kernels of the library ops that are not fusions: the loop of the
// index ops (index_select, gather, index_copy, index_add), cumsum,
// argmax/argmin and tril/triu, as runtime/cuda.h's LineWalk describes it,
// and the range check of indices. A thread walks each line, except where
// lines are long: argmax/argmin and cumsum share a line among a block's
// threads (cumsum: several blocks, chunk by chunk, when lines are few), and
// a scatter whose index every line shares runs all positions at once.
// Written once as CUDA C++ (one kernel per kind and element type),
// compiled by NVRTC on first use for the device's arch and cached on disk
// like generated kernels.
#include <string>

namespace thn {

// The library's source (what NVRTC compiles).
const std::string& cuda_library_source();

// Makes the runtime's library ops use these kernels on CUDA tensors
// (cuda::set_library_kernels).
void install_cuda_library();

}  // namespace thn
