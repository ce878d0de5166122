#include "backend/codegen.h"

#include <fmt/format.h>

#include <cmath>

#include "backend/prelude.h"

namespace thn {

namespace {

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

class Emitter {
 public:
  Emitter(const Kernel& k, Target t) : k_(k), target_(t) {}

  std::string render() {
    std::string out;
    size_t tensors = k_.loads.size() + k_.stores.size();
    std::string params =
        "int64_t n, int32_t nd, const int64_t* sz, void* const* p, const int64_t* st, const double* fs, "
        "const int64_t* is, int32_t flat";
    if (target_ == Target::Cpu) {
      out += fmt::format("extern \"C\" void {}({}) {{\n", k_.name, params);
    } else {
      out += fmt::format("struct {}_args {{ int64_t n; int32_t nd, flat; int64_t sz[{}]; void* p[{}]; int64_t st[{}]; "
                         "double fs[{}]; int64_t is[{}]; }};\n",
                         k_.name, kMaxKernelDims, tensors, tensors * kMaxKernelDims, k_.scalars.size() + 1,
                         k_.scalars.size() + 1);
      out += fmt::format("extern \"C\" __global__ void {}(const {}_args a) {{\n", k_.name, k_.name);
      out += "  const int64_t n = a.n; const int32_t nd = a.nd, flat = a.flat;\n"
             "  const int64_t* sz = a.sz; void* const* p = a.p; const int64_t* st = a.st;\n"
             "  const double* fs = a.fs; const int64_t* is = a.is;\n"
             "  (void)fs; (void)is; (void)sz; (void)st; (void)nd;\n";
    }
    for (size_t t = 0; t < k_.loads.size(); ++t)
      out += fmt::format("  const {0}* in{1} = (const {0}*)p[{1}];\n", stype(k_.loads[t].dtype), t);
    for (size_t s = 0; s < k_.stores.size(); ++s)
      out += fmt::format("  {0}* out{1} = ({0}*)p[{2}];\n", stype(k_.stores[s].dtype), s, k_.loads.size() + s);
    for (size_t s = 0; s < k_.scalars.size(); ++s) {
      DType d = k_.scalars[s].second;
      out += fmt::format("  const {} s{} = {}({}[{}]);\n", ctype(d), s, ctype(d), d == DType::Float64 ? "fs" : "is", s);
    }
    std::string body = statements();
    if (target_ == Target::Cpu) {
      // Contiguous: one flat loop; else the innermost dim runs with its strides.
      out += "  if (flat) {\n#pragma omp parallel for simd if (n >= 32768) schedule(static)\n"
             "    for (int64_t i = 0; i < n; ++i) {\n";
      for (size_t t = 0; t < tensors; ++t) out += fmt::format("      const int64_t o{} = i;\n", t);
      out += indent(body, 6) + "    }\n    return;\n  }\n";
      out += "  const int64_t inner = nd > 0 ? sz[nd - 1] : 1, outer = inner > 0 ? n / inner : 0;\n"
             "#pragma omp parallel for if (n >= 32768) schedule(static)\n"
             "  for (int64_t q = 0; q < outer; ++q) {\n";
      for (size_t t = 0; t < tensors; ++t) out += fmt::format("    int64_t b{} = 0;\n", t);
      out += "    int64_t r = q;\n    for (int32_t d = nd - 2; d >= 0; --d) {\n"
             "      const int64_t c = r % sz[d];\n      r /= sz[d];\n";
      for (size_t t = 0; t < tensors; ++t) out += fmt::format("      b{0} += c * st[{0} * {1} + d];\n", t, kMaxKernelDims);
      out += "    }\n    for (int64_t j = 0; j < inner; ++j) {\n";
      for (size_t t = 0; t < tensors; ++t)
        out += fmt::format("      const int64_t o{0} = b{0} + j * st[{0} * {1} + nd - 1];\n", t, kMaxKernelDims);
      out += indent(body, 6) + "    }\n  }\n}\n";
    } else {
      out += "  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(blockDim.x) * gridDim.x) {\n";
      for (size_t t = 0; t < tensors; ++t) out += fmt::format("    int64_t o{} = i;\n", t);
      out += "    if (!flat) {\n";
      for (size_t t = 0; t < tensors; ++t) out += fmt::format("      o{} = 0;\n", t);
      out += "      int64_t r = i;\n      for (int32_t d = nd - 1; d >= 0; --d) {\n"
             "        const int64_t c = r % sz[d];\n        r /= sz[d];\n";
      for (size_t t = 0; t < tensors; ++t) out += fmt::format("        o{0} += c * st[{0} * {1} + d];\n", t, kMaxKernelDims);
      out += "      }\n    }\n" + indent(body, 4) + "  }\n}\n";
    }
    return out;
  }

 private:
  static std::string indent(const std::string& s, int n) {
    std::string pad(size_t(n), ' '), out;
    size_t start = 0;
    while (start < s.size()) {
      size_t end = s.find('\n', start);
      out += pad + s.substr(start, end - start + 1);
      start = end + 1;
    }
    return out;
  }

  std::string v(int e) const { return fmt::format("v{}", e); }

  // operand i of an op, in the op's compute type
  std::string arg(const KExpr& e, size_t i) const {
    return fmt::format("{}({})", ctype(e.compute), v(e.operands.at(i)));
  }

  std::string statements() const {
    std::string s;
    for (size_t i = 0; i < k_.exprs.size(); ++i) {
      const KExpr& e = k_.exprs[i];
      s += fmt::format("const {} v{} = {};\n", ctype(e.dtype), i, value(e));
    }
    for (size_t k = 0; k < k_.stores.size(); ++k) {
      const KStore& st = k_.stores[k];
      s += fmt::format("out{}[o{}] = {}({});\n", k, k_.loads.size() + k, stype(st.dtype),
                       convert(v(st.expr), st.dtype));
    }
    return s;
  }

  std::string value(const KExpr& e) const {
    switch (e.kind) {
      case KExpr::Kind::Load: return fmt::format("{}(in{}[o{}])", ctype(e.dtype), e.index, e.index);
      case KExpr::Kind::Scalar: return fmt::format("s{}", e.index);
      case KExpr::Kind::Const: return literal(e.constant);
      case KExpr::Kind::Cast: return convert(v(e.operands[0]), e.dtype);
      case KExpr::Kind::Op: return fmt::format("{}({})", ctype(e.dtype), op(e));
    }
    return "";
  }

  std::string op(const KExpr& e) const {
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
        bool one = a.kind == KExpr::Kind::Const &&
                   (a.constant.is(Type::Float) ? a.constant.raw_float() : double(a.constant.raw_int())) ==
                       (def.id == OpId::sub ? -1.0 : 1.0);
        if (one) return fmt::format("{0}({1} + {2})", c, arg(e, 0), arg(e, 1));
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
        if (present(1)) return fmt::format("thn::thn_clamp_min<{}>({}, {})", c, arg(e, 0), arg(e, 1));
        return fmt::format("thn::thn_clamp_max<{}>({}, {})", c, arg(e, 0), arg(e, 2));
      case OpId::lerp: return fmt::format("thn::thn_lerp<{}>({}, {}, {})", c, arg(e, 0), arg(e, 1), arg(e, 2));
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

  const Kernel& k_;
  Target target_;
};

}  // namespace

std::string render_kernels(const std::vector<Kernel>& kernels, Target target) {
  std::string out = target == Target::Cpu ? cpu_prelude() : cuda_prelude();
  for (const Kernel& k : kernels) out += "\n" + Emitter(k, target).render();
  return out;
}

}  // namespace thn
