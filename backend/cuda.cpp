#include "backend/cuda.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "backend/kernel_cache.h"
#include "build_config.h"
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

CudaImage nvrtc_compile(const std::string& source, const std::string& requested) {
  std::vector<int> archs = supported_archs();
  if (archs.empty()) fail(ErrorKind::RuntimeError, "NVRTC supports no GPU architecture");
  int arch = archs.back();
  if (!requested.empty()) {
    if (!requested.starts_with("sm_") || requested.size() < 5)
      fail(ErrorKind::ValueError, "--arch expects sm_NN (sm_80, sm_90, ...), not '{}'", requested);
    try {
      arch = std::stoi(requested.substr(3));
    } catch (const std::exception&) {
      fail(ErrorKind::ValueError, "--arch expects sm_NN (sm_80, sm_90, ...), not '{}'", requested);
    }
  }
  bool cubin = std::find(archs.begin(), archs.end(), arch) != archs.end();
  int major = 0, minor = 0;
  check(nvrtcVersion(&major, &minor), "nvrtcVersion");
  std::vector<std::string> options{"--std=c++17", "-default-device", "-w",
                                   fmt::format("--gpu-architecture={}_{}", cubin ? "sm" : "compute", arch)};
  std::string opts;
  for (const std::string& o : options) opts += o + " ";
  std::string key = hash_hex(source + "\n" + opts + fmt::format("\nnvrtc {}.{}", major, minor));
  CudaImage image{fmt::format("sm_{}", arch), cubin, "", false};
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

#endif

}  // namespace thn
