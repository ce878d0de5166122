// The caching device allocator's policy, with raw allocation functions over
// a pretend device of fixed capacity (no GPU needed).
#include <catch2/catch.hpp>

#include <map>

#include "runtime/cuda.h"
#include "runtime/error.h"

using namespace thn;
using cuda::CachingAllocator;
using cuda::CUdeviceptr;

namespace {

struct PretendDevice {
  size_t capacity = 0, used = 0;
  CUdeviceptr next = 0x1000;
  std::map<CUdeviceptr, size_t> live;
  int frees = 0;
  CachingAllocator allocator() {
    return CachingAllocator(
        [this](size_t n) -> CUdeviceptr {
          if (used + n > capacity) return 0;
          used += n;
          CUdeviceptr p = next;
          next += n;
          live[p] = n;
          return p;
        },
        [this](CUdeviceptr p) {
          used -= live.at(p);
          live.erase(p);
          frees++;
        });
  }
};

}  // namespace

TEST_CASE("allocation sizes round to 512 bytes up to 1 MiB, to 2 MiB above", "[runtime][cuda]") {
  CHECK(CachingAllocator::round_size(0) == 512);
  CHECK(CachingAllocator::round_size(1) == 512);
  CHECK(CachingAllocator::round_size(513) == 1024);
  CHECK(CachingAllocator::round_size(1 << 20) == (1 << 20));
  CHECK(CachingAllocator::round_size((1 << 20) + 1) == (2 << 20));
  CHECK(CachingAllocator::round_size((5 << 20) + 3) == (6 << 20));
}

TEST_CASE("a freed block serves the next request of its size", "[runtime][cuda]") {
  PretendDevice dev;
  dev.capacity = 1 << 20;
  CachingAllocator a = dev.allocator();
  CUdeviceptr p = a.allocate(1000);
  a.release(p);
  CHECK(a.stats().cached_bytes == 1024);
  CHECK(a.allocate(1024) == p);  // same rounded size: reused
  CHECK(a.stats().reuses == 1);
  CHECK(a.stats().device_allocations == 1);
  CUdeviceptr q = a.allocate(100);  // smaller class: a new block
  CHECK(q != p);
  a.release(q);
  // A cached block at most twice the request serves it; a larger one does not.
  CHECK(a.allocate(300) == q);  // 512 for 512
  a.release(p);
  CHECK(a.allocate(600) == p);  // 1024 for 1024 (rounded)
  CUdeviceptr s = a.allocate(4000);
  a.release(s);
  CUdeviceptr r = a.allocate(1500);  // 1536: the 4096 block is too large
  CHECK(r != s);
  CHECK(a.stats().in_use_bytes == 512 + 1024 + 1536);
  CHECK(a.stats().cached_bytes == 4096);
}

TEST_CASE("out of memory returns the cache to the device and retries, then fails clearly", "[runtime][cuda]") {
  PretendDevice dev;
  dev.capacity = 4096;
  CachingAllocator a = dev.allocator();
  CUdeviceptr p = a.allocate(1024), q = a.allocate(1024);
  a.release(p);
  a.release(q);
  CHECK(dev.used == 2048);         // cached, still held on the device
  CUdeviceptr big = a.allocate(3000);  // needs the cache back
  CHECK(big != 0);
  CHECK(dev.frees == 2);
  CHECK(a.stats().cached_bytes == 0);
  CHECK_THROWS_WITH(a.allocate(2048), Catch::Contains("CUDA out of memory. Tried to allocate 2048 bytes"));
  a.release(big);
  a.empty_cache();
  CHECK(dev.used == 0);
  CHECK(dev.live.empty());
}
