// The host emitter: C++ loops, OpenMP over large index spaces.
#include <fmt/format.h>

#include <algorithm>

#include "backend/emitter.h"

namespace thn::codegen {

namespace {

// OpenMP's name of a reduction (the extremes are declared in the host prelude).
std::string omp_reduction(const KExpr& e) {
  switch (e.prim.sym.op->id) {
    case OpId::sum: return "+";
    case OpId::prod: return "*";
    case OpId::amax: return "thn_max";
    default: return "thn_min";
  }
}

// Elements from which a kernel's loops run on several threads: waking them
// costs a microsecond or two, so the cheaper an element, the more of them
// it takes. An element's cost counts its loads and stores, its ops, and
// more for a division or a root (several cycles each), still more for a
// transcendental function (a vector call per few elements): an add of two
// tensors goes parallel from 32768 elements, an Adam update (7 tensors, a
// root and divisions) or an exp from 8192.
std::string parallel_from(const Kernel& k) {
  int64_t cost = int64_t(k.loads.size() + k.stores.size());
  for (const KExpr& e : k.exprs) {
    if (e.kind != KExpr::Kind::Op) continue;
    switch (e.prim.sym.op->id) {
      case OpId::exp: case OpId::log: case OpId::erf: case OpId::erfc: case OpId::tanh: case OpId::sin:
      case OpId::cos: case OpId::sigmoid: case OpId::expm1: case OpId::log1p: case OpId::pow: cost += 24; break;
      case OpId::sqrt: case OpId::rsqrt: case OpId::div: case OpId::reciprocal: case OpId::addcdiv: cost += 4; break;
      default: cost += 1; break;
    }
  }
  return std::to_string(std::clamp<int64_t>(131072 / std::max<int64_t>(cost, 1), 8192, 32768));
}

}  // namespace


std::string Emitter::cpu_pointwise() const {
  std::string body = statements(false), out;
  // Contiguous: one flat loop in blocks of 4096 elements, threads taking
  // whole blocks: a block's vector body and scalar remainder are where
  // they are whatever the thread count, so results do not depend on it
  // (libmvec's vector functions and libm's scalar ones differ in the last
  // ulp); else row by row of the innermost dim, vectorised: whole vectors
  // where every tensor's row has unit stride (a bias broadcast over rows),
  // gathers and scatters otherwise.
  out += "  if (flat) {\n    const idx_t blocks = (n + 4095) / 4096;\n"
         "#pragma omp parallel for if (n >= " + parallel_from(k_) + ") schedule(static)\n"
         "    for (idx_t blk = 0; blk < blocks; ++blk) {\n"
         "      const idx_t end = n - blk * 4096 < 4096 ? n : blk * 4096 + 4096;\n"
         "#pragma omp simd\n"
         "      for (idx_t i = blk * 4096; i < end; ++i) {\n";
  for (size_t t = 0; t < tensors(); ++t) out += fmt::format("        const idx_t o{} = i;\n", t);
  out += indent(body, 8) + "      }\n    }\n    return;\n  }\n";
  out += "  const idx_t inner = nd > 0 ? idx_t(sz[nd - 1]) : 1, outer = inner > 0 ? n / inner : 0;\n";
  out += "  bool unit = nd > 0;\n";
  for (size_t t = 0; t < tensors(); ++t) out += fmt::format("  unit = unit && {} == 1;\n", stride(t, "nd - 1"));
  // Rows where the operands traced as broadcast along them step by 0 and
  // the others by 1: those read once per row (no gathers).
  bool broadcasts = false;
  for (const KLoad& l : k_.loads) broadcasts = broadcasts || l.row_broadcast;
  if (broadcasts) {
    out += "  bool mixed = nd > 0;\n";
    for (size_t t = 0; t < tensors(); ++t)
      out += fmt::format("  mixed = mixed && {} == {};\n", stride(t, "nd - 1"), t < k_.loads.size() && k_.loads[t].row_broadcast ? 0 : 1);
  }
  std::string unit, mixed, strided;
  for (size_t t = 0; t < tensors(); ++t) {
    unit += fmt::format("  const idx_t o{0} = b{0} + j;\n", t);
    mixed += t < k_.loads.size() && k_.loads[t].row_broadcast ? fmt::format("  const idx_t o{0} = b{0};\n", t)
                                                              : fmt::format("  const idx_t o{0} = b{0} + j;\n", t);
    strided += fmt::format("  const idx_t o{0} = b{0} + j * {1};\n", t, stride(t, "nd - 1"));
  }
  std::string row = "if (unit) {\n#pragma omp simd\nfor (idx_t j = 0; j < inner; ++j) {\n" + unit + indent(body, 2) + "}\n} else ";
  if (broadcasts) row += "if (mixed) {\n#pragma omp simd\nfor (idx_t j = 0; j < inner; ++j) {\n" + mixed + indent(body, 2) + "}\n} else ";
  row += "{\n#pragma omp simd\nfor (idx_t j = 0; j < inner; ++j) {\n" + strided + indent(body, 2) + "}\n}\n";
  out += indent(cpu_loop("outer", "0", "nd - 1", 'b', "", false, row, "if (n >= " + parallel_from(k_) + ")"), 2);
  return out;
}

std::string Emitter::cpu_loop(const std::string& count, const std::string& first, const std::string& dims, char p,
                              const std::string& from, bool only_inner, const std::string& body,
                              const std::string& parallel_if) const {
  std::vector<size_t> ts;
  for (size_t t = 0; t < tensors(); ++t)
    if (!only_inner || inner(t)) ts.push_back(t);
  std::string out = fmt::format("idx_t {0}_lo = 0, {0}_hi = {1};\n", p, count);
  if (!parallel_if.empty()) out += fmt::format("thn_share(&{0}_lo, &{0}_hi);\n", p);
  out += fmt::format("idx_t {}_c[{}];\n", p, kMaxKernelDims);
  for (size_t t : ts) out += fmt::format("idx_t {}{} = {};\n", p, t, from.empty() ? "0" : fmt::format("{}{}", from, t));
  out += fmt::format("if ({0}_lo < {0}_hi) {{\n  idx_t r = {0}_lo;\n  for (int32_t d = {1} - 1; d >= 0; --d) {{\n"
                     "    const int32_t k = d + {2};\n    {0}_c[d] = r % idx_t(sz[k]);\n    r /= idx_t(sz[k]);\n",
                     p, dims, first);
  for (size_t t : ts) out += fmt::format("    {0}{1} += {0}_c[d] * {2};\n", p, t, stride(t, "k"));
  out += "  }\n}\n";
  std::string step = fmt::format("for (int32_t d = {} - 1; d >= 0; --d) {{\n  const int32_t k = d + {};\n", dims, first);
  step += fmt::format("  if (++{}_c[d] < idx_t(sz[k])) {{\n", p);
  for (size_t t : ts) step += fmt::format("    {0}{1} += {2};\n", p, t, stride(t, "k"));
  step += fmt::format("    break;\n  }}\n  {}_c[d] = 0;\n", p);
  for (size_t t : ts) step += fmt::format("  {0}{1} -= (idx_t(sz[k]) - 1) * {2};\n", p, t, stride(t, "k"));
  step += "}\n";
  out += fmt::format("for (idx_t {0}_q = {0}_lo; {0}_q < {0}_hi; ++{0}_q) {{\n", p) + indent("{\n" + indent(body, 2) + "}\n" + step, 2) + "}\n";
  if (parallel_if.empty()) return out;
  return "#pragma omp parallel " + parallel_if + "\n{\n" + indent(out, 2) + "}\n";
}

std::string Emitter::clauses(int stage) const {
  std::string out;
  for (size_t k = 0; k < reduces_.size(); ++k)
    if (in_sweep(k, stage)) out += fmt::format(" reduction({}:a{})", omp_reduction(k_.exprs[reduces_[k]]), k);
  return out;
}


// Host. Three loop nests, chosen by the strides:
//  rows:    the innermost reduced dim is contiguous: per output element
//           (in parallel when there are many), a vectorised sweep along
//           it; the one reduction of a single output runs in parallel.
//  columns: the innermost output dim is contiguous: tiles of adjacent
//           outputs accumulate together, a vectorised sweep across the
//           tile per reduced element. A tile is a thread's share of the
//           row (64 to kLanes outputs): each thread then walks the rows
//           once, where narrow tiles walked them (and their pages) once
//           per tile.
//  strided: per output element, the reduced elements row by row.
std::string Emitter::cpu_reduction() const {
  constexpr int kLanes = 1024;
  std::string out = "  const idx_t rin = idx_t(sz[nd + rnd - 1]), rout = rin > 0 ? rn / rin : 0;\n";
  out += fmt::format("  const bool rows = {};\n", unit_inner("nd + rnd - 1"));
  // Tiles of outputs keep one accumulator per lane: single-sweep kernels only.
  if (k_.stages == 1) out += fmt::format("  const bool columns = !rows && nd > 0 && {};\n", unit_inner("nd - 1"));
  else out += "  const bool columns = false;\n";
  std::string one_row;
  for (size_t t = 0; t < tensors(); ++t)
    if (inner(t)) one_row += fmt::format("const idx_t e{0} = b{0};\n", t);
  // Sweep `stage` over the reduced rows of one output element; `parallel`:
  // split among threads.
  auto reduce = [&](int stage, bool parallel) {
    std::string unit_loop, strided_loop;
    for (size_t t = 0; t < tensors(); ++t)
      if (inner(t)) unit_loop += fmt::format("  const idx_t o{0} = e{0} + j;\n", t);
    unit_loop += indent(accumulate(stage), 2) + "}\n";
    for (size_t t = 0; t < tensors(); ++t)
      if (inner(t)) strided_loop += fmt::format("  const idx_t o{0} = e{0} + j * {1};\n", t, stride(t, "nd + rnd - 1"));
    strided_loop += indent(accumulate(stage), 2) + "}\n";
    std::string simd = parallel ? fmt::format("#pragma omp parallel for simd{} schedule(static)\n", clauses(stage))
                                : fmt::format("#pragma omp simd{}\n", clauses(stage));
    std::string r = "if (rows && rout == 1) {\n" +
                    indent(one_row + simd + "for (idx_t j = 0; j < rin; ++j) {\n" + unit_loop, 2) + "} else {\n";
    std::string row = "if (rows) {\n" +
                      indent(fmt::format("#pragma omp simd{}\n", clauses(stage)) + "for (idx_t j = 0; j < rin; ++j) {\n" + unit_loop, 2) +
                      "} else {\n" + indent("for (idx_t j = 0; j < rin; ++j) {\n" + strided_loop, 2) + "}\n";
    r += indent(cpu_loop("rout", "nd", "rnd - 1", 'e', "b", true, row, parallel ? "if (rout > 1)" + clauses(stage) : ""), 2) + "}\n";
    return "{\n" + indent(r, 2) + "}\n";
  };
  // Per output element: the outer values, then each sweep and the outer
  // values its reductions give (the offsets b<t> set by the caller).
  auto element = [&](bool parallel) {
    std::string e = accumulators() + outer_at() + outer(0, false);
    for (int stage = 0; stage < k_.stages; ++stage)
      e += reduce(stage, parallel) + outer(stage + 1, stage + 1 == k_.stages);
    return e;
  };
  out += "  if (!columns && n == 1 && rn >= 32768) {\n" + indent(outer_offsets("0") + element(true), 4) +
         "    return;\n  }\n";
  out += "  if (!columns) {\n" + indent(cpu_loop("n", "0", "nd", 'b', "", false, element(false), "if (n * rn >= " + parallel_from(k_) + ")"), 4) +
         "    return;\n  }\n";
  if (k_.stages > 1) return out;
  // columns
  out += fmt::format("  const idx_t qin = idx_t(sz[nd - 1]), share = (qin + thn_threads() - 1) / thn_threads();\n"
                     "  const idx_t width = share <= 64 ? 64 : share >= {0} ? {0} : (share + 63) / 64 * 64;\n"
                     "  const idx_t tiles = (qin + width - 1) / width, count = n / qin * tiles;\n", kLanes);
  out += "#pragma omp parallel for if (count > 1 && n * rn >= " + parallel_from(k_) + ") schedule(static)\n"
         "  for (idx_t tile = 0; tile < count; ++tile) {\n";
  std::string col = "const idx_t q0 = tile / tiles * qin + tile % tiles * width;\n"
                    "const idx_t lanes = qin - tile % tiles * width < width ? qin - tile % tiles * width : width;\n";
  col += outer_offsets("q0") + accumulators(kLanes, "lanes");
  std::string sweep = "for (idx_t i = 0; i < rin; ++i) {\n";
  std::string lane_loop = "#pragma omp simd\nfor (idx_t l = 0; l < lanes; ++l) {\n";
  // Values read once per output (a broadcast max or mean) are read per lane.
  if (sweep_reads_outer()) lane_loop += indent(outer_at("l") + outer(0, false, true), 2);
  for (size_t t = 0; t < tensors(); ++t)
    if (inner(t)) lane_loop += fmt::format("  const idx_t o{0} = e{0} + i * {1} + l;\n", t, stride(t, "nd + rnd - 1"));
  lane_loop += indent(accumulate(0, "[l]"), 2) + "}\n";
  sweep += indent(lane_loop, 2) + "}\n";
  col += cpu_loop("rout", "nd", "rnd - 1", 'e', "b", true, sweep, "");
  col += "for (idx_t l = 0; l < lanes; ++l) {\n" + indent(finish("l"), 2) + "}\n";
  out += indent(col, 4) + "  }\n";
  return out;
}

}  // namespace thn::codegen
