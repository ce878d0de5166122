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


// The reductions of sweep `stage`, by accumulator.
std::vector<size_t> Emitter::folded(int stage) const {
  std::vector<size_t> ks;
  for (size_t k = 0; k < reduces_.size(); ++k)
    if (in_sweep(k, stage)) ks.push_back(k);
  return ks;
}

// The accumulators `ks` combined across a warp: down the lanes to lane 0
// (`xor_`: every lane gets the result, in the same order of operations, so
// the lanes agree bit for bit).
std::string Emitter::warp_fold(const std::vector<size_t>& ks, bool xor_) const {
  std::string s = "for (int off = 16; off > 0; off >>= 1) {\n";
  const char* shfl = xor_ ? "__shfl_xor_sync" : "__shfl_down_sync";
  for (size_t k : ks) {
    const KExpr& e = k_.exprs[reduces_[k]];
    std::string x = accumulator(e) == DType::Bool ? fmt::format("bool({}(0xffffffffu, int(a{}), off))", shfl, k)
                                                  : fmt::format("{}(0xffffffffu, a{}, off)", shfl, k);
    s += fmt::format("  a{0} = {1};\n", k, combine(e, fmt::format("a{}", k), x));
  }
  return s + "}\n";
}

// The accumulators `ks` combined across the block (warps, then the warps'
// results through w<k>); `every`: every thread reads the result, else
// thread 0 holds it.
std::string Emitter::block_fold(const std::vector<size_t>& ks, bool every) const {
  if (ks.empty()) return "";
  std::string s = warp_fold(ks, false) + "if ((threadIdx.x & 31) == 0) {\n";
  for (size_t k : ks) s += fmt::format("  w{0}[threadIdx.x >> 5] = a{0};\n", k);
  s += "}\n__syncthreads();\nif (threadIdx.x < 32) {\n";
  for (size_t k : ks)
    s += fmt::format("  a{0} = threadIdx.x < (blockDim.x + 31) / 32 ? w{0}[threadIdx.x] : {1};\n", k,
                     identity(k_.exprs[reduces_[k]]));
  s += indent(warp_fold(ks, false), 2) + "}\n";
  if (!every) return s;
  s += "__syncthreads();\nif (threadIdx.x == 0) {\n";
  for (size_t k : ks) s += fmt::format("  w{0}[0] = a{0};\n", k);
  s += "}\n__syncthreads();\n";
  for (size_t k : ks) s += fmt::format("a{0} = w{0}[0];\n", k);
  return s + "__syncthreads();\n";
}

// The inner loads several sweeps read, widest first (kept in the row
// cache when rows fit), and the cache's bytes per reduced element.
std::vector<size_t> Emitter::cached_loads() const {
  std::vector<size_t> ts;
  for (size_t t = 0; t < k_.loads.size(); ++t) {
    std::vector<int> stages;
    for (const KExpr& e : k_.exprs)
      if (e.kind == KExpr::Kind::Load && e.inner && size_t(e.index) == t &&
          std::find(stages.begin(), stages.end(), e.stage) == stages.end())
        stages.push_back(e.stage);
    if (stages.size() > 1) ts.push_back(t);
  }
  std::stable_sort(ts.begin(), ts.end(),
                   [&](size_t a, size_t b) { return itemsize(k_.loads[a].dtype) > itemsize(k_.loads[b].dtype); });
  return ts;
}

// The row cache of this thread's row: `cached` (it fits: `slices` rows
// share kRowCacheBytes) and cache<t> per cached load, 16-byte aligned.
std::string Emitter::row_cache(const std::string& slice, const std::string& slices) const {
  std::vector<size_t> ts = cached_loads();
  if (ts.empty()) return "";
  std::string out = "idx_t used = 0;\n", sizes;
  for (size_t t : ts) {
    out += fmt::format("const idx_t at{0} = used;\nused += (rn * {1} + 15) / 16 * 16;\n", t, itemsize(k_.loads[t].dtype));
  }
  out += fmt::format("const bool cached = used * {} <= {};\n", slices, kRowCacheBytes);
  out += fmt::format("unsigned char* const mine = rc + (cached ? used * {} : 0);\n", slice);
  for (size_t t : ts) out += fmt::format("{0}* const cache{1} = ({0}*)(mine + at{1});\n", stype(k_.loads[t].dtype), t);
  return out;
}

// Sweep `stage` along a contiguous row (every inner tensor at b<t> + j),
// this thread taking j = first, first + step, ...: with `lanes` > 1 and
// every row aligned (flat == 2), `lanes` elements of each tensor the sweep
// reads or writes per vector access, the rest one by one. A load several
// sweeps read is kept in the row cache (when `cached`) by the first and
// read from it by the others; each thread reads back only what it kept.
std::string Emitter::row_sweep(int stage, const std::string& first, const std::string& step, int lanes) const {
  std::vector<size_t> loads, stores;
  for (const KExpr& e : k_.exprs)
    if (e.kind == KExpr::Kind::Load && e.inner && e.stage == stage &&
        std::find(loads.begin(), loads.end(), size_t(e.index)) == loads.end())
      loads.push_back(size_t(e.index));
  for (size_t s = 0; s < k_.stores.size(); ++s)
    if (k_.stores[s].inner && k_.stores[s].stage == stage) stores.push_back(s);
  const std::vector<size_t> cache = cached_loads();
  auto first_sweep = [&](size_t t) {
    int f = k_.stages;
    for (const KExpr& e : k_.exprs)
      if (e.kind == KExpr::Kind::Load && e.inner && size_t(e.index) == t) f = std::min(f, e.stage);
    return f;
  };
  auto is_cached = [&](size_t t) { return std::find(cache.begin(), cache.end(), t) != cache.end(); };
  std::string out = "idx_t j0 = 0;\n", keep;
  for (size_t t : loads) {
    const std::string type = stype(k_.loads[t].dtype);
    if (is_cached(t) && first_sweep(t) < stage)
      out += fmt::format("const {0}* const row{1} = cached ? cache{1} : in{1} + b{1};\n", type, t);
    else
      out += fmt::format("const {0}* const row{1} = in{1} + b{1};\n", type, t);
  }
  for (size_t s : stores)
    out += fmt::format("{0}* const row{1} = out{2} + b{1};\n", stype(k_.stores[s].dtype), k_.loads.size() + s, s);
  if (lanes > 1) {
    std::string body;
    for (size_t t : loads) {
      const std::string vec = fmt::format("thn_vec<{}, {}>", stype(k_.loads[t].dtype), lanes);
      body += fmt::format("const {0} x{1} = *(const {0}*)(row{1} + w * {2});\n", vec, t, lanes);
      if (is_cached(t) && first_sweep(t) == stage) body += fmt::format("if (cached) *({0}*)(cache{1} + w * {2}) = x{1};\n", vec, t, lanes);
    }
    for (size_t s : stores) body += fmt::format("thn_vec<{}, {}> y{};\n", stype(k_.stores[s].dtype), lanes, s);
    std::string lane;
    for (size_t t : loads) lane += fmt::format("const {0}* in{1} = x{1}.v;\nconst idx_t o{1} = l;\n", stype(k_.loads[t].dtype), t);
    for (size_t s : stores)
      lane += fmt::format("{0}* out{1} = y{1}.v;\nconst idx_t o{2} = l;\n", stype(k_.stores[s].dtype), s, k_.loads.size() + s);
    body += fmt::format("#pragma unroll\nfor (int l = 0; l < {}; ++l) {{\n", lanes) + indent(lane + accumulate(stage), 2) + "}\n";
    for (size_t s : stores)
      body += fmt::format("*(thn_vec<{0}, {1}>*)(row{3} + w * {1}) = y{2};\n", stype(k_.stores[s].dtype), lanes, s,
                          k_.loads.size() + s);
    out += fmt::format("if (flat == 2) {{\n  const idx_t vn = rn / {};\n#pragma unroll 2\n  for (idx_t w = {}; w < vn; w += {}) {{\n",
                       lanes, first, step) +
           indent(body, 4) + fmt::format("  }}\n  j0 = vn * {};\n}}\n", lanes);
  }
  std::string scalar;
  for (size_t t : loads) {
    scalar += fmt::format("const {0}* in{1} = row{1};\nconst idx_t o{1} = j;\n", stype(k_.loads[t].dtype), t);
    if (is_cached(t) && first_sweep(t) == stage) scalar += fmt::format("if (cached) cache{0}[j] = row{0}[j];\n", t);
  }
  for (size_t s : stores)
    scalar += fmt::format("{0}* out{1} = row{2};\nconst idx_t o{2} = j;\n", stype(k_.stores[s].dtype), s, k_.loads.size() + s);
  return out + fmt::format("for (idx_t j = j0 + {}; j < rn; j += {}) {{\n", first, step) + indent(scalar + accumulate(stage), 2) +
         "}\n";
}

// CUDA. The launch picks a strategy by the call's shape (`mode`):
//  0: a block per output element, its threads striding over the reduced
//     elements (offsets by division over the reduced dims), then a block
//     reduction whose result every thread reads for the next sweep;
//  1: few reduced elements: a thread per output element;
//  2: rows (one reduced dim, contiguous in every inner tensor): a block per
//     row, vector loads when rows are aligned; what several sweeps read is
//     read from memory once when the row fits the row cache;
//  3: short rows: a warp per row, the same sweeps, warp shuffles only (the
//     block's warps share the row cache);
//  4: columns (single sweep, the innermost output dim contiguous in every
//     inner tensor): a block per tile of 32 adjacent outputs, each warp
//     taking every (blockDim.x / 32)-th reduced element of all 32, so a
//     warp's loads are one coalesced row; the warps' partials combined in
//     warp order.
std::string Emitter::cuda_reduction() const {
  const int lanes = vector_lanes(k_);
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
  const std::string start = outer_offsets("q") + accumulators() + outer_at() + outer(0, false);
  // mode 1
  out += fmt::format("  if (a.mode == 1) {{\n    for (idx_t q = {}; q < n; q += {}) {{\n", kThread, kGridStep);
  std::string element = start;
  for (int stage = 0; stage < k_.stages; ++stage)
    element += "for (idx_t j = 0; j < rn; ++j) {\n" + indent("{\n" + indent(inner_offsets("j") + accumulate(stage), 2) + "}\n", 2) +
               "}\n" + outer(stage + 1, stage + 1 == k_.stages);
  out += indent(element, 6) + "    }\n    return;\n  }\n";
  const bool caches = !cached_loads().empty();
  if (caches)  // (16-byte aligned: an array of 16-byte vectors)
    out += fmt::format("  __shared__ thn_vec<float, 4> rc_vectors[{}];\n  unsigned char* const rc = (unsigned char*)rc_vectors;\n",
                       kRowCacheBytes / 16);
  // mode 2
  std::string row = start + row_cache("0", "1");
  for (int stage = 0; stage < k_.stages; ++stage) {
    row += "{\n" + indent(row_sweep(stage, "idx_t(threadIdx.x)", "idx_t(blockDim.x)", lanes), 2) + "}\n";
    if (stage + 1 == k_.stages) {
      row += block_fold(folded(stage), false);
      break;
    }
    row += block_fold(folded(stage), true) + outer(stage + 1, false);
  }
  row += "if (threadIdx.x == 0) {\n" + indent(outer(k_.stages, true), 2) + "}\n__syncthreads();\n";
  out += "  if (a.mode == 2) {\n    for (idx_t q = idx_t(blockIdx.x); q < n; q += idx_t(gridDim.x)) {\n" + indent(row, 6) +
         "    }\n    return;\n  }\n";
  // mode 3
  std::string warp = start + row_cache("idx_t(threadIdx.x >> 5)", "idx_t(blockDim.x >> 5)");
  for (int stage = 0; stage < k_.stages; ++stage) {
    warp += "{\n" + indent(row_sweep(stage, "idx_t(threadIdx.x & 31)", "idx_t(32)", lanes), 2) + "}\n";
    warp += warp_fold(folded(stage), true) + outer(stage + 1, false);
  }
  // (the outer stores: lane 0's)
  warp += "if ((threadIdx.x & 31) == 0) {\n" + indent(stores(false, 0), 2) + "}\n";
  out += "  if (a.mode == 3) {\n"
         "    const idx_t rows = idx_t(blockDim.x >> 5);\n"
         "    for (idx_t q = idx_t(blockIdx.x) * rows + idx_t(threadIdx.x >> 5); q < n; q += idx_t(gridDim.x) * rows) {\n" +
         indent(warp, 6) + "    }\n    return;\n  }\n";
  // mode 4
  if (k_.stages == 1) {
    for (size_t k = 0; k < reduces_.size(); ++k)
      out += fmt::format("  __shared__ {} c{}[{}];\n", ctype(accumulator(k_.exprs[reduces_[k]])), k, kCudaBlock);
    std::string tile =
        "const idx_t first = tile % tiles * 32, column = first + idx_t(threadIdx.x & 31);\n"
        "const bool live = column < qin;\n"
        "const idx_t q = tile / tiles * qin + (live ? column : qin - 1);  // (a dead lane repeats a live one's loads)\n" +
        start + "for (idx_t rq = 0; rq < rout; ++rq) {\n" + indent(row_offsets(), 2) +
        "  for (idx_t i = idx_t(threadIdx.x >> 5); i < rin; i += idx_t(blockDim.x >> 5)) {\n";
    for (size_t t = 0; t < tensors(); ++t)
      if (inner(t)) tile += fmt::format("    const idx_t o{0} = e{0} + i * {1};\n", t, stride(t, "nd + rnd - 1"));
    tile += indent(accumulate(0), 4) + "  }\n}\n";
    for (size_t k = 0; k < reduces_.size(); ++k) tile += fmt::format("c{0}[threadIdx.x] = a{0};\n", k);
    tile += "__syncthreads();\nif (threadIdx.x < 32) {\n  for (int y = 1; y < int(blockDim.x >> 5); ++y) {\n";
    for (size_t k = 0; k < reduces_.size(); ++k)
      tile += fmt::format("    a{0} = {1};\n", k, combine(k_.exprs[reduces_[k]], fmt::format("a{}", k),
                                                          fmt::format("c{}[y * 32 + int(threadIdx.x)]", k)));
    tile += "  }\n  if (live) {\n" + indent(outer(1, true), 4) + "  }\n}\n__syncthreads();\n";
    out += "  if (a.mode == 4) {\n"
           "    const idx_t qin = idx_t(sz[nd - 1]), tiles = (qin + 31) / 32, count = n / qin * tiles;\n"
           "    const idx_t rin = idx_t(sz[nd + rnd - 1]), rout = rn / rin;\n"
           "    for (idx_t tile = idx_t(blockIdx.x); tile < count; tile += idx_t(gridDim.x)) {\n" +
           indent(tile, 6) + "    }\n    return;\n  }\n";
  }
  // mode 0
  out += "  for (idx_t q = idx_t(blockIdx.x); q < n; q += idx_t(gridDim.x)) {\n";
  std::string block = start;
  for (int stage = 0; stage < k_.stages; ++stage) {
    block += "for (idx_t j = idx_t(threadIdx.x); j < rn; j += idx_t(blockDim.x)) {\n" +
             indent("{\n" + indent(inner_offsets("j") + accumulate(stage), 2) + "}\n", 2) + "}\n";
    if (stage + 1 == k_.stages) {
      block += block_fold(folded(stage), false);
      break;
    }
    block += block_fold(folded(stage), true) + outer(stage + 1, false);
  }
  block += "if (threadIdx.x == 0) {\n" + indent(outer(k_.stages, true), 2) + "}\n__syncthreads();\n";
  return out + indent(block, 4) + "  }\n";
}

}  // namespace thn::codegen
