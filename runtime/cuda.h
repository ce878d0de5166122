#pragma once
// The CUDA side of the runtime: the driver API loaded at run time, device 0's
// primary context, a caching device allocator, and host/device copies.
//
// libcuda is opened with dlopen (`$THN_LIBCUDA`, else libcuda.so.1) and its
// entry points are resolved with cuGetProcAddress, so thn starts on machines
// without a driver and says why CUDA is unavailable when a CUDA tensor is
// asked for. The few driver types used are declared here (the toolkit's
// headers are not needed to build the runtime).
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "runtime/ivalue.h"
#include "runtime/op_registry.h"
#include "runtime/tensor.h"

namespace thn::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
constexpr CUresult kSuccess = 0, kOutOfMemory = 2, kNotFound = 500;

// The entry points thn uses, as cuGetProcAddress returns them.
struct Driver {
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void**, void**) = nullptr;
};

struct DeviceInfo {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  int64_t memory_bytes = 0;
  double peak_gbps = 0;  // 2 x memory clock x bus width (DDR), from the attributes
  int driver_version = 0;
  std::string arch() const;  // "sm_90"
};

// Whether a GPU can be used; `why` says why not (no driver, no device, ...).
bool available(std::string* why = nullptr);
// The driver with device 0's primary context current on this thread; a
// RuntimeError "CUDA is not available: <why>" otherwise.
const Driver& driver();
const DeviceInfo& device_info();
// A RuntimeError naming `what` and the driver's message when r fails.
void check(CUresult r, const char* what);
// The driver's message for r ("... (error N)").
std::string error_text(CUresult r);

// Device memory in blocks cached for reuse: a freed block goes back to a free
// list and serves the next request of its rounded size; on out-of-memory the
// cache is returned to the device and the request retried. The raw
// allocation functions are parameters so that the policy is testable without
// a GPU.
class CachingAllocator {
 public:
  using RawAlloc = std::function<CUdeviceptr(size_t)>;  // 0 when out of memory
  using RawFree = std::function<void(CUdeviceptr)>;
  CachingAllocator(RawAlloc alloc, RawFree free) : raw_alloc_(std::move(alloc)), raw_free_(std::move(free)) {}
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  CUdeviceptr allocate(size_t nbytes);
  void release(CUdeviceptr p);
  void empty_cache();  // returns every cached block to the device

  struct Stats {
    int64_t device_allocations = 0;  // raw allocations made
    int64_t reuses = 0;              // requests served from the cache
    int64_t in_use_bytes = 0, cached_bytes = 0;
  };
  Stats stats() const;
  // The size a request is served with: 512-byte granules up to 1 MiB, 2 MiB above.
  static size_t round_size(size_t nbytes);

 private:
  void return_cache();  // empty_cache with mu_ held

  RawAlloc raw_alloc_;
  RawFree raw_free_;
  mutable std::mutex mu_;
  std::multimap<size_t, CUdeviceptr> free_;           // cached blocks by size
  std::unordered_map<CUdeviceptr, size_t> in_use_;  // live blocks and their size
  Stats stats_;
};

// The allocator of device 0 (its raw functions are the driver's).
CachingAllocator& allocator();

// A block of the allocator for one operation (a kernel's argument struct, a
// value read back), returned to the cache when it goes out of scope: later
// work on the one stream runs after the kernel that uses it.
class ScratchBlock {
 public:
  explicit ScratchBlock(size_t nbytes) : p_(allocator().allocate(nbytes)) {}
  ~ScratchBlock() { allocator().release(p_); }
  ScratchBlock(const ScratchBlock&) = delete;
  ScratchBlock& operator=(const ScratchBlock&) = delete;
  CUdeviceptr get() const { return p_; }

 private:
  CUdeviceptr p_;
};

// Copies between host and device memory (the driver's synchronous copies).
void copy_to_device(CUdeviceptr dst, const void* src, size_t nbytes);
// The copies made so far through the driver: host to device, device to host.
struct CopyCounts {
  int64_t to_device = 0, to_host = 0;
};
CopyCounts copy_counts();
void copy_to_host(void* dst, CUdeviceptr src, size_t nbytes);

// x on `device`: the same values, a new storage unless x is there already.
// A dense tensor keeps its strides (PyTorch's preserve_format); any other
// layout arrives contiguous.
Tensor to_device(const Tensor& x, Device device);

// Host copies of CUDA tensors, for work without a CUDA kernel: each CUDA
// storage is copied to the host whole, once, so that views of one storage
// still share it; write_back copies the storages that changed back.
class HostMirror {
 public:
  Tensor host(const Tensor& t);  // t on the host (t itself when on the CPU)
  IValue host(const IValue& v);  // tensors mirrored, CUDA devices made the CPU
  // A result on the device: a view of a mirrored storage as the same view of
  // the device one, a new tensor copied over.
  IValue device(const IValue& v);
  void write_back();

 private:
  struct Mirror {
    std::shared_ptr<Storage> device, host;
    std::string before;  // the bytes as copied
  };
  std::map<const Storage*, Mirror> mirrors_;
};

// A batch of row-major products C[i] = A[i] B[i] (+ C[i] when accumulating)
// for cuBLAS (runtime/cublas.cpp): A [m, k], B [k, n], C [m, n] contiguous,
// each operand read as stored (ld: its row stride) or, with `trans`, as the
// transpose of what it stores (ld: its column stride).
struct Gemm {
  struct Operand {
    uint64_t address = 0;
    bool trans = false;
    int64_t ld = 0, batch_stride = 0;
  };
  DType dtype;
  int64_t batch = 0, m = 0, n = 0, k = 0;
  Operand a, b;
  uint64_t c = 0;
  bool accumulate = false;
};
void gemm(const Gemm& g);

// Runs `f` on host mirrors of the CUDA tensors of `a` (its arguments and
// `out`), writes back what it changed and brings its results to the device.
IValue run_on_host(const Args& a, const std::function<IValue(const Args&)>& f);

// ---- library kernels ---------------------------------------------------------

// The loop of the runtime's index ops, the scans (cumsum, ...), argmax-like reductions and
// tril/triu (runtime/copy.cpp, runtime/reduce.cpp) on device memory: per
// position of `shape` (in parallel), `serial` steps along one more dim,
// with the result of taking them in order (the kernels may share a long
// line among threads: backend/cuda_library.h). At step j,
//   P = plain + plain's offset + j * serial_strides[0]
//   X = indexed + indexed's offset + (index ? index[index's offset +
//       j * serial_strides[2]] * dim_stride : j * serial_strides[1])
// and the kind says what happens:
//   Gather: *P = *X      Scatter: *X = *P      ScatterAdd: *X += alpha * *P
//   Cumsum, Cumprod, LogCumSumExp: acc = acc + *P (* *P, log(exp(acc) +
//     exp(*P))); *X = acc (acc per position, in the CPU's acc type).
//   CumMax, CumMin: *X = the running extreme (the last of equal ones; a NaN
//     stays), its j to `values` (int64, at X's offset: out's strides).
//   ArgMax, ArgMin: the first j where *P is the line's extreme (a NaN wins
//     and ends the line) goes to indexed (int64, its offset), the extreme's
//     value to `values` (when set, its offset by index's strides).
//   ZeroAbove, ZeroBelow (tril, triu): *X = 0 where j > row + diagonal
//     (j < row + diagonal), row being the position's last coordinate
//     (`shape` is then not merged: its last dim is the rows).
// Strides in elements; index is int64 and in range (checked before).
struct LineWalk {
  enum class Kind : uint8_t {
    Gather, Scatter, ScatterAdd, Cumsum, ArgMax, ArgMin, ZeroAbove, ZeroBelow, Cumprod, LogCumSumExp, CumMax, CumMin
  };
  Kind kind = Kind::Gather;
  DType dtype = DType::Float32;
  Dims shape;
  std::array<Dims, 3> strides;  // plain, indexed, index over shape
  int64_t serial = 1;
  std::array<int64_t, 3> serial_strides{};
  int64_t dim_stride = 0;
  CUdeviceptr plain = 0, indexed = 0, index = 0, values = 0;  // index, values 0: none
  Scalar alpha;
  int64_t diagonal = 0;
};

// The range check of `n` contiguous int64 indices at `index`: each must lie
// in [0, size), or in [-size, size) when `negative` (Python's wrap-around).
// With `offsets` set (n int64s) each in-range index also gives its element
// offset, (index < 0 ? index + size : index) * stride, which is stored or,
// with `accumulate`, added (advanced indexing sums one per indexed dim).
struct IndexCheck {
  CUdeviceptr index = 0;
  int64_t n = 0, size = 0;
  bool negative = false;
  CUdeviceptr offsets = 0;
  int64_t stride = 1;
  bool accumulate = false;
};

// The kernels of the library ops that are not fusions, compiled by the
// CUDA backend (backend/cuda_library.h), which installs them.
struct LibraryKernels {
  void (*walk)(const LineWalk&) = nullptr;
  // Runs the check (a kernel and a synchronisation): the first index out
  // of range, in order, or nullopt when all are in range.
  std::optional<int64_t> (*check_index)(const IndexCheck&) = nullptr;
};
void set_library_kernels(const LibraryKernels* k);
// The installed kernels, or null (then ops needing them run on host copies).
const LibraryKernels* library_kernels();
// A walk over the positions `shape` with per-operand strides (plain,
// indexed, index), dims of size 1 dropped and contiguous ones merged
// (runtime/loops.h's plan_loop); the caller sets the serial dim and the
// addresses.
LineWalk plan_walk(LineWalk::Kind kind, DType dtype, const Dims& shape, const std::array<Dims, 3>& strides);
// Runs w with the installed kernels (a logic_error without them: the op
// registry sends ops here only where they are installed).
void launch_walk(const LineWalk& w);
std::optional<int64_t> check_index(const IndexCheck& c);

}  // namespace thn::cuda
