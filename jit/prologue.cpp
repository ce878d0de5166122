#include "jit/prologue.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "interp/objects.h"
#include "runtime/error.h"

namespace thn {

namespace {

// Constants compare by type and value (floats bit for bit, so nan and -0.0
// are themselves), objects by identity.
bool same_constant(const Value& a, const Value& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case Type::None: case Type::Ellipsis: return true;
    case Type::Bool: case Type::Int: return a.raw_int() == b.raw_int();
    case Type::Float: {
      double x = a.raw_float(), y = b.raw_float();
      return std::memcmp(&x, &y, sizeof x) == 0;
    }
    case Type::Str: return a.as_str() == b.as_str();
    case Type::DType: return a.as_dtype() == b.as_dtype();
    case Type::Device: return a.as_device() == b.as_device();
    case Type::TypeObj: return a.as_type() == b.as_type();
    default: return a.object() == b.object();
  }
}

// Whether v's contents, all the way down, are `expected` (guarded_contents());
// with grad_on, also that none of them is a tensor that requires grad.
bool same_contents(const Value& v, const std::vector<Value>& expected, bool grad_on = false) {
  const std::vector<Value> now = guarded_contents(v);
  if (now.size() != expected.size()) return false;
  for (size_t i = 0; i < now.size(); ++i)
    if (!same_constant(now[i], expected[i]) || (grad_on && requires_grad(now[i]))) return false;
  return true;
}

// Whether same_constant compares v by the identity of its object.
bool by_identity(const Value& v) {
  switch (v.type()) {
    case Type::None: case Type::Ellipsis: case Type::Bool: case Type::Int: case Type::Float: case Type::Str:
    case Type::DType: case Type::Device: case Type::TypeObj: return false;
    default: return v.object() != nullptr;
  }
}

}  // namespace

Prologue::External::External(const ExternalGuard& g) : guard(g) {
  // An object is held weakly: a jit function whose code reads its own
  // global name (or another's that reads it back) would otherwise keep its
  // own cache, and so itself, alive. A dead object fails the check, as no
  // live one can be it.
  if (by_identity(g.expected)) {
    object = g.expected.object();
    guard.expected = Value();
  }
}

const Value* Prologue::External::now() const {
  return guard.slot && guard.deleted == globals_deleted ? guard.slot : nullptr;
}

bool Prologue::External::holds(bool grad_on) const {
  const ExternalGuard& g = guard;
  if (g.deleted != globals_deleted) return false;  // (the slot may be gone)
  if (!g.slot) return !g.globals->count(g.name);
  const Value& now = *g.slot;
  if (grad_on && requires_grad(now)) return false;
  if (object.has_value()) {
    if (!now.object() || now.object() != object->lock()) return false;
  } else if (!same_constant(now, g.expected)) {
    return false;
  }
  // A mutable value, or a tuple that may hold one: its contents, all the
  // way down, must be what the trace read.
  return same_contents(now, g.items, grad_on);
}

namespace {

std::string type_label(const Value& v) {
  switch (v.type()) {
    case Type::Int: return "int";
    case Type::Float: return "float";
    case Type::Bool: return "bool";
    case Type::List: return "list";
    case Type::Tuple:
      if (v.is_size()) return "size";
      if (const std::string& rt = v.obj<ListObj>().return_type; !rt.empty()) return "return_types_" + rt;
      return "tuple";
    default: return "?";
  }
}

bool in_storage_group(const Trace& t, const Value& proxy) {
  for (const StorageGroup& g : t.storage_groups)
    for (const Value& m : g.members)
      if (&m.symbolic() == &proxy.symbolic()) return true;
  return false;
}

// A symbolic size's `>= 2` guard that another guard implies: the sizes
// guarded equal (`a.shape[0] == b.shape[0]`, both sizes of inputs or both
// of the same class) form classes, and one `>= 2` per class suffices (six
// inputs of one shape: 2 such checks, not 12). Whether every check passes
// is unchanged.
std::vector<bool> implied_guards(const std::vector<Guard>& guards) {
  std::unordered_map<const Symbolic*, const Symbolic*> parent;
  auto find = [&](const Symbolic* s) {
    for (auto it = parent.find(s); it != parent.end(); it = parent.find(s)) s = it->second;
    return s;
  };
  auto size_of = [](const Value& v) -> const Symbolic* {
    return v.is_proxy() && v.is_number() && number_proxy(v).origin == NumberProxy::Origin::Size ? &v.symbolic() : nullptr;
  };
  auto binary = [](const Guard& g, NumberOp op) -> const NumberProxy* {
    if (!g.by_truth || !g.expected.raw_int() || !g.expr.is_proxy()) return nullptr;
    const NumberProxy& n = number_proxy(g.expr);
    return n.origin == NumberProxy::Origin::Op && n.op == op && n.operands.size() == 2 ? &n : nullptr;
  };
  for (const Guard& g : guards)
    if (const NumberProxy* n = binary(g, NumberOp::eq)) {
      const Symbolic *a = size_of(n->operands[0]), *b = size_of(n->operands[1]);
      if (!a || !b) continue;
      a = find(a), b = find(b);
      if (a != b) parent[a] = b;
    }
  std::vector<bool> implied(guards.size(), false);
  std::unordered_set<const Symbolic*> at_least_two;  // classes with a kept `>= 2`
  for (size_t k = 0; k < guards.size(); ++k) {
    const NumberProxy* n = binary(guards[k], NumberOp::ge);
    if (!n || n->operands[1].is_proxy() || !n->operands[1].is(Type::Int) || n->operands[1].raw_int() != 2) continue;
    if (const Symbolic* s = size_of(n->operands[0])) implied[k] = !at_least_two.insert(find(s)).second;
  }
  return implied;
}

}  // namespace

Prologue::Prologue(const TraceResult& r) {
  params_ = size_t(std::count_if(r.leaves.begin(), r.leaves.end(), [](const InputLeaf& l) { return l.parent < 0; }));
  grad_recording_ = r.grad_recording;
  if (grad_recording_) line("check_grad_mode(True)  # grad mode on, and some tensor has required grad");
  for (const Value& in : r.trace.inputs)
    names_[&in.symbolic()] = in.is(Type::Tensor) ? tensor_proxy(in).name : number_proxy(in).name;
  compile_leaves(r);
  std::unordered_set<std::string> asserted;  // a guard's text is what it checks: each once
  std::vector<bool> implied = implied_guards(r.guards);
  for (size_t k = 0; k < r.guards.size(); ++k) {
    const Guard& g = r.guards[k];
    if (implied[k]) continue;
    std::string text = g.by_truth ? fmt::format("assert {}{}", g.expected.raw_int() ? "" : "not ", render(g.expr))
                                  : fmt::format("assert {} == {}", render(g.expr), to_repr(g.expected));
    if (!asserted.insert(text).second) continue;
    int reg = compile_expr(g.expr);
    constants_.push_back(g.expected);
    code_.push_back({Op::Assert, uint8_t(g.by_truth), 0, reg, int32_t(constants_.size() - 1)});
    line(text, g.loc);
  }
  for (const IdentityGuard& g : r.identities) {
    const std::string& a = r.leaves[size_t(g.a)].name;
    if (g.b >= 0) {
      code_.push_back({Op::Same, uint8_t(g.same), 0, leaf_reg_[size_t(g.a)], leaf_reg_[size_t(g.b)]});
      line(fmt::format("assert {} is {}{}", a, g.same ? "" : "not ", r.leaves[size_t(g.b)].name));
    } else {
      objects_.push_back(g.object);
      code_.push_back({Op::SameAs, uint8_t(g.same), 0, leaf_reg_[size_t(g.a)], int32_t(objects_.size() - 1)});
      line(fmt::format("assert {} is {}{}", a, g.same ? "" : "not ", g.name));
    }
  }
  std::vector<std::string> builtins;
  for (const ExternalGuard& g : r.externals) {
    externals_.emplace_back(g);
    code_.push_back({Op::External, 0, 0, int32_t(externals_.size() - 1), 0});
    if (!g.slot) {
      builtins.push_back(g.name);
      continue;
    }
    std::string what = g.expected.is_number() || g.expected.is(Type::Str) ? "== " + to_repr(g.expected)
                       : g.expected.is(Type::List) ? fmt::format("is the same list of {} items", g.items.size())
                       : g.expected.is(Type::Dict) ? fmt::format("is the same dict of {} entries, the same values", g.items.size() / 2)
                       : g.expected.is(Type::Instance) ? fmt::format("is the same {} with the same attributes", type_name(g.expected))
                                                   : "is the same " + type_name(g.expected);
    line(fmt::format("check_name({})  # {}", g.name, what));
  }
  if (!builtins.empty()) line(fmt::format("check_builtins({})  # no global of that name since", fmt::join(builtins, ", ")));
  std::vector<const Tensor*> ts;
  std::vector<std::string> names;
  for (const InputLeaf& l : r.leaves)
    if (l.kind == InputLeaf::Tensor) {
      ts.push_back(&l.value.as_tensor());
      names.push_back(tensor_proxy(l.proxy).name);
    }
  // Captured tensors are fixed (guarded by identity) but an argument may be
  // a view of one: they take part in the pattern.
  for (const auto& [proxy, tensor] : r.trace.captured) {
    captured_.push_back(tensor.as_tensor());
    names.push_back(tensor_proxy(proxy).name);
  }
  for (const Tensor& t : captured_) ts.push_back(&t);
  // A single input is checked too when it is not contiguous: it may be an
  // expanded view (overlapping itself) on another call.
  bool strided = false;
  for (const Tensor* t : ts) strided |= !t->is_contiguous();
  if (r.depends_on_overlap && (ts.size() > 1 || strided)) {
    overlap_ = overlap_pattern(ts);
    code_.push_back({Op::Overlap, 0, 0, 0, 0});
    std::vector<std::string> shared;
    for (size_t i = 0; i < overlap_.size(); ++i)
      if (overlap_[i] < 0) shared.push_back(fmt::format("{} overlaps itself", names[i]));
      else if (overlap_[i] != int(i)) shared.push_back(fmt::format("{} overlaps {}", names[i], names[size_t(overlap_[i])]));
    line(fmt::format("check_overlap({})  # {}", fmt::join(names, ", "),
                     shared.empty() ? "no two overlap" : fmt::format("{}", fmt::join(shared, "; "))));
    // Writes across inputs that share memory were functionalized for these
    // places of each in the memory range they share.
    if (!r.trace.storage_groups.empty()) {
      groups_ = overlap_groups(ts);
      std::vector<std::string> ranges;
      for (const StorageGroup& g : r.trace.storage_groups) {
        std::vector<std::string> at;
        for (size_t k = 0; k < g.members.size(); ++k)
          at.push_back(fmt::format("{} at +{}", tensor_proxy(g.members[k]).name, g.offsets[k]));
        ranges.push_back(fmt::format("{} in {} elements", fmt::join(at, ", "), g.extent));
      }
      line(fmt::format("check_shared_memory({})  # {}", fmt::join(names, ", "), fmt::join(ranges, "; ")));
    }
  }
  std::vector<std::string> params;
  for (const InputLeaf& l : r.leaves)
    if (l.parent < 0) params.push_back(l.name);
  text_ = fmt::format("# Constructed by prologue ({} checks)\ndef prologue({}):\n{}", lines_,
                      fmt::join(params, ", "), body_);
}

void Prologue::compile_leaves(const TraceResult& r) {
  std::vector<int>& reg_of = leaf_reg_;
  reg_of.resize(r.leaves.size());
  for (size_t k = 0; k < r.leaves.size(); ++k) {
    const InputLeaf& l = r.leaves[k];
    int reg = refs_++;
    reg_of[k] = reg;
    if (l.parent < 0) code_.push_back({Op::Param, 0, reg, l.index, 0});
    else if (r.leaves[size_t(l.parent)].kind == InputLeaf::Mapping) code_.push_back({Op::Entry, 0, reg, reg_of[size_t(l.parent)], l.index});
    else code_.push_back({Op::Item, 0, reg, reg_of[size_t(l.parent)], l.index});
    const std::string& name = l.name;
    switch (l.kind) {
      case InputLeaf::Same: {
        const InputLeaf& first = r.leaves[size_t(l.same)];
        code_.push_back({Op::Same, 1, 0, reg, reg_of[size_t(l.same)]});
        line(fmt::format("check_is({}, {})  # the same {}", name, first.name, type_label(first.value)));
        break;
      }
      case InputLeaf::Sequence:
        if (l.value.is(Type::List)) distinct_.push_back(reg);
        kinds_.push_back(l.value.like({}));
        code_.push_back({Op::Sequence, uint8_t(l.value.type()), int32_t(kinds_.size() - 1), reg,
                         int32_t(l.value.items().size())});
        line(fmt::format("check_{}({}, len={})", type_label(l.value), name, l.value.items().size()));
        break;
      case InputLeaf::Mapping: {
        MappingKind kind;
        const bool object = l.value.is(Type::Instance);
        if (object) {
          kind.cls = l.value.obj<InstanceObj>().cls;
          kind.class_contents = l.contents;
        }
        std::vector<std::string> keys;
        (object ? l.value.obj<InstanceObj>().dict : l.value).obj<DictObj>().each([&](const Value& k, const Value&) {
          kind.keys.push_back(k);
          keys.push_back(to_repr(k));
        });
        mappings_.push_back(std::move(kind));
        distinct_.push_back(reg);
        code_.push_back({Op::Mapping, 0, int32_t(mappings_.size() - 1), reg, 0});
        if (object)
          line(fmt::format("check_object({}, {}, attributes=[{}])", name, type_name(l.value), fmt::join(keys, ", ")));
        else
          line(fmt::format("check_dict({}, keys=[{}])", name, fmt::join(keys, ", ")));
        break;
      }
      case InputLeaf::Tensor: {
        const Tensor& t = l.value.as_tensor();
        auto& p = tensor_proxy(l.proxy);
        TensorMeta m{t.dtype(), t.device(), {}, t.is_contiguous(), {}};
        std::vector<std::string> sizes;
        for (const Value& s : p.sizes) {
          m.sizes.push_back(s.is_proxy() ? -1 : s.raw_int());
          sizes.push_back(s.is_proxy() ? fmt::format("{}.shape[{}]", name, m.sizes.size() - 1) : std::to_string(s.raw_int()));
        }
        std::string layout = t.is_contiguous() ? ", contiguous" : ", non-contiguous";
        if ((r.depends_on_strides || in_storage_group(r.trace, l.proxy)) && !t.is_contiguous()) {
          m.strides = t.strides();
          layout += fmt::format(", strides=({})", fmt::join(t.strides(), ", "));
        }
        if (r.depends_on_offset) {
          m.offset = t.offset();
          layout += fmt::format(", offset={}", t.offset());
        }
        metas_.push_back(std::move(m));
        tensor_ref_[&l.proxy.symbolic()] = reg;
        code_.push_back({Op::Tensor, 0, 0, reg, int32_t(metas_.size() - 1)});
        line(fmt::format("check_tensor({}, \"{} {}[{}]\"{})", name, t.device().str(), dtype_short(t.dtype()),
                         fmt::join(sizes, ", "), layout));
        break;
      }
      case InputLeaf::Number:
        if (l.proxy.is_proxy()) {
          code_.push_back({Op::Number, uint8_t(l.value.type()), 0, reg, 0});
          int nreg = int(numbers_.size());
          numbers_.emplace_back();
          code_.push_back({Op::Load, 0, nreg, reg, 0});
          number_reg_[&l.proxy.symbolic()] = nreg;
          line(fmt::format("check_{}({})", type_label(l.value), name));
          break;
        }
        [[fallthrough]];
      case InputLeaf::Constant:
        constants_.push_back(l.value);
        constant_contents_.push_back(l.contents);
        code_.push_back({Op::Constant, 0, 0, reg, int32_t(constants_.size() - 1)});
        if (l.value.is_number() || l.value.is(Type::Str) || l.value.is_none())
          line(fmt::format("check_{}({}, {})", l.value.is_none() ? "none" : type_name(l.value), name, to_repr(l.value)));
        else
          line(fmt::format("check_same({})  # the same {}", name, type_name(l.value)));
        break;
    }
  }
  // Lists, dicts and objects traced as different objects must stay
  // different: the code may change one and read the other.
  if (distinct_.size() > 1) {
    code_.push_back({Op::Distinct, 0, 0, 0, 0});
    std::vector<std::string> names;
    for (size_t k = 0; k < r.leaves.size(); ++k)
      if ((r.leaves[k].kind == InputLeaf::Sequence && r.leaves[k].value.is(Type::List)) ||
          r.leaves[k].kind == InputLeaf::Mapping)
        names.push_back(r.leaves[k].name);
    line(fmt::format("check_distinct({})  # different objects", fmt::join(names, ", ")));
  }
}

int Prologue::compile_expr(const Value& v) {
  if (!v.is_proxy()) {
    numbers_.push_back(v);
    return int(numbers_.size() - 1);
  }
  auto it = number_reg_.find(&v.symbolic());
  if (it != number_reg_.end()) return it->second;
  auto& n = number_proxy(v);
  int reg;
  switch (n.origin) {
    case NumberProxy::Origin::Size: {
      reg = int(numbers_.size());
      numbers_.emplace_back();
      code_.push_back({Op::Size, 0, reg, tensor_ref_.at(&n.tensor().symbolic()), int32_t(n.dim)});
      break;
    }
    case NumberProxy::Origin::Op: {
      int a = compile_expr(n.operands[0]);
      int b = n.operands.size() > 1 ? compile_expr(n.operands[1]) : -1;
      reg = int(numbers_.size());
      numbers_.emplace_back();
      code_.push_back({Op::Expr, uint8_t(n.op), reg, a, b});
      break;
    }
    default: throw std::logic_error("prologue: a guard on a value computed from tensor data");
  }
  number_reg_[&v.symbolic()] = reg;
  return reg;
}

std::string Prologue::render(const Value& v) const {
  if (!v.is_proxy()) return to_repr(v);
  if (auto it = names_.find(&v.symbolic()); it != names_.end()) return it->second;
  auto& n = number_proxy(v);
  if (n.origin == NumberProxy::Origin::Size) return fmt::format("{}.shape[{}]", render(n.tensor()), n.dim);
  if (n.origin == NumberProxy::Origin::Item) return fmt::format("{}.item()", render(n.tensor()));
  std::string a = render(n.operands[0]);
  if (n.operands.size() == 1) {
    if (n.op == NumberOp::neg || n.op == NumberOp::pos || n.op == NumberOp::invert)
      return fmt::format("{}{}", number_op_python(n.op), a);
    if (n.op == NumberOp::not_) return fmt::format("(not {})", a);
    return fmt::format("{}({})", number_op_python(n.op), a);
  }
  std::string b = render(n.operands[1]);
  if (n.op == NumberOp::min || n.op == NumberOp::max) return fmt::format("{}({}, {})", number_op_python(n.op), a, b);
  return fmt::format("({} {} {})", a, number_op_python(n.op), b);
}

bool Prologue::check(Interpreter& in, std::span<const Value> params, std::vector<Value>& inputs) const {
  return first_failure(in, params, inputs, nullptr) < 0;
}

int Prologue::first_failure(Interpreter& in, std::span<const Value> params, std::vector<Value>& inputs,
                            std::optional<Value>* seen) const {
  // (jit's hidden argument, present when tensors require grad, makes one more)
  const bool grad_on = grad_recording(in);
  const int fails = int(code_.size());
  if (params.size() != params_ || grad_on != grad_recording_) return fails;
  std::vector<const Value*> refs(static_cast<size_t>(refs_));
  std::vector<Value> num = numbers_;
  inputs.clear();
  int at = 0;
  // (the value an instruction checked, for why_not)
  auto failed = [&](const Value* v) {
    if (seen && v) *seen = *v;
    return at;
  };
  try {
    for (; at < fails; ++at) {
      const Instr& i = code_[size_t(at)];
      switch (i.op) {
        case Op::Param:
          if (size_t(i.a) >= params.size()) return failed(nullptr);
          refs[size_t(i.dst)] = &params[size_t(i.a)];
          break;
        case Op::Item: refs[size_t(i.dst)] = &refs[size_t(i.a)]->items()[size_t(i.b)]; break;
        case Op::Entry: refs[size_t(i.dst)] = &child_at(*refs[size_t(i.a)], size_t(i.b)); break;
        case Op::Mapping: {
          // The same class (an object) and the same keys in the same order.
          const Value& v = *refs[size_t(i.a)];
          const MappingKind& kind = mappings_[size_t(i.dst)];
          if (kind.cls ? !v.is(Type::Instance) || v.obj<InstanceObj>().cls != kind.cls : !v.is(Type::Dict)) return failed(&v);
          const DictObj& d = (kind.cls ? v.obj<InstanceObj>().dict : v).obj<DictObj>();
          if (d.count != kind.keys.size()) return failed(&v);
          if (kind.cls) {
            if (!same_contents(Value(Type::Class, v.obj<InstanceObj>().cls), kind.class_contents)) return failed(&v);
          }
          size_t k = 0;
          bool same = true;
          d.each([&](const Value& key, const Value&) {  // (1, 1.0 and True are one key, of three types)
            same = same && key.type() == kind.keys[k].type() && key_equals(key, kind.keys[k]);
            ++k;
          });
          if (!same) return failed(&v);
          break;
        }
        case Op::Sequence: {
          const Value& v = *refs[size_t(i.a)];
          if (!v.same_kind(kinds_[size_t(i.dst)]) || v.items().size() != size_t(i.b)) return failed(&v);
          break;
        }
        case Op::Tensor: {
          const Value& v = *refs[size_t(i.a)];
          if (!v.is(Type::Tensor)) return failed(&v);
          const Tensor& t = v.as_tensor();
          const TensorMeta& m = metas_[size_t(i.b)];
          if (t.dtype() != m.dtype || !(t.device() == m.device) || size_t(t.dim()) != m.sizes.size()) return failed(&v);
          for (size_t d = 0; d < m.sizes.size(); ++d)
            if (m.sizes[d] >= 0 && t.sizes()[d] != m.sizes[d]) return failed(&v);
          if (t.is_contiguous() != m.contiguous) return failed(&v);
          if (!m.strides.empty() && t.strides() != m.strides) return failed(&v);
          if (m.offset >= 0 && t.offset() != m.offset) return failed(&v);
          inputs.push_back(v);
          break;
        }
        case Op::Number: {
          const Value& v = *refs[size_t(i.a)];
          if (v.type() != Type(i.type)) return failed(&v);
          inputs.push_back(v);
          break;
        }
        case Op::Constant:
          if (!same_constant(*refs[size_t(i.a)], constants_[size_t(i.b)])) return failed(refs[size_t(i.a)]);
          if (!constant_contents_[size_t(i.b)].empty() && !same_contents(*refs[size_t(i.a)], constant_contents_[size_t(i.b)]))
            return failed(refs[size_t(i.a)]);
          break;
        case Op::Size: num[size_t(i.dst)] = Value(refs[size_t(i.a)]->as_tensor().sizes()[size_t(i.b)]); break;
        case Op::Load: num[size_t(i.dst)] = *refs[size_t(i.a)]; break;
        case Op::Expr: {
          Value ops[2] = {num[size_t(i.a)], i.b >= 0 ? num[size_t(i.b)] : Value()};
          NumberOp op = NumberOp(i.type);
          num[size_t(i.dst)] = eval_number_op(in, op, std::span<const Value>(ops, size_t(number_op_arity(op))));
          break;
        }
        case Op::Assert: {
          const Value& v = num[size_t(i.a)];
          const Value& want = constants_[size_t(i.b)];
          if (i.type ? in.truth(v) != want.raw_int() : !same_constant(v, want)) return failed(&v);
          break;
        }
        case Op::Same:
          if ((refs[size_t(i.a)]->object() == refs[size_t(i.b)]->object()) != bool(i.type)) return failed(refs[size_t(i.a)]);
          break;
        case Op::SameAs:
          if ((refs[size_t(i.a)]->object() == objects_[size_t(i.b)].object()) != bool(i.type)) return failed(refs[size_t(i.a)]);
          break;
        case Op::Distinct: {
          std::vector<const Object*> objects;
          for (int reg : distinct_) objects.push_back(refs[size_t(reg)]->object().get());
          std::sort(objects.begin(), objects.end());
          if (std::adjacent_find(objects.begin(), objects.end()) != objects.end()) return failed(nullptr);
          break;
        }
        case Op::External:
          if (!externals_[size_t(i.a)].holds(grad_on)) return failed(externals_[size_t(i.a)].now());
          break;
        case Op::Overlap: {
          std::vector<const Tensor*> ts;
          for (const Value& v : inputs)
            if (v.is(Type::Tensor)) ts.push_back(&v.as_tensor());
          for (const Tensor& t : captured_) ts.push_back(&t);
          if (overlap_pattern(ts) != overlap_) return failed(nullptr);
          if (!groups_.group.empty()) {
            OverlapGroups g = overlap_groups(ts);
            if (g.group != groups_.group || g.offset != groups_.offset) return failed(nullptr);
          }
          break;
        }
      }
    }
  } catch (const Error&) {
    return failed(nullptr);  // a guard that cannot be evaluated on these inputs (e.g. n // 0) fails
  }
  return -1;
}

namespace {

// What a call has where a check failed, briefly.
std::string described(const Value& v) {
  if (v.is(Type::Tensor)) {
    const Tensor& t = v.as_tensor();
    return fmt::format("a tensor \"{} {}[{}]\"{}", t.device().str(), dtype_short(t.dtype()), fmt::join(t.sizes(), ", "),
                       t.is_contiguous() ? "" : ", non-contiguous");
  }
  if (v.is_number() || v.is_none() || v.is(Type::Str)) return to_repr(v);
  if (v.is_sequence()) return fmt::format("a {} of {} items", type_name(v), v.items().size());
  if (v.is(Type::Dict)) return fmt::format("a dict of {} entries", v.obj<DictObj>().count);
  return "a " + type_name(v);
}

}  // namespace

std::string Prologue::why_not(Interpreter& in, std::span<const Value> params) const {
  std::vector<Value> inputs;
  std::optional<Value> seen;
  const int at = first_failure(in, params, inputs, &seen);
  if (at < 0) return "";
  if (at == int(code_.size()))
    return params.size() != params_ ? "another number of arguments"
                                    : fmt::format("grad mode is {} now", grad_recording(in) ? "on" : "off");
  const size_t k = size_t(line_of_[size_t(at)]);
  const Loc& loc = lines_loc_[k];
  std::string where = loc.source ? fmt::format("{}:{}: ", loc.source->path, loc.line) : "";
  return fmt::format("{}{} failed{}", where, lines_text_[k], seen ? ": now " + described(*seen) : "");
}

}  // namespace thn
