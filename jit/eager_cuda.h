#pragma once
// Eager ops on CUDA tensors as one-op fusions. An op the runtime is asked to
// run on CUDA tensors (runtime/op_registry.h's CUDA path) is traced as a
// one-op function, through the jit's own cache (jit/trace_cache.h: the
// prologue decides reuse, numbers stay symbolic so `x * lr` keeps one
// kernel), lowered, fused and compiled by NVRTC; its kernels launch on the
// device. An op whose execution trace would still run a library step
// (matmul, cat, cumsum, ...) or that no trace can express (nonzero, lists of
// tensors, a planned `out`) runs on host copies (cuda::run_on_host), unless
// the runtime runs it with the backend's library kernels (op_registry.h's
// cuda_library: the index ops, cumsum, and ops built from copies).
namespace thn {

// Installs the handler and the library kernels (backend/cuda_library.h);
// `thn run` does unless --interpret, whose CUDA ops stay on the host copies
// as the reference.
void install_eager_cuda();

}  // namespace thn
