#pragma once
// The text every generated kernel starts with: its types and the
// per-element math of the eager kernels (runtime/half.h and
// runtime/scalar_math.h, embedded at build time), for the host compiler or
// for NVRTC (fixed-width typedefs and std shims instead of std headers).
#include <string>

namespace thn {

const std::string& cpu_prelude();
const std::string& cuda_prelude();

}  // namespace thn
