// libFuzzer target over the kernel cache's loader: each input becomes the
// files of one cache entry (a host module's .so, .sum and .lock, a device
// image and its .sum), each of them random bytes or, by a selector byte, a
// directory, a symlink loop, a symlink to /dev/zero, a FIFO or nothing. The
// loader must answer "no entry" (null, empty) without crashing, hanging,
// reading without end or loading the bytes: a checksum covering the key
// guards every load. Run by scripts/fuzz-cache.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "backend/kernel_cache.h"
#include "runtime/error.h"

namespace fs = std::filesystem;

namespace {

const std::string& cache_dir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/thn-cache-fuzz-XXXXXX";
    if (!mkdtemp(tmpl)) std::abort();
    setenv("XDG_CACHE_HOME", tmpl, 1);
    return thn::kernel_cache_dir();
  }();
  return dir;
}

// Makes `path` what `kind` says, with `bytes` for a regular file.
void plant(const fs::path& path, uint8_t kind, const std::string& bytes) {
  std::error_code ec;
  fs::remove_all(path, ec);
  switch (kind % 6) {
    case 0: std::ofstream(path, std::ios::binary) << bytes; break;
    case 1: fs::create_directory(path, ec); break;
    case 2: fs::create_symlink(path, path, ec); break;  // a loop
    case 3: fs::create_symlink("/dev/zero", path, ec); break;
    case 4: mkfifo(path.c_str(), 0600); break;
    default: break;  // missing
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path dir = cache_dir();
  // Five files: a selector byte each, then the bytes split into five parts.
  if (size < 5) return 0;
  const uint8_t* kinds = data;
  std::string rest(reinterpret_cast<const char*>(data + 5), size - 5);
  const size_t part = rest.size() / 5;
  auto piece = [&](int i) { return rest.substr(size_t(i) * part, i == 4 ? std::string::npos : part); };
  const std::string key = "00000000000000000000000000000000", image = key + ".cubin";
  const fs::path files[] = {dir / (key + ".so"), dir / (key + ".sum"), dir / (key + ".lock"), dir / image,
                            dir / (image + ".sum")};
  for (int i = 0; i < 5; ++i) plant(files[i], kinds[i], piece(i));
  try {
    if (thn::cached_module(key)) std::abort();  // no checksum can hold for these bytes
    if (!thn::cache_load(image).empty()) std::abort();
  } catch (const thn::Error&) {
    // (a clear error is an answer too)
  }
  return 0;
}
