#include "passes/alias_analysis.h"

#include <fmt/format.h>

#include <optional>

#include "runtime/views.h"

namespace thn {

namespace {

int64_t wrap_dim(int64_t d, size_t n) { return d < 0 ? d + int64_t(n) : d; }

using Strides = std::vector<int64_t>;

// The strides of a view prim's result from its operand's strides (PyTorch's
// view arithmetic); empty when some size or argument is symbolic. None: a
// reshape whose operand's strides admit no view of its result, which the
// runtime's reshape copies (eager viewed the input, but functionalization
// replayed the reshape on a value written into it: a copy_ of an expansion).
std::optional<Strides> view_strides_of(const BoundSymbol& b, const Strides& in) {
  if (!b.sym.op && b.sym.prim == PrimId::as_strided) return static_ints(b.args[2].items()).value_or(Strides());
  auto in_sizes = static_sizes(b.args[0]);
  auto out_sizes = static_sizes(b.out);
  if (!in_sizes || !out_sizes) return Strides();
  if (in.empty() && !in_sizes->empty()) return Strides();  // unknown (a 0-dim operand's are known: none)
  std::vector<int64_t> s = in;
  if (!b.sym.op) {  // prims.slice(t, starts, ends, steps)
    auto steps = static_ints(b.args[3].items());
    if (!steps) return Strides();
    for (size_t d = 0; d < s.size(); ++d) s[d] *= (*steps)[d];
    return s;
  }
  switch (b.sym.op->id) {
    case OpId::reshape: {
      std::optional<Dims> r = view_strides(*in_sizes, in, *out_sizes);
      if (!r) return std::nullopt;
      return *r;
    }
    case OpId::permute: {
      std::vector<int64_t> r;
      for (const Value& d : b.args[1].items()) r.push_back(s[size_t(wrap_dim(d.raw_int(), s.size()))]);
      return r;
    }
    case OpId::unsqueeze: {
      int64_t d = wrap_dim(b.args[1].raw_int(), s.size() + 1);
      int64_t stride = d >= int64_t(s.size()) ? 1 : (*in_sizes)[size_t(d)] * s[size_t(d)];
      s.insert(s.begin() + d, stride);
      return s;
    }
    case OpId::squeeze: {
      int64_t d = wrap_dim(b.args[1].raw_int(), s.size());
      if ((*in_sizes)[size_t(d)] == 1) s.erase(s.begin() + d);
      return s;
    }
    case OpId::expand: {
      std::vector<int64_t> r(out_sizes->size(), 0);
      size_t lead = out_sizes->size() - s.size();
      for (size_t d = 0; d < s.size(); ++d)
        r[lead + d] = (*in_sizes)[d] == (*out_sizes)[lead + d] ? s[d] : 0;
      return r;
    }
    case OpId::diagonal: {
      int64_t d1 = wrap_dim(b.args[2].raw_int(), s.size()), d2 = wrap_dim(b.args[3].raw_int(), s.size());
      int64_t diag = s[size_t(d1)] + s[size_t(d2)];
      std::vector<int64_t> r;
      for (size_t d = 0; d < s.size(); ++d)
        if (int64_t(d) != d1 && int64_t(d) != d2) r.push_back(s[d]);
      r.push_back(diag);
      return r;
    }
    default: return Strides();
  }
}

// contiguous, to and convert_element_type return their operand when it
// already has the layout or dtype asked for, else a copy: for buffer
// planning they may alias it.
bool returns_operand_when_possible(const Symbol& s) {
  if (!s.op) return s.prim == PrimId::convert_element_type;
  return s.is_prim && (s.op->id == OpId::contiguous || s.op->id == OpId::to);
}

}  // namespace

Trace alias_analysis(Trace t) {
  auto& layouts = t.layouts;
  layouts.clear();
  auto own = [&](const Value& v, std::vector<int64_t> strides) { layouts[&v.symbolic()] = Layout{v, std::move(strides)}; };
  for (const Value& v : t.inputs)
    if (is_tensor_proxy(v)) own(v, tensor_proxy(v).strides);
  for (const auto& [proxy, tensor] : t.captured) own(proxy, tensor_proxy(proxy).strides);
  for (const BoundSymbol& b : t.body) {
    if (b.sym.is_view()) {
      const Layout& in = layouts.at(&b.args[0].symbolic());
      std::optional<Strides> strides = view_strides_of(b, in.strides);
      layouts[&b.out.symbolic()] = strides ? Layout{in.base, *strides, in.may_copy} : Layout{in.base, {}, true};
      continue;
    }
    // The operand itself when nothing changes; never across a dtype change.
    if (returns_operand_when_possible(b.sym) &&
        tensor_proxy(b.out).dtype() == tensor_proxy(b.args[0]).dtype()) {
      const Layout& in = layouts.at(&b.args[0].symbolic());
      layouts[&b.out.symbolic()] = Layout{in.base, {}, true};
      continue;
    }
    for_each_proxy(b.out, [&](const Value& o) {
      if (o.is(Type::Tensor)) own(o, {});
    });
  }
  return t;
}

}  // namespace thn
