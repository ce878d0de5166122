#include "ir/trace.h"

#include <fmt/format.h>

#include <filesystem>

#include <unordered_map>

namespace thn {

bool is_prim_op(const OpDef& op) {
  static const std::vector<bool> table = [] {
    std::vector<bool> t(all_ops().size(), false);
    for (const OpDef& o : all_ops()) t[size_t(o.id)] = o.family == OpFamily::Unary || o.family == OpFamily::Binary;
#define THN_X(name) t[size_t(OpId::name)] = true;
    THN_PRIM_OPS(THN_X)
#undef THN_X
    return t;
  }();
  return table[size_t(op.id)];
}

Symbol Symbol::prim_op(const OpDef& op) {
  if (!is_prim_op(op)) throw std::logic_error("ltorch." + std::string(op.name) + " is not a prim");
  return {&op, {}, false, true};
}

bool Symbol::is_view() const {
  if (!op) return prim == PrimId::slice || prim == PrimId::as_strided;
  if (!is_prim) return false;
  switch (op->id) {
    case OpId::reshape: case OpId::permute: case OpId::squeeze: case OpId::unsqueeze: case OpId::expand:
    case OpId::diagonal: return true;
    default: return false;
  }
}

bool Symbol::writes_into_any() const {
  if (!op) return prim == PrimId::fusion;  // a fusion reads its leaves at the elements it writes (fusion.h)
  if (!is_prim) return false;
  switch (op->family) {
    case OpFamily::Unary: case OpFamily::Binary: return true;
    case OpFamily::Pointwise: return op->id != OpId::copy_ && op->id != OpId::fill_ && op->id != OpId::zero_;
    default: return false;
  }
}

bool Symbol::updates_operand0() const {
  if (!op) return prim == PrimId::copy_into_view || prim == PrimId::index_put;
  return is_prim && op->has('I');
}

Symbol symbol_named(std::string_view name) {
  for (int p = 0; p <= int(PrimId::fusion); ++p)
    if (Symbol::of(PrimId(p)).name() == name) return Symbol::of(PrimId(p));
  for (const OpDef& op : all_ops())
    if (is_prim_op(op) && Symbol::prim_op(op).name() == name) return Symbol::prim_op(op);
  throw std::logic_error("no symbol " + std::string(name));
}

std::string Symbol::name() const {
  if (op) return fmt::format("{}.{}{}", is_prim ? "prims" : "ltorch", op->name, inplace ? "_" : "");
  static const char* names[] = {
#define THN_X(name, py, n) "prims." #name,
      THN_NUMBER_OPS(THN_X)
#undef THN_X
#define THN_X(name, ns) #ns "." #name,
      THN_TENSOR_PRIMS(THN_X)
#undef THN_X
  };
  return names[int(prim)];
}

Value substitute(const Value& v, const std::unordered_map<const Symbolic*, Value>& rename) {
  if (v.is_proxy()) {
    auto it = rename.find(&v.symbolic());
    return it == rename.end() ? v : it->second;
  }
  return map_items(v, [&](const Value& x) { return substitute(x, rename); });
}

void collect_proxies(const Value& v, std::vector<Value>& out) {
  for_each_proxy(v, [&](const Value& p) { out.push_back(p); });
}

namespace {

bool is_default(const Param& p, const Value& v) {
  if (!p.has_default || v.is_proxy()) return false;
  if (v.is(Type::Tensor)) return false;
  return to_repr(v) == to_repr(from_ivalue(p.default_value));
}

}  // namespace

std::string shown_args(const BoundSymbol& b, const std::function<std::string(const Value&)>& render) {
  std::vector<std::string> parts;
  if (!b.sym.op) {
    for (const Value& a : b.args) parts.push_back(render(a));
    return fmt::format("{}", fmt::join(parts, ", "));
  }
  const Schema& s = b.sym.op->schema;
  size_t last = 0;  // one past the last positional parameter that is not its default
  for (size_t i = 0; i < b.args.size(); ++i)
    if (!s.params[i].kwarg_only && !is_default(s.params[i], b.args[i])) last = i + 1;
  for (size_t i = 0; i < b.args.size(); ++i) {
    const Param& p = s.params[i];
    if (!p.kwarg_only) {
      if (i < last) parts.push_back(render(b.args[i]));
    } else if (!is_default(p, b.args[i])) {
      parts.push_back(fmt::format("{}={}", p.name, render(b.args[i])));
    }
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

namespace {

class Printer {
 public:
  explicit Printer(const Trace& t) : trace_(t) {
    for (const Value& in : t.inputs) names_[&in.symbolic()] = input_name(in);
    for (const auto& [proxy, v] : t.captured) names_[&proxy.symbolic()] = tensor_proxy(proxy).name;
  }

  const std::unordered_map<const Symbolic*, std::string>& names() const { return names_; }

  std::string print() {
    std::string out = fmt::format("# Constructed by {} (took {:.2f} ms)\n", trace_.constructed_by, trace_.ms);
    std::vector<std::string> params;
    for (const Value& in : trace_.inputs) params.push_back(ref(in));
    out += fmt::format("def {}({}):\n", trace_.name, fmt::join(params, ", "));
    for (const Value& in : trace_.inputs) out += fmt::format("  # {}: {}\n", ref(in), type_of(in));
    for (const auto& [proxy, v] : trace_.captured)
      out += fmt::format("  # {}: {} (captured)\n", ref(proxy), type_of(proxy));
    for (const BoundSymbol& b : trace_.body) line(b, 1, out);
    out += fmt::format("  return {}\n", render(trace_.output));
    return out;
  }

 private:
  static std::string input_name(const Value& v) {
    return v.is(Type::Tensor) ? tensor_proxy(v).name : number_proxy(v).name;
  }

  std::string define(const Value& v) {
    auto [it, fresh] = names_.try_emplace(&v.symbolic());
    if (fresh) {
      if (v.is(Type::Tensor)) it->second = fmt::format("t{}", tensors_++);
      else if (v.is(Type::Float)) it->second = fmt::format("f{}", floats_++);
      else if (v.is(Type::Bool)) it->second = fmt::format("b{}", bools_++);
      else it->second = fmt::format("i{}", ints_++);
    }
    return it->second;
  }

  std::string ref(const Value& v) {
    auto it = names_.find(&v.symbolic());
    return it == names_.end() ? define(v) : it->second;
  }

  std::string type_of(const Value& v) {
    if (v.is(Type::Tensor)) {
      auto& p = tensor_proxy(v);
      std::vector<std::string> sizes;
      for (const Value& s : p.sizes) sizes.push_back(render(s));
      std::string type = fmt::format("\"{} {}[{}]\"", p.device().str(), dtype_short(p.dtype()), fmt::join(sizes, ", "));
      auto it = trace_.layouts.find(&v.symbolic());
      if (it == trace_.layouts.end() || &it->second.base.symbolic() == &v.symbolic()) return type;
      const Layout& l = it->second;
      if (l.may_copy) return fmt::format("{} (may alias {})", type, ref(l.base));
      if (l.strides.empty()) return fmt::format("{} (view of {})", type, ref(l.base));
      return fmt::format("{} (view of {}, strides ({}))", type, ref(l.base), fmt::join(l.strides, ", "));
    }
    auto& n = number_proxy(v);
    // (a number of tensor data has no value while tracing)
    return fmt::format("\"{} {}\"", type_name(n.value), n.depends_on_data() ? "?" : to_repr(n.value));
  }

  std::string render(const Value& v) {
    if (v.is_proxy()) return ref(v);
    switch (v.type()) {
      case Type::List: case Type::Tuple: {
        std::vector<std::string> items;
        for (const Value& x : v.items()) items.push_back(render(x));
        if (v.is(Type::List)) return fmt::format("[{}]", fmt::join(items, ", "));
        return fmt::format("({}{})", fmt::join(items, ", "), items.size() == 1 ? "," : "");
      }
      case Type::Slice: {
        auto& s = v.obj<SliceObj>();
        return fmt::format("slice({}, {}, {})", render(s.start), render(s.stop), render(s.step));
      }
      default: return to_repr(v);
    }
  }

  std::string render_args(const BoundSymbol& b) {
    return shown_args(b, [&](const Value& v) { return render(v); });
  }

  // Where a bound symbol came from, as Thunder's traces say it: the line of
  // the program (the innermost frame outside the standard library) and,
  // for an op of a stdlib function, that function (`nn.softmax` at the line
  // running in it). Each is said once, where it changes.
  struct Origin {
    Loc line;
    std::string stdlib;  // "nn.softmax (stdlib/nn.thn:88)", or ""
  };

  static bool in_stdlib(const Loc& l) { return l.source && !l.source->library.empty(); }

  static Origin origin_of(const BoundSymbol& b) {
    Origin o{static_cast<const Loc&>(b.loc), ""};
    if (!b.loc.calls) return o;
    const std::vector<TraceEntry>& calls = *b.loc.calls;  // innermost first
    size_t user = 0;
    while (user < calls.size() && in_stdlib(calls[user].loc)) ++user;
    if (user == calls.size() || user == 0) return o;
    o.line = calls[user].loc;
    const TraceEntry& f = calls[user - 1];  // the stdlib function the program called
    const std::filesystem::path path(f.loc.source->path);  // shown as its folder's name and its own: stdlib/nn.thn
    const std::string file = (path.parent_path().filename() / path.filename()).string();
    o.stdlib = fmt::format("{}.{} ({}:{})", f.loc.source->library, f.function, file, f.loc.line);
    return o;
  }

  void say_origin(const BoundSymbol& b, std::string& out) {
    std::vector<const BoundSymbol*> parts{&b};
    if (is_fusion(b)) {
      parts.clear();
      for (const BoundSymbol& s : b.subsymbols) parts.push_back(&s);
    }
    for (const BoundSymbol* s : parts) {
      Origin o = origin_of(*s);
      if (!o.line.source) continue;
      // (Back in the program's code on the line of a library call, as
      // `nn.softmax(x) * 2`'s multiplication: the line is said again, so no
      // op stays under the library function's comment.)
      const bool new_line = o.line.source != said_.line.source || o.line.line != said_.line.line ||
                            (o.stdlib.empty() && !said_.stdlib.empty());
      if (new_line) {
        std::string_view text = o.line.source->line(o.line.line);
        text.remove_prefix(std::min(text.size(), text.find_first_not_of(" \t")));
        out += fmt::format("  # {}:{}: {}\n", o.line.source->path, o.line.line, printable(text));
      }
      if (!o.stdlib.empty() && (new_line || o.stdlib != said_.stdlib)) out += fmt::format("  # {}\n", o.stdlib);
      said_ = std::move(o);
    }
  }

  void line(const BoundSymbol& b, int depth, std::string& out) {
    if (depth == 1) say_origin(b, out);
    std::string indent(size_t(depth) * 2, ' ');
    std::string prefix = depth > 1 ? "# " : "";
    std::vector<Value> defined;
    collect_proxies(b.out, defined);
    std::vector<std::string> names, types;
    for (const Value& v : defined) {
      names.push_back(define(v));
      types.push_back(fmt::format("{}: {}", names.back(), type_of(v)));
    }
    std::string lhs = names.empty() ? "" : fmt::format("{} = ", fmt::join(names, ", "));
    // Decompositions are comments: their values get names but no type comments.
    std::string comment = types.empty() || depth > 1 ? "" : fmt::format("  # {}", fmt::join(types, ", "));
    std::string args = render_args(b);
    if (!b.into.is_none()) args += fmt::format("{}out={}", args.empty() ? "" : ", ", render(b.into));
    out += fmt::format("{}{}{}{}({}){}\n", indent, prefix, lhs, b.sym.name(), args, comment);
    for (const BoundSymbol& sub : b.subsymbols) line(sub, depth + 1, out);
    if (!b.frees.empty()) {
      std::vector<std::string> names;
      for (const Value& v : b.frees) names.push_back(ref(v));
      out += fmt::format("{}del {}\n", indent, fmt::join(names, ", "));
    }
  }

  const Trace& trace_;
  Origin said_;  // the origin the last comment said
  std::unordered_map<const Symbolic*, std::string> names_;
  int tensors_ = 0, ints_ = 0, floats_ = 0, bools_ = 0;
};

}  // namespace

std::string print_trace(const Trace& t) { return Printer(t).print(); }

std::unordered_map<const Symbolic*, std::string> value_names(const Trace& t) {
  Printer p(t);
  p.print();
  return p.names();
}

std::unordered_set<const Symbolic*> reduced_values(const std::vector<const BoundSymbol*>& prims) {
  std::unordered_set<const Symbolic*> after;
  for (const BoundSymbol* b : prims) {
    bool depends = is_fusible_reduction(*b);
    std::vector<Value> ps;
    for (const Value& a : b->args) collect_proxies(a, ps);
    for (const Value& p : ps) depends = depends || after.count(&p.symbolic());
    if (depends) after.insert(&b->out.symbolic());
  }
  return after;
}

}  // namespace thn
