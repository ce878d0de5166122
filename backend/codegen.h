#pragma once
// Rendering Kernel IR as source: one expression printer, two emitters. The
// host emitter writes C++ loops (OpenMP over large index spaces, a flat loop
// the compiler vectorises when every tensor is contiguous); the CUDA emitter
// writes a grid-stride kernel with its own fixed-width types (NVRTC has no
// std headers). Both include the per-element math the eager kernels use
// (runtime/scalar_math.h, runtime/half.h), so compiled results match them.
#include <string>
#include <vector>

#include "backend/kernel_ir.h"

namespace thn {

enum class Target : uint8_t { Cpu, Cuda };

// The ABI of every generated kernel, host and device alike:
//   NAME(int64_t n, int32_t nd, const int64_t* sizes, void* const* data,
//        const int64_t* strides, const double* fscalars, const int64_t* iscalars,
//        int32_t flat, int64_t rn, int32_t rnd, int32_t wide)
// n elements over nd dims (contiguous dims merged); for a reduction, rn
// reduced elements over rnd >= 1 more dims (sizes[nd .. nd + rnd)); at most
// kMaxKernelDims in all. data: the loads' then the stores' pointers;
// strides: kMaxKernelDims per tensor, in elements (0 along the reduced dims
// for outer tensors); flat: every tensor is contiguous (index = i), never
// set for reductions; wide: 64-bit index arithmetic is needed
// (needs_wide_index; CUDA kernels index in 32 bits otherwise, host kernels
// always in 64). On CUDA the arrays live in a by-value struct argument,
// with `mode` choosing a reduction's strategy (0: a block per output
// element, 1: a thread per output element).
std::string render_kernels(const std::vector<Kernel>& kernels, Target target, bool prelude = true);

}  // namespace thn
