#include "passes/pipeline.h"

#include <chrono>
#include <cstdio>

#include "passes/alias_analysis.h"
#include "passes/buffer_plan.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/functionalize.h"
#include "passes/fusion.h"
#include "passes/lower_to_prims.h"
#include "passes/remat.h"
#include "passes/view_adds.h"
#include "passes/verify.h"

namespace thn {

namespace {

using Pass = Trace (*)(Trace);
struct NamedPass {
  const char* name;
  Pass run;
};

// The order matters: every later pass reads prims, so lowering comes first;
// functionalize follows it (it turns prims.copy_ into values); cse and
// view_adds need a functional trace, and dce cleans up after them; alias analysis gives the
// buffer plan each value's memory; fusion decides which values exist in
// memory at all (and rematerialization trades some of them for loads of
// what they were computed from), so the plan comes after both.
const NamedPass kPasses[] = {{"lower_to_prims", lower_to_prims}, {"functionalize", functionalize}, {"cse", cse},
                             {"view_adds", view_adds}, {"dce", dce}, {"alias_analysis", alias_analysis}, {"fusion", fusion},
                             {"rematerialize", rematerialize}, {"buffer_plan", buffer_plan}};

}  // namespace

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v{"tracing"};
    for (const NamedPass& p : kPasses) v.push_back(p.name);
    return v;
  }();
  return names;
}

Trace run_pipeline(Trace t, const PipelineOptions& opts, std::vector<PassRecord>& records) {
  auto keep = [&](const std::string& name, const Trace& tr) {
    records.push_back({name, tr, tr.ms});
    if (opts.print_after == name || opts.print_after == "all")
      std::fprintf(stderr, "# after %s\n%s\n", name.c_str(), records.back().printed().c_str());
  };
  keep("tracing", t);
  for (const NamedPass& p : kPasses) {
    auto start = std::chrono::steady_clock::now();
    t = p.run(std::move(t));
    t.constructed_by = p.name;
    t.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    keep(p.name, t);
    if (opts.verify_each) verify(t, p.name);
  }
  return t;
}

std::string print_passes(const std::vector<PassRecord>& records) {
  std::string out, before;
  for (const PassRecord& r : records) {
    std::string text = r.printed();
    const size_t header = text.find('\n') + 1;
    std::string body = text.substr(header);
    if (!before.empty() && body == before) text = text.substr(0, header - 1) + " (unchanged)\n";
    out += text + "\n";
    before = std::move(body);
  }
  return out;
}

}  // namespace thn
