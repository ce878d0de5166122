// The buffer plan and the verifier on hand-built functional traces: where
// the plan may write into an updated input, and that the verifier rejects
// plans that would read an overwritten value.
#include <catch2/catch.hpp>

#include "passes/alias_analysis.h"
#include "passes/buffer_plan.h"
#include "passes/verify.h"

using namespace thn;

namespace {

Value tensor4(const std::string& name) {
  Value v = metadata_tensor(DType::Float32, kCPU, {Value(int64_t(4))});
  tensor_proxy(v).name = name;
  tensor_proxy(v).strides = {1};
  return v;
}

BoundSymbol op(OpId id, std::vector<Value> args, Value out) {
  BoundSymbol b;
  b.sym = Symbol::prim_op(op_def(id));
  b.args = std::move(args);
  b.out = std::move(out);
  return b;
}

BoundSymbol copy_to_out(const Value& computed, const Value& x) {
  BoundSymbol b;
  b.sym = Symbol::of(PrimId::copy_to_out_);
  b.args = {computed, x};
  return b;
}

Value fresh() { return metadata_tensor(DType::Float32, kCPU, {Value(int64_t(4))}); }

// x.copy_(x.exp()) where `reads_old` also reads the old x after exp.
Trace exp_into(const Value& x, bool reads_old) {
  Trace t;
  t.inputs = {x};
  Value e = fresh(), n = fresh();
  t.body.push_back(op(OpId::exp, {x}, e));
  if (reads_old) t.body.push_back(op(OpId::neg, {x}, n));
  t.body.push_back(copy_to_out(e, x));
  t.output = reads_old ? n : Value();
  t.functional = true;
  return t;
}

Trace plan(const Trace& t) { return buffer_plan(alias_analysis(t)); }

}  // namespace

TEST_CASE("buffer plan: the producer writes into the updated input when nothing reads the old value") {
  Value x = tensor4("x");
  Trace p = plan(exp_into(x, false));
  REQUIRE(p.body.size() == 1);  // the write-back is gone
  CHECK(&p.body[0].into.symbolic() == &x.symbolic());
  CHECK(buffer_stats(p).writeback_copies == 0);
  CHECK_NOTHROW(verify(p, "buffer_plan"));
}

TEST_CASE("buffer plan: a later read of the old value keeps the write-back copy") {
  Value x = tensor4("x");
  Trace p = plan(exp_into(x, true));
  REQUIRE(p.body.size() == 3);
  CHECK(p.body[0].into.is_none());
  CHECK(buffer_stats(p).writeback_copies == 1);
  CHECK_NOTHROW(verify(p, "buffer_plan"));
}

TEST_CASE("verifier: rejects a plan whose in-place write precedes a read of the old value") {
  Value x = tensor4("x");
  Trace p = plan(exp_into(x, true));
  p.body[0].into = x;  // what Thunder's copy_to_out_ did to the kv-cache
  p.body.pop_back();
  REQUIRE_THROWS_WITH(verify(p, "buffer_plan"), Catch::Contains("overwritten"));
}

TEST_CASE("verifier: rejects an in-place write that reads its target through a view") {
  Value x = tensor4("x");
  Trace t;
  t.inputs = {x};
  Value v = fresh(), r = fresh();
  t.body.push_back(op(OpId::flip, {x, Value::list({Value(int64_t(0))})}, v));
  t.body.push_back(op(OpId::neg, {v}, r));
  t.body.push_back(copy_to_out(r, x));
  t.functional = true;
  Trace p = plan(t);
  CHECK(buffer_stats(p).writeback_copies == 0);  // flip copies: neg may write into x
  CHECK_NOTHROW(verify(p, "buffer_plan"));
  // A permute is a view of x: the plan keeps the copy, and a plan writing
  // neg(view) into x is rejected.
  t.body[0] = op(OpId::permute, {x, Value::tuple({Value(int64_t(0))})}, v);
  Trace kept = plan(t);
  CHECK(kept.body[1].into.is_none());
  CHECK(buffer_stats(kept).writeback_copies == 1);
  Trace a = alias_analysis(t);
  a.body[1].into = x;
  a.body.pop_back();
  REQUIRE_THROWS_WITH(verify(a, "buffer_plan"), Catch::Contains("through a view"));
}

TEST_CASE("verifier: rejects a use after the value was dropped and a use before definition") {
  Value x = tensor4("x");
  Trace p = plan(exp_into(x, false));
  Value n = fresh();
  BoundSymbol late = op(OpId::neg, {p.body[0].out}, n);
  p.body[0].frees = {p.body[0].out};
  p.body.push_back(late);
  REQUIRE_THROWS_WITH(verify(p, "buffer_plan"), Catch::Contains("after it was dropped"));
  Trace q;
  q.inputs = {x};
  q.body.push_back(op(OpId::neg, {fresh()}, n));
  REQUIRE_THROWS_WITH(verify(q, "cse"), Catch::Contains("before it is defined"));
}
