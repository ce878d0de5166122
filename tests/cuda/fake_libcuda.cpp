// A stand-in for libcuda.so.1 with the entry points thn resolves, for testing
// the CUDA side of thn on machines without a GPU. Loaded with
// THN_LIBCUDA=<this library>.
//
// "Device" memory is host memory behind an address with the high bit flipped,
// so that host code reading a device pointer faults instead of passing.
// THN_FAKE_CUDA_MEMORY limits the device's bytes (default 64 MiB);
// THN_FAKE_CUDA_DRIVER_VERSION is the CUDA version it reports (default
// 12040; below 12010 kernel parameters are limited to 4 KiB);
// THN_FAKE_CUDA_REFUSE_IMAGES makes it refuse every image as too new;
// THN_FAKE_CUDA_NVRTC_VERSION ("11.8") is the NVRTC version the emulated
// kernels see in their version macros.
//
// Kernels run on the host by emulation when the library is also preloaded
// (LD_PRELOAD=<this library>): it then sees the CUDA source thn gives NVRTC
// (nvrtcCreateProgram, forwarded to the real NVRTC) and remembers which
// image came from which source. cuModuleLoadData compiles that source as
// host C++ (c++, -D__CUDACC_RTC__ and NVRTC's version macros, the CUDA
// built-ins below), and
// cuLaunchKernel runs each block with one host thread per CUDA thread:
// __syncthreads is a barrier, __syncwarp one per warp, __shfl_sync, __shfl_down_sync and
// __shfl_xor_sync exchanges between the 32 threads of a warp, __shared__ arrays are shared by the block's threads,
// atomicMin, atomicMax, atomicAdd and atomicCAS are the host's atomics, __threadfence a fence.
// Images the library did not see compiled (a warm kernel cache) cannot
// load, so the sources are kept beside the kernel cache
// ($XDG_CACHE_HOME/thn/fake-cuda), as are the emulating host modules.
// Without the preload, modules and launches are refused.
//
// It is also a stand-in for cuBLAS (THN_LIBCUBLAS=<this library>):
// cublasGemmStridedBatchedEx computes its column-major products on the host,
// in double, from the tagged device memory.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/half.h"

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kNotInitialized = 3, kInvalidImage = 200,
                   kNotFound = 500, kLaunchFailed = 719, kNotSupported = 801,
                   kUnsupportedPtxVersion = 222;
constexpr CUdeviceptr kTag = 1ull << 62;

bool initialised = false;
size_t in_use = 0;
std::unordered_map<CUdeviceptr, size_t> blocks;
// The host blocks behind the tagged device pointers; never destroyed, so
// blocks still cached at exit stay reachable (as device memory a driver frees).
std::unordered_set<void*>& live = *new std::unordered_set<void*>;

int driver_version() {
  const char* e = std::getenv("THN_FAKE_CUDA_DRIVER_VERSION");
  return e && *e ? std::atoi(e) : 12040;
}

size_t capacity() {
  const char* e = std::getenv("THN_FAKE_CUDA_MEMORY");
  return e ? size_t(std::strtoull(e, nullptr, 10)) : size_t(64) << 20;
}
void* host(CUdeviceptr p) { return reinterpret_cast<void*>(uintptr_t(p ^ kTag)); }

CUresult GetErrorString(CUresult r, const char** s) {
  switch (r) {
    case kSuccess: *s = "no error"; return kSuccess;
    case kOutOfMemory: *s = "out of memory"; return kSuccess;
    case kNotSupported: *s = "operation not supported (fake driver: no kernels without LD_PRELOAD)"; return kSuccess;
    case kInvalidImage: *s = "fake driver: an image it did not see NVRTC make, or one the host compiler rejected"; return kSuccess;
    case kNotFound: *s = "named symbol not found"; return kSuccess;
    case kInvalidValue: *s = "invalid argument"; return kSuccess;
    case kLaunchFailed: *s = "fake driver: unsupported launch configuration"; return kSuccess;
    case kUnsupportedPtxVersion: *s = "the provided PTX was compiled with an unsupported toolchain."; return kSuccess;
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
// ---- kernels by emulation ---------------------------------------------------

std::string hex_hash(std::string_view s) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016zx", std::hash<std::string_view>{}(s));
  return buf;
}

std::filesystem::path emu_dir() {
  const char* x = std::getenv("XDG_CACHE_HOME");
  const char* h = std::getenv("HOME");
  std::filesystem::path base = x && *x ? std::filesystem::path(x) : std::filesystem::path(h ? h : "/tmp") / ".cache";
  std::filesystem::path d = base / "thn" / "fake-cuda";
  std::filesystem::create_directories(d);
  return d;
}

void write_atomically(const std::filesystem::path& p, const std::string& bytes) {
  std::filesystem::path tmp = p;
  tmp += ".tmp" + std::to_string(getpid());
  std::ofstream(tmp, std::ios::binary) << bytes;
  std::filesystem::rename(tmp, p);
}

std::mutex emu_mu;
std::unordered_map<void*, std::string>& program_sources = *new std::unordered_map<void*, std::string>;

// The image's source: its hash names a file written when NVRTC made it.
void remember_image(void* prog, const char* image, size_t n) {
  std::lock_guard<std::mutex> lock(emu_mu);
  auto it = program_sources.find(prog);
  if (it == program_sources.end()) return;
  write_atomically(emu_dir() / (hex_hash(std::string_view(image, n)) + ".cu"), it->second);
}

// NVRTC's `get` (nvrtcGetCUBIN, nvrtcGetPTX), then the image remembered
// (its size from `get`Size).
int get_image(const std::string& get, void* prog, char* out) {
  using Fn = int (*)(void*, char*);
  using SizeFn = int (*)(void*, size_t*);
  int r = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, get.c_str()))(prog, out);
  size_t n = 0;
  if (r == 0 && reinterpret_cast<SizeFn>(dlsym(RTLD_NEXT, (get + "Size").c_str()))(prog, &n) == 0)
    remember_image(prog, out, n);
  return r;
}

// What the CUDA built-ins of generated kernels become on the host. No std
// header: the kernels declare their own fixed-width types.
const char* const kEmuHeader = R"emu(
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
extern "C" {
float fabsf(float); float expf(float); float exp2f(float); float logf(float); float log2f(float); float log10f(float);
float log1pf(float); float expm1f(float); float sqrtf(float); float sinf(float); float cosf(float); float tanf(float);
float sinhf(float); float coshf(float); float tanhf(float); float asinf(float); float acosf(float); float atanf(float);
float asinhf(float); float acoshf(float); float atanhf(float); float erff(float); float floorf(float); float ceilf(float);
float nearbyintf(float); float truncf(float); float fmodf(float, float); float copysignf(float, float);
float powf(float, float); float atan2f(float, float); float fmaf(float, float, float); float erfcf(float);
float lgammaf(float); float hypotf(float, float); float nextafterf(float, float);
double fabs(double); double exp(double); double exp2(double); double log(double); double log2(double);
double log10(double); double log1p(double); double expm1(double); double sqrt(double); double sin(double);
double cos(double); double tan(double); double sinh(double); double cosh(double); double tanh(double);
double asin(double); double acos(double); double atan(double); double asinh(double); double acosh(double);
double atanh(double); double erf(double); double floor(double); double ceil(double); double nearbyint(double);
double trunc(double); double fmod(double, double); double copysign(double, double); double pow(double, double);
double atan2(double, double); double fma(double, double, double); double erfc(double); double lgamma(double);
double hypot(double, double); double nextafter(double, double);
}
template <class To, class From> static inline To thn_emu_bits(From f) { To t; __builtin_memcpy(&t, &f, sizeof t); return t; }
static inline float __int_as_float(int i) { return thn_emu_bits<float>(i); }
static inline float __uint_as_float(unsigned u) { return thn_emu_bits<float>(u); }
static inline unsigned __float_as_uint(float f) { return thn_emu_bits<unsigned>(f); }
static inline double __longlong_as_double(long long i) { return thn_emu_bits<double>(i); }
struct thn_emu_dim3 { unsigned x, y, z; };
static thread_local thn_emu_dim3 threadIdx, blockIdx, blockDim, gridDim;
struct thn_emu_ops { void (*sync)(); void (*shfl_down)(void* v, unsigned size, int off); void (*shfl_xor)(void* v, unsigned size, int mask);
                     void (*shfl)(void* v, unsigned size, int lane); void (*syncwarp)(); };
static thn_emu_ops thn_emu;
extern "C" void thn_emu_bind(const thn_emu_ops* o) { thn_emu = *o; }
extern "C" void thn_emu_at(unsigned t, unsigned b, unsigned bd, unsigned gd) {
  threadIdx = {t, 0, 0}; blockIdx = {b, 0, 0}; blockDim = {bd, 1, 1}; gridDim = {gd, 1, 1};
}
static inline void __syncthreads() { thn_emu.sync(); }
template <class T> static inline T __shfl_down_sync(unsigned, T v, int off) { thn_emu.shfl_down(&v, sizeof v, off); return v; }
template <class T> static inline T __shfl_xor_sync(unsigned, T v, int mask) { thn_emu.shfl_xor(&v, sizeof v, mask); return v; }
template <class T> static inline T __shfl_sync(unsigned, T v, int lane) { thn_emu.shfl(&v, sizeof v, lane); return v; }
static inline void __syncwarp(unsigned = 0xffffffffu) { thn_emu.syncwarp(); }
static inline unsigned long long atomicMin(unsigned long long* p, unsigned long long v) {
  unsigned long long old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while (v < old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
  return old;
}
static inline unsigned atomicMax(unsigned* p, unsigned v) {
  unsigned old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while (v > old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
  return old;
}
static inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long expected, unsigned long long v) {
  __atomic_compare_exchange_n(p, &expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;
}
)emu";

// One block's threads: a barrier for the block and one per warp, and the
// warp's exchange slots.
struct Block {
  explicit Block(unsigned n) : threads(n), all(n) {
    for (unsigned w = 0; w < (n + 31) / 32; ++w)
      warps.push_back(std::make_unique<std::barrier<>>(std::ptrdiff_t(std::min(32u, n - 32 * w))));
    slots.resize(size_t(n) * 16);
  }
  unsigned threads;
  std::barrier<> all;
  std::vector<std::unique_ptr<std::barrier<>>> warps;
  std::vector<unsigned char> slots;  // 16 bytes per thread
};
thread_local Block* this_block = nullptr;
thread_local unsigned this_thread = 0;

void emu_sync() { this_block->all.arrive_and_wait(); }
// v from lane `from` of this thread's warp (kept when there is none).
void emu_exchange(void* v, unsigned size, unsigned from) {
  Block& b = *this_block;
  const unsigned warp = this_thread / 32;
  std::barrier<>& w = *b.warps[warp];
  std::memcpy(&b.slots[size_t(this_thread) * 16], v, size);
  w.arrive_and_wait();
  if (from < 32 && warp * 32 + from < b.threads) std::memcpy(v, &b.slots[size_t(warp * 32 + from) * 16], size);
  w.arrive_and_wait();
}
void emu_shfl_down(void* v, unsigned size, int off) {
  emu_exchange(v, size, off >= 0 ? this_thread % 32 + unsigned(off) : 32);
}
void emu_shfl_xor(void* v, unsigned size, int mask) { emu_exchange(v, size, (this_thread % 32) ^ unsigned(mask)); }
void emu_shfl(void* v, unsigned size, int lane) { emu_exchange(v, size, unsigned(lane) % 32); }
void emu_syncwarp() { this_block->warps[this_thread / 32]->arrive_and_wait(); }

struct Function {
  void (*launch)(void**) = nullptr;
  void (*at)(unsigned, unsigned, unsigned, unsigned) = nullptr;
  size_t parameter_bytes = 0;  // what cuLaunchKernel's params[0] points to
};
struct Module {
  void* handle = nullptr;
  std::unordered_map<std::string, Function> functions;  // owned here, as a driver's are by their module
};

// The host module emulating `source`'s kernels: each `extern "C" __global__
// void [__launch_bounds__(N)] NAME(const NAME_args a)` (or NAME_wide, of the
// same struct) gets thn_emu_launch_NAME(void** params),
// which calls it with the device addresses in a.p made host ones (a null
// one stays null).
void* emulation_module(const std::string& source) {
  std::string text = std::string(kEmuHeader) + source + "\n";
  // A fusion's workspace pointer (its struct's `ws`; the library kernels'
  // structs have none) is a device address too.
  text += "template <class A> static auto thn_emu_untag_ws(A& a, int) -> decltype((void)a.ws) {\n"
          "  if (a.ws) a.ws = (void*)((unsigned long long)a.ws ^ " + std::to_string(kTag) + "ull);\n}\n"
          "template <class A> static void thn_emu_untag_ws(A&, long) {}\n";
  const std::string mark = "extern \"C\" __global__ void ";
  for (size_t at = source.find(mark); at != std::string::npos; at = source.find(mark, at + 1)) {
    // (past `__launch_bounds__(N) `)
    size_t name_at = at + mark.size();
    if (source.compare(name_at, 18, "__launch_bounds__(") == 0) name_at = source.find(") ", name_at) + 2;
    size_t name_end = source.find('(', name_at);
    std::string name = source.substr(name_at, name_end - name_at);
    // Device addresses are tagged host addresses (see MemAlloc). NAME_by_pointer
    // takes the struct in device memory: it gets a copy of it.
    const std::string untag = "(unsigned long long)q ^ " + std::to_string(kTag) + "ull";
    const std::string suffix = "_by_pointer";
    bool by_pointer = name.size() > suffix.size() && name.ends_with(suffix);
    std::string base = by_pointer ? name.substr(0, name.size() - suffix.size()) : name;
    if (base.ends_with("_wide")) base.resize(base.size() - 5);  // the 64-bit entry takes the same struct
    // (as does each strategy's entry of a reduction, NAME_m<mode>)
    if (base.size() > 3 && base.compare(base.size() - 3, 2, "_m") == 0 && std::isdigit((unsigned char)base.back()))
      base.resize(base.size() - 3);
    std::string from = by_pointer ? "*(const " + base + "_args*)((unsigned long long)*(void**)params[0] ^ " +
                                        std::to_string(kTag) + "ull)"
                                  : "*(const " + base + "_args*)params[0]";
    // A kernel the preprocessor left out (an `#if` on NVRTC's version) is
    // a null weak symbol: ModuleGetFunction does not find it.
    if (!by_pointer) text += "extern \"C\" void " + name + "(const " + base + "_args) __attribute__((weak));\n";
    text += "extern \"C\" void thn_emu_launch_" + name + "(void** params) {\n  " + base + "_args a = " + from +
            ";\n  for (void*& q : a.p) q = q ? (void*)(" + untag + ") : q;\n  thn_emu_untag_ws(a, 0);\n  " + name + (by_pointer ? "(&a)" : "(a)") +
            ";\n}\n";
    text += "extern \"C\" unsigned long long thn_emu_parameter_bytes_" + name + "() { return sizeof(" +
            (by_pointer ? std::string("void*") : base + "_args") + "); }\n";
  }
  const std::filesystem::path dir = emu_dir();
  // NVRTC's version macros, as the NVRTC thn calls defines them, or as
  // THN_FAKE_CUDA_NVRTC_VERSION ("11.8") says.
  int major = 0, minor = 0;
  if (const char* e = std::getenv("THN_FAKE_CUDA_NVRTC_VERSION")) std::sscanf(e, "%d.%d", &major, &minor);
  else if (auto version = reinterpret_cast<int (*)(int*, int*)>(dlsym(RTLD_NEXT, "nvrtcVersion"))) version(&major, &minor);
  const std::string macros =
      "-D__CUDACC_VER_MAJOR__=" + std::to_string(major) + " -D__CUDACC_VER_MINOR__=" + std::to_string(minor);
  const std::string key = hex_hash(text + macros);
  const std::filesystem::path so = dir / ("emu-" + key + ".so");
  if (!std::filesystem::exists(so)) {
    const std::filesystem::path src = dir / ("emu-" + key + ".cpp");
    write_atomically(src, text);
    std::filesystem::path tmp = so;
    tmp += ".tmp" + std::to_string(getpid());
    // The compiler runs without this library preloaded (built with a
    // sanitizer, it would need that runtime in the compiler's process).
    // -fno-gnu-unique: the __shared__ arrays (function statics of the
    // kernels' templates) are each module's own; GCC's unique symbols
    // would make two modules' same-named kernels share them, whatever
    // their element types (RTLD_LOCAL does not stop that).
    std::string cmd = "env -u LD_PRELOAD c++ -std=c++17 -O1 -w -shared -fPIC -fno-gnu-unique -D__CUDACC_RTC__ " + macros + " -o '" +
                      tmp.string() + "' '" +
                      src.string() + "' -lm > '" + src.string() + ".log' 2>&1";
    if (std::system(cmd.c_str()) != 0) return nullptr;
    std::filesystem::rename(tmp, so);
  }
  return dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
}

}  // namespace
extern "C" int nvrtcCreateProgram(void**, const char*, const char*, int, const char* const*, const char* const*);
namespace {

CUresult ModuleLoadData(void** module, const void* image) {
  // THN_FAKE_CUDA_REFUSE_IMAGES: every image is too new for this driver.
  if (std::getenv("THN_FAKE_CUDA_REFUSE_IMAGES")) return kUnsupportedPtxVersion;
  // Not preloaded, thn's NVRTC calls went past this library: no module,
  // whatever sources an earlier preloaded run left in the cache.
  if (dlsym(RTLD_DEFAULT, "nvrtcCreateProgram") != reinterpret_cast<void*>(&nvrtcCreateProgram)) return kNotSupported;
  // A cubin is an ELF file: its size is where its last header table or
  // section ends. PTX is text.
  std::string_view bytes;
  const char* b = static_cast<const char*>(image);
  if (std::memcmp(b, "\x7f" "ELF", 4) == 0) {
    auto u64 = [&](size_t at) { uint64_t v; std::memcpy(&v, b + at, 8); return v; };
    auto u16 = [&](size_t at) { uint16_t v; std::memcpy(&v, b + at, 2); return uint64_t(v); };
    const uint64_t shoff = u64(0x28), phoff = u64(0x20), shentsize = u16(0x3a), shnum = u16(0x3c);
    uint64_t end = std::max(shoff + shentsize * shnum, phoff + u16(0x36) * u16(0x38));
    for (uint64_t i = 0; i < shnum; ++i) {
      const size_t h = size_t(shoff + i * shentsize);
      uint32_t type;
      std::memcpy(&type, b + h + 4, 4);
      if (type != 8) end = std::max(end, u64(h + 0x18) + u64(h + 0x20));  // not NOBITS: offset + size
    }
    bytes = std::string_view(b, size_t(end));
  } else {
    bytes = std::string_view(b, std::strlen(b) + 1);  // nvrtcGetPTX's size counts the NUL
  }
  std::ifstream in(emu_dir() / (hex_hash(bytes) + ".cu"), std::ios::binary);
  if (!in) return kInvalidImage;
  std::stringstream source;
  source << in.rdbuf();
  void* h = emulation_module(source.str());
  if (!h) return kInvalidImage;
  using Bind = void (*)(const void*);
  static const struct {
    void (*sync)();
    void (*shfl_down)(void*, unsigned, int);
    void (*shfl_xor)(void*, unsigned, int);
    void (*shfl)(void*, unsigned, int);
    void (*syncwarp)();
  } ops = {emu_sync, emu_shfl_down, emu_shfl_xor, emu_shfl, emu_syncwarp};
  reinterpret_cast<Bind>(dlsym(h, "thn_emu_bind"))(&ops);
  *module = new Module{h, {}};
  return kSuccess;
}

CUresult ModuleGetFunction(void** f, void* module, const char* name) {
  Module& m = *static_cast<Module*>(module);
  if (!dlsym(m.handle, name)) return kNotFound;
  auto launch = reinterpret_cast<void (*)(void**)>(dlsym(m.handle, ("thn_emu_launch_" + std::string(name)).c_str()));
  if (!launch) return kNotFound;
  auto bytes = reinterpret_cast<unsigned long long (*)()>(
      dlsym(m.handle, ("thn_emu_parameter_bytes_" + std::string(name)).c_str()));
  std::lock_guard<std::mutex> lock(emu_mu);
  *f = &(m.functions[name] = Function{launch,
                                      reinterpret_cast<void (*)(unsigned, unsigned, unsigned, unsigned)>(
                                          dlsym(m.handle, "thn_emu_at")),
                                      size_t(bytes())});
  return kSuccess;
}

// Blocks one after another (their __shared__ arrays are the module's
// statics), each with a host thread per CUDA thread.
CUresult LaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                      unsigned, void*, void** params, void** extra) {
  if (gy != 1 || gz != 1 || by != 1 || bz != 1 || bx == 0 || bx > 1024 || gx == 0 || extra) return kLaunchFailed;
  const Function& fn = *static_cast<Function*>(f);
  // The limit on kernel parameters: 4 KiB before CUDA 12.1.
  if (fn.parameter_bytes > (driver_version() >= 12010 ? 32764u : 4096u)) return kInvalidValue;
  static std::mutex launch_mu;
  std::lock_guard<std::mutex> lock(launch_mu);
  for (unsigned blk = 0; blk < gx; ++blk) {
    Block block(bx);
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < bx; ++t)
      threads.emplace_back([&, t] {
        this_block = &block;
        this_thread = t;
        fn.at(t, blk, bx, gx);
        fn.launch(params);
        // An exited thread no longer holds the others back.
        block.warps[t / 32]->arrive_and_drop();
        block.all.arrive_and_drop();
      });
    for (std::thread& th : threads) th.join();
  }
  return kSuccess;
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

// NVRTC, seen on the way (preloaded): the source of each program, and the
// image each program's source became.
using NvrtcResult = int;
NvrtcResult nvrtcCreateProgram(void** prog, const char* src, const char* name, int n, const char* const* headers,
                               const char* const* names) {
  using Fn = NvrtcResult (*)(void**, const char*, const char*, int, const char* const*, const char* const*);
  static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "nvrtcCreateProgram"));
  NvrtcResult r = real(prog, src, name, n, headers, names);
  if (r == 0) {
    std::lock_guard<std::mutex> lock(emu_mu);
    program_sources[*prog] = src;
  }
  return r;
}
NvrtcResult nvrtcGetCUBIN(void* prog, char* out) { return get_image("nvrtcGetCUBIN", prog, out); }
NvrtcResult nvrtcGetPTX(void* prog, char* out) { return get_image("nvrtcGetPTX", prog, out); }

// cuBLAS: one handle, the strided batched product of cublas_api.h.
int cublasCreate_v2(void** handle) {
  if (!initialised) return 1;  // CUBLAS_STATUS_NOT_INITIALIZED
  static int the_handle;
  *handle = &the_handle;
  return 0;
}
const char* cublasGetStatusString(int status) {
  switch (status) {
    case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 7: return "CUBLAS_STATUS_INVALID_VALUE";
    case 15: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_INTERNAL_ERROR";
  }
}
int cublasGemmStridedBatchedEx(void*, int transa, int transb, int m, int n, int k, const void* alpha, const void* A,
                               int atype, int lda, long long stride_a, const void* B, int btype, int ldb,
                               long long stride_b, const void* beta, void* C, int ctype, int ldc, long long stride_c,
                               int batch, int compute, int) {
  constexpr int kOpN = 0, kOpT = 1, kR32F = 0, kR64F = 1, kR16F = 2, kR16BF = 14, kCompute32F = 68, kCompute64F = 70;
  if (atype != btype || atype != ctype || (transa != kOpN && transa != kOpT) || (transb != kOpN && transb != kOpT) ||
      m < 0 || n < 0 || k < 0 || batch < 0 || ldc < std::max(1, m) ||
      lda < std::max(1, transa == kOpN ? m : k) || ldb < std::max(1, transb == kOpN ? k : n))
    return 7;  // CUBLAS_STATUS_INVALID_VALUE
  if ((atype != kR32F && atype != kR64F && atype != kR16F && atype != kR16BF) ||
      compute != (atype == kR64F ? kCompute64F : kCompute32F))
    return 15;  // CUBLAS_STATUS_NOT_SUPPORTED
  auto tagged = [](const void* p) { return (uintptr_t(p) & kTag) != 0; };
  if (!tagged(A) || !tagged(B) || !tagged(C)) return 7;
  // Elements of the one type of A, B and C, read and written through
  // thn's own float16/bfloat16 conversions.
  auto at = [&](const void* p, long long i) -> double {
    const char* h = static_cast<const char*>(host(CUdeviceptr(uintptr_t(p))));
    const uint16_t x16 = atype == kR16F || atype == kR16BF ? reinterpret_cast<const uint16_t*>(h)[i] : 0;
    switch (atype) {
      case kR32F: return reinterpret_cast<const float*>(h)[i];
      case kR64F: return reinterpret_cast<const double*>(h)[i];
      case kR16F: return thn::Half::to_float(x16);
      default: return thn::bits_float(uint32_t(x16) << 16);
    }
  };
  auto store = [&](long long i, double v) {
    char* h = static_cast<char*>(host(CUdeviceptr(uintptr_t(C))));
    switch (ctype) {
      case kR32F: reinterpret_cast<float*>(h)[i] = float(v); break;
      case kR64F: reinterpret_cast<double*>(h)[i] = v; break;
      case kR16F: reinterpret_cast<uint16_t*>(h)[i] = thn::Half::from_float(float(v)); break;
      default: reinterpret_cast<uint16_t*>(h)[i] = thn::BFloat16::from_float(float(v)); break;
    }
  };
  double al = compute == kCompute64F ? *static_cast<const double*>(alpha) : *static_cast<const float*>(alpha);
  double be = compute == kCompute64F ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta);
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double acc = 0;
        for (int p = 0; p < k; ++p) {
          double x = at(A, b * stride_a + (transa == kOpN ? i + (long long)p * lda : p + (long long)i * lda));
          double y = at(B, b * stride_b + (transb == kOpN ? p + (long long)j * ldb : j + (long long)p * ldb));
          acc += x * y;
        }
        long long c = b * stride_c + i + (long long)j * ldc;
        // C is read only when beta is not zero, as cuBLAS does (C's type is A's).
        store(c, al * acc + (be != 0 ? be * at(C, c) : 0.0));
      }
  return 0;
}

CUresult cuDriverGetVersion(int* v) {
  *v = driver_version();
  return kSuccess;
}

CUresult cuGetProcAddress_v2(const char* name, void** pfn, int, unsigned long long, int* status) {
  auto it = table().find(name);
  *pfn = it == table().end() ? nullptr : it->second;
  if (status) *status = *pfn ? 0 : 1;
  return kSuccess;
}

}  // extern "C"
