// Containers that hold each other (lists, closures and their frames):
// collect_cycles() frees exactly those that nothing outside the cycles
// reaches.
#include <catch2/catch.hpp>

#include "interp/interpreter.h"
#include "interp/value.h"

using namespace thn;

TEST_CASE("collect_cycles frees unreachable cycles of lists and keeps reachable ones") {
  collect_cycles();  // whatever earlier tests left
  size_t before = live_containers();
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
  REQUIRE(live_containers() == before + 3);
  REQUIRE(collect_cycles() == 1);
  CHECK(lost.expired());
  CHECK(!kept.expired());
  CHECK(!inner.expired());
  CHECK(outside.items()[0].items()[0].object() == outside.object());  // untouched
  outside = Value();
  CHECK(collect_cycles() == 2);
  CHECK(kept.expired());
  CHECK(live_containers() == before);
}

TEST_CASE("collect_cycles frees closures and the frames they close over") {
  InterpOptions opts;
  std::FILE* sink = std::fopen("/dev/null", "w");
  opts.out = sink;
  Interpreter in(opts);
  // make() returns a closure that reads its own name: frame -> fact ->
  // frame, kept by nothing once the caller drops it. keep() stores one in
  // a list the module keeps.
  in.run_interactive(std::make_shared<const Source>("<test>", R"(
def make(k):
    big = [k] * 100
    def fact(n):
        return 1 if n <= 1 else n * fact(n - 1)
    return fact

kept = []
def keep():
    kept.append(make(0))
)"));
  collect_cycles();
  size_t before = live_containers();
  in.run_interactive(std::make_shared<const Source>("<test>", "for i in range(50):\n    make(i)(5)\nkeep()\n"));
  CHECK(live_containers() >= before + 50 * 2);  // each call's frame and closure (release() dropped `big`)
  size_t freed = collect_cycles();
  CHECK(freed >= 50 * 2);
  // keep()'s closure, its frame and list, and the range loop's leftovers stay.
  CHECK(live_containers() <= before + 3);
  Value r = in.run_interactive(std::make_shared<const Source>("<test>", "kept[0](4)\n"));
  CHECK(r.as_int() == 24);
  std::fclose(sink);
}
