#include "runtime/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "runtime/cuda.h"
#include "runtime/error.h"
#include <fmt/ranges.h>

namespace thn {

namespace {
// Eager ops allocate and free large buffers at a high rate. Keeping them in
// malloc's heap (not a fresh mmap each time) avoids a page fault per 4 KiB on
// every new tensor, which otherwise dominates cache-sized elementwise ops.
void tune_malloc_once() {
  static const bool done = [] {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    return true;
  }();
  (void)done;
}
}  // namespace

namespace {
// Freed host blocks of up to 1 MiB, kept by size for the next request of
// that size: a compiled step allocates the same few dozen buffers on every
// call, and malloc's free lists (splitting, coalescing) cost more than the
// small kernels between them. At most 32 MiB are kept; a block that would
// pass that empties the cache instead (malloc then has it all back).
class BlockCache {
 public:
  void* take(size_t n) {
    if (n > kLargest) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(n);
    if (it == blocks_.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    held_ -= n;
    return p;
  }
  void give(void* p, size_t n) {
    if (n > kLargest) return std::free(p);
    std::lock_guard<std::mutex> lock(mutex_);
    if (held_ + n > kHeld) {
      for (auto& [size, ps] : blocks_)
        for (void* q : ps) std::free(q);
      blocks_.clear();
      held_ = 0;
    }
    blocks_[n].push_back(p);
    held_ += n;
  }

 private:
  static constexpr size_t kLargest = size_t(1) << 20, kHeld = size_t(32) << 20;
  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> blocks_;
  size_t held_ = 0;
};

BlockCache& block_cache() {
  static BlockCache* c = new BlockCache();  // (never destroyed: storages may outlive static destruction)
  return *c;
}
}  // namespace

thread_local int64_t Storage::allocations_ = 0;
thread_local int64_t Storage::allocated_bytes_ = 0;
int64_t Storage::allocations() { return allocations_; }
int64_t Storage::allocated_bytes() { return allocated_bytes_; }
std::atomic<int64_t> Storage::live_bytes_{0};

namespace {
thread_local bool meta_scope = false;
}  // namespace

MetaScope::MetaScope() : previous_(meta_scope) { meta_scope = true; }
MetaScope::~MetaScope() { meta_scope = previous_; }
bool MetaScope::active() { return meta_scope; }

Storage::Storage(int64_t nbytes, Device device, bool meta) : nbytes_(nbytes), device_(device), meta_(meta) {
  if (meta) return;
  if (device.type == DeviceType::CUDA) {
    ++allocations_;
    allocated_bytes_ += nbytes;
    data_ = reinterpret_cast<void*>(uintptr_t(cuda::allocator().allocate(size_t(nbytes))));
    live_bytes_.fetch_add(nbytes, std::memory_order_relaxed);
    return;
  }
  allocate_host();
}

void Storage::allocate_host() {
  tune_malloc_once();
  // 64-byte alignment lets the compiler use aligned vector loads. The block
  // comes from plain malloc and is aligned here: a freed block is then
  // exactly what the next request of the same size takes back, whereas
  // aligned_alloc asks for a little more than it returned and so grows the
  // heap (faulting fresh pages in) on the first calls of a loop.
  size_t n = size_t(nbytes_) + 64;
  base_ = nbytes_ <= limit_ ? block_cache().take(n) : nullptr;
  if (!base_ && nbytes_ <= limit_) base_ = std::malloc(n);
  THN_CHECK(base_ != nullptr, "DefaultCPUAllocator: not enough memory: you tried to allocate {} bytes.", nbytes_);
  data_ = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(base_) + 63) & ~uintptr_t(63));
  ++allocations_;
  allocated_bytes_ += nbytes_;
  live_bytes_.fetch_add(nbytes_, std::memory_order_relaxed);
}

Storage::~Storage() {
  if (meta_) return;
  live_bytes_.fetch_sub(nbytes_, std::memory_order_relaxed);
  if (device_.type == DeviceType::CUDA) cuda::allocator().release(cuda::CUdeviceptr(reinterpret_cast<uintptr_t>(data_)));
  else block_cache().give(base_, size_t(nbytes_) + 64);
}

Tensor::Tensor(std::shared_ptr<Storage> storage, int64_t offset, Dims sizes, Dims strides, DType dtype)
    : storage_(std::move(storage)), offset_(offset), sizes_(std::move(sizes)), strides_(std::move(strides)), dtype_(dtype) {
  // PyTorch's safe numel: a view may not have more elements than int64 counts.
  int64_t n = 1;
  for (int64_t s : sizes_)
    if (__builtin_mul_overflow(n, s, &n)) fail("numel: integer multiplication overflow");
}

int64_t Tensor::size(int64_t d) const { return sizes_[wrap_dim(d, dim())]; }
int64_t Tensor::stride(int64_t d) const { return strides_[wrap_dim(d, dim())]; }
int64_t Tensor::numel() const { return numel_of(sizes_); }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; d--) {
    if (sizes_[d] == 1) continue;
    if (sizes_[d] == 0) return true;
    if (strides_[d] != expected) return false;
    expected *= sizes_[d];
  }
  return true;
}

bool Tensor::is_non_overlapping_and_dense() const {
  if (dim() == 1) return sizes_[0] < 2 || strides_[0] == 1;
  std::vector<int64_t> perm(dim());
  for (int64_t i = 0; i < dim(); i++) perm[i] = i;
  std::sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    if (sizes_[a] < 2) return false;
    if (sizes_[b] < 2) return true;
    return strides_[a] < strides_[b];
  });
  int64_t expected = 1;
  for (int64_t d : perm) {
    if (sizes_[d] == 1) continue;
    if (strides_[d] != expected) return false;
    expected *= sizes_[d];
  }
  return true;
}

Tensor Tensor::as_strided(Dims sizes, Dims strides, int64_t offset) const {
  return Tensor(storage_, offset, std::move(sizes), std::move(strides), dtype_);
}

void Tensor::no_cuda_kernel() {
  fail("this operation has no CUDA implementation yet: move the tensors to the CPU with .to(\"cpu\")");
}

void Tensor::meta_elements() {
  throw std::logic_error("the elements of a meta tensor were read or written (tracing runs on metadata only)");
}

uint64_t Tensor::device_address() const {
  THN_CHECK(device().type == DeviceType::CUDA, "device_address() of a CPU tensor");
  return uint64_t(reinterpret_cast<uintptr_t>(storage_->data())) + uint64_t(offset_ * itemsize(dtype_));
}

Scalar Tensor::item() const {
  THN_CHECK(numel() == 1, "a Tensor with {} elements cannot be converted to Scalar", numel());
  if (device().type == DeviceType::CUDA) return cuda::to_device(*this, kCPU).item();
  return dispatch_dtype(dtype_, [&]<class S>() -> Scalar {
    compute_t<S> v = *data<S>();
    if constexpr (std::is_same_v<S, bool>) return Scalar(bool(v));
    else if constexpr (std::is_integral_v<S>) return Scalar(int64_t(v));
    else return Scalar(double(v));
  });
}

Dims contiguous_strides(const Dims& sizes) {
  Dims s(sizes.size());
  int64_t acc = 1;
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; d--) {
    s[d] = acc;
    acc = int64_t(uint64_t(acc) * uint64_t(std::max<int64_t>(sizes[d], 1)));  // (wraps: empty() checks first)
  }
  return s;
}

int64_t numel_of(const Dims& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

int64_t wrap_dim(int64_t dim, int64_t ndim) {
  int64_t n = std::max<int64_t>(ndim, 1);  // a 0-dim tensor accepts dims -1 and 0
  if (dim < -n || dim >= n)
    fail(ErrorKind::IndexError, "Dimension out of range (expected to be in range of [{}, {}], but got {})", -n, n - 1, dim);
  return dim < 0 ? dim + n : dim;
}

std::string dims_str(const Dims& d) { return fmt::format("[{}]", fmt::join(d, ", ")); }

namespace {
void check_sizes(const Dims& sizes) {
  for (int64_t s : sizes)
    THN_CHECK(s >= 0, "Trying to create tensor with negative dimension {}: {}", s, dims_str(sizes));
}
[[noreturn]] void storage_overflow(const Dims& sizes) {
  fail("Storage size calculation overflowed with sizes={}", dims_str(sizes));
}
}  // namespace

Tensor empty(const Dims& sizes, DType dtype, Device device) {
  check_sizes(sizes);
  int64_t bytes = itemsize(dtype);
  for (int64_t s : sizes)
    if (__builtin_mul_overflow(bytes, s, &bytes)) storage_overflow(sizes);
  return empty_strided(sizes, contiguous_strides(sizes), dtype, device);
}

Tensor empty_strided(const Dims& sizes, const Dims& strides, DType dtype, Device device) {
  check_sizes(sizes);
  int64_t span = 1, bytes = 0;
  for (size_t d = 0; d < sizes.size(); d++) {
    if (sizes[d] == 0) { span = 0; break; }
    int64_t reach = 0;
    if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &reach) || __builtin_add_overflow(span, reach, &span))
      storage_overflow(sizes);
  }
  if (__builtin_mul_overflow(span, int64_t(itemsize(dtype)), &bytes)) storage_overflow(sizes);
  auto storage = std::make_shared<Storage>(bytes, device);
  return Tensor(std::move(storage), 0, sizes, strides, dtype);
}

Tensor scalar_tensor(const Scalar& s, DType dtype) {
  // A number keeps its value under a MetaScope too: ops read it (x ** 3.0).
  Tensor t(std::make_shared<Storage>(itemsize(dtype), kCPU, false), 0, {}, {}, dtype);
  dispatch_dtype(dtype, [&]<class S>() { *t.data<S>() = S(s.to<compute_t<S>>()); });
  return t;
}

Tensor wrap_scalar(const Scalar& s) {
  DType d = s.is_bool() ? DType::Bool : s.is_int() ? DType::Int64 : DType::Float64;
  return scalar_tensor(s, d).set_wrapped_number(true);
}

namespace {
thread_local std::optional<Device> scoped_kernel_device;
}  // namespace

KernelDeviceScope::KernelDeviceScope(Device d) : previous_(scoped_kernel_device) { scoped_kernel_device = d; }
KernelDeviceScope::~KernelDeviceScope() { scoped_kernel_device = previous_; }
Device KernelDeviceScope::of(Device own) { return scoped_kernel_device.value_or(own); }

void not_implemented(std::string_view cpu_kernel, DType dtype, Device device, std::string_view cuda_kernel) {
  std::string name(cpu_kernel);
  if (KernelDeviceScope::of(device).type == DeviceType::CUDA) {
    if (!cuda_kernel.empty()) {
      name = cuda_kernel;
    } else {
      for (std::string_view suffix : {"_vml_cpu", "_impl_cpu_", "_cpu_out", "_out_cpu", "_cpu"})
        if (name.ends_with(suffix)) {
          name.resize(name.size() - suffix.size());
          break;
        }
      name += "_cuda";
    }
  }
  fail("\"{}\" not implemented for '{}'", name, dtype_torch_name(dtype));
}

Device parse_device(const std::string& s) {
  // type[:index], as PyTorch parses it; thn has the CPU and one GPU, cuda:0.
  const size_t colon = s.find(':');
  const std::string type = s.substr(0, colon), index = colon == std::string::npos ? "" : s.substr(colon + 1);
  if (type != "cpu" && type != "cuda") fail("Expected one of cpu, cuda device type at start of device string: {}", s);
  if (colon != std::string::npos &&
      (index.empty() || index.size() > 9 || !std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; })))
    fail("Invalid device string: '{}'", s);
  if (type == "cpu") {
    if (!index.empty() && index != "0") fail("CPU device index must be -1 or zero, got {}", index);
    return kCPU;
  }
  if (!index.empty() && index != "0")
    fail("CUDA error: invalid device ordinal (device '{}': thn uses one GPU, cuda:0)", s);
  return Device{DeviceType::CUDA};
}

}  // namespace thn
