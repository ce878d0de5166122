#pragma once
// The CUDA backend: generated CUDA C++ compiled by NVRTC, to a cubin when
// NVRTC supports the arch, else to PTX, cached on disk like host modules;
// loaded and launched through the driver API (runtime/cuda.h).
#include <string>

#include "backend/kernel_cache.h"
#include "ir/executor.h"
#include "runtime/cuda.h"

namespace thn {

// Whether this build has NVRTC (the CUDA toolkit was found at build time).
bool have_nvrtc();

struct CudaImage {
  std::string arch;   // "sm_90"; PTX: its virtual arch, "compute_90"
  bool cubin = false;  // else PTX
  std::string data;
  bool from_disk = false;
};

// Compiles `source` for `arch` ("sm_90"; empty: the newest NVRTC supports);
// an Error with NVRTC's log and the path of the source when it fails.
CudaImage nvrtc_compile(const std::string& source, const std::string& arch);
// Why NVRTC cannot compile for `arch` (sm_NN), or "" when it can (an arch
// newer than it knows gets PTX).
std::string arch_problem(const std::string& arch);

// The module of an image, loaded once per process and kept (kernels of
// cache entries may run until exit).
cuda::CUmodule load_module(const CudaImage& image);

// One kernel per prims.fusion of t (for TraceExecutor), compiled for device
// 0's arch and loaded: a grid-stride loop of 256-thread blocks for
// pointwise kernels; for reductions a block per output (mode 0) or, when
// each output reduces few elements, a thread per output (mode 1).
FusionKernels compile_cuda(const Trace& t, CompileInfo* info = nullptr);

}  // namespace thn
