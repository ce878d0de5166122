#include "backend/cuda.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "backend/codegen.h"
#include "backend/kernel_cache.h"
#include "backend/launch.h"
#include "build_config.h"
#include "runtime/cuda.h"
#include "runtime/error.h"

#if THN_HAVE_CUDA_TOOLKIT
#include <nvrtc.h>
#endif

namespace thn {

#if THN_HAVE_CUDA_TOOLKIT

bool have_nvrtc() { return true; }

namespace {

void check(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS) fail(ErrorKind::RuntimeError, "NVRTC: {} failed: {}", what, nvrtcGetErrorString(r));
}

std::vector<int> supported_archs() {
  int n = 0;
  check(nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(size_t(n), 0);
  if (n) check(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  return archs;
}

}  // namespace

namespace {

// NN of `sm_NN` (two or three digits), or nullopt.
std::optional<int> arch_number(const std::string& s) {
  if (!s.starts_with("sm_") || s.size() < 5 || s.size() > 6) return std::nullopt;
  for (size_t i = 3; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
  return std::stoi(s.substr(3));
}

}  // namespace

std::string arch_problem(const std::string& requested) {
  std::optional<int> arch = arch_number(requested);
  if (!arch) return fmt::format("--arch expects sm_NN (sm_80, sm_90, ...), not '{}'", requested);
  std::vector<int> archs = supported_archs();
  if (archs.empty()) return "NVRTC supports no GPU architecture";
  if (*arch < archs.front()) {
    int major = 0, minor = 0;
    check(nvrtcVersion(&major, &minor), "nvrtcVersion");
    return fmt::format("NVRTC {}.{} cannot compile for sm_{}: it supports sm_{} to sm_{} (and newer archs as PTX)",
                       major, minor, *arch, archs.front(), archs.back());
  }
  return "";
}

CudaImage nvrtc_compile(const std::string& source, const std::string& requested) {
  std::vector<int> archs = supported_archs();
  if (archs.empty()) fail(ErrorKind::RuntimeError, "NVRTC supports no GPU architecture");
  int arch = archs.back();
  if (!requested.empty()) {
    if (std::string problem = arch_problem(requested); !problem.empty()) fail(ErrorKind::ValueError, "{}", problem);
    arch = *arch_number(requested);
  }
  // A cubin for an arch NVRTC knows; else PTX for the newest virtual arch
  // below it, which the driver compiles for the device when it loads it.
  int major = 0, minor = 0;
  check(nvrtcVersion(&major, &minor), "nvrtcVersion");
  bool cubin = std::find(archs.begin(), archs.end(), arch) != archs.end();
  int virtual_arch = arch;
  if (!cubin) {  // (a device's own arch is not checked above)
    auto below = std::find_if(archs.rbegin(), archs.rend(), [&](int a) { return a <= arch; });
    if (below == archs.rend())
      fail(ErrorKind::RuntimeError, "NVRTC {}.{} cannot compile for sm_{}: it supports sm_{} to sm_{}", major, minor,
           arch, archs.front(), archs.back());
    virtual_arch = *below;
  }
  // No contraction of a multiply and an add into one FMA (NVRTC's default):
  // kernels round each op as the CPU's kernels do (runtime/scalar_math.h).
  std::vector<std::string> options{"--std=c++17", "-default-device", "-w", "--fmad=false",
                                   cubin ? fmt::format("--gpu-architecture=sm_{}", arch)
                                         : fmt::format("--gpu-architecture=compute_{}", virtual_arch)};
  std::string opts;
  for (const std::string& o : options) opts += o + " ";
  std::string key = hash_hex(source + "\n" + opts + fmt::format("\nnvrtc {}.{}", major, minor));
  CudaImage image{cubin ? fmt::format("sm_{}", arch) : fmt::format("compute_{}", virtual_arch), cubin, "", false};
  std::string name = key + (cubin ? ".cubin" : ".ptx");
  if (std::string cached = cache_load(name); !cached.empty()) {
    image.data = std::move(cached);
    image.from_disk = true;
    return image;
  }
  nvrtcProgram prog;
  check(nvrtcCreateProgram(&prog, source.c_str(), "thn_kernels.cu", 0, nullptr, nullptr), "nvrtcCreateProgram");
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  nvrtcResult r = nvrtcCompileProgram(prog, int(argv.size()), argv.data());
  if (r != NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    if (n) nvrtcGetProgramLog(prog, log.data());
    nvrtcDestroyProgram(&prog);
    std::string path = keep_source(key + ".cu", source);
    fail(ErrorKind::RuntimeError, "NVRTC could not compile the generated kernels ({}):\n{}\ngenerated source: {}",
         nvrtcGetErrorString(r), log, path);
  }
  size_t size = 0;
  if (cubin) check(nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
  else check(nvrtcGetPTXSize(prog, &size), "nvrtcGetPTXSize");
  image.data.resize(size);
  if (cubin) check(nvrtcGetCUBIN(prog, image.data.data()), "nvrtcGetCUBIN");
  else check(nvrtcGetPTX(prog, image.data.data()), "nvrtcGetPTX");
  nvrtcDestroyProgram(&prog);
  cache_store(name, image.data);
  return image;
}

#else

bool have_nvrtc() { return false; }

CudaImage nvrtc_compile(const std::string&, const std::string&) {
  fail(ErrorKind::RuntimeError, "this build of thn has no CUDA backend (no CUDA toolkit at build time)");
}

std::string arch_problem(const std::string&) { return "this build of thn has no CUDA backend"; }

#endif

// ---- loading and launching ---------------------------------------------------

cuda::CUmodule load_module(const CudaImage& image) {
  static std::mutex mu;
  static auto& loaded = *new std::unordered_map<std::string, cuda::CUmodule>;
  std::lock_guard<std::mutex> lock(mu);
  cuda::CUmodule& m = loaded[hash_hex(image.data)];
  if (m) return m;
  const cuda::CUresult r = cuda::driver().cuModuleLoadData(&m, image.data.data());
  if (r == 0) return m;
  // A driver older than the toolkit cannot load what its NVRTC made.
  const int driver = cuda::device_info().driver_version;
  std::string why;
#if THN_HAVE_CUDA_TOOLKIT
  int major = 0, minor = 0;
  // (209: no binary for the GPU, 222: a PTX version the driver lacks.)
  if ((r == 209 || r == 222) && nvrtcVersion(&major, &minor) == NVRTC_SUCCESS && driver < major * 1000 + minor * 10)
    why = fmt::format(": the driver supports CUDA {}.{}, older than the NVRTC ({}.{}) that compiled the kernels; "
                      "update the NVIDIA driver",
                      driver / 1000, driver % 1000 / 10, major, minor);
#endif
  fail(ErrorKind::RuntimeError, "CUDA error: cuModuleLoadData failed: {} (the kernels: {} for {}){}", cuda::error_text(r),
       image.cubin ? "cubin" : "PTX", image.arch, why);
}

namespace {

// The most blocks a launch over rows takes (each grid-strides past it).
constexpr int64_t kMaxRowBlocks = int64_t(1) << 30;

// The argument struct of every CUDA kernel (codegen.cpp):
//   struct NAME_args { int64_t n, rn; int32_t nd, rnd, flat, wide, mode, splits;
//                      void* ws; int64_t sz[D]; void* p[T]; int64_t st[D * T];
//                      double fs[S]; int64_t is[S]; };
// packed here with the same layout, D = kMaxKernelDims.
class ArgBuffer {
 public:
  explicit ArgBuffer(const Kernel& k) : words_(kernel_argument_bytes(k) / 8, 0) {}
  void header(int64_t n, int64_t rn, int32_t nd, int32_t rnd, int32_t flat, int32_t wide, int32_t mode, int32_t splits,
              cuda::CUdeviceptr ws) {
    words_[0] = n;
    words_[1] = rn;
    const int32_t w[6] = {nd, rnd, flat, wide, mode, splits};
    std::memcpy(&words_[2], w, sizeof w);  // six int32 in words 2..4
    std::memcpy(&words_[5], &ws, sizeof ws);
  }
  // Copies `count` 8-byte values to words [word, word + count).
  void put(size_t word, const void* from, size_t count) {
    if (count) std::memcpy(&words_[word], from, count * 8);
  }
  size_t bytes() const { return words_.size() * 8; }
  void* data() { return words_.data(); }

 private:
  std::vector<int64_t> words_;
};

// The workspace of reductions split over blocks or warps (modes 2 and 4):
// the counters of kSplitCounters rows or tiles, zero between launches
// (the last block or warp of each resets its own), then split_slot_bytes
// per row or tile and part (`parts` in all) for each of `k`'s reductions'
// partial results. One for the process, grown when a launch needs more:
// launches on the one stream run in order, so they share it.
cuda::CUdeviceptr split_workspace(const Kernel& k, int64_t parts, int lanes) {
  const size_t reductions =
      size_t(std::count_if(k.exprs.begin(), k.exprs.end(), [](const KExpr& e) { return e.kind == KExpr::Kind::Reduce; }));
  const size_t bytes = size_t(kSplitCounters) * 4 + reductions * size_t(parts) * split_slot_bytes(lanes);
  static std::mutex mu;
  static cuda::CUdeviceptr p = 0;
  static size_t have = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (bytes <= have) return p;
  cuda::CUdeviceptr q = 0;
  cuda::check(cuda::driver().cuMemAlloc(&q, bytes), "cuMemAlloc (the split reductions' workspace)");
  const std::vector<unsigned char> zeros(size_t(kSplitCounters) * 4);
  cuda::copy_to_device(q, zeros.data(), zeros.size());
  if (p) cuda::driver().cuMemFree(p);  // (synchronous: no launch still reads it)
  p = q;
  have = bytes;
  return p;
}

// The most bytes of kernel arguments the device takes: 4 KiB, or 32 KiB
// minus 4 from CUDA 12.1 on Volta and newer.
size_t max_argument_bytes() {
  const cuda::DeviceInfo& d = cuda::device_info();
  return d.driver_version >= 12010 && d.major >= 7 ? kMaxParameterBytes : kMinParameterBytes;
}

class CudaFusion : public CompiledFusion {
 public:
  // Per index width (32-bit, 64-bit): the entry taking its arguments by
  // value (null when the module lacks it) and the one taking them from
  // device memory (null unless the arguments may be over the limit).
  struct Entries {
    cuda::CUfunction by_value = nullptr, by_pointer = nullptr;
  };
  // Per mode (cuda_entry_modes: a reduction's strategies; none for a mode
  // it lacks), per width.
  CudaFusion(const BoundSymbol& f, Kernel k, std::vector<Entries> narrow, std::vector<Entries> wide)
      : CompiledFusion(f, std::move(k), Device{DeviceType::CUDA}),
        narrow_(std::move(narrow)),
        wide_(std::move(wide)),
        cache_(cuda_row_cache_vectors(kernel())) {}

 private:
  bool launch(const KernelCall& c) const override {
    const size_t tensors = c.data.size(), scalars = c.fs.size();
    ArgBuffer args(kernel());
    // (THN_CUDA_WIDE_INDEX=1: every launch takes the 64-bit entry, which the
    // tests could not reach otherwise without 2^30 elements.)
    static const bool force_wide = [] {
      const char* e = std::getenv("THN_CUDA_WIDE_INDEX");
      return e && std::string_view(e) == "1";
    }();
    const bool wide = force_wide || needs_wide_index(c.sizes, c.strides, size_t(kMaxKernelDims));
    // (THN_CUDA_ONLINE_ROWS=1: softmax's rows take mode 5 even where the
    // row cache holds them, for bench/gpu to compare the two on a GPU.)
    static const bool online_rows = [] {
      const char* e = std::getenv("THN_CUDA_ONLINE_ROWS");
      return e && std::string_view(e) == "1";
    }();
    const int64_t sms = cuda::device_info().multiprocessors;
    int64_t block = kCudaBlock, grid = 0;
    int32_t mode = 0, splits = 1;
    cuda::CUdeviceptr ws = 0;
    if (!kernel().reduction) {
      const int64_t per_thread = c.flat == 2 ? lanes() : 1;  // elements per vector access
      grid = std::min(((c.n + per_thread - 1) / per_thread + block - 1) / block, sms * 8);
    } else if (c.rn <= 16) {  // a thread per output
      mode = 1;
      grid = std::min((c.n + block - 1) / block, sms * 8);
    } else if (reduces_rows(kernel(), c) && c.rn < 2048) {  // a warp per row
      // (Rows, a block or a warp each, are not capped at a few waves: the
      // last wave is then one row per block, not several.)
      mode = 3;
      grid = std::min((c.n + block / 32 - 1) / (block / 32), kMaxRowBlocks);
    } else if (reduces_rows(kernel(), c) && (narrow_[5].by_value || narrow_[5].by_pointer) &&
               (online_rows || !(c.flat == 2 && c.rn / lanes() <= cache_ * block))) {
      // Softmax's rows past the row cache: a block per row, x read twice.
      mode = 5;
      grid = std::min(c.n, kMaxRowBlocks);
    } else if (reduces_rows(kernel(), c)) {  // a block per row
      mode = 2;
      // A single sweep over few rows: each row split over blocks too
      // (every thread keeping at least 8 vectors), for a full wave of warps.
      const int64_t chunks = c.rn / (block * lanes() * 8);
      if (kernel().stages == 1 && c.n <= kSplitCounters && c.n < sms * 8 && chunks > 1) {
        splits = int32_t(std::min(sms * 8 / c.n, chunks));
        ws = split_workspace(kernel(), c.n * splits, lanes());
      }
      grid = std::min(c.n * splits, kMaxRowBlocks);
    } else if (kernel().stages == 1 && reduces_columns(kernel(), c)) {  // a warp per 32 adjacent outputs
      mode = 4;
      const int64_t width = c.flat == 2 ? 32 * lanes() : 32;  // (aligned columns: a vector a lane)
      const int64_t qin = c.sizes[size_t(c.nd) - 1], tiles = c.n / qin * ((qin + width - 1) / width), warps = block / 32;
      // Few tiles: each tile's rows split over warps too (each keeping at
      // least 16 of them: two rounds of its 8 loads in flight), for half
      // the warps the device holds at once.
      const int64_t rin = c.sizes[size_t(c.nd + c.rnd) - 1], parts = rin / 16;
      if (tiles <= kSplitCounters && tiles < sms * 32 && parts > 1) {
        splits = int32_t(std::min(sms * 32 / tiles, parts));
        ws = split_workspace(kernel(), tiles * splits, lanes());
      }
      grid = std::min((tiles * splits + warps - 1) / warps, sms * 32);
    } else {  // a block per output, as many threads as reduced elements (in warps) up to kCudaBlock
      block = std::min<int64_t>(kCudaBlock, (c.rn + 31) / 32 * 32);
      grid = std::min(c.n, sms * 32);
    }
    args.header(c.n, c.rn, c.nd, c.rnd, c.flat, wide, mode, splits, ws);
    size_t w = 6;
    args.put(w, c.sizes.data(), c.sizes.size());
    w += kMaxKernelDims;
    args.put(w, c.data.data(), tensors);
    w += tensors;
    args.put(w, c.strides.data(), c.strides.size());
    w += c.strides.size();
    args.put(w, c.fs.data(), scalars);
    args.put(w + scalars, c.is.data(), scalars);
    const unsigned blocks = unsigned(std::max<int64_t>(grid, 1));
    // Launch errors name the kernel (formatted only then: launches are hot).
    auto launched = [&](cuda::CUresult r) {
      if (r != 0) cuda::check(r, fmt::format("cuLaunchKernel ({})", kernel().name).c_str());
      return true;
    };
    const Entries& entry = (wide ? wide_ : narrow_)[size_t(mode)];
    if (entry.by_value && args.bytes() <= max_argument_bytes()) {
      void* params[] = {args.data()};
      return launched(
          cuda::driver().cuLaunchKernel(entry.by_value, blocks, 1, 1, unsigned(block), 1, 1, 0, nullptr, params, nullptr));
    }
    // Over the limit (many tensors, an older driver or NVRTC): the struct
    // goes to device memory first, a block back in the cache once launched.
    // (Over the limit is over kMinParameterBytes, so the kernel has the
    // entry.)
    cuda::ScratchBlock block_of_args(args.bytes());
    cuda::CUdeviceptr d = block_of_args.get();
    cuda::copy_to_device(d, args.data(), args.bytes());
    void* params[] = {&d};
    return launched(
        cuda::driver().cuLaunchKernel(entry.by_pointer, blocks, 1, 1, unsigned(block), 1, 1, 0, nullptr, params, nullptr));
  }

  std::vector<Entries> narrow_, wide_;
  int cache_;  // row cache vectors per thread (modes 2 and 3)
};

}  // namespace

FusionKernels compile_cuda(const Trace& t, CompileInfo* info) {
  std::vector<Kernel> ks = lower_fusions(t);
  FusionKernels out;
  if (ks.empty()) return out;
  const auto start = std::chrono::steady_clock::now();
  CudaImage image = nvrtc_compile(render_kernels(ks, Target::Cuda), cuda::device_info().arch());
  cuda::CUmodule m = load_module(image);
  if (info) {
    info->from_disk = image.from_disk;
    info->ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  size_t k = 0;
  for (const BoundSymbol& b : t.body)
    if (is_fusion(b)) {
      // A kernel with the by-pointer entry may lack the other (codegen.cpp).
      const bool large = has_by_pointer_entry(ks[k]);
      auto entries = [&](const std::string& name) {
        CudaFusion::Entries e;
        const cuda::CUresult found = cuda::driver().cuModuleGetFunction(&e.by_value, m, name.c_str());
        if (!large || found != cuda::kNotFound) cuda::check(found, "cuModuleGetFunction");
        if (large)
          cuda::check(cuda::driver().cuModuleGetFunction(&e.by_pointer, m, (name + "_by_pointer").c_str()),
                      "cuModuleGetFunction");
        return e;
      };
      std::vector<CudaFusion::Entries> narrow(kCudaModes), wide(kCudaModes);
      for (int mode : cuda_entry_modes(ks[k])) {
        narrow[size_t(mode)] = entries(cuda_entry_name(ks[k], mode, false));
        wide[size_t(mode)] = entries(cuda_entry_name(ks[k], mode, true));
      }
      out.push_back(std::make_shared<CudaFusion>(b, std::move(ks[k]), std::move(narrow), std::move(wide)));
      ++k;
    }
  return out;
}

}  // namespace thn
