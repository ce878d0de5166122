#include "ir/decompose.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "ir/basic_index.h"
#include "ir/tracer.h"
#include "runtime/elementwise.h"

namespace thn {

namespace {

using Sizes = std::vector<Value>;

struct Meta {
  DType dtype;
  Device device;
  Sizes sizes;
};

Meta meta(const Value& t) {
  const auto& p = tensor_proxy(t);
  return {p.dtype(), p.device(), p.sizes};
}

// Float16 and bfloat16 are computed in float32, as PyTorch's CPU kernels do.
DType compute_dtype(DType d) { return d == DType::Float16 || d == DType::BFloat16 ? DType::Float32 : d; }

int64_t iv(const Value& v) { return v.raw_int(); }

// Sizes agree for broadcasting: a static 1 against anything else differs;
// otherwise the values (symbolic sizes are guarded equal when they broadcast).
bool same_sizes(const Sizes& a, const Sizes& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    bool one_a = !a[i].is_proxy() && iv(a[i]) == 1, one_b = !b[i].is_proxy() && iv(b[i]) == 1;
    if (one_a != one_b || iv(a[i]) != iv(b[i])) return false;
  }
  return true;
}

// torch.result_type over the operands (tensor proxies and numbers; None
// skipped), from their metadata.
DType promoted(std::span<const Value> operands) {
  using K = PromotionOperand::Kind;
  std::vector<PromotionOperand> os;
  for (const Value& v : operands) {
    if (is_tensor_proxy(v)) {
      const TensorProxy& p = tensor_proxy(v);
      const bool wrapped = p.meta.defined() && p.meta.is_wrapped_number();
      os.push_back({p.dtype(), wrapped ? K::Wrapped : p.sizes.empty() ? K::ZeroDim : K::Dimensioned});
    } else if (v.is_number()) {
      os.push_back({v.is(Type::Float) ? DType::Float64 : v.is(Type::Bool) ? DType::Bool : DType::Int64, K::Wrapped});
    }
  }
  return os.empty() ? kDefaultFloat : result_type(std::span<const PromotionOperand>(os));
}
DType promoted(std::initializer_list<Value> operands) { return promoted(std::span(operands.begin(), operands.size())); }

class Decomposer {
 public:
  Decomposer(Tracer& tr, BoundSymbol& b) : tr_(tr), b_(b), device_(device_of(b)) {}

  void run() {
    std::optional<Value> r;
    if (b_.sym.op) r = op_decomposition();
    else if (b_.sym.prim == PrimId::getitem) r = getitem();
    else if (b_.sym.prim == PrimId::setitem_) r = setitem();
    if (r) finish(*r);
  }

 private:
  // ---- building prims ----

  static Value fresh(const Meta& m) { return metadata_tensor(m.dtype, m.device, m.sizes); }

  Value emit(Symbol sym, std::vector<Value> args, Value out) {
    BoundSymbol s;
    s.sym = sym;
    s.args = std::move(args);
    s.out = out;
    s.loc = b_.loc;
    subs_.push_back(std::move(s));
    if (out.is_proxy()) defined_.insert(&out.symbolic());
    return out;
  }

  // An op-table prim; missing trailing arguments take the schema's defaults.
  Value prim(OpId id, std::vector<Value> args, std::optional<Meta> m) {
    const OpDef& d = op_def(id);
    const auto& ps = d.schema.params;
    while (args.size() < ps.size()) args.push_back(from_ivalue(ps[args.size()].default_value));
    return emit(Symbol::prim_op(d), std::move(args), m ? fresh(*m) : Value());
  }

  Value convert(const Value& t, DType d) {
    if (!is_tensor_proxy(t) || tensor_proxy(t).dtype() == d) return t;
    Meta m = meta(t);
    m.dtype = d;
    return emit(Symbol::of(PrimId::convert_element_type), {t, Value(d)}, fresh(m));
  }

  Value expand(const Value& t, const Sizes& to) {
    if (!is_tensor_proxy(t) || same_sizes(tensor_proxy(t).sizes, to)) return t;
    if (tensor_proxy(t).sizes.size() > to.size())
      throw std::logic_error(fmt::format("decompose: expand of a {}-dim tensor to {} dims", tensor_proxy(t).sizes.size(),
                                         to.size()));
    Meta m = meta(t);
    m.sizes = to;
    return prim(OpId::expand, {t, Value::tuple(to)}, m);
  }

  // Arithmetic on sizes and numbers: integer add/sub/mul folded when
  // static, anything else a number prim.
  Value num(NumberOp op, const Value& a, const Value& b) {
    const bool arith = op == NumberOp::add || op == NumberOp::sub || op == NumberOp::mul;
    if (!arith || a.is(Type::Float) || b.is(Type::Float)) return emit(Symbol::of(op), {a, b}, tr_.number_node(op, {a, b}));
    auto is = [](const Value& v, int64_t k) { return !v.is_proxy() && iv(v) == k; };
    if ((op == NumberOp::add && is(a, 0)) || (op == NumberOp::mul && is(a, 1))) return b;
    if ((op != NumberOp::mul && is(b, 0)) || (op == NumberOp::mul && is(b, 1))) return a;
    if (!a.is_proxy() && !b.is_proxy()) {
      int64_t x = iv(a), y = iv(b);
      return Value(op == NumberOp::add ? x + y : op == NumberOp::sub ? x - y : x * y);
    }
    Value v = tr_.number_node(op, {a, b});
    return emit(Symbol::of(op), {a, b}, v);
  }

  // One elementwise prim: tensor operands converted to the computation dtype
  // and broadcast to `sizes` (numbers stay numbers); the result converted to
  // `out` (bool for predicates). Intermediates of a composite op pass
  // compute_dtype(out) as `out`, so they are not rounded in between.
  Value elementwise(OpId id, std::vector<Value> operands, std::vector<Value> extra, DType out, const Sizes& sizes) {
    const DType common = is_predicate(id) ? promoted(operands) : out, cd = compute_dtype(common);
    std::vector<Value> args;
    for (const Value& x : operands) args.push_back(expand(convert(in_common(x, common), cd), sizes));
    args.insert(args.end(), extra.begin(), extra.end());
    Meta m{is_predicate(id) ? DType::Bool : cd, device(), sizes};
    return convert(prim(id, std::move(args), m), out);
  }

  // An operand as eager's kernels take it: in the op's common dtype. Where
  // that is float16 or bfloat16 (computed in float32), a float32 tensor or
  // a Python number is rounded to it first (70000.0 is inf in float16).
  Value in_common(const Value& x, DType common) {
    if (compute_dtype(common) == common) return x;
    if (is_tensor_proxy(x)) return convert(x, common);
    if (!x.is_number()) return x;
    // A symbolic number: a 0-dim tensor of the common dtype. One guarded by
    // value (an infinity or NaN bound, see guard_fits) is the constant
    // eager sees: a NaN clamp bound as a number leaves x as it is, as a
    // tensor it would make every element NaN.
    if (x.is_proxy() && number_proxy(x).constraint != Constraint::Static)
      return prim(OpId::full, {Value::tuple({}), x, Value(common), Value(device())}, Meta{common, device(), {}});
    return from_ivalue(IValue(to_dtype(wrap_scalar(to_ivalue(x.without_proxy()).to_scalar()), common).item()));
  }

  // A symbolic number an op writes into tensors of dtype d, checked by eager
  // (masked_fill, a clamp bound, where, alpha: "value cannot be converted"):
  // the trace serves only values that fit, so another misses the cache and
  // eager's check runs. A value past the bounds that eager accepts (an
  // infinity or NaN into a float type) is guarded by value instead.
  void guard_fits(const Value& n, DType d) {
    if (!n.is_proxy() || !n.is_number() || number_proxy(n).depends_on_data()) return;
    double lo = 0, hi = 0;
    switch (d) {
      case DType::Int32: lo = -2147483648.0, hi = 2147483647.0; break;
      case DType::Int64: lo = -9223372036854775808.0, hi = 9223372036854775807.0; break;
      case DType::Float16: lo = -65504.0, hi = 65504.0; break;
      case DType::BFloat16: lo = -3.3895313892515355e38, hi = 3.3895313892515355e38; break;
      case DType::Float32: lo = -3.4028234663852886e38, hi = 3.4028234663852886e38; break;
      default: return;
    }
    auto bound = [&](double b) { return n.is(Type::Int) && d == DType::Int32 ? Value(int64_t(b)) : Value(b); };
    if (d == DType::Int64 && n.is(Type::Int)) return;  // a Python int is an int64
    const Value now = n.without_proxy();
    const double v = now.is(Type::Float) ? now.raw_float() : double(now.raw_int());
    if (!(v >= lo && v <= hi)) return tr_.make_static(number_proxy(n));
    tr_.assume(tr_.number_node(NumberOp::ge, {n, bound(lo)}));
    tr_.assume(tr_.number_node(NumberOp::le, {n, bound(hi)}));
  }

  Device device() const { return device_; }

  // The device of the op's tensors: its output's (a wrapped number operand
  // beside CUDA tensors stays on the CPU), else its first tensor's.
  static Device device_of(const BoundSymbol& b) {
    std::vector<Value> ps;
    collect_proxies(b.out, ps);
    for (const Value& a : b.args) collect_proxies(a, ps);
    for (const Value& p : ps)
      if (p.is(Type::Tensor)) return tensor_proxy(p).device();
    return kCPU;
  }

  // prims.copy_(dst, src) writes src into dst (a tensor or a view of one)
  // and defines dst's new value, as PyTorch's copy_ returns self.
  Value write(const Value& dst, const Value& src) { return prim(OpId::copy_, {dst, src}, meta(dst)); }

  // prims.slice: t[starts[d]:ends[d]:steps[d]] in every dim, of `sizes`.
  Value slice(const Value& t, Sizes starts, Sizes ends, Sizes steps, Sizes sizes) {
    Meta m = meta(t);
    m.sizes = std::move(sizes);
    return emit(Symbol::of(PrimId::slice), {t, Value::list(std::move(starts)), Value::list(std::move(ends)),
                                            Value::list(std::move(steps))},
                fresh(m));
  }

  // t[start:end] along dim, `len` elements.
  Value slice(const Value& t, int64_t dim, const Value& start, const Value& end, const Value& len) {
    const Sizes& in = tensor_proxy(t).sizes;
    Sizes starts(in.size(), Value(int64_t(0))), ends = in, steps(in.size(), Value(int64_t(1))), sizes = in;
    starts[size_t(dim)] = start;
    ends[size_t(dim)] = end;
    sizes[size_t(dim)] = len;
    return slice(t, std::move(starts), std::move(ends), std::move(steps), std::move(sizes));
  }

  Value squeeze(const Value& t, int64_t dim) {
    Meta m = meta(t);
    m.sizes.erase(m.sizes.begin() + dim);
    return prim(OpId::squeeze, {t, Value(dim)}, m);
  }

  Value unsqueeze(const Value& t, int64_t dim) {
    Meta m = meta(t);
    m.sizes.insert(m.sizes.begin() + dim, Value(int64_t(1)));
    return prim(OpId::unsqueeze, {t, Value(dim)}, m);
  }

  Value permute(const Value& t, const std::vector<int64_t>& perm) {
    Meta m = meta(t);
    Sizes in = m.sizes;
    std::vector<Value> dims;
    for (size_t i = 0; i < perm.size(); ++i) {
      m.sizes[i] = in[size_t(perm[i])];
      dims.push_back(Value(perm[i]));
    }
    return prim(OpId::permute, {t, Value::tuple(dims)}, m);
  }

  // ---- the op's arguments ----

  const Value& arg(std::string_view name) const {
    const auto& ps = b_.sym.op->schema.params;
    for (size_t i = 0; i < ps.size(); ++i)
      if (ps[i].name == name) return b_.args[i];
    throw std::logic_error("decompose: no parameter " + std::string(name));
  }
  const Value& self() const { return b_.args[size_t(std::max(b_.sym.op->schema.self_index, 0))]; }
  int64_t rank(const Value& t) const { return int64_t(tensor_proxy(t).sizes.size()); }
  static int64_t wrap(int64_t d, int64_t n) { return wrap_dim(d, std::max<int64_t>(n, 1)); }

  // Reduction dims: None, [] (both: every dim), an int or a list of ints.
  std::vector<int64_t> dims_of(const Value& v, const Value& t) const {
    std::vector<int64_t> dims;
    int64_t n = rank(t);
    if (v.is_int_like()) dims.push_back(wrap(iv(v), n));
    else if (v.is_sequence())
      for (const Value& d : v.items()) dims.push_back(wrap(iv(d), n));
    if (dims.empty())
      for (int64_t d = 0; d < n; ++d) dims.push_back(d);
    std::sort(dims.begin(), dims.end());
    return dims;
  }
  static Value dims_value(const std::vector<int64_t>& dims) {
    std::vector<Value> v;
    for (int64_t d : dims) v.push_back(Value(d));
    return Value::list(std::move(v));
  }

  Meta out_meta() const {
    if (!is_tensor_proxy(b_.out)) throw std::logic_error("decompose: " + b_.sym.name() + " does not return one tensor");
    return meta(b_.out);
  }

  // The dtype the out-of-place op computes (an in-place op then casts it
  // into self).
  DType result_dtype(OpId id) const {
    if (!b_.sym.inplace) return out_meta().dtype;
    if (is_predicate(id)) return DType::Bool;
    const OpDef& d = *b_.sym.op;
    if (d.family == OpFamily::Binary) return promoted({b_.args[0], b_.args[1]});
    if (id == OpId::clamp) return promoted({b_.args[0], b_.args[1], b_.args[2]});
    if (id == OpId::addcmul || id == OpId::addcdiv) return promoted({b_.args[0], b_.args[1], b_.args[2]});
    return tensor_proxy(self()).dtype();
  }
  Sizes result_sizes() const { return b_.sym.inplace ? tensor_proxy(self()).sizes : out_meta().sizes; }

  // ---- decompositions, by family ----

  std::optional<Value> op_decomposition() {
    const OpDef& d = *b_.sym.op;
    std::optional<Value> r;
    switch (d.family) {
      case OpFamily::Unary: r = unary(); break;
      case OpFamily::Binary: r = binary(); break;
      case OpFamily::Pointwise: r = pointwise(); break;
      case OpFamily::Conversion: r = conversion(); break;
      case OpFamily::Reduction: r = reduction(); break;
      case OpFamily::View: r = view(); break;
      case OpFamily::Copy: r = copy(); break;
      case OpFamily::LinAlg: r = linalg(); break;
      case OpFamily::Creation: r = creation(); break;
      case OpFamily::Random: r = passthrough(); break;
      case OpFamily::Attribute: r = attribute(); break;
    }
    if (!r || !b_.sym.inplace) return r;
    // In place: one write of the result, in self's dtype, into self.
    write(self(), convert(*r, tensor_proxy(self()).dtype()));
    return Value();
  }

  // The op itself as its prim, with the same arguments.
  std::optional<Value> passthrough() {
    if (!is_prim_op(*b_.sym.op)) return std::nullopt;
    if (b_.out.is_none()) {  // manual_seed
      prim(b_.sym.op->id, b_.args, std::nullopt);
      return Value();
    }
    if (!is_tensor_proxy(b_.out)) return std::nullopt;
    return prim(b_.sym.op->id, b_.args, out_meta());
  }

  std::optional<Value> unary() {
    OpId id = b_.sym.op->id;
    std::vector<Value> extra(b_.args.begin() + 1, b_.args.end());  // round's decimals
    return elementwise(id, {self()}, extra, result_dtype(id), result_sizes());
  }

  std::optional<Value> binary() {
    OpId id = b_.sym.op->id;
    Value a = b_.args[0], o = b_.args[1];
    DType out = result_dtype(id);
    std::vector<Value> extra;
    // alpha stays an operand of prims.add/sub: eager computes a + alpha * b
    // with one rounding (an FMA where the CPU has one), which a separate
    // prims.mul would not reproduce.
    if (id == OpId::add || id == OpId::sub) {
      Value alpha = arg("alpha");
      guard_fits(alpha, out);
      // float16 and bfloat16 take alpha rounded to their dtype (a symbolic
      // alpha is guarded by value); float16 rounds alpha * o as well (see
      // runtime/binary.cpp): a separate prims.mul into float16.
      if (compute_dtype(out) != out && !(alpha.is_proxy() && number_proxy(alpha).depends_on_data())) {
        if (alpha.is_proxy()) tr_.make_static(number_proxy(alpha));
        alpha = in_common(alpha.without_proxy(), out);
        const double av = alpha.is(Type::Float) ? alpha.raw_float() : double(alpha.raw_int());
        if (out == DType::Float16 && av != 1.0 && !(o.is_number() && o.is_proxy() && number_proxy(o).depends_on_data())) {
          Value p;
          if (is_tensor_proxy(o)) {
            p = elementwise(OpId::mul, {o, alpha}, {}, out, result_sizes());
          } else {  // a number o: the product folded, rounded as eager's
            if (o.is_proxy()) tr_.make_static(number_proxy(o));
            const Value on = in_common(o.without_proxy(), out);
            p = in_common(Value(av * (on.is(Type::Float) ? on.raw_float() : double(on.raw_int()))), out);
          }
          return elementwise(id, {a, p}, {Value(int64_t(1))}, out, result_sizes());
        }
      }
      extra.push_back(alpha);
    } else if (id == OpId::div) {
      extra.push_back(arg("rounding_mode"));
    } else if (id == OpId::nextafter && out == DType::BFloat16) {
      // On bfloat16's own grid (the kernel's thn_nextafter_bf16): no float32 step between.
      const Sizes sizes = result_sizes();
      return prim(id, {expand(in_common(a, out), sizes), expand(in_common(o, out), sizes)}, Meta{out, device(), sizes});
    }
    // x ** e for a Python number e in float32/float64/bfloat16: PyTorch's
    // formulas for six exponents (runtime/scalar_math.h's thn_pow_number;
    // each mul rounds to `out`, as bfloat16's does).
    if (id == OpId::pow && is_tensor_proxy(a) && o.is_number() &&
        (out == DType::Float32 || out == DType::Float64 || out == DType::BFloat16) &&
        (!o.is_proxy() || !number_proxy(o).depends_on_data())) {
      // (a symbolic exponent is guarded by value: the formula depends on it)
      if (o.is_proxy()) tr_.make_static(number_proxy(o));
      const Value ev = o.without_proxy();
      const double e = ev.is(Type::Float) ? ev.raw_float() : double(ev.raw_int());
      const Sizes sizes = result_sizes();
      auto unary = [&](OpId u, const Value& x) { return elementwise(u, {x}, {}, out, sizes); };
      auto mul = [&](const Value& x, const Value& y) { return elementwise(OpId::mul, {x, y}, {}, out, sizes); };
      if (e == 0.5) return unary(OpId::sqrt, a);
      if (e == -0.5) return unary(OpId::rsqrt, a);
      if (e == -1.0) return unary(OpId::reciprocal, a);
      if (e == 2.0) return mul(a, a);
      if (e == 3.0) return mul(mul(a, a), a);
      if (e == -2.0) return unary(OpId::reciprocal, mul(a, a));
    }
    return elementwise(id, {a, o}, extra, out, result_sizes());
  }

  std::optional<Value> pointwise() {
    OpId id = b_.sym.op->id;
    DType out = result_dtype(id);
    Sizes sizes = result_sizes();
    DType cd = compute_dtype(out);
    if (id == OpId::where || id == OpId::clamp)
      for (const Value& a : b_.args) guard_fits(a, out);
    auto operand = [&](const Value& v) { return expand(convert(in_common(v, out), cd), sizes); };
    switch (id) {
      case OpId::where: {
        Value c = expand(arg("condition"), sizes);
        return convert(prim(id, {c, operand(arg("self")), operand(arg("other"))}, Meta{cd, device(), sizes}), out);
      }
      case OpId::clamp:
        return convert(prim(id, {operand(self()), operand(arg("min")), operand(arg("max"))}, Meta{cd, device(), sizes}),
                       out);
      case OpId::lerp: {  // a number weight is not rounded to out (runtime/elementwise.cpp)
        const Value& w = arg("weight");
        return convert(prim(id, {operand(self()), operand(arg("end")), w.is_number() ? w : operand(w)},
                            Meta{cd, device(), sizes}),
                       out);
      }
      case OpId::addcmul: case OpId::addcdiv:  // prims: one expression, rounded as eager rounds it
        return convert(prim(id, {operand(self()), operand(arg("tensor1")), operand(arg("tensor2")), arg("value")},
                            Meta{cd, device(), sizes}),
                       out);
      case OpId::masked_fill: {
        Value v = arg("value");
        guard_fits(v, out);
        if (is_tensor_proxy(v)) v = convert(v, out);
        return prim(id, {self(), expand(arg("mask"), sizes), v}, Meta{out, device(), sizes});
      }
      case OpId::isclose: return isclose(sizes);
      case OpId::copy_: return write(self(), expand(convert(arg("src"), out), sizes));
      case OpId::fill_: case OpId::zero_: {
        Value v = id == OpId::zero_ ? Value(int64_t(0)) : arg("value");
        Value f = is_tensor_proxy(v) ? expand(convert(v, out), sizes)
                                     : prim(OpId::full, {Value::tuple(sizes), v, Value(out), Value(device())},
                                            Meta{out, device(), sizes});
        return write(self(), f);
      }
      default: return std::nullopt;
    }
  }

  std::optional<Value> conversion() {
    Meta in = meta(self()), out = out_meta();
    if (out.device != in.device) return std::nullopt;
    if (out.dtype != in.dtype) return convert(self(), out.dtype);
    if (b_.sym.op->id == OpId::to && arg("copy").raw_int()) return prim(OpId::clone, {self()}, out);
    return self();  // an alias
  }

  // sum-like: the input in the output dtype (int64 for integers), computed
  // in compute_dtype of it.
  Value summed(OpId id, const Value& x, const Value& dims, bool keepdim, DType out, const Sizes& sizes) {
    DType cd = compute_dtype(out);
    Value in = convert(convert(x, out), cd);
    return convert(prim(id, {in, dims, Value(keepdim)}, Meta{cd, device(), sizes}), out);
  }

  std::optional<Value> reduction() {
    OpId id = b_.sym.op->id;
    if (b_.sym.inplace) return std::nullopt;  // cumsum_, cumprod_
    if (id == OpId::cummax || id == OpId::cummin) return std::nullopt;  // two tensors: the runtime's op
    const Value& x = self();
    if (id == OpId::max || id == OpId::min) return extreme(id, x);
    Meta out = out_meta();
    switch (id) {
      case OpId::sum: return summed(id, x, dims_value(dims_of(arg("dim"), x)), arg("keepdim").raw_int(), out.dtype, out.sizes);
      case OpId::prod: {
        if (arg("dim").is_none()) return summed(id, x, Value(), false, out.dtype, out.sizes);
        return summed(id, x, Value(wrap(iv(arg("dim")), rank(x))), arg("keepdim").raw_int(), out.dtype, out.sizes);
      }
      case OpId::mean: {
        // PyTorch divides the sum, rounded to the output dtype, by the count.
        std::vector<int64_t> dims = dims_of(arg("dim"), x);
        Value s = summed(OpId::sum, x, dims_value(dims), arg("keepdim").raw_int(), out.dtype, out.sizes);
        Value count(int64_t(1));
        if (rank(x) > 0)  // a 0-dim tensor takes dim 0 and has one element
          for (int64_t d : dims) count = num(NumberOp::mul, count, tensor_proxy(x).sizes[size_t(d)]);
        return elementwise(OpId::div, {s}, {count, Value()}, out.dtype, out.sizes);
      }
      case OpId::amax: case OpId::amin:
        return prim(id, {x, dims_value(dims_of(arg("dim"), x)), arg("keepdim")}, out);
      case OpId::logsumexp: return logsumexp();
      case OpId::var: case OpId::std: return variance(id == OpId::std);
      case OpId::all: case OpId::any: {
        // any: a nonzero element; all: no zero one. Counted (an int64 sum),
        // so that they fuse with their producers like any sum. NaN is nonzero.
        if (rank(x) == 0) return passthrough();
        const bool any = id == OpId::any;
        Value hit = elementwise(any ? OpId::ne : OpId::eq, {x, Value(int64_t(0))}, {}, DType::Bool, tensor_proxy(x).sizes);
        Value count = summed(OpId::sum, hit, dims_value(dims_of(arg("dim"), x)), arg("keepdim").raw_int(), DType::Int64,
                             out.sizes);
        return elementwise(any ? OpId::gt : OpId::eq, {count, Value(int64_t(0))}, {}, DType::Bool, out.sizes);
      }
      case OpId::cumsum: case OpId::cumprod: {
        DType dt = out.dtype;
        return prim(id, {convert(x, dt), Value(wrap(iv(arg("dim")), rank(x))), Value()}, out);
      }
      default: return passthrough();
    }
  }

  // max/min: of everything, along a dim (values and indices), or of two tensors.
  Value extreme(OpId id, const Value& x) {
    const Value& dim = arg("dim");
    OpId extreme = id == OpId::max ? OpId::amax : OpId::amin;
    if (dim.is_none()) return prim(extreme, {x, dims_value(dims_of(dim, x)), Value(false)}, out_meta());
    if (is_tensor_proxy(dim))
      return elementwise(id == OpId::max ? OpId::maximum : OpId::minimum, {x, dim}, {}, out_meta().dtype,
                         out_meta().sizes);
    std::vector<Value> outs;
    collect_proxies(b_.out, outs);
    Value d(wrap(iv(dim), rank(x)));
    Value values = prim(extreme, {x, dims_value({iv(d)}), arg("keepdim")}, meta(outs[0]));
    // argmax has no bool kernel (PyTorch's neither); max(dim) has: the
    // indices of a bool tensor are those of its 0/1 integers.
    Value ordered = tensor_proxy(x).dtype() == DType::Bool ? convert(x, DType::Int32) : x;
    Value indices = prim(id == OpId::max ? OpId::argmax : OpId::argmin, {ordered, d, arg("keepdim")}, meta(outs[1]));
    return Value::tuple({values, indices});
  }

  // As the runtime's var/std: two passes in float64 (the mean, then the
  // squared deviations from it) divided by max(0, N - correction), so that
  // they fuse into one two-sweep reduction. Symbolic reduced sizes and
  // empty inputs stay the runtime's op.
  std::optional<Value> variance(bool take_sqrt) {
    const Value& x0 = self();
    Meta out = out_meta();
    if (tensor_proxy(x0).meta.numel() == 0 || rank(x0) == 0) return std::nullopt;
    std::vector<int64_t> dims = dims_of(arg("dim"), x0);
    Sizes in = tensor_proxy(x0).sizes, kept = in;
    int64_t n = 1;
    for (int64_t d : dims) {
      if (in[size_t(d)].is_proxy()) return std::nullopt;
      n *= iv(in[size_t(d)]);
      kept[size_t(d)] = Value(int64_t(1));
    }
    // max(0, N - correction), correction being `correction`, else
    // `unbiased` (a bool counts 1 or 0), else 1: a number of the trace when
    // it is one (eager CUDA's one-op traces keep numbers symbolic).
    const Value &correction = arg("correction"), &unbiased = arg("unbiased");
    const Value c = !correction.is_none() ? correction : !unbiased.is_none() ? unbiased : Value(int64_t(1));
    Value divisor = c.is_proxy()
                        ? num(NumberOp::max, Value(0.0), num(NumberOp::sub, Value(double(n)), c))
                        : Value(std::max(0.0, double(n) - (c.is(Type::Float) ? c.raw_float() : double(c.raw_int()))));
    const DType f64 = DType::Float64;
    Value x = convert(x0, f64);
    // Both sums keep dims as asked (one kernel: its reductions agree).
    const bool keepdim = arg("keepdim").raw_int();
    Value total = prim(OpId::sum, {x, dims_value(dims), Value(keepdim)}, Meta{f64, device(), out.sizes});
    Value mean = elementwise(OpId::div, {total}, {Value(n), Value()}, f64, out.sizes);
    if (!keepdim) mean = prim(OpId::reshape, {mean, Value::tuple(kept)}, Meta{f64, device(), kept});
    Value dev = elementwise(OpId::sub, {x, mean}, {Value(int64_t(1))}, f64, in);
    Value sq = elementwise(OpId::mul, {dev, dev}, {}, f64, in);
    Value m2 = prim(OpId::sum, {sq, dims_value(dims), Value(keepdim)}, Meta{f64, device(), out.sizes});
    Value v = elementwise(OpId::div, {m2}, {divisor, Value()}, f64, out.sizes);
    if (take_sqrt) v = elementwise(OpId::sqrt, {v}, {}, f64, out.sizes);
    return convert(v, out.dtype);
  }

  // As the runtime's op_isclose, op by op (each rounded to the inputs'
  // dtype, as eager rounds it). Tolerances that are number proxies: the op
  // itself.
  std::optional<Value> isclose(const Sizes& sizes) {
    const Value &a = self(), &b = arg("other"), &rtol = arg("rtol"), &atol = arg("atol");
    if (rtol.is_proxy() || atol.is_proxy() || arg("equal_nan").is_proxy()) return std::nullopt;
    const DType d = tensor_proxy(a).dtype();
    auto pred = [&](OpId id, std::vector<Value> xs) { return elementwise(id, std::move(xs), {}, DType::Bool, sizes); };
    Value close = pred(OpId::eq, {a, b});
    if (arg("equal_nan").raw_int() && is_floating(d))
      close = pred(OpId::logical_or, {close, pred(OpId::logical_and, {pred(OpId::isnan, {a}), pred(OpId::isnan, {b})})});
    if (rtol.raw_float() == 0 && atol.raw_float() == 0) return close;
    const DType f = d == DType::Bool ? kDefaultFloat : d, scaled = is_floating(f) ? f : kDefaultFloat;
    const Value one(int64_t(1));
    Value allowed = elementwise(OpId::mul, {convert(b, f), rtol}, {}, scaled, sizes);
    allowed = elementwise(OpId::abs, {allowed}, {}, scaled, sizes);
    allowed = elementwise(OpId::add, {allowed, atol}, {one}, scaled, sizes);
    Value actual = elementwise(OpId::sub, {convert(a, f), convert(b, f)}, {one}, f, sizes);
    actual = elementwise(OpId::abs, {actual}, {}, f, sizes);
    Value within = pred(OpId::logical_and, {pred(OpId::le, {actual, allowed}),
                                            pred(OpId::logical_not, {pred(OpId::isinf, {actual})})});
    return pred(OpId::logical_or, {close, within});
  }

  // As PyTorch: maxes with infinities zeroed, then log(sum(exp(x - maxes))) + maxes.
  std::optional<Value> logsumexp() {
    const Value& x0 = self();
    Meta out = out_meta();
    bool keepdim = arg("keepdim").raw_int();
    std::vector<int64_t> dims = dims_of(arg("dim"), x0);
    // dim=[] and empty inputs follow PyTorch's quirks: left to the op itself.
    const Value& dim = arg("dim");
    if ((dim.is_sequence() && dim.items().empty()) || tensor_proxy(x0).meta.numel() == 0 || rank(x0) == 0)
      return std::nullopt;
    Value x = convert(x0, out.dtype);
    Sizes in = tensor_proxy(x).sizes, kept = in;
    for (int64_t d : dims) kept[size_t(d)] = Value(int64_t(1));
    Meta km{out.dtype, out.device, kept};
    Value m = prim(OpId::amax, {x, dims_value(dims), Value(true)}, km);
    Value inf = elementwise(OpId::isinf, {m}, {}, DType::Bool, kept);
    Value m0 = prim(OpId::where, {inf, Value(0.0), m}, km);
    Value diff = elementwise(OpId::sub, {x, m0}, {Value(int64_t(1))}, out.dtype, in);
    Value e = elementwise(OpId::exp, {diff}, {}, out.dtype, in);
    Value s = summed(OpId::sum, e, dims_value(dims), keepdim, out.dtype, out.sizes);
    Value l = elementwise(OpId::log, {s}, {}, out.dtype, out.sizes);
    Value ms = keepdim ? m0 : prim(OpId::reshape, {m0, Value::tuple(out.sizes)}, Meta{out.dtype, out.device, out.sizes});
    return elementwise(OpId::add, {l, ms}, {Value(int64_t(1))}, out.dtype, out.sizes);
  }

  std::optional<Value> view() {
    OpId id = b_.sym.op->id;
    const Value& x = self();
    int64_t n = rank(x);
    switch (id) {
      case OpId::view: case OpId::reshape: case OpId::flatten: case OpId::unflatten: {
        // A view when the strides allow it (as eager decided; the prologue
        // guards the strides of non-contiguous inputs), else a copy first.
        bool view = tensor_proxy(b_.out).meta.storage() == tensor_proxy(x).meta.storage();
        Value in = view ? x : prim(OpId::contiguous, {x}, meta(x));
        return prim(OpId::reshape, {in, Value::tuple(out_meta().sizes)}, out_meta());
      }
      case OpId::expand: case OpId::expand_as:
        return prim(OpId::expand, {x, Value::tuple(out_meta().sizes)}, out_meta());
      case OpId::permute: {
        std::vector<int64_t> perm;
        for (const Value& d : arg("dims").items()) perm.push_back(wrap(iv(d), n));
        return permute(x, perm);
      }
      case OpId::transpose: return permute(x, swapped(n, wrap(iv(arg("dim0")), n), wrap(iv(arg("dim1")), n)));
      case OpId::t: return permute(x, swapped(n, 0, n - 1));
      case OpId::movedim: return permute(x, moved(n, arg("source"), arg("destination")));
      case OpId::unsqueeze: return unsqueeze(x, wrap(iv(arg("dim")), n + 1));
      case OpId::squeeze: {
        std::vector<int64_t> dims;
        const Sizes& s = tensor_proxy(x).sizes;
        for (int64_t d = n - 1; d >= 0; --d)
          if (!s[size_t(d)].is_proxy() && iv(s[size_t(d)]) == 1 &&
              (arg("dim").is_none() || wrap(iv(arg("dim")), n) == d))
            dims.push_back(d);
        Value r = x;
        for (int64_t d : dims) r = squeeze(r, d);
        return r;
      }
      case OpId::narrow: {
        int64_t d = wrap(iv(arg("dim")), n);
        Value start = arg("start");
        if (!start.is_proxy() && iv(start) < 0) start = num(NumberOp::add, start, tensor_proxy(x).sizes[size_t(d)]);
        if (start.is_proxy() && iv(start) < 0) return std::nullopt;
        return slice(x, d, start, num(NumberOp::add, start, arg("length")), arg("length"));
      }
      case OpId::select: {
        int64_t d = wrap(iv(arg("dim")), n);
        // (A negative index counts from the end of a size that may be symbolic.)
        Value i(iv(arg("index")));
        if (iv(i) < 0) i = num(NumberOp::add, i, tensor_proxy(x).sizes[size_t(d)]);
        return squeeze(slice(x, d, i, num(NumberOp::add, i, Value(int64_t(1))), Value(int64_t(1))), d);
      }
      case OpId::split: case OpId::chunk: case OpId::unbind: {
        int64_t d = wrap(iv(arg("dim")), n);
        std::vector<Value> parts;
        Value offset(int64_t(0));
        for (const Value& o : b_.out.items()) {
          Value len = id == OpId::unbind ? Value(int64_t(1)) : tensor_proxy(o).sizes[size_t(d)];
          Value end = num(NumberOp::add, offset, len);
          Value p = slice(x, d, offset, end, len);
          parts.push_back(id == OpId::unbind ? squeeze(p, d) : p);
          offset = end;
        }
        return Value::list(std::move(parts));
      }
      default: return passthrough();
    }
  }

  static std::vector<int64_t> swapped(int64_t n, int64_t a, int64_t b) {
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < n; ++i) perm.push_back(i);
    if (n > 0) std::swap(perm[size_t(a)], perm[size_t(b)]);
    return perm;
  }

  static std::vector<int64_t> moved(int64_t n, const Value& source, const Value& destination) {
    std::vector<int64_t> perm(size_t(n), -1), src, dst;
    auto list = [&](const Value& v, std::vector<int64_t>& out) {
      if (v.is_int_like()) out.push_back(wrap(iv(v), n));
      else for (const Value& x : v.items()) out.push_back(wrap(iv(x), n));
    };
    list(source, src);
    list(destination, dst);
    std::vector<bool> used(size_t(n), false);
    // (a 0-dim tensor's dim 0 or -1 is its no dims: nothing moves)
    for (size_t i = 0; n > 0 && i < src.size(); ++i) {
      perm[size_t(dst[i])] = src[i];
      used[size_t(src[i])] = true;
    }
    int64_t next = 0;
    for (int64_t& p : perm) {
      if (p >= 0) continue;
      while (used[size_t(next)]) ++next;
      p = next++;
    }
    return perm;
  }

  std::optional<Value> copy() {
    OpId id = b_.sym.op->id;
    if (id == OpId::sort || id == OpId::topk) return std::nullopt;  // two tensors: the runtime's op
    Meta out = b_.sym.inplace ? meta(self()) : out_meta();
    switch (id) {
      case OpId::cat: case OpId::stack: {
        std::vector<Value> parts;
        const auto& ts = arg("tensors").items();
        if (ts.empty()) return std::nullopt;
        int64_t d = wrap(iv(arg("dim")), rank(b_.out));
        for (const Value& t : ts) parts.push_back(convert(id == OpId::stack ? unsqueeze(t, d) : t, out.dtype));
        return prim(OpId::cat, {Value::list(std::move(parts)), Value(d)}, out);
      }
      case OpId::contiguous:
        // A tensor that is contiguous already is returned itself (an alias),
        // as eager decided.
        if (tensor_proxy(b_.out).meta.storage() == tensor_proxy(self()).meta.storage()) return self();
        break;
      default: break;
    }
    if (b_.sym.inplace) {
      // index_copy_, index_add_, tril_, triu_: the out-of-place prim, then one write.
      if (!is_prim_op(*b_.sym.op)) return std::nullopt;
      return prim(id, b_.args, out);
    }
    return passthrough();
  }

  std::optional<Value> linalg() {
    switch (b_.sym.op->id) {
      case OpId::mm: case OpId::bmm: return prim(OpId::matmul, {b_.args[0], b_.args[1]}, out_meta());
      case OpId::outer: {
        Meta out = out_meta();
        Value a = unsqueeze(convert(arg("self"), out.dtype), 1), v = unsqueeze(convert(arg("vec2"), out.dtype), 0);
        return elementwise(OpId::mul, {a, v}, {}, out.dtype, out.sizes);
      }
      default: return passthrough();
    }
  }

  std::optional<Value> creation() {
    Meta out = out_meta();
    // A *_like of a non-contiguous tensor keeps its layout (PyTorch's
    // preserve_format): the library op, which computes it on every call.
    const OpId id = b_.sym.op->id;
    const bool like = id == OpId::zeros_like || id == OpId::ones_like || id == OpId::full_like || id == OpId::empty_like;
    if (like) {
      const Tensor& meta = tensor_proxy(self()).meta;
      if (meta.strides() != contiguous_strides(meta.sizes())) return passthrough();
    }
    switch (id) {
      case OpId::zeros: case OpId::ones: case OpId::zeros_like: case OpId::ones_like: {
        bool one = b_.sym.op->id == OpId::ones || b_.sym.op->id == OpId::ones_like;
        return prim(OpId::full, {Value::tuple(out.sizes), Value(int64_t(one)), Value(out.dtype), Value(out.device)}, out);
      }
      case OpId::full: case OpId::full_like:
        return prim(OpId::full, {Value::tuple(out.sizes), arg("fill_value"), Value(out.dtype), Value(out.device)}, out);
      case OpId::empty: case OpId::empty_like:
        return prim(OpId::empty, {Value::tuple(out.sizes), Value(out.dtype), Value(out.device)}, out);
      default: return passthrough();
    }
  }

  std::optional<Value> attribute() {
    const Value& x = self();
    int64_t n = rank(x);
    if (b_.sym.op->id == OpId::T) {
      std::vector<int64_t> perm;
      for (int64_t i = n - 1; i >= 0; --i) perm.push_back(i);
      return permute(x, perm);
    }
    if (b_.sym.op->id == OpId::mT) return permute(x, swapped(n, n - 2, n - 1));
    return std::nullopt;
  }

  // ---- indexing ----

  // x[index...] with ints, slices, None and Ellipsis: unsqueezes for the
  // Nones, one slice over every dim, squeezes for the ints. The Nones come
  // first, as PyTorch, applying the index left to right, inserts each
  // before the dims after it are sliced: its stride is the next dim's whole
  // extent (x[None, 1:] of a 3-element x has strides (3, 1); a copy_ onto
  // it compares them). A bound counted from the end of a symbolic size is
  // symbolic (the tracer guarded its form). nullopt for advanced indexing
  // (tensors, lists, bools): a gather of its own.
  std::optional<Value> basic_index(const Value& x, std::span<const Value> index) {
    const Sizes& sizes = tensor_proxy(x).sizes;
    auto entries = basic_index_entries(sizes.size(), index);
    if (!entries) return std::nullopt;
    // Positions in the layout that keeps every input dim and has the Nones
    // inserted: where the Nones go, and the int-indexed dims to squeeze.
    const size_t n = entries->size();
    Sizes starts(n, Value(int64_t(0))), ends, steps(n, Value(int64_t(1)));
    for (const BasicIndexEntry& e : *entries) ends.push_back(e.dim < 0 ? Value(int64_t(1)) : sizes[size_t(e.dim)]);
    Sizes sliced_sizes = ends;
    std::vector<int64_t> squeezes, news;
    bool sliced = false;
    auto arith = [&](NumberOp op, const Value& a, const Value& b) { return num(op, a, b); };
    for (size_t pos = 0; pos < n; ++pos) {
      const BasicIndexEntry& e = (*entries)[pos];
      if (e.dim < 0) news.push_back(int64_t(pos));
      if (e.dim < 0 || e.index.is_none()) continue;
      const Value& size = sizes[size_t(e.dim)];
      const IndexRange r = index_range(e.index, iv(size));
      if (e.index.is(Type::Int)) squeezes.push_back(int64_t(pos));
      else if (r.whole()) continue;
      starts[pos] = index_bound_value(r.lo, size, arith);
      ends[pos] = index_bound_value(r.hi, size, arith);
      steps[pos] = Value(r.step);
      sliced_sizes[pos] = index_range_length(r, size, arith);
      sliced = true;
    }
    // (x[:] and x[...] too are a slice: a view with x's strides, where the
    // reshape that stands for an op returning its input would make a size-1
    // dim's stride contiguous.)
    Value r = x;
    for (int64_t p : news) r = unsqueeze(r, p);  // front to back
    if (sliced || (news.empty() && squeezes.empty())) r = slice(r, starts, ends, steps, sliced_sizes);
    for (auto it = squeezes.rbegin(); it != squeezes.rend(); ++it) r = squeeze(r, *it);
    return r;
  }

  std::optional<Value> getitem() {
    std::span<const Value> index(b_.args.data() + 1, b_.args.size() - 1);
    return basic_index(b_.args[0], index);
  }

  std::optional<Value> setitem() {
    const Value& x = b_.args[0];
    std::span<const Value> index(b_.args.data() + 1, b_.args.size() - 2);
    std::optional<Value> view = basic_index(x, index);
    if (!view) {
      // Tensor indices: eager's scatter into a copy of x, then x's new value.
      std::vector<Value> args(b_.args.begin(), b_.args.end());
      write(x, emit(Symbol::of(PrimId::index_put), std::move(args), fresh(meta(x))));
      return Value();
    }
    Meta m = meta(*view);
    DType dt = tensor_proxy(x).dtype();
    Value v = b_.args.back();
    // As eager: a value with more dims than the view has leading 1s (the
    // trace's eager run checked), which go.
    while (is_tensor_proxy(v) && rank(v) > int64_t(m.sizes.size())) v = squeeze(v, 0);
    Value src = is_tensor_proxy(v) ? expand(convert(v, dt), m.sizes)
                                   : prim(OpId::full, {Value::tuple(m.sizes), v, Value(dt), Value(m.device)},
                                          Meta{dt, m.device, m.sizes});
    write(*view, src);
    return Value();
  }

  // ---- binding the result to the op's outputs ----

  void finish(const Value& result) {
    std::vector<Value> rs, outs;
    collect_proxies(result, rs);
    collect_proxies(b_.out, outs);
    if (rs.size() != outs.size()) throw std::logic_error("decompose: " + b_.sym.name() + " has the wrong arity");
    // An op that returns its input unchanged (`x.to(x.dtype)`, `x[...]`)
    // returns an alias of it: a reshape to the same sizes, a view.
    if (rs.size() == 1 && rs[0].is(Type::Tensor) && !defined_.count(&rs[0].symbolic()))
      rs[0] = prim(OpId::reshape, {rs[0], Value::tuple(meta(rs[0]).sizes)}, meta(rs[0]));
    if (subs_.empty()) return;
    std::unordered_map<const Symbolic*, Value> rename;
    for (size_t i = 0; i < rs.size(); ++i) {
      if (!defined_.count(&rs[i].symbolic())) return;
      check_same(rs[i], outs[i]);
      rename[&rs[i].symbolic()] = outs[i];
    }
    for (BoundSymbol& s : subs_) {
      for (Value& a : s.args) a = substitute(a, rename);
      s.out = substitute(s.out, rename);
    }
    b_.subsymbols = std::move(subs_);
  }

  void check_same(const Value& r, const Value& out) const {
    if (!r.is(Type::Tensor)) return;
    Meta a = meta(r), b = meta(out);
    bool same = a.dtype == b.dtype && a.device == b.device && a.sizes.size() == b.sizes.size();
    for (size_t i = 0; same && i < a.sizes.size(); ++i) same = iv(a.sizes[i]) == iv(b.sizes[i]);
    if (!same)
      throw std::logic_error(fmt::format("decompose: {} computes {}{} where the op gives {}{}", b_.sym.name(),
                                         dtype_short(a.dtype), a.sizes.size(), dtype_short(b.dtype), b.sizes.size()));
  }

  Tracer& tr_;
  BoundSymbol& b_;
  Device device_;
  std::vector<BoundSymbol> subs_;
  std::unordered_set<const Symbolic*> defined_;
};

}  // namespace

void decompose(Tracer& tr, BoundSymbol& b) { Decomposer(tr, b).run(); }

}  // namespace thn
