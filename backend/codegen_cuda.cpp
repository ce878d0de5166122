// The CUDA emitter: grid-stride kernels in NVRTC's C++ (no std headers).
#include <fmt/format.h>

#include <algorithm>
#include <regex>

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
std::string Emitter::warp_fold(const std::vector<size_t>& ks, bool xor_, const Online* online) const {
  std::string s = "for (int off = 16; off > 0; off >>= 1) {\n";
  const char* shfl = xor_ ? "__shfl_xor_sync" : "__shfl_down_sync";
  auto has = [&](size_t k) { return std::find(ks.begin(), ks.end(), k) != ks.end(); };
  const bool pair = online && has(online->max) && has(online->sum);
  if (pair) {
    // (an online sum and its max: each side's sum rescaled to the larger
    // max, before the max's own fold; -inf == -inf keeps the sum as it is)
    const KExpr& sum = k_.exprs[reduces_[online->sum]];
    const std::string c = ctype(accumulator(k_.exprs[reduces_[online->max]])), t = ctype(accumulator(sum));
    const std::string m = fmt::format("a{}", online->max), a = fmt::format("a{}", online->sum);
    auto scaled = [&](const std::string& sum_, const std::string& max_) {
      return fmt::format("({1} == m2 ? {0} : {0} * {2}(thn::thn_exp<{3}>({3}({1} - m2))))", sum_, max_, t, c);
    };
    s += fmt::format("  {{\n    const {0} pm = {1}(0xffffffffu, {2}, off);\n    const {3} ps = {1}(0xffffffffu, {4}, off);\n"
                     "    const {0} m2 = thn::thn_maximum<{0}>({2}, pm);\n    {4} = {5};\n  }}\n",
                     c, shfl, m, t, a, combine(sum, scaled(a, m), scaled("ps", "pm")));
  }
  for (size_t k : ks) {
    if (pair && k == online->sum) continue;
    const KExpr& e = k_.exprs[reduces_[k]];
    std::string x = accumulator(e) == DType::Bool ? fmt::format("bool({}(0xffffffffu, int(a{}), off))", shfl, k)
                                                  : fmt::format("{}(0xffffffffu, a{}, off)", shfl, k);
    s += fmt::format("  a{0} = {1};\n", k, combine(e, fmt::format("a{}", k), x));
  }
  return s + "}\n";
}

// The accumulators `ks` combined across the block (warps, then the warps'
// results through w<k>); `every`: every warp folds the warps' results
// itself (the same order of operations in every lane and warp, so all
// threads agree bit for bit) after one barrier, else warp 0 does and
// thread 0 holds the result. (w<k> is written again only for the next
// row, after the barrier that ends this one.)
std::string Emitter::block_fold(const std::vector<size_t>& ks, bool every, const Online* online) const {
  if (ks.empty()) return "";
  std::string s = warp_fold(ks, false, online) + "if ((threadIdx.x & 31) == 0) {\n";
  for (size_t k : ks) s += fmt::format("  w{0}[threadIdx.x >> 5] = a{0};\n", k);
  s += every ? "}\n__syncthreads();\n{\n" : "}\n__syncthreads();\nif (threadIdx.x < 32) {\n";
  for (size_t k : ks)
    s += fmt::format("  a{0} = (threadIdx.x & 31) < (blockDim.x + 31) / 32 ? w{0}[threadIdx.x & 31] : {1};\n", k,
                     identity(k_.exprs[reduces_[k]]));
  return s + indent(warp_fold(ks, every, online), 2) + "}\n";
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

// The register row cache: vectors per thread per cached load, the same
// for every cached load (128 bytes of registers in all, at most 16).
int Emitter::cache_vectors(int lanes) const {
  int64_t bytes = 0;
  for (size_t t : cached_loads()) bytes += lanes * itemsize(k_.loads[t].dtype);
  return bytes == 0 ? 0 : int(std::clamp<int64_t>(128 / bytes, 1, 16));
}

// The row cache of this thread's share of its row: reg<t>[R] per cached
// load, and `cached` when the row fits (aligned rows only: a thread keeps
// the vectors it reads at first, first + step, ...).
std::string Emitter::row_cache(const std::string& step, int lanes) const {
  const int r = cache_vectors(lanes);
  if (r == 0) return "";
  std::string out;
  for (size_t t : cached_loads()) out += fmt::format("thn_vec<{}, {}> reg{}[{}];\n", stype(k_.loads[t].dtype), lanes, t, r);
  return out + fmt::format("const bool cached = flat == 2 && rn / {} <= {} * {};\n", lanes, r, step);
}

// Values a later sweep would compute again from a cached load (softmax's
// exp(x - max): summed by one sweep, divided by the sum in the next). The
// earlier sweep keeps each in the load's register cache in place of the
// load, and the later one reads it from there instead of recomputing it.
// Possible when the later sweep is the last to read the load and reads it
// only through that value, no sweep between the two reads the load, and
// the value has the load's type.
std::vector<Reuse> Emitter::reuses() const {
  std::vector<Reuse> out;
  const std::vector<size_t> cache = cached_loads();
  if (cache.empty()) return out;
  const std::vector<std::string> sig = signatures();
  auto reads = [&](size_t i, size_t t) {
    const KExpr& e = k_.exprs[i];
    return e.inner && e.kind == KExpr::Kind::Load && size_t(e.index) == t;
  };
  for (size_t t : cache) {
    std::vector<int> stages;
    for (size_t i = 0; i < k_.exprs.size(); ++i)
      if (reads(i, t)) stages.push_back(k_.exprs[i].stage);
    const int last = *std::max_element(stages.begin(), stages.end());
    for (size_t late = k_.exprs.size(); late-- > 0;) {
      const KExpr& e = k_.exprs[late];
      if (!e.inner || e.stage != last || e.kind == KExpr::Kind::Load || ctype(e.dtype) != stype(k_.loads[t].dtype) ||
          sig[late].find(fmt::format("in{}[", t)) == std::string::npos)
        continue;
      // The latest earlier sweep computing the same value, with no sweep
      // between reading the load.
      int early = -1;
      for (size_t i = 0; i < k_.exprs.size(); ++i)
        if (k_.exprs[i].inner && k_.exprs[i].stage < last && sig[i] == sig[late] &&
            (early < 0 || k_.exprs[i].stage > k_.exprs[size_t(early)].stage))
          early = int(i);
      if (early < 0 || std::any_of(stages.begin(), stages.end(), [&](int s) {
            return s > k_.exprs[size_t(early)].stage && s < last;
          }))
        continue;
      // What the last sweep still computes, with this value read instead:
      // it must not read the load.
      std::vector<int> todo;
      for (const KStore& st : k_.stores)
        if (st.inner && st.stage == last) todo.push_back(st.expr);
      for (size_t k = 0; k < reduces_.size(); ++k)
        if (in_sweep(k, last)) todo.push_back(operand_[k]);
      std::vector<bool> seen(k_.exprs.size());
      bool clean = true;
      while (!todo.empty() && clean) {
        const int i = todo.back();
        todo.pop_back();
        if (i < 0 || seen[size_t(i)] || !k_.exprs[size_t(i)].inner || size_t(i) == late) continue;
        seen[size_t(i)] = true;
        clean = !reads(size_t(i), t);
        for (int o : k_.exprs[size_t(i)].operands) todo.push_back(o);
      }
      if (clean) {
        out.push_back({t, early, int(late)});
        break;
      }
    }
  }
  return out;
}

// Each inner value's source with its inner operands' sources in place of
// their names (an outer value's: its name): the same text, the same value,
// in whichever sweep it is computed.
std::vector<std::string> Emitter::signatures() const {
  std::vector<std::string> sig(k_.exprs.size());
  static const std::regex name(R"(\bv(\d+)\b)");
  for (size_t i = 0; i < k_.exprs.size(); ++i) {
    if (!k_.exprs[i].inner) {
      sig[i] = v(int(i));
      continue;
    }
    const std::string text = value(k_.exprs[i]);
    std::string expanded;
    auto at = text.cbegin();
    for (std::sregex_iterator m(text.begin(), text.end(), name), end; m != end; ++m) {
      expanded.append(at, (*m)[0].first);
      expanded += "(" + sig[std::stoul((*m)[1].str())] + ")";
      at = (*m)[0].second;
    }
    sig[i] = expanded.append(at, text.cend());
  }
  return sig;
}

// Softmax's sum of exp(x - max), folded in the sweep after the max's, and
// nothing else in that sweep: the two can be folded in one sweep over x
// (mode 5), the sum rescaled whenever the running max grows. Needs a later
// sweep (the one that normalises), the max's operand the same value as the
// sum's x, and one compute type for x, the max and exp.
std::optional<Online> Emitter::online() const {
  if (target_ != Target::Cuda || !k_.reduction) return std::nullopt;
  const std::vector<std::string> sig = signatures();
  for (size_t j = 0; j < reduces_.size(); ++j) {
    const KExpr& sum = k_.exprs[reduces_[j]];
    const int sweep = sum.stage - 1;
    if (sum.prim.sym.op->id != OpId::sum || !is_floating(sum.compute) || sweep < 1 || sweep + 1 >= k_.stages) continue;
    const KExpr& ex = k_.exprs[size_t(operand_[j])];
    if (ex.kind != KExpr::Kind::Op || ex.prim.sym.op->id != OpId::exp) continue;
    const KExpr& d = k_.exprs[size_t(ex.operands[0])];
    if (d.kind != KExpr::Kind::Op || d.prim.sym.op->id != OpId::sub || d.operands.size() < 3 || ctype(d.compute) != ctype(ex.compute))
      continue;
    const KExpr& alpha = k_.exprs[size_t(d.operands[2])];
    const KExpr& m = k_.exprs[size_t(d.operands[1])];
    if (!is_constant(alpha, 1.0) || m.kind != KExpr::Kind::Reduce || m.prim.sym.op->id != OpId::amax || m.stage != sweep)
      continue;
    const size_t i = size_t(accumulator_[size_t(d.operands[1])]);
    const std::string c = ctype(d.compute);
    // (x, as the max reads it and as the sum does, either widened exactly first)
    auto exact = [&](int x) {
      const KExpr& e = k_.exprs[size_t(x)];
      return e.kind == KExpr::Kind::Cast && widens_exactly(k_.exprs[size_t(e.operands[0])].dtype, e.dtype) ? e.operands[0] : x;
    };
    if (ctype(m.dtype) != c || ctype(accumulator(m)) != c || ctype(k_.exprs[size_t(operand_[i])].dtype) != c ||
        sig[size_t(exact(operand_[i]))] != sig[size_t(exact(d.operands[0]))])
      continue;
    // Nothing else in the sum's sweep: no other reduction, no store.
    bool alone = std::none_of(k_.stores.begin(), k_.stores.end(), [&](const KStore& st) { return st.inner && st.stage == sweep; });
    for (size_t k = 0; k < reduces_.size(); ++k) alone = alone && (k == j || !in_sweep(k, sweep));
    if (alone) return Online{i, j, operand_[i], sweep - 1};
  }
  return std::nullopt;
}

// The online update of `o`'s sum by the max's operand (before the max's
// own update): rescaled when the max grows, -inf adding 0.
std::string Emitter::online_step(const Online& o) const {
  const KExpr& sum = k_.exprs[reduces_[o.sum]];
  const std::string c = ctype(k_.exprs[size_t(o.value)].dtype), t = ctype(accumulator(sum));
  const std::string m = fmt::format("a{}", o.max), s = fmt::format("a{}", o.sum);
  return fmt::format("{{  // (the sum of exp(x - max), online)\n"
                     "  const {0} x = {0}(v{1});\n"
                     "  if (x > {2}) {3} = {3} * {4}(thn::thn_exp<{0}>({0}({2} - x)));\n"
                     "  {3} = {5};\n}}\n",
                     c, o.value, m, s, t,
                     combine(sum, s, fmt::format("{}(x == {}(-thn_inf()) ? {}(0) : thn::thn_exp<{}>({}(x - (x > {} ? x : {}))))", t, c,
                                                  c, c, c, m, m)));
}

// Sweep `stage` along a contiguous row (every inner tensor at b<t> + j),
// this thread taking j = first, first + step, ...: with `lanes` > 1 and
// every row aligned (flat == 2), `lanes` elements of each tensor the sweep
// reads or writes per vector access, the rest one by one. A load several
// sweeps read is kept in registers (when `cached`: the row fits, and the
// loop is unrolled so that reg<t>[k] is a register) by the first sweep and
// read from them by the others; the tail past the last vector is read from
// memory each time.
std::string Emitter::row_sweep(int stage, const std::string& first, const std::string& step, int lanes, bool cache_rows,
                               const Online* online) const {
  std::vector<size_t> loads, stores;
  for (const KExpr& e : k_.exprs)
    if (e.kind == KExpr::Kind::Load && e.inner && e.stage == stage &&
        std::find(loads.begin(), loads.end(), size_t(e.index)) == loads.end())
      loads.push_back(size_t(e.index));
  for (size_t s = 0; s < k_.stores.size(); ++s)
    if (k_.stores[s].inner && k_.stores[s].stage == stage) stores.push_back(s);
  const std::vector<size_t> cache = cached_loads();
  const std::vector<Reuse> reuse = reuses();
  auto first_sweep = [&](size_t t) {
    int f = k_.stages;
    for (const KExpr& e : k_.exprs)
      if (e.kind == KExpr::Kind::Load && e.inner && size_t(e.index) == t) f = std::min(f, e.stage);
    return f;
  };
  auto is_cached = [&](size_t t) { return std::find(cache.begin(), cache.end(), t) != cache.end(); };
  std::string out = "idx_t j0 = 0;\n";
  for (size_t t : loads) out += fmt::format("const {0}* const row{1} = in{1} + b{1};\n", stype(k_.loads[t].dtype), t);
  for (size_t s : stores)
    out += fmt::format("{0}* const row{1} = out{2} + b{1};\n", stype(k_.stores[s].dtype), k_.loads.size() + s, s);
  if (lanes > 1) {
    // The body per vector w (k: its register slot, when `registers`).
    auto body = [&](bool registers) {
      std::string b;
      for (size_t t : loads) {
        const std::string vec = fmt::format("thn_vec<{}, {}>", stype(k_.loads[t].dtype), lanes);
        if (registers && is_cached(t) && first_sweep(t) < stage) {
          b += fmt::format("const {0} x{1} = reg{1}[k];\n", vec, t);
          continue;
        }
        b += fmt::format("const {0} x{1} = *(const {0}*)(row{1} + w * {2});\n", vec, t, lanes);
        if (registers && is_cached(t)) b += fmt::format("reg{0}[k] = x{0};\n", t);
      }
      for (size_t s : stores) b += fmt::format("thn_vec<{}, {}> y{};\n", stype(k_.stores[s].dtype), lanes, s);
      std::string lane;
      for (size_t t : loads) lane += fmt::format("const {0}* in{1} = x{1}.v;\nconst idx_t o{1} = l;\n", stype(k_.loads[t].dtype), t);
      for (size_t s : stores)
        lane += fmt::format("{0}* out{1} = y{1}.v;\nconst idx_t o{2} = l;\n", stype(k_.stores[s].dtype), s, k_.loads.size() + s);
      // (from the register cache: the values an earlier sweep kept; into
      // it, in place of the load, the values a later sweep reads)
      std::vector<Reuse> kept;
      std::string keep;
      for (const Reuse& r : registers ? reuse : std::vector<Reuse>{}) {
        if (k_.exprs[size_t(r.late)].stage == stage) kept.push_back(r);
        if (k_.exprs[size_t(r.early)].stage == stage)
          keep += fmt::format("reg{}[k].v[l] = v{};  // (for sweep {})\n", r.load, r.early, k_.exprs[size_t(r.late)].stage);
      }
      b += fmt::format("#pragma unroll\nfor (int l = 0; l < {}; ++l) {{\n", lanes) +
           indent(lane + accumulate(stage, "", kept, online) + keep, 2) + "}\n";
      for (size_t s : stores)
        b += fmt::format("*(thn_vec<{0}, {1}>*)(row{3} + w * {1}) = y{2};\n", stype(k_.stores[s].dtype), lanes, s,
                         k_.loads.size() + s);
      return b;
    };
    const std::string loop = fmt::format("#pragma unroll 2\nfor (idx_t w = {}; w < vn; w += {}) {{\n", first, step) +
                             indent(body(false), 2) + "}\n";
    out += fmt::format("if (flat == 2) {{\n  const idx_t vn = rn / {};\n", lanes);
    if (const int r = cache_rows ? cache_vectors(lanes) : 0; r > 0)
      out += fmt::format("  if (cached) {{\n#pragma unroll\n    for (int k = 0; k < {}; ++k) {{\n"
                         "      const idx_t w = {} + idx_t(k) * {};\n      if (w < vn) {{\n",
                         r, first, step) +
             indent(body(true), 8) + "      }\n    }\n  } else {\n" + indent(loop, 4) + "  }\n";
    else
      out += indent(loop, 2);
    out += fmt::format("  j0 = vn * {};\n}}\n", lanes);
  }
  std::string scalar;
  for (size_t t : loads) scalar += fmt::format("const {0}* in{1} = row{1};\nconst idx_t o{1} = j;\n", stype(k_.loads[t].dtype), t);
  for (size_t s : stores)
    scalar += fmt::format("{0}* out{1} = row{2};\nconst idx_t o{2} = j;\n", stype(k_.stores[s].dtype), s, k_.loads.size() + s);
  return out + fmt::format("for (idx_t j = j0 + {}; j < rn; j += {}) {{\n", first, step) +
         indent(scalar + accumulate(stage, "", {}, online), 2) + "}\n";
}

// The workspace of a reduction split over blocks or warps: `splits` (1: none),
// the counters of its `slots` (rows, tiles) and per accumulator k
// part<k>, split_slot_bytes per slot and part (codegen.h).
// Unsplittable: splits is 1.
std::string Emitter::split_workspace(const std::string& slots, bool splittable) const {
  if (!splittable) return "const idx_t splits = 1;\n";
  std::string out =
      "const idx_t splits = idx_t(a.splits);\nunsigned char* const ws = (unsigned char*)a.ws;\n"
      "unsigned* const counters = (unsigned*)ws;\n";
  for (size_t k = 0; k < reduces_.size(); ++k)
    out += fmt::format("{0}* const part{1} = ({0}*)(ws + {2} + {1} * {3} * splits * {4});\n",
                       ctype(accumulator(k_.exprs[reduces_[k]])), k, kSplitCounters * 4, slots, split_slot_bytes(vector_lanes(k_)));
  return out;
}

// The accumulators from the parts of slot `slot` (of `slots`), `lane` of
// each part's `width` results (with `vector`: the `vector` results from
// `lane` on, into a<k>[l]): this thread folds parts first, first + step,
// ... in that order (a fixed order: the result does not depend on which
// block or warp finished last), several parts' loads issued before their
// folds, so that the loads are in flight together.
std::string Emitter::combine_parts(const std::string& slot, const std::string& slots, const std::string& width,
                                   const std::string& lane, int vector, const std::string& first,
                                   const std::string& step) const {
  const int n = std::max(vector, 1);
  const std::string l = vector ? "[l]" : "";
  // (Parts per batch: at most 64 bytes of values in flight per thread, so
  // that the combination needs no more registers than the sweep before it.)
  int64_t bytes = 0;
  for (size_t k = 0; k < reduces_.size(); ++k) bytes += n * itemsize(accumulator(k_.exprs[reduces_[k]]));
  const int batch = int(std::clamp<int64_t>(64 / std::max<int64_t>(bytes, 1), 1, 8));
  std::string out, load, fold;
  for (size_t k = 0; k < reduces_.size(); ++k) {
    const KExpr& e = k_.exprs[reduces_[k]];
    const std::string t = ctype(accumulator(e)), acc = fmt::format("a{}{}", k, l);
    out += fmt::format("{} got{}[{}][{}];\n", t, k, batch, n);
    load += fmt::format("got{0}[u][l] = ((volatile const {1}*)part{0})[(s * {2} + {3}) * {4} + {5} + l];\n", k, t, slots, slot,
                        width, lane);
    fold += fmt::format("{} = {};\n", acc, combine(e, acc, fmt::format("got{}[u][l]", k)));
  }
  auto lanes = [&](const std::string& body) {
    return fmt::format("#pragma unroll\nfor (int l = 0; l < {}; ++l) {{\n", n) + indent(body, 2) + "}\n";
  };
  std::string init;
  for (size_t k = 0; k < reduces_.size(); ++k) init += fmt::format("a{}{} = {};\n", k, l, identity(k_.exprs[reduces_[k]]));
  return out + lanes(init) + fmt::format("for (idx_t s0 = {0}; s0 < splits; s0 += {2} * {1}) {{\n", first, step, batch) +
         fmt::format("#pragma unroll\n  for (int u = 0; u < {}; ++u) {{\n    const idx_t s = s0 + u * {};\n", batch, step) +
         "    if (s < splits) {\n" + indent(lanes(load), 6) + "    }\n  }\n" +
         fmt::format("#pragma unroll\n  for (int u = 0; u < {}; ++u) {{\n    if (s0 + u * {} < splits) {{\n", batch, step) +
         indent(lanes(fold), 6) + "    }\n  }\n}\n";
}

// CUDA. The launch picks a strategy by the call's shape (`mode`):
//  0: a block per output element, its threads striding over the reduced
//     elements (offsets by division over the reduced dims), then a block
//     reduction whose result every thread reads for the next sweep;
//  1: few reduced elements: a thread per output element;
//  2: rows (one reduced dim, contiguous in every inner tensor): a block per
//     row, vector loads when rows are aligned; what several sweeps read is
//     read from memory once, kept in registers, when the row fits; a
//     single sweep over few rows splits each into parts, a block each,
//     combined as in mode 4;
//  3: short rows: a warp per row, the same sweeps, warp shuffles only;
//  4: columns (single sweep, the innermost output dim contiguous in every
//     inner tensor): a warp per tile of 32 adjacent outputs, so its loads
//     are coalesced rows, adjacent tiles on adjacent warps; when every
//     column is aligned (flat == 2), `lanes` adjacent outputs a lane,
//     read 16 bytes at a time. With few tiles
//     the rows are also split into `splits` interleaved parts, a warp
//     each: the parts' results go to the workspace `ws`, and the tile's
//     last warp to finish combines them in part order;
//  5: softmax's rows past the row cache (Emitter::online): a block per row
//     as mode 2, the max and the sum of exp(x - max) folded in one sweep.
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
  out += fmt::format("  if constexpr (kMode == 1) {{\n    for (idx_t q = {}; q < n; q += {}) {{\n", kThread, kGridStep);
  std::string element = start;
  for (int stage = 0; stage < k_.stages; ++stage)
    element += "for (idx_t j = 0; j < rn; ++j) {\n" + indent("{\n" + indent(inner_offsets("j") + accumulate(stage), 2) + "}\n", 2) +
               "}\n" + outer(stage + 1, stage + 1 == k_.stages);
  out += indent(element, 6) + "    }\n    return;\n  }\n";
  // mode 2 (a single sweep over few rows: each row split into `splits`
  // parts, a block each, combined as mode 4 combines)
  const bool splittable = k_.stages == 1;
  std::string row = start + row_cache("idx_t(blockDim.x)", lanes);
  for (int stage = 0; stage < k_.stages; ++stage) {
    row += "{\n" + indent(row_sweep(stage, "idx_t(threadIdx.x) + part * idx_t(blockDim.x)", "splits * idx_t(blockDim.x)", lanes), 2) +
           "}\n";
    if (stage + 1 == k_.stages) {
      row += block_fold(folded(stage), false);
      break;
    }
    row += block_fold(folded(stage), true) + outer(stage + 1, false);
  }
  if (splittable) {
    // Split: the row's last block to finish combines the parts, all its
    // threads folding a share of them, then the block.
    row += "if (threadIdx.x == 0) {\n  if (splits == 1) {\n" + indent(outer(k_.stages, true), 4) + "  } else {\n";
    for (size_t k = 0; k < reduces_.size(); ++k) row += fmt::format("    part{0}[job] = a{0};\n", k);
    row += "    __threadfence();\n    last = atomicAdd(&counters[q], 1u) == unsigned(splits - 1);\n  }\n}\n"
           "if (splits > 1) {\n  __syncthreads();\n  if (last) {\n    __threadfence();\n" +
           indent(combine_parts("q", "n", "1", "0", 0, "idx_t(threadIdx.x)", "idx_t(blockDim.x)") +
                      block_fold(folded(k_.stages - 1), false) + "if (threadIdx.x == 0) {\n" +
                      indent(outer(k_.stages, true), 2) + "  counters[q] = 0u;\n}\n",
                  4) +
           "  }\n}\n";
  } else {
    row += "if (threadIdx.x == 0) {\n" + indent(outer(k_.stages, true), 2) + "}\n";
  }
  row += "__syncthreads();\n";
  out += "  if constexpr (kMode == 2) {\n" + indent(split_workspace("n", splittable), 4) + (splittable ? "    __shared__ bool last;\n" : "") +
         "    for (idx_t job = idx_t(blockIdx.x); job < n * splits; job += idx_t(gridDim.x)) {\n"
         "      const idx_t q = job % n, part = job / n;\n" +
         indent(row, 6) + "    }\n    return;\n  }\n";
  // mode 5 (long rows, past the row cache: a block per row as mode 2,
  // softmax's max and sum folded in one sweep, so that x is read twice)
  if (const std::optional<Online> on = online()) {
    std::string row5 = start;
    for (int stage = 0; stage < k_.stages; ++stage) {
      if (stage == on->sweep + 1) continue;
      row5 += "{\n" + indent(row_sweep(stage, "idx_t(threadIdx.x)", "idx_t(blockDim.x)", lanes, false, &*on), 2) + "}\n";
      if (stage + 1 == k_.stages) {
        row5 += block_fold(folded(stage), false);
        break;
      }
      std::vector<size_t> ks = folded(stage);
      if (stage == on->sweep) ks.push_back(on->sum);
      row5 += block_fold(ks, true, &*on) + outer(stage + 1, false);
      // (a row of -inf: its max is -inf and the sum of exp(-inf - -inf), NaN)
      if (stage == on->sweep)
        row5 += fmt::format("if (a{} == -thn_inf()) a{} = {}(thn_nan());\n", on->max, on->sum,
                            ctype(accumulator(k_.exprs[reduces_[on->sum]]))) +
                outer(stage + 2, false);
    }
    row5 += "if (threadIdx.x == 0) {\n" + indent(outer(k_.stages, true), 2) + "}\n__syncthreads();\n";
    out += "  if constexpr (kMode == 5) {\n    for (idx_t q = idx_t(blockIdx.x); q < n; q += idx_t(gridDim.x)) {\n" +
           indent(row5, 6) + "    }\n    return;\n  }\n";
  }
  // mode 3
  std::string warp = start + row_cache("idx_t(32)", lanes);
  for (int stage = 0; stage < k_.stages; ++stage) {
    warp += "{\n" + indent(row_sweep(stage, "idx_t(threadIdx.x & 31)", "idx_t(32)", lanes), 2) + "}\n";
    warp += warp_fold(folded(stage), true) + outer(stage + 1, false);
  }
  // (the outer stores: lane 0's)
  warp += "if ((threadIdx.x & 31) == 0) {\n" + indent(stores(false, 0), 2) + "}\n";
  out += "  if constexpr (kMode == 3) {\n"
         "    const idx_t rows = idx_t(blockDim.x >> 5);\n"
         "    for (idx_t q = idx_t(blockIdx.x) * rows + idx_t(threadIdx.x >> 5); q < n; q += idx_t(gridDim.x) * rows) {\n" +
         indent(warp, 6) + "    }\n    return;\n  }\n";
  // mode 4
  if (k_.stages == 1) {
    std::string tile =
        "const idx_t tile = job % count, part = job / count;\n"
        "const idx_t first = tile % tiles * 32, column = first + lane;\n"
        "const bool live = column < qin;\n"
        "const idx_t q = tile / tiles * qin + (live ? column : qin - 1);  // (a dead lane repeats a live one's loads)\n" +
        start + "for (idx_t rq = 0; rq < rout; ++rq) {\n" + indent(row_offsets(), 2) +
        "#pragma unroll 8\n"
        "  for (idx_t i = part; i < rin; i += splits) {\n";
    for (size_t t = 0; t < tensors(); ++t)
      if (inner(t)) tile += fmt::format("    const idx_t o{0} = e{0} + i * {1};\n", t, stride(t, "nd + rnd - 1"));
    tile += indent(accumulate(0), 4) + "  }\n}\n";
    // The end of a tile's job: unsplit, its live lanes store; split, each
    // warp keeps its part's results and the last warp of the tile to finish
    // combines the parts in part order (the result does not depend on
    // which), stores and resets the counter.
    auto tile_end = [&](const std::string& keep, const std::string& combined, const std::string& finished) {
      return "if (splits == 1) {\n  if (live) {\n" + indent(finished, 4) + "  }\n} else {\n" + indent(keep, 2) +
             "  __threadfence();\n  __syncwarp();\n  unsigned ticket = 0;\n"
             "  if (lane == 0) ticket = atomicAdd(&counters[tile], 1u);\n"
             "  if (__shfl_sync(0xffffffffu, ticket, 0) == unsigned(splits - 1)) {\n    __threadfence();\n" +
             indent(combined, 4) + "    if (live) {\n" + indent(finished, 6) + "    }\n    if (lane == 0) counters[tile] = 0u;\n  }\n}\n";
    };
    std::string keep;
    for (size_t k = 0; k < reduces_.size(); ++k) keep += fmt::format("part{0}[job * 32 + lane] = a{0};\n", k);
    tile += tile_end(keep, combine_parts("tile", "count", "32", "lane"), outer(1, true));
    // Aligned columns (flat == 2): `lanes` adjacent columns a lane, read
    // 16 bytes at a time, a tile 32 * lanes columns wide.
    std::string vtile =
        fmt::format("const idx_t tile = job % count, part = job / count;\n"
                    "const idx_t first = tile % tiles * {0}, column = first + lane * {1};\n"
                    "const bool live = column < qin;\n"
                    "const idx_t q = tile / tiles * qin + (live ? column : qin - {1});  // (a dead lane repeats the last vector)\n",
                    32 * lanes, lanes) +
        outer_offsets("q") + accumulators(lanes, std::to_string(lanes)) + "for (idx_t rq = 0; rq < rout; ++rq) {\n" +
        indent(row_offsets(), 2) + "#pragma unroll 8\n  for (idx_t i = part; i < rin; i += splits) {\n";
    std::string body, lane_body;
    for (size_t t = 0; t < k_.loads.size(); ++t)
      if (inner(t))
        body += fmt::format("const thn_vec<{0}, {1}> x{2} = *(const thn_vec<{0}, {1}>*)(in{2} + e{2} + i * {3});\n",
                            stype(k_.loads[t].dtype), lanes, t, stride(t, "nd + rnd - 1"));
    for (size_t s2 = 0; s2 < k_.stores.size(); ++s2)
      if (k_.stores[s2].inner) body += fmt::format("thn_vec<{}, {}> y{};\n", stype(k_.stores[s2].dtype), lanes, s2);
    for (size_t t = 0; t < k_.loads.size(); ++t)
      if (inner(t)) lane_body += fmt::format("const {0}* in{1} = x{1}.v;\nconst idx_t o{1} = l;\n", stype(k_.loads[t].dtype), t);
    for (size_t s2 = 0; s2 < k_.stores.size(); ++s2)
      if (k_.stores[s2].inner)
        lane_body += fmt::format("{0}* out{1} = y{1}.v;\nconst idx_t o{2} = l;\n", stype(k_.stores[s2].dtype), s2, k_.loads.size() + s2);
    // (values read once per output, a broadcast max or mean: per lane)
    if (sweep_reads_outer()) lane_body += outer_at("l") + outer(0, false, true);
    body += fmt::format("#pragma unroll\nfor (int l = 0; l < {}; ++l) {{\n", lanes) + indent(lane_body + accumulate(0, "[l]"), 2) + "}\n";
    for (size_t s2 = 0; s2 < k_.stores.size(); ++s2)
      if (k_.stores[s2].inner)
        body += fmt::format("*(thn_vec<{0}, {1}>*)(out{2} + e{3} + i * {4}) = y{2};\n", stype(k_.stores[s2].dtype), lanes, s2,
                            k_.loads.size() + s2, stride(k_.loads.size() + s2, "nd + rnd - 1"));
    vtile += indent(body, 4) + "  }\n}\n";
    // (each of the lane's `lanes` accumulators in turn)
    auto each = [&](const std::string& s) {
      return fmt::format("#pragma unroll\nfor (int l = 0; l < {}; ++l) {{\n", lanes) + indent(s, 2) + "}\n";
    };
    std::string vkeep;
    for (size_t k = 0; k < reduces_.size(); ++k) vkeep += fmt::format("part{0}[(job * 32 + lane) * {1} + l] = a{0}[l];\n", k, lanes);
    vtile += tile_end(each(vkeep),
                      combine_parts("tile", "count", std::to_string(32 * lanes), fmt::format("lane * {}", lanes), lanes),
                      each(finish("l")));
    auto jobs = [&](const std::string& width, const std::string& per_job) {
      return fmt::format("{{\n  const idx_t tiles = (qin + {0} - 1) / {0}, count = n / qin * tiles;\n", width) +
             indent(split_workspace("count", true), 2) +
             "  for (idx_t job = idx_t(blockIdx.x) * warps + idx_t(threadIdx.x >> 5); job < count * splits;\n"
             "       job += idx_t(gridDim.x) * warps) {\n" +
             indent(per_job, 4) + "  }\n}\n";
    };
    out += "  if constexpr (kMode == 4) {\n"
           "    const idx_t qin = idx_t(sz[nd - 1]);\n"
           "    const idx_t rin = idx_t(sz[nd + rnd - 1]), rout = rn / rin;\n"
           "    const idx_t warps = idx_t(blockDim.x >> 5), lane = idx_t(threadIdx.x & 31);\n"
           "    if (flat == 2) {\n" + indent(jobs(std::to_string(32 * lanes), vtile), 6) + "    } else {\n" +
           indent(jobs("32", tile), 6) + "    }\n    return;\n  }\n";
  }
  // mode 0
  out += "  if constexpr (kMode == 0) {\n    for (idx_t q = idx_t(blockIdx.x); q < n; q += idx_t(gridDim.x)) {\n";
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
  return out + indent(block, 6) + "    }\n  }\n";
}

}  // namespace thn::codegen
