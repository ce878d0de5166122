// cuBLAS for matmul on CUDA tensors: the library opened with dlopen
// (`$THN_LIBCUBLAS`, else the toolkit's found at build time, else
// libcublas.so) on first use, one handle on the legacy default stream (the
// stream thn's kernels and copies use, so no synchronisation is needed).
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "runtime/cuda.h"
#include "runtime/error.h"

#ifndef THN_CUBLAS_PATH
#define THN_CUBLAS_PATH ""
#endif

namespace thn::cuda {

namespace {

// The cuBLAS values used (cublas_api.h, library_types.h).
constexpr int kOpN = 0, kOpT = 1;
constexpr int kR16F = 2, kR16BF = 14, kR32F = 0, kR64F = 1;
constexpr int kCompute32F = 68, kCompute64F = 70;
constexpr int kGemmDefault = -1;

struct Cublas {
  void* handle = nullptr;
  int (*gemm)(void*, int, int, int, int, int, const void*, const void*, int, int, long long, const void*, int, int,
              long long, const void*, void*, int, int, long long, int, int, int) = nullptr;
  const char* (*status_string)(int) = nullptr;
  std::string why;  // why it cannot be used
};

const Cublas& cublas() {
  static Cublas c = [] {
    Cublas c;
    const char* env = std::getenv("THN_LIBCUBLAS");
    std::string tried;
    void* h = nullptr;
    for (std::string path : {std::string(env ? env : ""), std::string(THN_CUBLAS_PATH), std::string("libcublas.so")}) {
      if (path.empty()) continue;
      if ((h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
      const char* e = dlerror();
      tried += fmt::format("\n  {}: {}", path, e ? e : "not loaded");
    }
    if (!h) {
      c.why = "cuBLAS could not be loaded (set THN_LIBCUBLAS to libcublas.so):" + tried;
      return c;
    }
    auto create = reinterpret_cast<int (*)(void**)>(dlsym(h, "cublasCreate_v2"));
    c.gemm = reinterpret_cast<decltype(c.gemm)>(dlsym(h, "cublasGemmStridedBatchedEx"));
    c.status_string = reinterpret_cast<decltype(c.status_string)>(dlsym(h, "cublasGetStatusString"));
    if (!create || !c.gemm) {
      c.why = "the cuBLAS library has no cublasCreate_v2 or cublasGemmStridedBatchedEx";
      return c;
    }
    driver();  // the primary context, which cuBLAS shares
    if (int r = create(&c.handle); r != 0)
      c.why = fmt::format("cuBLAS could not start: cublasCreate failed ({})",
                          c.status_string ? c.status_string(r) : fmt::format("status {}", r));
    return c;
  }();
  if (!c.why.empty()) fail("{}", c.why);
  return c;
}

}  // namespace

void gemm(const Gemm& g) {
  const Cublas& c = cublas();
  for (int64_t v : {g.batch, g.m, g.n, g.k, g.a.ld, g.b.ld})
    THN_CHECK(v <= INT32_MAX, "cuBLAS: a product with a size or stride of {} (over 2^31) is not supported", v);
  int type = 0, compute = kCompute32F;
  switch (g.dtype) {
    case DType::Float32: type = kR32F; break;
    case DType::Float64: type = kR64F, compute = kCompute64F; break;
    case DType::Float16: type = kR16F; break;
    case DType::BFloat16: type = kR16BF; break;
    default: fail("cuBLAS: no matmul for {}", dtype_name(g.dtype));
  }
  const float one32 = 1, beta32 = g.accumulate ? 1.f : 0.f;
  const double one64 = 1, beta64 = g.accumulate ? 1.0 : 0.0;
  const bool f64 = compute == kCompute64F;
  const void* alpha = f64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = f64 ? static_cast<const void*>(&beta64) : &beta32;
  // Row-major C = A B is column-major C^T = B^T A^T: the operands swap, and
  // a matrix stored as it is read (trans = false) is column-major's transpose.
  auto void_ptr = [](uint64_t p) { return reinterpret_cast<void*>(p); };
  int r = c.gemm(c.handle, g.b.trans ? kOpT : kOpN, g.a.trans ? kOpT : kOpN, int(g.n), int(g.m), int(g.k), alpha,
                 void_ptr(g.b.address), type, int(g.b.ld), g.b.batch_stride, void_ptr(g.a.address), type, int(g.a.ld),
                 g.a.batch_stride, beta, void_ptr(g.c), type, int(g.n), g.m * g.n, int(g.batch), compute, kGemmDefault);
  if (r != 0)
    fail("cuBLAS: cublasGemmStridedBatchedEx failed: {}", c.status_string ? c.status_string(r) : fmt::format("status {}", r));
}

}  // namespace thn::cuda
