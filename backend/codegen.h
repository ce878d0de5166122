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
// for outer tensors); flat: every tensor is contiguous (index = i), or for
// a CUDA reduction along rows, 2 when every inner tensor's rows are
// aligned to its vector; wide: 64-bit index arithmetic is needed
// (needs_wide_index; CUDA kernels index in 32 bits otherwise, host kernels
// always in 64). On CUDA the arrays live in a by-value struct argument,
// with `mode` choosing a reduction's strategy (codegen_cuda.cpp), flat ==
// 2 choosing the vector path (vector_lanes), and the 64-bit body an entry
// of its own, NAME_wide. A kernel whose struct is over 4 KiB (the
// parameter limit before CUDA 12.1) also has NAME_by_pointer (and
// NAME_wide_by_pointer), taking the struct from device memory.
std::string render_kernels(const std::vector<Kernel>& kernels, Target target, bool prelude = true);

// The C type generated kernels compute a dtype in (float for float16 and
// bfloat16) and the one they store it as (thn::Half, ...).
std::string kernel_compute_type(DType d);
std::string kernel_storage_type(DType d);

// The most threads a CUDA kernel is launched with (its __launch_bounds__).
constexpr int kCudaBlock = 256;
// The rows or tiles a CUDA reduction may split over blocks or warps
// (modes 2 and 4): its workspace starts with one counter for each, then
// holds each reduction's part results, split_slot_bytes per row or tile
// and part (32 lanes of `lanes` accumulators of at most 8 bytes).
constexpr int kSplitCounters = 4096;
constexpr size_t split_slot_bytes(int lanes) { return size_t(256) * size_t(lanes); }

// The size of a CUDA kernel's argument struct (NAME_args), and whether it
// may be over the device's parameter limit (then NAME_by_pointer exists).
size_t kernel_argument_bytes(const Kernel& k);
// The smallest limit on kernel parameters a device has (before CUDA 12.1).
constexpr size_t kMinParameterBytes = 4096;
// The most any device takes (CUDA 12.1 on, Volta and newer): a kernel over
// it has the by-pointer entry only.
constexpr size_t kMaxParameterBytes = 32764;
inline bool has_by_pointer_entry(const Kernel& k) { return kernel_argument_bytes(k) > kMinParameterBytes; }
// A CUDA kernel's entries: a pointwise kernel's one; a reduction's one per
// strategy (mode 0: a block per output; 1: a thread per output; 2: a block
// per row; 3: a warp per row; 4, single-sweep kernels only: a warp per 32
// adjacent columns; 5, softmax's kernels only: a block per row too long for
// the row cache, the max and the sum of exp(x - max) folded in one sweep),
// NAME_m<mode>. Each has a 32-bit and a 64-bit (_wide) index form.
std::vector<int> cuda_entry_modes(const Kernel& k);
constexpr int kCudaModes = 6;
// The vectors of each row a thread of modes 2 and 3 keeps in registers
// (0: none; a vector is vector_lanes(k) elements).
int cuda_row_cache_vectors(const Kernel& k);
inline std::string cuda_entry_name(const Kernel& k, int mode, bool wide) {
  return k.name + (k.reduction ? "_m" + std::to_string(mode) : std::string()) + (wide ? "_wide" : "");
}

}  // namespace thn
