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
  uint64_t p[4];  // plain, indexed, index, values (a line scan: its chunks' sums)
  int64_t n, serial, dim_stride, has_index, has_values, nd, diagonal;
  int64_t alpha;  // ScatterAdd: alpha's bits in the compute type
  int64_t chunk;  // a line scan: the elements of a line one block scans
  int64_t slots;  // a scatter at once: its hash table's slots
  int64_t sst[3];
  int64_t sz[kWalkDims];
  int64_t st[3 * kWalkDims];
};

struct CheckArgs {
  uint64_t p[3];  // the indices, the first bad position (an unsigned 64-bit minimum), the offsets
  int64_t n, lo, size, stride, accumulate;
};

// The scans' accumulator (runtime/reduce.cpp's scan_acc, PyTorch's CPU acc type).
const char* scan_acc(DType d) {
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
    case K::Cumprod: return fmt::format("thn_cumprod_{}", dtype_short(dtype));
    case K::LogCumSumExp: return fmt::format("thn_logcumsumexp_{}", dtype_short(dtype));
    case K::CumMax: return fmt::format("thn_cummax_{}", dtype_short(dtype));
    case K::CumMin: return fmt::format("thn_cummin_{}", dtype_short(dtype));
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

// The scans whose step is associative (cumsum, cumprod, logcumsumexp)
// scan a line with blocks when the lines are long and few, or contiguous
// in memory (a thread per line would then read apart).
bool is_scan(cuda::LineWalk::Kind k) {
  using K = cuda::LineWalk::Kind;
  return k == K::Cumsum || k == K::Cumprod || k == K::LogCumSumExp;
}
bool scan_lines(const cuda::LineWalk& w) {
  const int64_t lines = numel_of(w.shape);
  return is_scan(w.kind) && w.serial >= 2 * kLineBlock && (lines < 1024 || std::abs(w.serial_strides[0]) == 1);
}
// A scan's kernels: thn_cumsum_scan_f32, thn_cumprod_carry_i64, ...
std::string scan_kernel_name(cuda::LineWalk::Kind kind, std::string_view part, DType dtype) {
  const std::string whole = kernel_name(kind, dtype);
  const size_t cut = whole.rfind('_');
  return fmt::format("{}_{}{}", whole.substr(0, cut), part, whole.substr(cut));
}

const char* const kWalk = R"thn_src(
struct thn_walk_args {
  void* p[4];
  int64_t n, serial, dim_stride, has_index, has_values, nd, diagonal, alpha, chunk, slots;
  int64_t sst[3];
  int64_t sz[THN_WALK_DIMS];
  int64_t st[3 * THN_WALK_DIMS];
};
// K: 0 gather (*P = *X), 1 scatter (*X = *P), 2 scatter-add (*X += alpha * *P),
// 3 cumsum (acc += *P; *X = acc), 4 argmax, 5 argmin, 6 zero above the
// diagonal (tril), 7 zero below it (triu), 8 cumprod, 9 logcumsumexp, 10
// cummax, 11 cummin; see runtime/cuda.h's LineWalk.
// The associative scans' step and its identity: 3 sum, 8 product, 9 log-sum-exp.
template <class A, int K>
__device__ A thn_scan_identity() {
  if constexpr (K == 9) return A(-thn_inf());
  else if constexpr (K == 8) return A(1);
  else return A(0);
}
template <int K, class A>
__device__ A thn_scan_step(A acc, A v) {
  if constexpr (K == 9) return thn::thn_log_cum_add(acc, v);
  else if constexpr (K == 8) return acc * v;
  else return acc + v;
}
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
    if constexpr (K == 10 || K == 11) {
      int64_t* position = (int64_t*)a.p[3] + ox;
      C best = C(*p);
      int64_t at = 0;
      for (int64_t j = 0; j < a.serial; ++j) {
        const C v = C(p[j * a.sst[0]]);
        if (v != v || (best == best && (K == 10 ? v >= best : v <= best))) {
          best = v;
          at = j;
        }
        x[j * a.sst[1]] = S(best);
        position[j * a.sst[1]] = at;
      }
      continue;
    }
    A acc = thn_scan_identity<A, K>();
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
        acc = thn_scan_step<K>(acc, A(C(*pj)));
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
// A scan (K: 3, 8, 9) of long lines: blocks scan chunks of `a.chunk`
// elements, a line's chunks numbered from line * chunks. With more than one
// chunk per line, thn_cumsum_sums writes each chunk's total to p[3] and
// thn_cumsum_carry (a thread per line) turns a line's totals into exclusive
// prefixes, the carry into each chunk; thn_cumsum_scan then scans each chunk
// from its carry, a tile of blockDim.x elements at a time (a scan in shared
// memory). (thn_cumprod_*, thn_logcumsumexp_*: the same with their step.)
__device__ int64_t thn_chunks(const thn_walk_args& a) { return (a.serial + a.chunk - 1) / a.chunk; }
template <class A, int K>
__device__ void thn_scan_carry(const thn_walk_args& a) {
  const int64_t chunks = thn_chunks(a), step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t line = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; line < a.n; line += step) {
    A* s = (A*)a.p[3] + line * chunks;
    A acc = thn_scan_identity<A, K>();
    for (int64_t c = 0; c < chunks; ++c) {
      const A v = s[c];
      s[c] = acc;
      acc = thn_scan_step<K>(acc, v);
    }
  }
}
// SCAN false: thn_cumsum_sums; true: thn_cumsum_scan.
template <class S, class C, class A, int K, bool SCAN>
__device__ void thn_scan_chunks(const thn_walk_args& a) {
  __shared__ A part[THN_LINE_BLOCK];
  const unsigned t = threadIdx.x;
  const int64_t chunks = thn_chunks(a);
  for (int64_t b = blockIdx.x; b < a.n * chunks; b += gridDim.x) {
    int64_t op, ox, oi, row;
    thn_walk_at(a, b / chunks, op, ox, oi, row);
    const S* p = (const S*)a.p[0] + op;
    const int64_t begin = b % chunks * a.chunk, end = begin + a.chunk < a.serial ? begin + a.chunk : a.serial;
    if constexpr (!SCAN) {
      A s = thn_scan_identity<A, K>();
      for (int64_t j = begin + t; j < end; j += blockDim.x) s = thn_scan_step<K>(s, A(C(p[j * a.sst[0]])));
      part[t] = s;
      __syncthreads();
      for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
        if (t < h) part[t] = thn_scan_step<K>(part[t], part[t + h]);
        __syncthreads();
      }
      if (t == 0) ((A*)a.p[3])[b] = part[0];
      __syncthreads();
      continue;
    }
    S* x = (S*)a.p[1] + ox;
    A carry = a.p[3] ? ((const A*)a.p[3])[b] : thn_scan_identity<A, K>();
    for (int64_t base = begin; base < end; base += blockDim.x) {
      const int64_t j = base + t;
      part[t] = j < end ? A(C(p[j * a.sst[0]])) : thn_scan_identity<A, K>();
      __syncthreads();
      for (unsigned d = 1; d < blockDim.x; d <<= 1) {
        const A add = t >= d ? part[t - d] : thn_scan_identity<A, K>();
        __syncthreads();
        part[t] = thn_scan_step<K>(add, part[t]);
        __syncthreads();
      }
      if (j < end) x[j * a.sst[1]] = S(C(thn_scan_step<K>(carry, part[t])));
      carry = thn_scan_step<K>(carry, part[blockDim.x - 1]);
      __syncthreads();
    }
  }
}
// A scatter whose index is the same for every line, all positions at
// once: of duplicate indices the last position wins, as on the CPU. p[3] is
// a hash table of a.slots slots (a power of two): the keys (indices), each
// key's winning position + 1, then each position's slot. It is cleared,
// claimed (each index inserted, its latest position kept by atomicMax), and
// the winners write.
__device__ unsigned long long* thn_keys(const thn_walk_args& a) { return (unsigned long long*)a.p[3]; }
__device__ unsigned* thn_wins(const thn_walk_args& a) { return (unsigned*)(thn_keys(a) + a.slots); }
__device__ unsigned* thn_slot_of(const thn_walk_args& a) { return thn_wins(a) + a.slots; }
__device__ void thn_scatter_clear(const thn_walk_args& a) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.slots; i += step) {
    thn_keys(a)[i] = ~0ull;
    thn_wins(a)[i] = 0;
  }
}
__device__ void thn_scatter_claim(const thn_walk_args& a) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  const unsigned long long mask = (unsigned long long)a.slots - 1;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < a.serial; j += step) {
    const unsigned long long k = (unsigned long long)((const int64_t*)a.p[2])[j * a.sst[2]];
    unsigned long long h = (k * 0x9e3779b97f4a7c15ull >> 29) & mask;
    for (;;) {
      const unsigned long long was = atomicCAS(thn_keys(a) + h, ~0ull, k);
      if (was == ~0ull || was == k) break;
      h = (h + 1) & mask;
    }
    atomicMax(thn_wins(a) + h, unsigned(j + 1));
    thn_slot_of(a)[j] = unsigned(h);
  }
}
template <class S>
__device__ void thn_scatter_won(const thn_walk_args& a) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n * a.serial; i += step) {
    const int64_t j = i % a.serial;
    if (thn_wins(a)[thn_slot_of(a)[j]] != unsigned(j + 1)) continue;
    int64_t op, ox, oi, row;
    thn_walk_at(a, i / a.serial, op, ox, oi, row);
    ((S*)a.p[1])[ox + ((const int64_t*)a.p[2])[j * a.sst[2]] * a.dim_stride] = ((const S*)a.p[0])[op + j * a.sst[0]];
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
  // arguments by that name); `body` is the device function it calls.
  auto entry = [&](const std::string& name, const std::string& body) {
    s += fmt::format("typedef thn_walk_args {0}_args;\nextern \"C\" __global__ void {0}(const {0}_args a) {{ {1}(a); }}\n",
                     name, body);
  };
  auto kernel = [&](const std::string& name, const std::string& types, int kind) {
    entry(name, fmt::format("thn_walk<{}, {}>", types, kind));
  };
  entry("thn_scatter_clear_slots", "thn_scatter_clear");
  entry("thn_scatter_claim_slots", "thn_scatter_claim");
  for (int64_t size : {1, 2, 4, 8}) {
    const char* b = bits_type(size);
    kernel(fmt::format("thn_gather_{}", size), fmt::format("{0}, {0}, {0}", b), 0);
    kernel(fmt::format("thn_scatter_{}", size), fmt::format("{0}, {0}, {0}", b), 1);
    entry(fmt::format("thn_scatter_won_{}", size), fmt::format("thn_scatter_won<{}>", b));
    kernel(fmt::format("thn_zero_above_{}", size), fmt::format("{0}, {0}, {0}", b), 6);
    kernel(fmt::format("thn_zero_below_{}", size), fmt::format("{0}, {0}, {0}", b), 7);
  }
  for (int i = 0; i < kNumDTypes; ++i) {  // typed kernels: storage, compute, accumulator types
    const DType d = DType(i);
    const std::string st = kernel_storage_type(d), ct = kernel_compute_type(d);
    kernel(fmt::format("thn_scatter_add_{}", dtype_short(d)), fmt::format("{}, {}, {}", st, ct, ct), 2);
    // The scans, in the CPU's acc type (logcumsumexp: floating only).
    using K = cuda::LineWalk::Kind;
    for (K kind : {K::Cumsum, K::Cumprod, K::LogCumSumExp}) {
      if (kind == K::LogCumSumExp && !is_floating(d)) continue;
      const std::string acc = scan_acc(d), types = fmt::format("{}, {}, {}", st, ct, acc);
      const int k = int(kind);
      kernel(kernel_name(kind, d), types, k);
      for (bool scan : {false, true})
        entry(scan_kernel_name(kind, scan ? "scan" : "sums", d), fmt::format("thn_scan_chunks<{}, {}, {}>", types, k, scan));
      entry(scan_kernel_name(kind, "carry", d), fmt::format("thn_scan_carry<{}, {}>", acc, k));
    }
    kernel(kernel_name(K::CumMax, d), fmt::format("{}, {}, {}", st, ct, ct), int(K::CumMax));
    kernel(kernel_name(K::CumMin, d), fmt::format("{}, {}, {}", st, ct, ct), int(K::CumMin));
    kernel(fmt::format("thn_argmax_{}", dtype_short(d)), fmt::format("{}, {}, {}", st, ct, ct), 4);
    kernel(fmt::format("thn_argmin_{}", dtype_short(d)), fmt::format("{}, {}, {}", st, ct, ct), 5);
    for (int k : {4, 5})
      entry(block_kernel_name(k == 4 ? cuda::LineWalk::Kind::ArgMax : cuda::LineWalk::Kind::ArgMin, d),
            fmt::format("thn_arg_block<{}, {}, {}>", st, ct, k));
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
  const cuda::CUresult r = cuda::driver().cuLaunchKernel(function(name), unsigned(grid), 1, 1, unsigned(block), 1, 1, 0,
                                                        nullptr, params, nullptr);
  if (r != 0) cuda::check(r, fmt::format("cuLaunchKernel ({})", name).c_str());
}

// A scan of long lines (scan_lines): a line is split into chunks of at
// least 4 tiles when the lines alone would leave the device's
// multiprocessors idle (4 blocks each); then three kernels: chunk totals,
// the carries into the chunks, the chunks' scans.
void scan(WalkArgs& a, cuda::LineWalk::Kind kind, DType dtype) {
  constexpr int64_t kMinChunk = 4 * kLineBlock;
  const int64_t blocks = int64_t(cuda::device_info().multiprocessors) * 4;
  const int64_t most = (a.serial + kMinChunk - 1) / kMinChunk;
  int64_t chunks = std::clamp<int64_t>(blocks / a.n, 1, most);
  a.chunk = (a.serial + chunks - 1) / chunks;
  a.chunk = (a.chunk + kLineBlock - 1) / kLineBlock * kLineBlock;
  chunks = (a.serial + a.chunk - 1) / a.chunk;
  if (chunks == 1) return launch(scan_kernel_name(kind, "scan", dtype), a, a.n, true);
  cuda::ScratchBlock sums(size_t(a.n * chunks) * 8);  // the accumulator: at most 8 bytes
  a.p[3] = sums.get();
  launch(scan_kernel_name(kind, "sums", dtype), a, a.n * chunks, true);
  launch(scan_kernel_name(kind, "carry", dtype), a, a.n);
  launch(scan_kernel_name(kind, "scan", dtype), a, a.n * chunks, true);
}

// A scatter whose index all lines share takes every position at once
// (the kernels above thn_scatter_won) where its index is long enough for a
// thread per line to be slow.
bool scatter_at_once(const cuda::LineWalk& w) {
  if (w.kind != cuda::LineWalk::Kind::Scatter || !w.index || w.serial < 16 || w.serial >= (int64_t(1) << 30))
    return false;
  for (size_t d = 0; d < w.shape.size(); ++d)
    if (w.shape[d] > 1 && w.strides[2][d] != 0) return false;
  return true;
}
void scatter(WalkArgs& a, int64_t size) {
  a.slots = 1;
  while (a.slots < 2 * a.serial) a.slots <<= 1;  // at most half full: short probes
  cuda::ScratchBlock table(size_t(a.slots * 12 + a.serial * 4));
  a.p[3] = table.get();
  launch("thn_scatter_clear_slots", a, a.slots);
  launch("thn_scatter_claim_slots", a, a.serial);
  launch(fmt::format("thn_scatter_won_{}", size), a, a.n * a.serial);
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
  if (scan_lines(w)) return scan(a, w.kind, w.dtype);
  if (scatter_at_once(w)) return scatter(a, itemsize(w.dtype));
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
