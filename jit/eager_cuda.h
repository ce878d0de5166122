#pragma once
// Eager ops on CUDA tensors as one-op fusions. An op the runtime is asked to
// run on CUDA tensors (runtime/op_registry.h's CUDA path) is traced as a
// one-op function, through the jit's own cache (jit/trace_cache.h: the
// prologue decides reuse, numbers stay symbolic so `x * lr` keeps one
// kernel), lowered, fused and compiled by NVRTC; its kernels launch on the
// device, as do library steps that run on the GPU themselves (cuBLAS, the
// backend's library kernels: op_registry.h's library_runs_on_cuda). Those
// library ops are run by the runtime directly, before this handler (the
// index ops, cumsum, argmax, tril, the ops built from copies). An op whose
// trace keeps any other library step (masked_select, ...) or that no trace
// can express (nonzero, lists of tensors) runs on host copies
// (cuda::run_on_host).
namespace thn {

// Installs the handler and the library kernels (backend/cuda_library.h);
// `thn run` does unless --interpret, whose CUDA ops stay on the host copies
// as the reference.
void install_eager_cuda();

}  // namespace thn
