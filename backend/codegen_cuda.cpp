// The CUDA emitter: grid-stride kernels in NVRTC's C++ (no std headers).
#include <fmt/format.h>

#include "backend/emitter.h"

namespace thn::codegen {

namespace {

// A grid-stride loop's first index and step.
constexpr const char* kThread = "idx_t(blockIdx.x) * idx_t(blockDim.x) + idx_t(threadIdx.x)";
constexpr const char* kGridStep = "idx_t(blockDim.x) * idx_t(gridDim.x)";

}  // namespace


// Every tensor contiguous and aligned to its vector (flat == 2): each
// thread moves `lanes` elements of every tensor per vector access, the
// body run per lane on registers (its in<t>/out<s> pointers shadowed by
// the vectors' arrays); the elements past the last whole vector are left
// to the element loop below (`done`).
std::string Emitter::cuda_vectors(int lanes) const {
  std::string out = "  idx_t done = 0;\n  if (flat == 2) {\n";
  out += fmt::format("    done = n / {0} * {0};\n", lanes);
  out += fmt::format("    for (idx_t w = {}; w < n / {}; w += {}) {{\n", kThread, lanes, kGridStep);
  for (size_t t = 0; t < k_.loads.size(); ++t)
    out += fmt::format("      const thn_vec<{0}, {1}> x{2} = *(const thn_vec<{0}, {1}>*)(in{2} + w * {1});\n",
                       stype(k_.loads[t].dtype), lanes, t);
  for (size_t s = 0; s < k_.stores.size(); ++s) out += fmt::format("      thn_vec<{}, {}> y{};\n", stype(k_.stores[s].dtype), lanes, s);
  out += fmt::format("#pragma unroll\n      for (int l = 0; l < {}; ++l) {{\n", lanes);
  for (size_t t = 0; t < k_.loads.size(); ++t)
    out += fmt::format("        const {0}* in{1} = x{1}.v;\n        const idx_t o{1} = l;\n", stype(k_.loads[t].dtype), t);
  for (size_t s = 0; s < k_.stores.size(); ++s)
    out += fmt::format("        {0}* out{1} = y{1}.v;\n        const idx_t o{2} = l;\n", stype(k_.stores[s].dtype), s,
                       k_.loads.size() + s);
  out += indent(statements(false), 8) + "      }\n";
  for (size_t s = 0; s < k_.stores.size(); ++s)
    out += fmt::format("      *(thn_vec<{0}, {1}>*)(out{2} + w * {1}) = y{2};\n", stype(k_.stores[s].dtype), lanes, s);
  return out + "    }\n  }\n";
}


std::string Emitter::cuda_pointwise() const {
  std::string out = cuda_vectors(vector_lanes(k_));
  out += fmt::format("  for (idx_t i = done + {}; i < n; i += {}) {{\n", kThread, kGridStep);
  for (size_t t = 0; t < tensors(); ++t) out += fmt::format("    idx_t o{} = i;\n", t);
  out += "    if (!flat) {\n";
  for (size_t t = 0; t < tensors(); ++t) out += fmt::format("      o{} = 0;\n", t);
  out += "      idx_t r = i;\n      for (int32_t d = nd - 1; d >= 0; --d) {\n"
         "        const idx_t c = r % idx_t(sz[d]);\n        r /= idx_t(sz[d]);\n";
  for (size_t t = 0; t < tensors(); ++t) out += fmt::format("        o{} += c * {};\n", t, stride(t, "d"));
  return out + "      }\n    }\n" + indent(statements(false), 4) + "  }\n";
}


// CUDA, mode 0: a block per output element, its threads striding over the
// reduced elements, then warp shuffles and a block reduction through
// shared memory, whose result every thread reads for the next sweep;
// mode 1 (few reduced elements, many outputs): a thread per output
// element.
std::string Emitter::cuda_reduction() const {
  std::string out;
  for (size_t k = 0; k < reduces_.size(); ++k)
    out += fmt::format("  __shared__ {} w{}[32];\n", ctype(accumulator(k_.exprs[reduces_[k]])), k);
  auto inner_offsets = [&](const std::string& j) {
    std::string s;
    for (size_t t = 0; t < tensors(); ++t)
      if (inner(t)) s += fmt::format("idx_t o{0} = b{0};\n", t);
    s += fmt::format("{{\n  idx_t r = {};\n  for (int32_t d = nd + rnd - 1; d >= nd; --d) {{\n"
                     "    const idx_t c = r % idx_t(sz[d]);\n    r /= idx_t(sz[d]);\n", j);
    for (size_t t = 0; t < tensors(); ++t)
      if (inner(t)) s += fmt::format("    o{} += c * {};\n", t, stride(t, "d"));
    return s + "  }\n}\n";
  };
  // mode 1
  out += fmt::format("  if (a.mode == 1) {{\n    for (idx_t q = {}; q < n; q += {}) {{\n", kThread, kGridStep);
  std::string element = outer_offsets("q") + accumulators() + outer_at() + outer(0, false);
  for (int stage = 0; stage < k_.stages; ++stage)
    element += "for (idx_t j = 0; j < rn; ++j) {\n" + indent("{\n" + indent(inner_offsets("j") + accumulate(stage), 2) + "}\n", 2) +
               "}\n" + outer(stage + 1, stage + 1 == k_.stages);
  out += indent(element, 6) + "    }\n    return;\n  }\n";
  // mode 0
  out += "  for (idx_t q = idx_t(blockIdx.x); q < n; q += idx_t(gridDim.x)) {\n";
  std::string block = outer_offsets("q") + accumulators() + outer_at() + outer(0, false);
  for (int stage = 0; stage < k_.stages; ++stage) {
    block += "for (idx_t j = idx_t(threadIdx.x); j < rn; j += idx_t(blockDim.x)) {\n" +
             indent("{\n" + indent(inner_offsets("j") + accumulate(stage), 2) + "}\n", 2) + "}\n";
    std::vector<size_t> folded;
    for (size_t k = 0; k < reduces_.size(); ++k)
      if (in_sweep(k, stage)) folded.push_back(k);
    if (!folded.empty()) {
      auto shuffle = [&]() {
        std::string s = "for (int off = 16; off > 0; off >>= 1) {\n";
        for (size_t k : folded) {
          const KExpr& e = k_.exprs[reduces_[k]];
          DType a = accumulator(e);
          std::string x = a == DType::Bool ? fmt::format("bool(__shfl_down_sync(0xffffffffu, int(a{}), off))", k)
                                           : fmt::format("__shfl_down_sync(0xffffffffu, a{}, off)", k);
          s += fmt::format("  a{0} = {1};\n", k, combine(e, fmt::format("a{}", k), x));
        }
        return s + "}\n";
      };
      block += shuffle() + "if ((threadIdx.x & 31) == 0) {\n";
      for (size_t k : folded) block += fmt::format("  w{0}[threadIdx.x >> 5] = a{0};\n", k);
      block += "}\n__syncthreads();\nif (threadIdx.x < 32) {\n";
      for (size_t k : folded)
        block += fmt::format("  a{0} = threadIdx.x < (blockDim.x + 31) / 32 ? w{0}[threadIdx.x] : {1};\n", k,
                             identity(k_.exprs[reduces_[k]]));
      block += indent(shuffle(), 2) + "}\n";
    }
    if (stage + 1 == k_.stages) break;
    // Thread 0 holds the results; every thread reads them for the next sweep.
    if (!folded.empty()) {
      block += "if (threadIdx.x == 0) {\n";
      for (size_t k : folded) block += fmt::format("  w{0}[0] = a{0};\n", k);
      block += "}\n__syncthreads();\n";
      for (size_t k : folded) block += fmt::format("a{0} = w{0}[0];\n", k);
      block += "__syncthreads();\n";
    }
    block += outer(stage + 1, false);
  }
  block += "if (threadIdx.x == 0) {\n" + indent(outer(k_.stages, true), 2) + "}\n__syncthreads();\n";
  return out + indent(block, 4) + "  }\n";
}

}  // namespace thn::codegen
