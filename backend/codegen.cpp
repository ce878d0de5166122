#include "backend/codegen.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "backend/emitter.h"
#include "backend/prelude.h"

namespace thn {

namespace codegen {

// The C type a dtype computes in, and the one it is stored as.
std::string ctype(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::Int32: return "int32_t";
    case DType::Int64: return "int64_t";
    case DType::Float64: return "double";
    default: return "float";
  }
}
std::string stype(DType d) {
  switch (d) {
    case DType::Float16: return "thn::Half";
    case DType::BFloat16: return "thn::BFloat16";
    default: return ctype(d);
  }
}

std::string literal(const Value& v) {
  if (v.is(Type::Bool)) return v.raw_int() ? "true" : "false";
  if (v.is(Type::Int)) {
    int64_t i = v.raw_int();
    if (i == INT64_MIN) return "(int64_t(-9223372036854775807LL) - 1)";
    return fmt::format("int64_t({}LL)", i);
  }
  double d = v.raw_float();
  if (std::isnan(d)) return "thn_nan()";
  if (std::isinf(d)) return d > 0 ? "thn_inf()" : "(-thn_inf())";
  std::string s = fmt::format("{:.17g}", d);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

// A value converted to dtype d, as the eager cast kernel converts it
// (through the storage type for float16 and bfloat16, which round).
std::string convert(const std::string& x, DType d) {
  if (d == DType::Float16 || d == DType::BFloat16) return fmt::format("float({}(float({})))", stype(d), x);
  return fmt::format("{}({})", ctype(d), x);
}

// The accumulator of a reduction: sums and products of floating values in
// double, of integers in int64; extremes in the input's compute type.
DType accumulator(const KExpr& e) {
  OpId id = e.prim.sym.op->id;
  if (id == OpId::amax || id == OpId::amin) return e.compute == DType::Float16 || e.compute == DType::BFloat16 ? DType::Float32 : e.compute;
  return is_floating(e.compute) ? DType::Float64 : DType::Int64;
}

std::string identity(const KExpr& e) {
  DType a = accumulator(e);
  switch (e.prim.sym.op->id) {
    case OpId::sum: return fmt::format("{}(0)", ctype(a));
    case OpId::prod: return fmt::format("{}(1)", ctype(a));
    case OpId::amax:
      switch (a) {
        case DType::Bool: return "false";
        case DType::Int32: return "int32_t(-2147483647 - 1)";
        case DType::Int64: return "int64_t(-9223372036854775807LL - 1)";
        default: return fmt::format("{}(-thn_inf())", ctype(a));
      }
    default:
      switch (a) {
        case DType::Bool: return "true";
        case DType::Int32: return "int32_t(2147483647)";
        case DType::Int64: return "int64_t(9223372036854775807LL)";
        default: return fmt::format("{}(thn_inf())", ctype(a));
      }
  }
}

// acc combined with x (both of the accumulator type).
std::string combine(const KExpr& e, const std::string& acc, const std::string& x) {
  std::string t = ctype(accumulator(e));
  switch (e.prim.sym.op->id) {
    case OpId::sum: return fmt::format("thn::thn_add<{}>({}, {})", t, acc, x);
    case OpId::prod: return fmt::format("thn::thn_mul<{}>({}, {})", t, acc, x);
    case OpId::amax: return fmt::format("thn::thn_maximum<{}>({}, {})", t, acc, x);
    default: return fmt::format("thn::thn_minimum<{}>({}, {})", t, acc, x);
  }
}

std::string Emitter::render() {
  std::string out;
  size_t tensors = k_.loads.size() + k_.stores.size();
  std::string params =
      "int64_t n, int32_t nd, const int64_t* sz, void* const* p, const int64_t* st, const double* fs, "
      "const int64_t* is, int32_t flat, int64_t rn, int32_t rnd, int32_t wide";
  if (target_ == Target::Cpu) {
    // 64-bit index arithmetic costs the host nothing: `wide` is not read.
    out += fmt::format("extern \"C\" void {}({}) {{\n", k_.name, params);
    out += "  typedef int64_t idx_t;\n"
           "  (void)rn; (void)rnd; (void)flat; (void)wide;\n";
  } else {
    // The body in 32-bit index arithmetic unless an offset may not fit.
    out += fmt::format("struct {}_args {{ int64_t n, rn; int32_t nd, rnd, flat, wide, mode, splits; void* ws; int64_t sz[{}]; void* p[{}]; "
                       "int64_t st[{}]; double fs[{}]; int64_t is[{}]; }};\n",
                       k_.name, kMaxKernelDims, tensors, tensors * kMaxKernelDims, k_.scalars.size() + 1,
                       k_.scalars.size() + 1);
    // A reduction's body is instantiated per strategy (kMode, what the
    // launch picks: codegen_cuda.cpp), each an entry of its own, so that
    // each has its own registers rather than the most any strategy needs.
    out += fmt::format("template <class idx_t{1}> __device__ __forceinline__ void {0}_body(const {0}_args& a) {{\n", k_.name,
                       k_.reduction ? ", int kMode" : "");
    out += "  const idx_t n = idx_t(a.n), rn = idx_t(a.rn); const int32_t nd = a.nd, rnd = a.rnd, flat = a.flat;\n"
           "  const int64_t* sz = a.sz; void* const* p = a.p; const int64_t* st = a.st;\n"
           "  const double* fs = a.fs; const int64_t* is = a.is;\n"
           "  (void)fs; (void)is; (void)sz; (void)st; (void)nd; (void)rn; (void)rnd; (void)flat;\n";
  }
  for (size_t t = 0; t < k_.loads.size(); ++t)
    out += fmt::format("  const {0}* in{1} = (const {0}*)p[{1}];\n", storage(k_.loads[t].dtype), t);
  for (size_t s = 0; s < k_.stores.size(); ++s)
    out += fmt::format("  {0}* out{1} = ({0}*)p[{2}];\n", storage(k_.stores[s].dtype), s, k_.loads.size() + s);
  for (size_t s = 0; s < k_.scalars.size(); ++s) {
    DType d = k_.scalars[s].second;
    out += fmt::format("  const {} s{} = {}({}[{}]);\n", ctype(d), s, ctype(d), d == DType::Float64 ? "fs" : "is", s);
  }
  if (k_.reduction) out += target_ == Target::Cpu ? cpu_reduction() : cuda_reduction();
  else out += target_ == Target::Cpu ? cpu_pointwise() : cuda_pointwise();
  out += "}\n";
  // The arguments by value, or (over the device's limit for kernel
  // parameters) in device memory. NVRTC before 12.1 refuses parameters
  // over 4 KiB: the module then has only the second entry. One entry per
  // index width (NAME: 32-bit, NAME_wide: 64-bit) and, for a reduction,
  // per strategy (cuda_entry_name), so that each one's registers are its
  // own; every launch has at most kCudaBlock threads.
  if (target_ == Target::Cuda) {
    const bool large = has_by_pointer_entry(k_);
    // (past every device's limit, no entry by value: NVRTC refuses it)
    const bool by_value = kernel_argument_bytes(k_) <= kMaxParameterBytes;
    for (int mode : cuda_entry_modes(k_))
      for (const char* width : {"", "_wide"}) {
        const std::string entry = cuda_entry_name(k_, mode, *width != 0);
        const std::string args = fmt::format("{}{}", *width ? "int64_t" : "int32_t", k_.reduction ? fmt::format(", {}", mode) : "");
        if (by_value)
          out += fmt::format("{2}extern \"C\" __global__ void __launch_bounds__({3}) {1}(const {0}_args a) {{ {0}_body<{4}>(a); }}\n{5}",
                           k_.name, entry, large ? "#if __CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__ >= 1201\n" : "",
                           kCudaBlock, args, large ? "#endif\n" : "");
        if (large)
          out += fmt::format("extern \"C\" __global__ void __launch_bounds__({2}) {1}_by_pointer(const {0}_args* a) {{ {0}_body<{3}>(*a); }}\n",
                             k_.name, entry, kCudaBlock, args);
      }
  }
  return out;
}


// Offsets o<t> of the outer tensors from q, over dims [0, nd).
std::string Emitter::outer_offsets(const std::string& q) const {
  std::string out;
  for (size_t t = 0; t < tensors(); ++t) out += fmt::format("idx_t b{} = 0;\n", t);
  out += fmt::format("{{\n  idx_t r = {};\n  for (int32_t d = nd - 1; d >= 0; --d) {{\n"
                     "    const idx_t c = r % idx_t(sz[d]);\n    r /= idx_t(sz[d]);\n", q);
  for (size_t t = 0; t < tensors(); ++t) out += fmt::format("    b{} += c * {};\n", t, stride(t, "d"));
  return out + "  }\n}\n";
}


// Accumulators a<k>, one per reduction, set to their identities; with a
// `size`, arrays of it whose first `lanes` (a variable) are set.
std::string Emitter::accumulators(int size, const std::string& lanes) const {
  std::string out;
  for (size_t k = 0; k < reduces_.size(); ++k) {
    const KExpr& e = k_.exprs[reduces_[k]];
    if (size == 0) {
      out += fmt::format("{} a{} = {};\n", ctype(accumulator(e)), k, identity(e));
    } else {
      out += fmt::format("{} a{}[{}];\n", ctype(accumulator(e)), k, size);
      out += fmt::format("for (idx_t l = 0; l < {}; ++l) a{}[l] = {};\n", lanes, k, identity(e));
    }
  }
  return out;
}

// Sweep `stage` of the inner phase at offsets o<t> of the inner tensors:
// its values and stores, each of its reductions' operands folded into its
// accumulator a<k><lane>.
std::string Emitter::accumulate(int stage, const std::string& lane, const std::vector<Reuse>& kept, const Online* online) const {
  std::string out = statements(true, stage, false, true, kept);
  if (online && online->sweep == stage) out += online_step(*online);
  for (size_t k = 0; k < reduces_.size(); ++k) {
    if (!in_sweep(k, stage)) continue;
    const KExpr& e = k_.exprs[reduces_[k]];
    std::string acc = fmt::format("a{}{}", k, lane);
    out += fmt::format("{} = {};\n", acc, combine(e, acc, fmt::format("{}({})", ctype(accumulator(e)), v(operand_[k]))));
  }
  return out;
}

// The outer tensors' offsets o<t> = b<t> (+ lane * the innermost outer stride).
std::string Emitter::outer_at(const std::string& lane) const {
  std::string out;
  for (size_t t = 0; t < tensors(); ++t) {
    if (inner(t)) continue;
    if (lane.empty()) out += fmt::format("const idx_t o{0} = b{0};\n", t);
    else out += fmt::format("const idx_t o{0} = b{0} + {1} * {2};\n", t, lane, stride(t, "nd - 1"));
  }
  return out;
}

// The outer values that need the first `level` sweeps (with the outer
// stores when `stores`).
std::string Emitter::outer(int level, bool stores, bool lanes) const {
  return statements(false, level, lanes, stores);
}

// A single-sweep kernel's outer phase for one lane of a tile of outputs:
// o<t> = b<t> + lane * the innermost outer stride.
std::string Emitter::finish(const std::string& lane) const {
  std::string out = outer_at(lane);
  for (size_t k = 0; k < reduces_.size(); ++k)
    out += fmt::format("const {0} r{1} = a{1}[{2}];\n", ctype(accumulator(k_.exprs[reduces_[k]])), k, lane);
  return out + outer(0, false, true) + outer(1, true, true);
}

// Offsets e<t> of the inner tensors: b<t> plus reduced row rq's (every
// reduced dim but the innermost).
std::string Emitter::row_offsets() const {
  std::string row;
  for (size_t t = 0; t < tensors(); ++t)
    if (inner(t)) row += fmt::format("idx_t e{0} = b{0};\n", t);
  row += "{\n  idx_t r = rq;\n  for (int32_t d = nd + rnd - 2; d >= nd; --d) {\n"
         "    const idx_t c = r % idx_t(sz[d]);\n    r /= idx_t(sz[d]);\n";
  for (size_t t = 0; t < tensors(); ++t)
    if (inner(t)) row += fmt::format("    e{} += c * {};\n", t, stride(t, "d"));
  return row + "  }\n}\n";
}

// Whether every inner tensor steps by one element along dim d.
std::string Emitter::unit_inner(const std::string& d) const {
  std::string out = "true";
  for (size_t t = 0; t < tensors(); ++t)
    if (inner(t)) out += fmt::format(" && {} == 1", stride(t, d));
  return out;
}


std::string Emitter::indent(const std::string& s, int n) {
  std::string pad(size_t(n), ' '), out;
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find('\n', start);
    out += pad + s.substr(start, end - start + 1);
    start = end + 1;
  }
  return out;
}


// operand i of an op, in the op's compute type
std::string Emitter::arg(const KExpr& e, size_t i) const {
  return fmt::format("{}({})", ctype(e.compute), v(e.operands.at(i)));
}


// The expressions of one phase and sweep (inner) or level (outer), in
// dependency order, with its stores when `with_stores`. With `lanes`,
// reduced values are read from r<k> (set per lane).
std::string Emitter::statements(bool inner, int stage, bool lanes, bool with_stores, const std::vector<Reuse>& kept) const {
  std::string s;
  for (size_t i = 0; i < k_.exprs.size(); ++i) {
    const KExpr& e = k_.exprs[i];
    if (e.inner != inner || e.stage != stage) continue;
    auto r = std::find_if(kept.begin(), kept.end(), [&](const Reuse& r) { return size_t(r.late) == i; });
    // (a kept value: the cache's element where the load was; what computed it is left unused)
    s += r == kept.end() ? fmt::format("const {} v{} = {};\n", ctype(e.dtype), i, value(e, lanes))
                         : fmt::format("const {0} v{1} = {0}(in{2}[o{2}]);  // (v{3}, kept)\n", ctype(e.dtype), i, r->load, r->early);
  }
  return with_stores ? s + stores(inner, stage) : s;
}

// The stores of one phase: an inner sweep's, or every outer one.
std::string Emitter::stores(bool inner, int stage) const {
  std::string s;
  for (size_t k = 0; k < k_.stores.size(); ++k) {
    const KStore& st = k_.stores[k];
    if (st.inner != inner || (inner && st.stage != stage)) continue;
    s += fmt::format("out{}[o{}] = {}({});\n", k, k_.loads.size() + k, storage(st.dtype), convert(v(st.expr), st.dtype));
  }
  return s;
}


// Whether every value of dtype `from` converts to `to` exactly.
bool widens_exactly(DType from, DType to) {
  if (from == to) return true;
  if (to == DType::Float64) return from == DType::Float32 || from == DType::Float16 || from == DType::BFloat16;
  if (to == DType::Float32) return from == DType::Float16 || from == DType::BFloat16;
  if (to == DType::Int64) return from == DType::Int32 || from == DType::Bool;
  return false;
}

Emitter::Emitter(const Kernel& k, Target t) : k_(k), target_(t), accumulator_(k.exprs.size(), -1) {
  for (size_t i = 0; i < k_.exprs.size(); ++i) {
    const KExpr& e = k_.exprs[i];
    if (e.kind != KExpr::Kind::Reduce) continue;
    // What it folds, before a conversion that the accumulator's own makes.
    int x = e.operands[0];
    const KExpr& o = k_.exprs[size_t(x)];
    if (o.kind == KExpr::Kind::Cast && o.dtype == accumulator(e) && widens_exactly(k_.exprs[size_t(o.operands[0])].dtype, o.dtype))
      x = o.operands[0];
    size_t a = 0;
    while (a < reduces_.size()) {
      const KExpr& r = k_.exprs[reduces_[a]];
      if (operand_[a] == x && r.stage == e.stage && r.prim.sym.op->id == e.prim.sym.op->id && accumulator(r) == accumulator(e)) break;
      ++a;
    }
    if (a == reduces_.size()) {
      reduces_.push_back(i);
      operand_.push_back(x);
    }
    accumulator_[i] = int(a);
  }
}

std::string Emitter::value(const KExpr& e, bool lanes) const {
  switch (e.kind) {
    case KExpr::Kind::Load: return fmt::format("{}(in{}[o{}])", ctype(e.dtype), e.index, e.index);
    case KExpr::Kind::Scalar: return fmt::format("s{}", e.index);
    case KExpr::Kind::Const: return literal(e.constant);
    case KExpr::Kind::Cast: return convert(v(e.operands[0]), e.dtype);
    case KExpr::Kind::Op: return fmt::format("{}({})", ctype(e.dtype), op(e));
    case KExpr::Kind::Reduce: {
      return convert(fmt::format("{}{}", lanes ? "r" : "a", accumulator_[size_t(&e - k_.exprs.data())]), e.dtype);
    }
  }
  return "";
}


std::string Emitter::op(const KExpr& e) const {
  const BoundSymbol& b = e.prim;
  const OpDef& def = *b.sym.op;
  std::string c = ctype(e.compute);
  auto present = [&](size_t i) { return i < e.operands.size() && e.operands[i] >= 0; };
  switch (def.id) {
    case OpId::add:
    case OpId::sub: {
      if (e.compute == DType::Bool) return fmt::format("thn::thn_add<bool>({}, bool({}) && {})", arg(e, 0), v(e.operands[2]), arg(e, 1));
      std::string alpha = fmt::format("{}({})", c, v(e.operands[2]));
      if (def.id == OpId::sub) alpha = fmt::format("{}(-{})", c, alpha);
      const KExpr& a = k_.exprs[size_t(e.operands[2])];
      const bool one = is_constant(a, def.id == OpId::sub ? -1.0 : 1.0);
      if (one && is_integral(e.compute, false))
        return fmt::format("thn::thn_wrapping<{0}>({1}, {2}, '+')", c, arg(e, 0), arg(e, 1));
      if (one) return fmt::format("{0}({1} + {2})", c, arg(e, 0), arg(e, 1));
      // x - y: the value eager's fma(-1, y, x) rounds to, written so that a
      // negation of it is not folded into one fused op (GCC makes
      // -fma(-1, y, x) a fnmsub, whose zero has the wrong sign)
      const bool minus = def.id == OpId::sub && is_constant(a, 1.0);
      if (minus && is_integral(e.compute, false))
        return fmt::format("thn::thn_wrapping<{0}>({1}, {2}, '-')", c, arg(e, 0), arg(e, 1));
      if (minus && is_floating(e.compute)) return fmt::format("{0}({1} - {2})", c, arg(e, 0), arg(e, 1));
      return fmt::format("thn::thn_muladd<{0}>({2}, {3}, {1})", c, arg(e, 0), alpha, arg(e, 1));
    }
    case OpId::div: {
      std::string mode = b.args.size() > 2 && b.args[2].is(Type::Str) ? b.args[2].as_str() : "";
      std::string fn = mode == "trunc" ? "thn_div_trunc" : mode == "floor" ? "thn_floor_divide" : "thn_div";
      return fmt::format("thn::{}<{}>({}, {})", fn, c, arg(e, 0), arg(e, 1));
    }
    case OpId::where: return fmt::format("thn::thn_where<{}>(bool({}), {}, {})", c, v(e.operands[0]), arg(e, 1), arg(e, 2));
    case OpId::clamp:
      if (present(1) && present(2)) return fmt::format("thn::thn_clamp<{}>({}, {}, {})", c, arg(e, 0), arg(e, 1), arg(e, 2));
    {
      // A number bound (a constant or a scalar argument): its NaN is ignored.
      const int bound = present(1) ? 1 : 2;
      const KExpr::Kind kind = k_.exprs[size_t(e.operands[size_t(bound)])].kind;
      const char* number = kind == KExpr::Kind::Const || kind == KExpr::Kind::Scalar ? "_number" : "";
      return fmt::format("thn::thn_clamp_{}{}<{}>({}, {})", bound == 1 ? "min" : "max", number, c, arg(e, 0),
                         arg(e, bound));
    }
    case OpId::lerp: return fmt::format("thn::thn_lerp<{}>({}, {}, {})", c, arg(e, 0), arg(e, 1), arg(e, 2));
    case OpId::nextafter:  // (float16 is refused)
      if (e.dtype == DType::BFloat16) return fmt::format("thn::thn_nextafter_bf16({}, {})", arg(e, 0), arg(e, 1));
      break;
    case OpId::addcmul:
      return fmt::format("thn::thn_muladd<{0}>({0}({4} * {2}), {3}, {1})", c, arg(e, 0), arg(e, 1), arg(e, 2), arg(e, 3));
    case OpId::addcdiv: return fmt::format("{0}({1} + {4} * {2} / {3})", c, arg(e, 0), arg(e, 1), arg(e, 2), arg(e, 3));
    case OpId::masked_fill: return fmt::format("(bool({}) ? {} : {})", v(e.operands[1]), arg(e, 2), arg(e, 0));
    default: break;
  }
  if (def.family == OpFamily::Unary) return fmt::format("thn::thn_{}<{}>({})", def.name, c, arg(e, 0));
  if (def.family == OpFamily::Binary) return fmt::format("thn::thn_{}<{}>({}, {})", def.name, c, arg(e, 0), arg(e, 1));
  throw std::logic_error("codegen: no kernel for " + b.sym.name());
}

}  // namespace codegen

using codegen::ctype;
using codegen::stype;
using codegen::Emitter;

// OpenMP reductions with the eager kernels' NaN-propagating extremes.
const char* const kOmpExtremes = R"(
#pragma omp declare reduction(thn_max : float, double, int32_t, int64_t, bool : omp_out = thn::thn_maximum(omp_out, omp_in)) initializer(omp_priv = omp_orig)
#pragma omp declare reduction(thn_min : float, double, int32_t, int64_t, bool : omp_out = thn::thn_minimum(omp_out, omp_in)) initializer(omp_priv = omp_orig)
)";

std::string kernel_compute_type(DType d) { return ctype(d); }
std::string kernel_storage_type(DType d) { return stype(d); }

std::vector<int> cuda_entry_modes(const Kernel& k) {
  if (!k.reduction) return {0};
  std::vector<int> modes{0, 1, 2, 3};
  if (k.stages == 1) modes.push_back(4);
  if (Emitter(k, Target::Cuda).online()) modes.push_back(5);
  return modes;
}

int cuda_row_cache_vectors(const Kernel& k) { return Emitter(k, Target::Cuda).cache_vectors(vector_lanes(k)); }

size_t kernel_argument_bytes(const Kernel& k) {
  // n, rn; six int32 in three words; ws; sz; per tensor p and st; fs and
  // is (one spare each).
  const size_t tensors = k.loads.size() + k.stores.size(), scalars = k.scalars.size() + 1;
  return 8 * (6 + size_t(kMaxKernelDims) + tensors * (1 + size_t(kMaxKernelDims)) + 2 * scalars);
}

std::string render_kernels(const std::vector<Kernel>& kernels, Target target, bool prelude) {
  std::string out;
  if (prelude) out = target == Target::Cpu ? cpu_prelude() + kOmpExtremes : cuda_prelude();
  for (const Kernel& k : kernels) {
    out += '\n';  // (not "\n" + render(): GCC 12 warns falsely on it, -Wrestrict)
    out += Emitter(k, target).render();
  }
  return out;
}

}  // namespace thn
