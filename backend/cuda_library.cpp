#include "backend/cuda_library.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "backend/codegen.h"
#include "backend/cuda.h"
#include "backend/kernel_ir.h"
#include "backend/prelude.h"
#include "runtime/cuda.h"
#include "runtime/error.h"

namespace thn {

namespace {

// The most dims a walk indexes after merging (as fusion kernels).
constexpr int kWalkDims = kMaxKernelDims;
// The threads of a block that shares one line (a power of two).
constexpr int kLineBlock = 256;

// The argument struct of the walk kernels, as the source declares it: every
// member 8 bytes, so host and device agree on the layout.
struct WalkArgs {
  uint64_t p[4];  // plain, indexed, index, values
  int64_t n, serial, dim_stride, has_index, has_values, nd, diagonal;
  int64_t alpha;  // ScatterAdd: alpha's bits in the compute type
  int64_t sst[3];
  int64_t sz[kWalkDims];
  int64_t st[3 * kWalkDims];
};

struct CheckArgs {
  uint64_t p[3];  // the indices, the first bad position (an unsigned 64-bit minimum), the offsets
  int64_t n, lo, size, stride, accumulate;
};

// cumsum's accumulator (runtime/reduce.cpp's cumsum_acc, PyTorch's CPU acc type).
const char* cumsum_acc(DType d) {
  switch (d) {
    case DType::Float16: case DType::BFloat16: return "float";
    case DType::Float32: case DType::Float64: return "double";
    default: return "int64_t";
  }
}

// Copies move bytes: one kernel per element size.
const char* bits_type(int64_t size) {
  switch (size) {
    case 1: return "uint8_t";
    case 2: return "uint16_t";
    case 4: return "uint32_t";
    default: return "uint64_t";
  }
}

std::string kernel_name(cuda::LineWalk::Kind kind, DType dtype) {
  using K = cuda::LineWalk::Kind;
  switch (kind) {
    case K::Gather: return fmt::format("thn_gather_{}", itemsize(dtype));
    case K::Scatter: return fmt::format("thn_scatter_{}", itemsize(dtype));
    case K::ScatterAdd: return fmt::format("thn_scatter_add_{}", dtype_short(dtype));
    case K::Cumsum: return fmt::format("thn_cumsum_{}", dtype_short(dtype));
    case K::ArgMax: return fmt::format("thn_argmax_{}", dtype_short(dtype));
    case K::ArgMin: return fmt::format("thn_argmin_{}", dtype_short(dtype));
    case K::ZeroAbove: return fmt::format("thn_zero_above_{}", itemsize(dtype));
    case K::ZeroBelow: return fmt::format("thn_zero_below_{}", itemsize(dtype));
  }
  throw std::logic_error("cuda library: unknown walk kind");
}

// A block per line: argmax/argmin of lines long enough to share (few lines,
// or lines contiguous in memory, which a block then reads together).
bool block_per_line(const cuda::LineWalk& w) {
  using K = cuda::LineWalk::Kind;
  const int64_t lines = numel_of(w.shape);
  return (w.kind == K::ArgMax || w.kind == K::ArgMin) && w.serial >= 128 &&
         (lines < 1024 || std::abs(w.serial_strides[0]) == 1);
}
std::string block_kernel_name(cuda::LineWalk::Kind kind, DType dtype) {
  return fmt::format("{}_lines_{}", kind == cuda::LineWalk::Kind::ArgMax ? "thn_argmax" : "thn_argmin", dtype_short(dtype));
}

const char* const kWalk = R"thn_src(
struct thn_walk_args {
  void* p[4];
  int64_t n, serial, dim_stride, has_index, has_values, nd, diagonal, alpha;
  int64_t sst[3];
  int64_t sz[THN_WALK_DIMS];
  int64_t st[3 * THN_WALK_DIMS];
};
// K: 0 gather (*P = *X), 1 scatter (*X = *P), 2 scatter-add (*X += alpha * *P),
// 3 cumsum (acc += *P; *X = acc), 4 argmax, 5 argmin, 6 zero above the
// diagonal (tril), 7 zero below it (triu); see runtime/cuda.h's LineWalk.
// Position i's element offsets in plain, indexed and index, and its last
// coordinate (tril/triu's row).
__device__ void thn_walk_at(const thn_walk_args& a, int64_t i, int64_t& op, int64_t& ox, int64_t& oi, int64_t& row) {
  int64_t r = i;
  op = ox = oi = row = 0;
  for (int d = int(a.nd) - 1; d >= 0; --d) {
    const int64_t c = r % a.sz[d];
    r /= a.sz[d];
    if (d == int(a.nd) - 1) row = c;
    op += c * a.st[d];
    ox += c * a.st[THN_WALK_DIMS + d];
    oi += c * a.st[2 * THN_WALK_DIMS + d];
  }
}
template <class S, class C, class A, int K>
__device__ void thn_walk(const thn_walk_args& a) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n; i += step) {
    int64_t op, ox, oi, row;
    thn_walk_at(a, i, op, ox, oi, row);
    S* p = (S*)a.p[0] + op;
    S* x = (S*)a.p[1] + ox;
    const int64_t* ix = (const int64_t*)a.p[2] + oi;
    if constexpr (K == 4 || K == 5) {
      C best = C(*p);
      int64_t at = 0;
      for (int64_t j = 0; j < a.serial; ++j) {
        const C v = C(p[j * a.sst[0]]);
        if (K == 4 ? !(v <= best) : !(v >= best)) {
          best = v;
          at = j;
          if (v != v) break;
        }
      }
      *((int64_t*)a.p[1] + ox) = at;
      if (a.has_values) *((S*)a.p[3] + oi) = S(best);
      continue;
    }
    if constexpr (K == 6 || K == 7) {
      for (int64_t j = 0; j < a.serial; ++j)
        if (K == 6 ? j > row + a.diagonal : j < row + a.diagonal) x[j * a.sst[1]] = S(0);
      continue;
    }
    A acc = A(0);
    for (int64_t j = 0; j < a.serial; ++j) {
      S* pj = p + j * a.sst[0];
      S* xj = a.has_index ? x + ix[j * a.sst[2]] * a.dim_stride : x + j * a.sst[1];
      if constexpr (K == 0) {
        *pj = *xj;
      } else if constexpr (K == 1) {
        *xj = *pj;
      } else if constexpr (K == 2) {
        const C alpha = *(const C*)&a.alpha;
        *xj = thn::thn_index_add(*xj, *pj, alpha);
      } else {
        acc += A(C(*pj));
        *xj = S(C(acc));
      }
    }
  }
}
// argmax/argmin of long lines: a block per line, its threads striding
// along it, then a tree in shared memory. (value, position) pairs combine so
// that the result is the walk's in order: the first NaN, else the first
// extreme (position -1: none yet).
template <class C, int K>
__device__ bool thn_arg_better(C v, int64_t j, C best, int64_t at) {
  if (j < 0) return false;
  if (at < 0) return true;
  const bool v_nan = v != v, best_nan = best != best;
  if (v_nan || best_nan) return v_nan && (!best_nan || j < at);
  if (K == 4 ? v > best : v < best) return true;
  return v == best && j < at;
}
template <class S, class C, int K>
__device__ void thn_arg_block(const thn_walk_args& a) {
  __shared__ C value[THN_LINE_BLOCK];
  __shared__ int64_t position[THN_LINE_BLOCK];
  const unsigned t = threadIdx.x;
  for (int64_t line = blockIdx.x; line < a.n; line += gridDim.x) {
    int64_t op, ox, oi, row;
    thn_walk_at(a, line, op, ox, oi, row);
    const S* p = (const S*)a.p[0] + op;
    C best = C(0);
    int64_t at = -1;
    for (int64_t j = t; j < a.serial; j += blockDim.x) {
      const C v = C(p[j * a.sst[0]]);
      if (thn_arg_better<C, K>(v, j, best, at)) {
        best = v;
        at = j;
        if (v != v) break;
      }
    }
    value[t] = best;
    position[t] = at;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (t < s && thn_arg_better<C, K>(value[t + s], position[t + s], value[t], position[t])) {
        value[t] = value[t + s];
        position[t] = position[t + s];
      }
      __syncthreads();
    }
    if (t == 0) {
      *((int64_t*)a.p[1] + ox) = position[0];
      if (a.has_values) *((S*)a.p[3] + oi) = S(value[0]);
    }
    __syncthreads();
  }
}
struct thn_index_check_args {
  void* p[3];
  int64_t n, lo, size, stride, accumulate;
};
// The first position (in order) of an index outside [lo, size); with
// offsets, each in-range index's element offset stored or added there.
extern "C" __global__ void thn_index_check(const thn_index_check_args a) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  const int64_t* ix = (const int64_t*)a.p[0];
  int64_t* offsets = (int64_t*)a.p[2];
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n; i += step) {
    const int64_t v = ix[i];
    if (v < a.lo || v >= a.size) {
      atomicMin((unsigned long long*)a.p[1], (unsigned long long)i);
    } else if (offsets) {
      const int64_t e = (v < 0 ? v + a.size : v) * a.stride;
      offsets[i] = a.accumulate ? offsets[i] + e : e;
    }
  }
}
)thn_src";

std::string render_library() {
  std::string s = cuda_prelude();
  s += fmt::format("#define THN_WALK_DIMS {}\n#define THN_LINE_BLOCK {}\n", kWalkDims, kLineBlock);
  s += kWalk;
  // Each kernel's struct is NAME_args (the stand-in driver reads the
  // arguments by that name).
  auto kernel = [&](const std::string& name, const std::string& types, int kind) {
    s += fmt::format("typedef thn_walk_args {0}_args;\nextern \"C\" __global__ void {0}(const {0}_args a) {{ thn_walk<{1}, {2}>(a); }}\n",
                     name, types, kind);
  };
  for (int64_t size : {1, 2, 4, 8}) {
    const char* b = bits_type(size);
    kernel(fmt::format("thn_gather_{}", size), fmt::format("{0}, {0}, {0}", b), 0);
    kernel(fmt::format("thn_scatter_{}", size), fmt::format("{0}, {0}, {0}", b), 1);
    kernel(fmt::format("thn_zero_above_{}", size), fmt::format("{0}, {0}, {0}", b), 6);
    kernel(fmt::format("thn_zero_below_{}", size), fmt::format("{0}, {0}, {0}", b), 7);
  }
  for (int i = 0; i < kNumDTypes; ++i) {  // typed kernels: storage, compute, accumulator types
    const DType d = DType(i);
    const std::string st = kernel_storage_type(d), ct = kernel_compute_type(d);
    kernel(fmt::format("thn_scatter_add_{}", dtype_short(d)), fmt::format("{}, {}, {}", st, ct, ct), 2);
    kernel(fmt::format("thn_cumsum_{}", dtype_short(d)), fmt::format("{}, {}, {}", st, ct, cumsum_acc(d)), 3);
    kernel(fmt::format("thn_argmax_{}", dtype_short(d)), fmt::format("{}, {}, {}", st, ct, ct), 4);
    kernel(fmt::format("thn_argmin_{}", dtype_short(d)), fmt::format("{}, {}, {}", st, ct, ct), 5);
    for (int k : {4, 5})
      s += fmt::format("typedef thn_walk_args {0}_args;\nextern \"C\" __global__ void {0}(const {0}_args a) {{ "
                       "thn_arg_block<{1}, {2}, {3}>(a); }}\n",
                       block_kernel_name(k == 4 ? cuda::LineWalk::Kind::ArgMax : cuda::LineWalk::Kind::ArgMin, d), st,
                       ct, k);
  }
  return s;
}

// The library's module, compiled and loaded on first use; its functions by name.
cuda::CUfunction function(const std::string& name) {
  static std::mutex mu;
  static cuda::CUmodule module = nullptr;
  static auto& functions = *new std::unordered_map<std::string, cuda::CUfunction>;
  std::lock_guard<std::mutex> lock(mu);
  if (!module) module = load_module(nvrtc_compile(cuda_library_source(), cuda::device_info().arch()));
  cuda::CUfunction& f = functions[name];
  if (!f) cuda::check(cuda::driver().cuModuleGetFunction(&f, module, name.c_str()), "cuModuleGetFunction");
  return f;
}

// `n` threads (a grid-stride loop past 8 blocks per multiprocessor), or
// with `per_line` a block of kLineBlock threads for each of `n` lines.
template <class Args>
void launch(const std::string& name, Args& args, int64_t n, bool per_line = false) {
  const int64_t block = per_line ? kLineBlock : 256;
  const int64_t blocks = per_line ? n : (n + block - 1) / block;
  const int64_t grid = std::clamp<int64_t>(blocks, 1, int64_t(cuda::device_info().multiprocessors) * 8);
  void* params[] = {&args};
  cuda::check(cuda::driver().cuLaunchKernel(function(name), unsigned(grid), 1, 1, unsigned(block), 1, 1, 0, nullptr,
                                            params, nullptr),
              "cuLaunchKernel");
}

void walk(const cuda::LineWalk& w) {
  if (w.shape.size() > size_t(kWalkDims))
    fail("this op's CUDA kernel would index {} dims (after merging); it indexes at most {}", w.shape.size(), kWalkDims);
  WalkArgs a{};
  a.p[0] = w.plain;
  a.p[1] = w.indexed;
  a.p[2] = w.index;
  a.p[3] = w.values;
  a.n = numel_of(w.shape);
  a.serial = w.serial;
  a.dim_stride = w.dim_stride;
  a.has_index = w.index != 0;
  a.has_values = w.values != 0;
  a.nd = int64_t(w.shape.size());
  a.diagonal = w.diagonal;
  std::copy(w.serial_strides.begin(), w.serial_strides.end(), a.sst);
  std::copy(w.shape.begin(), w.shape.end(), a.sz);
  for (size_t t = 0; t < 3; ++t) std::copy(w.strides[t].begin(), w.strides[t].end(), a.st + t * kWalkDims);
  if (w.kind == cuda::LineWalk::Kind::ScatterAdd)
    dispatch_dtype(w.dtype, [&]<class S>() {
      const compute_t<S> alpha = w.alpha.to<compute_t<S>>();
      std::memcpy(&a.alpha, &alpha, sizeof alpha);
    });
  if (a.n == 0 || a.serial == 0) return;
  if (block_per_line(w)) return launch(block_kernel_name(w.kind, w.dtype), a, a.n, true);
  launch(kernel_name(w.kind, w.dtype), a, a.n);
}

std::optional<int64_t> check_index(const cuda::IndexCheck& c) {
  if (c.n == 0) return std::nullopt;
  cuda::ScratchBlock block(8);
  const cuda::CUdeviceptr first = block.get();
  uint64_t none = ~uint64_t(0), pos = none;
  cuda::copy_to_device(first, &none, 8);
  CheckArgs a{{c.index, first, c.offsets}, c.n, c.negative ? -c.size : 0, c.size, c.stride, c.accumulate};
  launch("thn_index_check", a, c.n);
  cuda::copy_to_host(&pos, first, 8);  // waits for the kernel
  if (pos == none) return std::nullopt;
  int64_t value = 0;
  cuda::copy_to_host(&value, c.index + pos * 8, 8);
  return value;
}

}  // namespace

const std::string& cuda_library_source() {
  static const std::string s = render_library();
  return s;
}

void install_cuda_library() {
  static const cuda::LibraryKernels kernels{walk, check_index};
  cuda::set_library_kernels(&kernels);
}

}  // namespace thn
