// Lists that hold each other: collect_cycles() frees exactly those that
// nothing outside the cycles reaches.
#include <catch2/catch.hpp>

#include "interp/value.h"

using namespace thn;

TEST_CASE("collect_cycles frees unreachable cycles of lists and keeps reachable ones") {
  collect_cycles();  // whatever earlier tests left
  size_t before = live_lists();
  std::weak_ptr<Object> lost, kept, inner;
  Value outside;
  {
    Value a = Value::list({Value(int64_t(1))});
    a.items().push_back(a);  // a holds itself
    lost = a.object();
    Value b = Value::list({});
    Value c = Value::tuple({b, Value(int64_t(2))});
    b.items().push_back(c);  // b -> c -> b, and reachable from outside
    kept = b.object();
    inner = c.object();
    outside = b;
  }
  REQUIRE(live_lists() == before + 3);
  REQUIRE(collect_cycles() == 1);
  CHECK(lost.expired());
  CHECK(!kept.expired());
  CHECK(!inner.expired());
  CHECK(outside.items()[0].items()[0].object() == outside.object());  // untouched
  outside = Value();
  CHECK(collect_cycles() == 2);
  CHECK(kept.expired());
  CHECK(live_lists() == before);
}
