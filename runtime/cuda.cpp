#include "runtime/cuda.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "runtime/elementwise.h"
#include "runtime/error.h"
#include "runtime/loops.h"

namespace thn::cuda {

namespace {

// The CUDA version whose entry points are asked for (each name resolves to
// its newest variant at that version: cuMemAlloc -> cuMemAlloc_v2, ...).
constexpr int kApiVersion = 12000;
// cuDeviceGetAttribute's attributes (CUdevice_attribute).
constexpr int kAttrMultiprocessors = 16, kAttrMemoryClockKHz = 36, kAttrBusWidthBits = 37, kAttrMajor = 75,
              kAttrMinor = 76;

struct Loaded {
  Driver d;
  DeviceInfo info;
  CUcontext ctx = nullptr;
  std::string why;  // empty when usable
};

std::string error_text(const Driver& d, CUresult r) {
  const char* s = nullptr;
  if (d.cuGetErrorString && d.cuGetErrorString(r, &s) == kSuccess && s) return fmt::format("{} (error {})", s, r);
  switch (r) {  // drivers that cannot describe themselves
    case 34: return "CUDA_ERROR_STUB_LIBRARY (the toolkit's stub library, not a driver)";
    case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    default: return fmt::format("CUDA driver error {}", r);
  }
}

void load(Loaded& l) {
  const char* env = std::getenv("THN_LIBCUDA");
  std::string path = env && *env ? env : "libcuda.so.1";
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    l.why = fmt::format("no NVIDIA driver: {} could not be loaded ({})", path, e ? e : "unknown reason");
    return;
  }
  using GetVersion = CUresult (*)(int*);
  using GetProc = CUresult (*)(const char*, void**, int, unsigned long long);
  using GetProcV2 = CUresult (*)(const char*, void**, int, unsigned long long, int*);
  auto get_version = reinterpret_cast<GetVersion>(dlsym(h, "cuDriverGetVersion"));
  auto get_proc_v2 = reinterpret_cast<GetProcV2>(dlsym(h, "cuGetProcAddress_v2"));
  auto get_proc = reinterpret_cast<GetProc>(dlsym(h, "cuGetProcAddress"));
  l.d.cuGetErrorString = reinterpret_cast<decltype(l.d.cuGetErrorString)>(dlsym(h, "cuGetErrorString"));
  int version = 0;
  if (!get_version) {
    l.why = fmt::format("{} is not a CUDA driver (no cuDriverGetVersion)", path);
    return;
  }
  if (CUresult r = get_version(&version); r != kSuccess) {
    l.why = fmt::format("{} does not work as a CUDA driver: {}", path, error_text(l.d, r));
    return;
  }
  l.info.driver_version = version;
  if (!get_proc && !get_proc_v2) {
    l.why = fmt::format("the NVIDIA driver is too old (CUDA {}.{}; thn needs 11.3 or newer for cuGetProcAddress)",
                        version / 1000, version % 1000 / 10);
    return;
  }
  const int at = std::min(version, kApiVersion);
  std::string missing;
  auto resolve = [&](const char* name, auto& fn) {
    void* p = nullptr;
    CUresult r = get_proc_v2 ? get_proc_v2(name, &p, at, 0, nullptr) : get_proc(name, &p, at, 0);
    if (r != kSuccess || !p) {
      if (missing.empty()) missing = name;
      return;
    }
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  Driver& d = l.d;
  resolve("cuGetErrorString", d.cuGetErrorString);
  resolve("cuInit", d.cuInit);
  resolve("cuDeviceGetCount", d.cuDeviceGetCount);
  resolve("cuDeviceGet", d.cuDeviceGet);
  resolve("cuDeviceGetName", d.cuDeviceGetName);
  resolve("cuDeviceGetAttribute", d.cuDeviceGetAttribute);
  resolve("cuDeviceTotalMem", d.cuDeviceTotalMem);
  resolve("cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain);
  resolve("cuCtxSetCurrent", d.cuCtxSetCurrent);
  resolve("cuCtxSynchronize", d.cuCtxSynchronize);
  resolve("cuMemAlloc", d.cuMemAlloc);
  resolve("cuMemFree", d.cuMemFree);
  resolve("cuMemcpyHtoD", d.cuMemcpyHtoD);
  resolve("cuMemcpyDtoH", d.cuMemcpyDtoH);
  resolve("cuMemcpyDtoD", d.cuMemcpyDtoD);
  resolve("cuModuleLoadData", d.cuModuleLoadData);
  resolve("cuModuleGetFunction", d.cuModuleGetFunction);
  resolve("cuLaunchKernel", d.cuLaunchKernel);
  if (!missing.empty()) {
    l.why = fmt::format("the NVIDIA driver has no {} (CUDA {}.{})", missing, version / 1000, version % 1000 / 10);
    return;
  }
  if (CUresult r = d.cuInit(0); r != kSuccess) {
    l.why = fmt::format("the NVIDIA driver failed to initialise: {}", error_text(d, r));
    return;
  }
  int count = 0;
  if (CUresult r = d.cuDeviceGetCount(&count); r != kSuccess || count == 0) {
    l.why = r != kSuccess ? fmt::format("no CUDA device: {}", error_text(d, r)) : "no CUDA device";
    return;
  }
  CUdevice dev = 0;
  char name[256] = {};
  int clock_khz = 0, bus_bits = 0;
  size_t memory = 0;
  for (auto [what, r] : {std::pair<const char*, CUresult>{"cuDeviceGet", d.cuDeviceGet(&dev, 0)},
                         {"cuDeviceGetName", d.cuDeviceGetName(name, int(sizeof name) - 1, dev)},
                         {"cuDeviceTotalMem", d.cuDeviceTotalMem(&memory, dev)},
                         {"cuDeviceGetAttribute", d.cuDeviceGetAttribute(&l.info.major, kAttrMajor, dev)},
                         {"cuDeviceGetAttribute", d.cuDeviceGetAttribute(&l.info.minor, kAttrMinor, dev)},
                         {"cuDeviceGetAttribute", d.cuDeviceGetAttribute(&l.info.multiprocessors, kAttrMultiprocessors, dev)},
                         {"cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain(&l.ctx, dev)}})
    if (r != kSuccess) {
      l.why = fmt::format("{} failed: {}", what, error_text(d, r));
      return;
    }
  // Not every driver reports the memory clock; the peak is then unknown (0).
  if (d.cuDeviceGetAttribute(&clock_khz, kAttrMemoryClockKHz, dev) == kSuccess &&
      d.cuDeviceGetAttribute(&bus_bits, kAttrBusWidthBits, dev) == kSuccess)
    l.info.peak_gbps = 2.0 * double(clock_khz) * 1e3 * double(bus_bits) / 8 / 1e9;
  l.info.name = name;
  l.info.memory_bytes = int64_t(memory);
}

const Loaded& loaded() {
  static const Loaded* l = [] {
    auto* p = new Loaded;  // never freed: device memory may be released at exit
    load(*p);
    return p;
  }();
  return *l;
}

}  // namespace

std::string DeviceInfo::arch() const { return fmt::format("sm_{}{}", major, minor); }

bool available(std::string* why) {
  const Loaded& l = loaded();
  if (why) *why = l.why;
  return l.why.empty();
}

const Driver& driver() {
  const Loaded& l = loaded();
  if (!l.why.empty()) fail("CUDA is not available: {}", l.why);
  thread_local bool current = false;
  if (!current) {
    check(l.d.cuCtxSetCurrent(l.ctx), "cuCtxSetCurrent");
    current = true;
  }
  return l.d;
}

const DeviceInfo& device_info() {
  driver();
  return loaded().info;
}

void check(CUresult r, const char* what) {
  if (r != kSuccess) fail("CUDA error: {} failed: {}", what, error_text(r));
}

std::string error_text(CUresult r) { return error_text(loaded().d, r); }

// ---- the caching allocator ---------------------------------------------------

size_t CachingAllocator::round_size(size_t n) {
  const size_t granule = n <= (size_t(1) << 20) ? 512 : size_t(2) << 20;
  return std::max<size_t>(granule, (n + granule - 1) / granule * granule);
}

CUdeviceptr CachingAllocator::allocate(size_t nbytes) {
  const size_t size = round_size(nbytes);
  std::lock_guard<std::mutex> lock(mu_);
  // A cached block of this size, or one at most twice as large.
  if (auto it = free_.lower_bound(size); it != free_.end() && it->first <= 2 * size) {
    auto [block, p] = *it;
    free_.erase(it);
    in_use_[p] = block;
    stats_.reuses++;
    stats_.cached_bytes -= int64_t(block);
    stats_.in_use_bytes += int64_t(block);
    return p;
  }
  CUdeviceptr p = raw_alloc_(size);
  if (p == 0 && !free_.empty()) {
    return_cache();
    p = raw_alloc_(size);
  }
  if (p == 0)
    fail("CUDA out of memory. Tried to allocate {} bytes ({} bytes in use by thn tensors)", nbytes,
         stats_.in_use_bytes);
  in_use_[p] = size;
  stats_.device_allocations++;
  stats_.in_use_bytes += int64_t(size);
  return p;
}

void CachingAllocator::release(CUdeviceptr p) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = in_use_.find(p);
  if (it == in_use_.end()) return;
  free_.emplace(it->second, p);
  stats_.in_use_bytes -= int64_t(it->second);
  stats_.cached_bytes += int64_t(it->second);
  in_use_.erase(it);
}

void CachingAllocator::return_cache() {
  for (auto& [block, p] : free_) raw_free_(p);
  free_.clear();
  stats_.cached_bytes = 0;
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  return_cache();
}

CachingAllocator::Stats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

CachingAllocator& allocator() {
  static CachingAllocator* a = new CachingAllocator(  // never freed, as loaded()
      [](size_t n) -> CUdeviceptr {
        CUdeviceptr p = 0;
        CUresult r = driver().cuMemAlloc(&p, n);
        if (r == kOutOfMemory) return 0;
        check(r, "cuMemAlloc");
        return p;
      },
      // Kernels queued on the stream may still use a cached block: they
      // finish first (cuMemFree's own wait is not documented for the
      // driver API; after the first block this returns at once).
      [](CUdeviceptr p) {
        loaded().d.cuCtxSynchronize();
        loaded().d.cuMemFree(p);
      });
  return *a;
}

// ---- copies ----------------------------------------------------------------

namespace {
std::atomic<int64_t> copies_to_device{0}, copies_to_host{0};
}  // namespace

void copy_to_device(CUdeviceptr dst, const void* src, size_t n) {
  if (!n) return;
  copies_to_device.fetch_add(1, std::memory_order_relaxed);
  check(driver().cuMemcpyHtoD(dst, src, n), "cuMemcpyHtoD");
}
void copy_to_host(void* dst, CUdeviceptr src, size_t n) {
  if (!n) return;
  copies_to_host.fetch_add(1, std::memory_order_relaxed);
  check(driver().cuMemcpyDtoH(dst, src, n), "cuMemcpyDtoH");
}
CopyCounts copy_counts() { return {copies_to_device.load(), copies_to_host.load()}; }

namespace {

CUdeviceptr device_ptr(const Tensor& x) { return CUdeviceptr(x.device_address()); }

}  // namespace

Tensor to_device(const Tensor& x, Device device) {
  if (x.device() == device) return x;
  const bool to_cuda = device.type == DeviceType::CUDA;
  if (to_cuda) driver();  // the error names the reason before any work
  Tensor src = x;
  if (src.numel() != 0 && !src.is_non_overlapping_and_dense()) {
    if (to_cuda) {
      src = contiguous(src);
    } else {
      // The device bytes the view spans come to the host as they are; the
      // host makes them contiguous.
      int64_t lo = 0, hi = 0;
      for (int64_t d = 0; d < src.dim(); d++) (src.stride(d) < 0 ? lo : hi) += (src.size(d) - 1) * src.stride(d);
      const int64_t item = itemsize(src.dtype());
      Tensor span = empty({hi - lo + 1}, src.dtype());
      copy_to_host(span.raw_data(), device_ptr(src) + CUdeviceptr(lo * item), size_t((hi - lo + 1) * item));
      return contiguous(span.as_strided(src.sizes(), src.strides(), -lo));
    }
  }
  Tensor out = empty_strided(src.sizes(), src.strides(), src.dtype(), device);
  // A dense view starts at its lowest address: its offset is the smallest element.
  const size_t n = size_t(src.numel() * itemsize(src.dtype()));
  if (to_cuda) copy_to_device(device_ptr(out), src.raw_data(), n);
  else copy_to_host(out.raw_data(), device_ptr(src), n);
  return out;
}

// ---- ops on host copies -------------------------------------------------------

Tensor HostMirror::host(const Tensor& t) {
  if (t.device().type != DeviceType::CUDA) return t;
  Mirror& m = mirrors_[t.storage().get()];
  if (!m.host) {
    m.device = t.storage();
    m.host = std::make_shared<Storage>(t.storage()->nbytes(), kCPU);
    copy_to_host(m.host->data(), CUdeviceptr(uintptr_t(t.storage()->data())), size_t(t.storage()->nbytes()));
    m.before.assign(static_cast<const char*>(m.host->data()), size_t(t.storage()->nbytes()));
  }
  return Tensor(m.host, t.offset(), t.sizes(), t.strides(), t.dtype());
}

IValue HostMirror::host(const IValue& v) {
  if (v.is_tensor()) return IValue(host(v.to_tensor()));
  if (v.is_device() && v.to_device().type == DeviceType::CUDA) return IValue(kCPU);
  if (v.is_list()) {
    std::vector<IValue> items;
    for (const IValue& e : v.to_list().items) items.push_back(host(e));
    return IValue::list(std::move(items), v.to_list().is_tuple);
  }
  return v;
}

IValue HostMirror::device(const IValue& v) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    for (auto& [key, m] : mirrors_)
      if (m.host == t.storage()) return IValue(Tensor(m.device, t.offset(), t.sizes(), t.strides(), t.dtype()));
    return IValue(to_device(t, Device{DeviceType::CUDA}));
  }
  if (v.is_list()) {
    std::vector<IValue> items;
    for (const IValue& e : v.to_list().items) items.push_back(device(e));
    return IValue::list(std::move(items), v.to_list().is_tuple);
  }
  return v;
}

void HostMirror::write_back() {
  for (auto& [key, m] : mirrors_)
    if (std::memcmp(m.host->data(), m.before.data(), m.before.size()) != 0)
      copy_to_device(CUdeviceptr(uintptr_t(m.device->data())), m.host->data(), m.before.size());
}

IValue run_on_host(const Args& a, const std::function<IValue(const Args&)>& f) {
  HostMirror m;
  std::vector<IValue> values;
  for (size_t i = 0; i < a.size(); i++) values.push_back(m.host(a[i]));
  Args h(a.schema(), std::move(values), a.inplace());
  Tensor out;
  if (a.out()) {
    out = m.host(*a.out());
    h.set_out(&out);
  }
  IValue r = [&] {
    KernelDeviceScope on_cuda(Device{DeviceType::CUDA});
    return f(h);
  }();
  m.write_back();
  return m.device(r);
}

namespace {
const LibraryKernels* installed_library = nullptr;
}
void set_library_kernels(const LibraryKernels* k) { installed_library = k; }
const LibraryKernels* library_kernels() { return installed_library; }

LineWalk plan_walk(LineWalk::Kind kind, DType dtype, const Dims& shape, const std::array<Dims, 3>& strides) {
  LoopShape<3> ls = plan_loop<3>(shape, strides);
  LineWalk w;
  w.kind = kind;
  w.dtype = dtype;
  w.shape = std::move(ls.sizes);
  w.strides = std::move(ls.strides);
  return w;
}

namespace {
const LibraryKernels& installed() {
  if (!installed_library) throw std::logic_error("a CUDA library op without the backend's library kernels");
  return *installed_library;
}
}  // namespace

void launch_walk(const LineWalk& w) { installed().walk(w); }
std::optional<int64_t> check_index(const IndexCheck& c) {
  return installed().check_index(c);
}

}  // namespace thn::cuda
