#pragma once
// The CUDA backend's compiler: generated CUDA C++ compiled by NVRTC, to a
// cubin when NVRTC supports the arch, else to PTX, cached on disk like host
// modules. (Launching through the driver API comes with a GPU to test on.)
#include <string>

namespace thn {

// Whether this build has NVRTC (the CUDA toolkit was found at build time).
bool have_nvrtc();

struct CudaImage {
  std::string arch;   // "sm_90"
  bool cubin = false;  // else PTX
  std::string data;
  bool from_disk = false;
};

// Compiles `source` for `arch` ("sm_90"; empty: the newest NVRTC supports);
// an Error with NVRTC's log and the path of the source when it fails.
CudaImage nvrtc_compile(const std::string& source, const std::string& arch);

}  // namespace thn
