// A stand-in for libcuda.so.1 with the entry points thn resolves, for testing
// the host side of the CUDA runtime (loading, device queries, the caching
// allocator, host/device copies, CUDA tensors in the interpreter) on machines
// without a GPU. Loaded with THN_LIBCUDA=<this library>.
//
// "Device" memory is host memory behind an address with the high bit flipped,
// so that host code reading a device pointer faults instead of passing.
// Modules and launches are refused: kernels need a real GPU.
// THN_FAKE_CUDA_MEMORY limits the device's bytes (default 64 MiB).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kNotInitialized = 3, kNotSupported = 801;
constexpr CUdeviceptr kTag = 1ull << 62;

bool initialised = false;
size_t in_use = 0;
std::unordered_map<CUdeviceptr, size_t> blocks;
// The host blocks behind the tagged device pointers; never destroyed, so
// blocks still cached at exit stay reachable (as device memory a driver frees).
std::unordered_set<void*>& live = *new std::unordered_set<void*>;

size_t capacity() {
  const char* e = std::getenv("THN_FAKE_CUDA_MEMORY");
  return e ? size_t(std::strtoull(e, nullptr, 10)) : size_t(64) << 20;
}
void* host(CUdeviceptr p) { return reinterpret_cast<void*>(uintptr_t(p ^ kTag)); }

CUresult GetErrorString(CUresult r, const char** s) {
  switch (r) {
    case kSuccess: *s = "no error"; return kSuccess;
    case kOutOfMemory: *s = "out of memory"; return kSuccess;
    case kNotSupported: *s = "operation not supported (fake driver: no kernels)"; return kSuccess;
    default: *s = "fake driver error"; return kSuccess;
  }
}
CUresult Init(unsigned) { initialised = true; return kSuccess; }
CUresult DeviceGetCount(int* n) { *n = 1; return initialised ? kSuccess : kNotInitialized; }
CUresult DeviceGet(int* d, int i) { *d = i; return i == 0 ? kSuccess : kInvalidValue; }
CUresult DeviceGetName(char* s, int n, int) {
  std::strncpy(s, "thn fake device", size_t(n));
  return kSuccess;
}
CUresult DeviceGetAttribute(int* v, int attr, int) {
  switch (attr) {
    case 16: *v = 4; return kSuccess;          // multiprocessors
    case 36: *v = 1000000; return kSuccess;    // memory clock, kHz
    case 37: *v = 256; return kSuccess;        // bus width, bits
    case 75: *v = 9; return kSuccess;          // compute capability
    case 76: *v = 0; return kSuccess;
    default: return kInvalidValue;
  }
}
CUresult DeviceTotalMem(size_t* b, int) { *b = capacity(); return kSuccess; }
CUresult PrimaryCtxRetain(void** ctx, int) {
  static int context;
  *ctx = &context;
  return kSuccess;
}
CUresult CtxSetCurrent(void*) { return kSuccess; }
CUresult CtxSynchronize() { return kSuccess; }
CUresult MemAlloc(CUdeviceptr* p, size_t n) {
  if (in_use + n > capacity()) return kOutOfMemory;
  void* h = std::malloc(n ? n : 1);
  if (!h) return kOutOfMemory;
  *p = CUdeviceptr(uintptr_t(h)) ^ kTag;
  blocks[*p] = n;
  live.insert(h);
  in_use += n;
  return kSuccess;
}
CUresult MemFree(CUdeviceptr p) {
  auto it = blocks.find(p);
  if (it == blocks.end()) return kInvalidValue;
  in_use -= it->second;
  live.erase(host(p));
  std::free(host(p));
  blocks.erase(it);
  return kSuccess;
}
CUresult MemcpyHtoD(CUdeviceptr d, const void* s, size_t n) { std::memcpy(host(d), s, n); return kSuccess; }
CUresult MemcpyDtoH(void* d, CUdeviceptr s, size_t n) { std::memcpy(d, host(s), n); return kSuccess; }
CUresult MemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n) { std::memmove(host(d), host(s), n); return kSuccess; }
CUresult ModuleLoadData(void**, const void*) { return kNotSupported; }
CUresult ModuleGetFunction(void**, void*, const char*) { return kNotSupported; }
CUresult LaunchKernel(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                      void**) {
  return kNotSupported;
}

const std::unordered_map<std::string, void*>& table() {
  static const std::unordered_map<std::string, void*> t = {
      {"cuGetErrorString", reinterpret_cast<void*>(GetErrorString)},
      {"cuInit", reinterpret_cast<void*>(Init)},
      {"cuDeviceGetCount", reinterpret_cast<void*>(DeviceGetCount)},
      {"cuDeviceGet", reinterpret_cast<void*>(DeviceGet)},
      {"cuDeviceGetName", reinterpret_cast<void*>(DeviceGetName)},
      {"cuDeviceGetAttribute", reinterpret_cast<void*>(DeviceGetAttribute)},
      {"cuDeviceTotalMem", reinterpret_cast<void*>(DeviceTotalMem)},
      {"cuDevicePrimaryCtxRetain", reinterpret_cast<void*>(PrimaryCtxRetain)},
      {"cuCtxSetCurrent", reinterpret_cast<void*>(CtxSetCurrent)},
      {"cuCtxSynchronize", reinterpret_cast<void*>(CtxSynchronize)},
      {"cuMemAlloc", reinterpret_cast<void*>(MemAlloc)},
      {"cuMemFree", reinterpret_cast<void*>(MemFree)},
      {"cuMemcpyHtoD", reinterpret_cast<void*>(MemcpyHtoD)},
      {"cuMemcpyDtoH", reinterpret_cast<void*>(MemcpyDtoH)},
      {"cuMemcpyDtoD", reinterpret_cast<void*>(MemcpyDtoD)},
      {"cuModuleLoadData", reinterpret_cast<void*>(ModuleLoadData)},
      {"cuModuleGetFunction", reinterpret_cast<void*>(ModuleGetFunction)},
      {"cuLaunchKernel", reinterpret_cast<void*>(LaunchKernel)},
  };
  return t;
}

}  // namespace

extern "C" {

CUresult cuDriverGetVersion(int* v) {
  *v = 12040;
  return kSuccess;
}

CUresult cuGetProcAddress_v2(const char* name, void** pfn, int, unsigned long long, int* status) {
  auto it = table().find(name);
  *pfn = it == table().end() ? nullptr : it->second;
  if (status) *status = *pfn ? 0 : 1;
  return kSuccess;
}

}  // extern "C"
