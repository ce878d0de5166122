// The host emitter: C++ loops, OpenMP over large index spaces.
#include <fmt/format.h>

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
         "#pragma omp parallel for if (n >= 32768) schedule(static)\n"
         "    for (idx_t blk = 0; blk < blocks; ++blk) {\n"
         "      const idx_t end = n - blk * 4096 < 4096 ? n : blk * 4096 + 4096;\n"
         "#pragma omp simd\n"
         "      for (idx_t i = blk * 4096; i < end; ++i) {\n";
  for (size_t t = 0; t < tensors(); ++t) out += fmt::format("        const idx_t o{} = i;\n", t);
  out += indent(body, 8) + "      }\n    }\n    return;\n  }\n";
  out += "  const idx_t inner = nd > 0 ? idx_t(sz[nd - 1]) : 1, outer = inner > 0 ? n / inner : 0;\n";
  out += "  bool unit = nd > 0;\n";
  for (size_t t = 0; t < tensors(); ++t) out += fmt::format("  unit = unit && {} == 1;\n", stride(t, "nd - 1"));
  out += "#pragma omp parallel for if (n >= 32768) schedule(static)\n"
         "  for (idx_t q = 0; q < outer; ++q) {\n";
  for (size_t t = 0; t < tensors(); ++t) out += fmt::format("    idx_t b{} = 0;\n", t);
  out += "    idx_t r = q;\n    for (int32_t d = nd - 2; d >= 0; --d) {\n"
         "      const idx_t c = r % idx_t(sz[d]);\n      r /= idx_t(sz[d]);\n";
  for (size_t t = 0; t < tensors(); ++t) out += fmt::format("      b{} += c * {};\n", t, stride(t, "d"));
  std::string unit, strided;
  for (size_t t = 0; t < tensors(); ++t) {
    unit += fmt::format("      const idx_t o{0} = b{0} + j;\n", t);
    strided += fmt::format("      const idx_t o{0} = b{0} + j * {1};\n", t, stride(t, "nd - 1"));
  }
  out += "    }\n    if (unit) {\n#pragma omp simd\n    for (idx_t j = 0; j < inner; ++j) {\n" + unit + indent(body, 6) +
         "    }\n    } else {\n#pragma omp simd\n    for (idx_t j = 0; j < inner; ++j) {\n" + strided + indent(body, 6) +
         "    }\n    }\n  }\n";
  return out;
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
    std::string omp = parallel ? fmt::format("#pragma omp parallel for{} schedule(static)\n", clauses(stage)) : "";
    std::string simd = parallel ? fmt::format("#pragma omp parallel for simd{} schedule(static)\n", clauses(stage))
                                : fmt::format("#pragma omp simd{}\n", clauses(stage));
    std::string r = "if (rows && rout == 1) {\n" +
                    indent(one_row + simd + "for (idx_t j = 0; j < rin; ++j) {\n" + unit_loop, 2) + "} else {\n";
    std::string row = row_offsets() + "if (rows) {\n" +
                      indent(fmt::format("#pragma omp simd{}\n", clauses(stage)) + "for (idx_t j = 0; j < rin; ++j) {\n" + unit_loop, 2) +
                      "} else {\n" + indent("for (idx_t j = 0; j < rin; ++j) {\n" + strided_loop, 2) + "}\n";
    r += indent(omp + "for (idx_t rq = 0; rq < rout; ++rq) {\n" + indent(row, 2) + "}\n", 2) + "}\n";
    return "{\n" + indent(r, 2) + "}\n";
  };
  // Per output element: the outer values, then each sweep and the outer
  // values its reductions give.
  auto element = [&](bool parallel) {
    std::string e = outer_offsets("q") + accumulators() + outer_at() + outer(0, false);
    for (int stage = 0; stage < k_.stages; ++stage)
      e += reduce(stage, parallel) + outer(stage + 1, stage + 1 == k_.stages);
    return e;
  };
  out += "  if (!columns && n == 1 && rn >= 32768) {\n" + indent("const idx_t q = 0;\n" + element(true), 4) +
         "    return;\n  }\n";
  out += "  if (!columns) {\n"
         "#pragma omp parallel for if (n * rn >= 32768) schedule(static)\n"
         "    for (idx_t q = 0; q < n; ++q) {\n";
  out += indent(element(false), 6) + "    }\n    return;\n  }\n";
  if (k_.stages > 1) return out;
  // columns
  out += fmt::format("  const idx_t qin = idx_t(sz[nd - 1]), share = (qin + thn_threads() - 1) / thn_threads();\n"
                     "  const idx_t width = share <= 64 ? 64 : share >= {0} ? {0} : (share + 63) / 64 * 64;\n"
                     "  const idx_t tiles = (qin + width - 1) / width, count = n / qin * tiles;\n", kLanes);
  out += "#pragma omp parallel for if (count > 1 && n * rn >= 32768) schedule(static)\n"
         "  for (idx_t tile = 0; tile < count; ++tile) {\n";
  std::string col = "const idx_t q0 = tile / tiles * qin + tile % tiles * width;\n"
                    "const idx_t lanes = qin - tile % tiles * width < width ? qin - tile % tiles * width : width;\n";
  col += outer_offsets("q0") + accumulators(kLanes, "lanes");
  col += "for (idx_t rq = 0; rq < rout; ++rq) {\n";
  std::string sweep = row_offsets() + "for (idx_t i = 0; i < rin; ++i) {\n";
  std::string lane_loop = "#pragma omp simd\nfor (idx_t l = 0; l < lanes; ++l) {\n";
  // Values read once per output (a broadcast max or mean) are read per lane.
  if (sweep_reads_outer()) lane_loop += indent(outer_at("l") + outer(0, false, true), 2);
  for (size_t t = 0; t < tensors(); ++t)
    if (inner(t)) lane_loop += fmt::format("  const idx_t o{0} = e{0} + i * {1} + l;\n", t, stride(t, "nd + rnd - 1"));
  lane_loop += indent(accumulate(0, "[l]"), 2) + "}\n";
  sweep += indent(lane_loop, 2) + "}\n";
  col += indent(sweep, 2) + "}\n";
  col += "for (idx_t l = 0; l < lanes; ++l) {\n" + indent(finish("l"), 2) + "}\n";
  out += indent(col, 4) + "  }\n";
  return out;
}

}  // namespace thn::codegen
