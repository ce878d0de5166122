// The kernel cache: a second request is served from memory, a dropped module
// from disk, and a corrupt disk entry is rebuilt, never loaded.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <fstream>

#include "backend/compile_queue.h"
#include "backend/kernel_cache.h"
#include "runtime/error.h"

namespace thn {

namespace {
using Fn = int (*)(int);
const char* kSource = "extern \"C\" int thn_test_twice(int x) { return 2 * x + 17; }\n";
}  // namespace

// Until no compile is pending: a finished job (which holds its module)
// lets go of its last reference when its worker moves on.
void settle() {
  while (pending_compiles() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST_CASE("kernel cache: memory, disk, corrupt entries rebuilt") {
  CompileInfo first;
  auto m = host_module(kSource, &first);
  REQUIRE(reinterpret_cast<Fn>(m->symbol("thn_test_twice"))(4) == 25);
  CompileInfo again;
  auto same = host_module(kSource, &again);
  CHECK(again.from_memory);
  CHECK(same.get() == m.get());
  m.reset();
  same.reset();
  settle();

  CompileInfo disk;
  auto d = host_module(kSource, &disk);
  CHECK(disk.from_disk);
  CHECK(reinterpret_cast<Fn>(d->symbol("thn_test_twice"))(1) == 19);
  d.reset();
  settle();

  {  // a torn write: the checksum no longer holds
    std::ofstream f(disk.path, std::ios::binary | std::ios::trunc);
    f << "not a shared object";
  }
  CompileInfo rebuilt;
  auto r = host_module(kSource, &rebuilt);
  CHECK_FALSE(rebuilt.from_disk);
  CHECK_FALSE(rebuilt.from_memory);
  CHECK(reinterpret_cast<Fn>(r->symbol("thn_test_twice"))(0) == 17);
}

TEST_CASE("kernel cache: a compile error reports the compiler's log and leaves no files behind") {
  // (This process's: other tests compile into the same cache meanwhile.)
  const std::string mine = fmt::format(".{}.", getpid());
  auto leftovers = [&] {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(kernel_cache_dir()))
      n += e.path().filename().string().find(mine) != std::string::npos;
    return n;
  };
  const int before = leftovers();
  try {
    host_module("extern \"C\" int broken( { return }\n");
    FAIL("no error");
  } catch (const Error& e) {
    std::string msg = e.what();
    CHECK(msg.find("compiling kernels failed") != std::string::npos);
    CHECK(msg.find("error") != std::string::npos);
  }
  CHECK(leftovers() == before);
}

}  // namespace thn
