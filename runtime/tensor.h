#pragma once
// Storage and Tensor: a strided view (sizes, strides, offset, dtype) of a
// refcounted storage on a device. Copying a Tensor copies the view and shares
// the storage, so writes are visible through every alias, as in PyTorch.
#include <cstdint>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/scalar.h"

namespace thn {

using Dims = std::vector<int64_t>;

enum class DeviceType : uint8_t { CPU, CUDA };
struct Device {
  DeviceType type = DeviceType::CPU;
  bool operator==(const Device&) const = default;
  std::string str() const { return type == DeviceType::CPU ? "cpu" : "cuda:0"; }  // one GPU: device 0
};
constexpr Device kCPU{DeviceType::CPU};
// "cpu", "cuda", "cuda:0" as torch.device accepts them; anything else is PyTorch's RuntimeError.
Device parse_device(const std::string& s);

// The device whose kernels an op is computed for. Ops on CUDA tensors are
// at times computed on host tensors: the tracer's meta tensors, and
// cuda::run_on_host. Inside a KernelDeviceScope, PyTorch's dtype refusals
// name the scope's device's kernel ("div_floor_cuda", not "div_floor_cpu"),
// and the few that differ by device (matmul of integers) follow it.
class KernelDeviceScope {
 public:
  explicit KernelDeviceScope(Device d);
  ~KernelDeviceScope();
  KernelDeviceScope(const KernelDeviceScope&) = delete;
  KernelDeviceScope& operator=(const KernelDeviceScope&) = delete;
  // The innermost scope's device, else `own` (the tensor's).
  static Device of(Device own);

 private:
  std::optional<Device> previous_;
};

// PyTorch's refusal of a dtype by the kernel of the device an op is computed
// for (KernelDeviceScope::of(device)): `"cpu_kernel" not implemented for
// 'Half'` on the host; on a GPU, `cuda_kernel`, by default cpu_kernel
// without its _cpu suffix (_vml_cpu, _out_cpu, _impl_cpu_, ...) + "_cuda".
[[noreturn]] void not_implemented(std::string_view cpu_kernel, DType dtype, Device device,
                                  std::string_view cuda_kernel = {});

// Meta tensors: tracing runs the runtime's own op implementations on tensors
// whose storages have an identity, a size and a device but no bytes (as
// PyTorch's FakeTensor), so shapes, view-or-copy decisions, type promotion
// and errors are eager's while no element is read or written. Inside a
// MetaScope every storage an op allocates is such a meta storage; kernels
// return before their loops when their output is meta (is_meta), checks of
// values (an index out of range) wait for the run, and any read or write of
// a meta tensor's elements is an internal error, never garbage. Numbers
// wrapped as tensors (wrap_scalar) keep their one value.
class MetaScope {
 public:
  MetaScope();
  ~MetaScope();
  MetaScope(const MetaScope&) = delete;
  MetaScope& operator=(const MetaScope&) = delete;
  static bool active();

 private:
  bool previous_;
};

class Storage {
 public:
  // A meta storage (no bytes) inside a MetaScope, else memory on `device`.
  Storage(int64_t nbytes, Device device) : Storage(nbytes, device, MetaScope::active()) {}
  Storage(int64_t nbytes, Device device, bool meta);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() const { return data_; }  // null for a meta storage
  int64_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  bool is_meta() const { return meta_; }
  // Storages (and their bytes) allocated so far by this thread: --stats
  // counts a jit call's buffers with them.
  // (Defined in tensor.cpp: GCC 12 miscompiles the UBSan null check of a
  // thread_local read through its TLS wrapper in other translation units.)
  static int64_t allocations();
  static int64_t allocated_bytes();
  // The bytes of all storages alive now, on every device and thread (the
  // interpreter runs the cycle collector when they have doubled).
  static int64_t live_bytes() { return live_bytes_.load(std::memory_order_relaxed); }
  // The largest host allocation allowed; a larger one raises the same
  // out-of-memory error as a failed malloc. Unlimited unless lowered (the
  // front-end fuzzer lowers it, so no input can exhaust the machine).
  static void set_limit(int64_t bytes) { limit_ = bytes; }
  // Bumped by every in-place op of a program (interp/autograd.h): a
  // gradient step whose saved tensors' versions changed refuses to run.
  uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

 private:
  void allocate_host();
  void* data_ = nullptr;  // 64-byte aligned, inside base_'s block
  void* base_ = nullptr;  // what malloc returned
  int64_t nbytes_ = 0;
  Device device_;
  bool meta_ = false;
  uint64_t version_ = 0;
  static thread_local int64_t allocations_, allocated_bytes_;
  static std::atomic<int64_t> live_bytes_;
  static inline int64_t limit_ = INT64_MAX;
};

class Tensor {
 public:
  Tensor() = default;  // undefined
  Tensor(std::shared_ptr<Storage> storage, int64_t offset, Dims sizes, Dims strides, DType dtype);

  bool defined() const { return storage_ != nullptr; }
  const Dims& sizes() const { return sizes_; }
  const Dims& strides() const { return strides_; }
  int64_t size(int64_t d) const;    // d may be negative
  int64_t stride(int64_t d) const;
  int64_t dim() const { return int64_t(sizes_.size()); }
  int64_t numel() const;
  int64_t offset() const { return offset_; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  // A Python number turned into a 0-dim tensor for an op: it takes part in
  // type promotion with the lowest priority, as in PyTorch.
  bool is_wrapped_number() const { return wrapped_number_; }
  Tensor& set_wrapped_number(bool w) { wrapped_number_ = w; return *this; }

  bool is_contiguous() const;
  // No two elements share memory and together they fill a dense block.
  bool is_non_overlapping_and_dense() const;

  // The host address of the first element. A CUDA tensor's elements are not
  // host memory: asking for them is a RuntimeError (an op without a CUDA
  // implementation), never a read of device memory.
  void* raw_data() const { return static_cast<char*>(host_storage()) + offset_ * itemsize(dtype_); }
  template <class T> T* data() const { return static_cast<T*>(host_storage()) + offset_; }
  // The device address of the first element of a CUDA tensor.
  uint64_t device_address() const;

  // A new view of the same storage.
  Tensor as_strided(Dims sizes, Dims strides, int64_t offset) const;
  Scalar item() const;

 private:
  void* host_storage() const {
    if (storage_->device().type != DeviceType::CPU) [[unlikely]] no_cuda_kernel();
    if (storage_->is_meta()) [[unlikely]] meta_elements();
    return storage_->data();
  }
  [[noreturn]] static void no_cuda_kernel();
  [[noreturn]] static void meta_elements();

  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;  // in elements
  Dims sizes_, strides_;
  DType dtype_ = DType::Float32;
  bool wrapped_number_ = false;
};

// A meta tensor (MetaScope): metadata only.
inline bool is_meta(const Tensor& t) { return t.defined() && t.storage()->is_meta(); }
// The stand-in for the value of a meta tensor's element where a number is
// needed while tracing (a Scalar parameter given a 0-dim tensor, item()):
// one, of the Python kind of dtype `d`, which no check of a value trips on;
// no code may read it as the value (the tracer refuses).
inline Scalar meta_stand_in(DType d) {
  if (d == DType::Bool) return Scalar(true);
  return is_floating(d) ? Scalar(1.0) : Scalar(int64_t(1));
}

Dims contiguous_strides(const Dims& sizes);
int64_t numel_of(const Dims& sizes);
// A tensor every element of which is one element in memory: 0-dim, or
// expanded from one (stride 0 along every dim longer than 1), or empty so.
// A CPU one may take part in a CUDA op as a number does.
inline bool is_one_value(const Tensor& t) {
  for (size_t d = 0; d < t.sizes().size(); ++d)
    if (t.sizes()[d] != 1 && t.strides()[d] != 0) return false;
  return true;
}
// Whether a CPU tensor may join an op's tensors on another device: in a
// program, as PyTorch's CPU scalars do, only a 0-dim tensor (a number; not
// tensor([2.])); inside the runtime and the executor also an expansion of
// one (decompositions make them, and an expansion to size 1 cannot be told
// from tensor([2.]) by its layout).
inline bool joins_any_device(const Tensor& t, bool in_program) {
  return t.device().type == DeviceType::CPU && (t.dim() == 0 || (!in_program && is_one_value(t)));
}
// That one value as a 0-dim tensor (is_one_value(t), t not empty).
inline Tensor one_value(const Tensor& t) { return t.as_strided({}, {}, t.offset()); }
// Wraps a possibly negative dim into [0, ndim); IndexError when out of range.
int64_t wrap_dim(int64_t dim, int64_t ndim);
std::string dims_str(const Dims& d);  // "[2, 3]"

Tensor empty(const Dims& sizes, DType dtype, Device device = kCPU);
Tensor empty_strided(const Dims& sizes, const Dims& strides, DType dtype, Device device = kCPU);
// A 0-dim tensor holding a Python number (wrapped: lowest promotion priority).
Tensor wrap_scalar(const Scalar& s);
Tensor scalar_tensor(const Scalar& s, DType dtype);

}  // namespace thn
