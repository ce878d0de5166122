// REPL completion against a live session: what it offers, and that every
// attribute it offers is one getattr accepts.
#include <catch2/catch.hpp>

#include <algorithm>

#include "cli/complete.h"
#include "interp/interpreter.h"
#include "jit/jit.h"

using namespace thn;

namespace {

struct Session {
  InterpOptions opts;
  std::shared_ptr<JitRegistry> jits;
  std::unique_ptr<Interpreter> in;
  Session() {
    opts.module_path = {std::string(THN_TEST_DIR) + "/../stdlib"};
    jits = install_jit(opts, JitOptions{});
    in = std::make_unique<Interpreter>(opts);
    install_jit_builtins(*in);
    in->run_interactive(std::make_shared<const Source>(
        "<test>", "import math\nimport nn\nx = ones(2, 2)\nxs = [1, 2]\nname = 'a'\ndef scale(t, factor=2):\n"
                  "    return t * factor\n\ng = jit(scale)\nvals = x.max(0)\n"));
  }
  std::vector<std::string> offers(std::string_view line) { return complete(*in, line).candidates; }
};

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

TEST_CASE("completion: tensor methods after x.") {
  Session s;
  auto c = s.offers("y = x.su");
  CHECK(has(c, "x.sum"));
  CHECK(has(c, "x.sub"));
  CHECK(has(c, "x.sub_"));
  CHECK_FALSE(has(c, "x.add"));
  CHECK(complete(*s.in, "y = x.su").start == 4);
}

TEST_CASE("completion: names, keywords, modules, keyword arguments, commands") {
  Session s;
  CHECK(has(s.offers("sc"), "scale"));
  CHECK(has(s.offers("ret"), "return"));
  CHECK(has(s.offers("zer"), "zeros"));
  CHECK(has(s.offers("math.sq"), "math.sqrt"));
  CHECK(has(s.offers("nn.lay"), "nn.layer_norm"));
  CHECK(has(s.offers("import ma"), "math"));
  CHECK(has(s.offers("import o"), "optim"));  // a stdlib module file
  CHECK(has(s.offers("from math import sq"), "sqrt"));
  CHECK(has(s.offers("from nn import soft"), "softmax"));
  CHECK(s.offers("from optim import ").empty());  // not imported: its code would have to run
  CHECK(has(s.offers("scale(x, fa"), "factor="));
  CHECK(has(s.offers("sum(x, di"), "dim="));
  CHECK(has(s.offers("x.sum(di"), "dim="));
  CHECK(has(s.offers(":mo"), ":mode"));
  CHECK(s.offers(":mode i") == std::vector<std::string>{"interpret"});
  CHECK(s.offers(":trace ") == std::vector<std::string>{"g"});
  CHECK(s.offers("nothing_here_").empty());
  CHECK(s.offers("(1).re").empty());  // no code runs to find an attribute
}

TEST_CASE("completion: every attribute offered is one getattr accepts") {
  Session s;
  for (const char* obj : {"x", "xs", "(1, 2)", "name", "x.dtype", "x.device", "math", "vals"}) {
    Value v = s.in->run_interactive(std::make_shared<const Source>("<test>", std::string(obj) + "\n"));
    std::vector<std::string> names = attribute_names(v);
    CHECK_FALSE(names.empty());
    for (const std::string& a : names) {
      INFO(obj << "." << a);
      CHECK_NOTHROW(s.in->getattr(v, a));
    }
  }
}
