#include "cli/fuzz_gen.h"

#include "cli/fuzz_generator.h"

namespace thn {

namespace fuzzgen {

std::string Generator::program(uint64_t seed, uint64_t index) {
  choose_signature();
  std::vector<std::string> lines = body(r_.between(3, 10), 1);
  if (packed_) {
    // The tensors come in one list, dict or object: unpacked first; the
    // container may change (its new contents are written back).
    for (size_t i = 0; i < params_.size(); ++i) {
      std::string item = pack_ == Pack::List ? fmt::format("ps[{}]", i)
                         : pack_ == Pack::Dict ? fmt::format("ps[\"p{}\"]", i) : fmt::format("ps.p{}", i);
      lines.insert(lines.begin() + long(i), fmt::format("    p{} = {}", i, item));
    }
    counter_ = pack_ != Pack::List && !grad_ && r_.chance(0.5);
    if (counter_)
      lines.insert(lines.begin() + long(params_.size()),
                   pack_ == Pack::Dict ? "    ps[\"meta\"][\"step\"] += 1" : "    ps.meta[\"step\"] += 1");
    if (r_.chance(0.6)) {
      const Var* v = any();
      bool add = r_.chance(0.5);
      int k = r_.below(int(params_.size()));
      if (pack_ == Pack::List)
        lines.push_back(add ? fmt::format("    ps.append({})", v->name) : fmt::format("    ps[{}] = {}", k, v->name));
      else if (pack_ == Pack::Dict)
        lines.push_back(add ? fmt::format("    ps[\"extra\"] = {}", v->name) : fmt::format("    ps[\"p{}\"] = {}", k, v->name));
      else
        lines.push_back(add ? fmt::format("    ps.extra = {}", v->name) : fmt::format("    ps.p{} = {}", k, v->name));
    }
  }
  std::string ret = returns();
  std::string out =
      fmt::format("# thn fuzz --seed {} program {}{}\nimport math\nimport nn\n\n", seed, index, cuda_ ? " --device cuda" : "");
  out += "def show(t):\n    print(t.dtype, t.shape, t.tolist())\n\n\n";
  if (pack_ == Pack::Object)
    out += "class Box:\n    def __init__(self, **tensors):\n        for k, t in tensors.items():\n"
           "            setattr(self, k, t)\n\n\n";
  // Some float inputs hold infinities and NaNs (make).
  out += "def special(t):\n    k = randint(0, 8, t.shape)\n"
         "    return where(k == 0, math.inf, where(k == 1, -math.inf, where(k == 2, math.nan, t)))\n\n\n";
  std::vector<std::string> names;
  if (packed_) names.push_back("ps");
  else for (const Var& p : params_) names.push_back(p.name);
  if (has_n_) names.push_back("n");
  if (has_s_) names.push_back("s");
  out += fmt::format("def f({}):\n", join(names));
  for (const std::string& l : lines) out += l + "\n";
  out += "    return " + ret + "\n\n\n";
  std::vector<std::string> argnums;
  for (size_t i = 0; i < params_.size(); ++i) argnums.push_back(std::to_string(i));
  std::string fn = grad_ ? fmt::format("grad(f, argnums=({},))", join(argnums)) : "f";
  out += fmt::format("g = jit({}, cache=\"{}\", shapes=\"{}\")\n", fn, cache_, shapes_);
  if (counter_) out += "meta = {\"step\": 0}\n";
  out += calls(seed * 1000003 + index);
  return out;
}

DT Generator::random_dtype() {
  int x = r_.below(20);
  if (x < 11) return r_.chance(0.15) ? r_.pick(std::vector<DT>{DT::F16, DT::BF16}) : DT::F32;
  return x < 13 ? DT::F64 : x < 16 ? DT::I64 : x < 17 ? DT::I32 : DT::Bool;
}

Shape Generator::template_suffix(int rank) {
  Shape s;
  for (int d = rank_ - rank + 1; d <= rank_; ++d) s.push_back(r_.chance(0.15) ? kOne : d);
  return s;
}

void Generator::choose_signature() {
  grad_ = r_.chance(0.2);
  rank_ = r_.chance(0.05) ? 0 : r_.between(1, 3);
  zero_sizes_ = r_.chance(0.06);
  int count = r_.between(1, 3);
  for (int i = 0; i < count; ++i) {
    Var p;
    p.name = fmt::format("p{}", i);
    p.input = true;
    p.root = i;
    p.dt = grad_ ? (r_.chance(0.3) ? DT::F64 : DT::F32) : random_dtype();
    p.shape = template_suffix(i == 0 ? rank_ : r_.between(0, rank_));
    if (i > 0) {
      const Var& q = params_[size_t(r_.below(i))];
      int rel = r_.below(10);
      if (rel < 4) {
        p.shape = q.shape;  // may be passed the same tensor, or an overlapping slice
        p.dt = q.dt;
      } else if (rel < 6 && !q.shape.empty()) {
        p.shape.assign(q.shape.begin() + 1, q.shape.end());  // may be a row of q
        p.dt = q.dt;
      } else if (rel < 7 && q.shape.size() == 2) {
        p.shape = {q.shape[1], q.shape[0]};  // may be q transposed
        p.dt = q.dt;
      }
    }
    params_.push_back(p);
  }
  packed_ = !grad_ && r_.chance(0.15);
  if (packed_) pack_ = r_.pick(std::vector<Pack>{Pack::List, Pack::Dict, Pack::Object});
  has_n_ = r_.chance(0.6);
  has_s_ = r_.chance(0.35);
  cache_ = r_.pick(std::vector<std::string>{"auto", "auto", "constant", "symbolic", "symbolic", "none"});
  shapes_ = r_.pick(std::vector<std::string>{"auto", "symbolic", "static", "static"});
  vars_ = params_;
}

const Var* Generator::pick(const std::function<bool(const Var&)>& ok) {
  std::vector<const Var*> c;
  for (const Var& v : vars_)
    if (ok(v)) c.push_back(&v);
  if (c.empty()) return nullptr;
  if (r_.chance(0.5)) return c[size_t(r_.below(int(c.size())))];
  return c[c.size() - 1 - size_t(r_.below(std::min<int>(3, int(c.size()))))];
}

Var Generator::new_value_like(const Var& x) {
  Var v = x;
  v.writable = true;
  v.input = false;
  v.root = -1;
  return v;
}

std::optional<Var> Generator::target() {
  // (differentiating, a value f computed itself: an argument is a leaf that
  // requires grad, and a view of one is refused in place)
  if (grad_) {
    const Var* x = pick([](const Var& v) { return v.writable && !v.input; });
    if (!x) return std::nullopt;
    return *x;
  }
  const Var* x = pick([&](const Var& v) { return v.writable && (v.input || r_.chance(0.6)); });
  if (!x) x = pick([](const Var& v) { return v.writable; });
  if (!x) return std::nullopt;
  Var t = *x;
  int rank = int(x->shape.size());
  int k = r_.below(8);
  if (k == 0 && rank >= 1) {
    t.name = fmt::format("{}[0]", x->name);
    t.shape.erase(t.shape.begin());
  } else if (k == 1 && rank >= 2) {
    t.name = fmt::format("{}[:, 1:]", x->name);
    t.shape[1] = new_size();
  } else if (k == 2 && rank == 2) {
    t.name = fmt::format("{}.t()", x->name);
    std::swap(t.shape[0], t.shape[1]);
  }
  return t;
}

std::optional<std::string> Generator::source(const Var& t, bool allow_number) {
  const Var* s = !allow_number || r_.chance(0.6) ? pick([&](const Var& v) {
    return fits(v.shape, t.shape) && can_cast(v.dt, t.dt) && v.root != t.root;
  })
                                                 : nullptr;
  if (s) {
    operand_of(t, *s);
    return s->name;
  }
  if (!allow_number) return std::nullopt;
  if (t.dt == DT::Bool) return "True";
  return number(is_float(t.dt)).first;
}

void Generator::operand_of(const Var& target, const Var& operand, bool scattered) {
  if (target.root < int(params_.size()) && operand.root < int(params_.size()))
    (scattered ? scattered_from_ : written_from_).insert(std::minmax(target.root, operand.root));
}

std::optional<std::string> Generator::in_place() {
  std::optional<Var> t = target();
  if (!t) return std::nullopt;
  int k = r_.below(10);
  bool numeric = t->dt != DT::Bool;
  std::string stmt;
  if (k == 9 && t->shape.size() >= 1 && r_.chance(0.3)) {
    // x[idx] = source: a tensor of the target's dtype (or a number); a
    // duplicate index's last value wins.
    const Var* s = r_.chance(0.7) ? pick([&](const Var& v) {
      return fits(v.shape, t->shape) && v.dt == t->dt && v.root != t->root;
    })
                                  : nullptr;
    if (s) operand_of(*t, *s, true);
    int d = dim(*t) % 2;
    std::string value = s ? s->name : t->dt == DT::Bool ? "True" : number(is_float(t->dt)).first;
    // (augmented: x[idx] += v reads x[idx], then stores, the last duplicate winning)
    const char* op = numeric && r_.chance(0.3) ? r_.pick(std::vector<const char*>{"+", "-", "*"}) : "";
    return fmt::format("{} {}= {}", subscript(*t, d, index_along(*t, d, false, true)), op, value);
  }
  if (k == 9 && numeric && !t->shape.empty()) {
    // index_add_ / index_copy_ / scatter_add_ / scatter_ from a tensor of
    // the target's type (scatter_: or a number); index_copy_'s index has
    // no duplicates (their order is unspecified), a scatter's index is
    // laid along the dim (gathered()), its duplicates apply in index order.
    const Var* s = pick([&](const Var& v) { return v.shape == t->shape && v.dt == t->dt && v.root != t->root; });
    if (!s) return std::nullopt;
    operand_of(*t, *s, true);
    int d = dim(*t);
    if (r_.chance(0.4)) {
      std::string index = laid_along(*t, d, index_along(*t, d, false), true);
      if (r_.chance(0.5)) return fmt::format("{}.scatter_add_({}, {}, {})", t->name, dim_text(*t, d), index, s->name);
      return fmt::format("{}.scatter_({}, {}, {})", t->name, dim_text(*t, d), index,
                         r_.chance(0.7) ? s->name : number(is_float(t->dt)).first);
    }
    bool add = r_.chance(0.6);
    std::string index = index_along(*t, d, !add);
    if (add) return fmt::format("{}.index_add_({}, {}, {}{})", t->name, dim_text(*t, d), index, s->name,
                                r_.chance(0.3) ? ", alpha=2" : "");
    return fmt::format("{}.index_copy_({}, {}, {})", t->name, dim_text(*t, d), index, s->name);
  }
  if (k <= 1 && numeric) {
    std::string op = r_.pick(std::vector<std::string>{"add_", "sub_", "mul_"});
    stmt = fmt::format("{}.{}({})", t->name, op, *source(*t));
    if (r_.chance(0.25)) stmt += is_float(t->dt) ? ".sin_()" : ".mul_(2)";
  } else if (k == 2 && numeric && t->name.back() != ')') {  // (`x.t() += y` is not an assignment)
    stmt = fmt::format("{} {}= {}", t->name, r_.pick(std::vector<std::string>{"+", "-", "*"}), *source(*t));
  } else if (k == 3) {
    std::optional<std::string> src = source(*t, false);
    if (!src) return std::nullopt;
    stmt = fmt::format("{}.copy_({})", t->name, *src);
  } else if (k == 4 && !grad_) {  // (through a view: refused while differentiating)
    std::string index = t->shape.empty() ? "..." : r_.pick(std::vector<std::string>{"0", "-1", "1:", ":"});
    Var view = *t;
    if (index == "0" || index == "-1") view.shape.erase(view.shape.begin());
    else if (index == "1:") view.shape[0] = new_size();
    if (t->shape.size() >= 1 && r_.chance(0.2)) {
      stmt = fmt::format("{}.reshape(-1)[-1] = {}", t->name, t->dt == DT::Bool ? "False" : "0");
    } else {
      // (augmented through the view: x[1:] *= y)
      const char* op = numeric && r_.chance(0.35) ? r_.pick(std::vector<const char*>{"+", "-", "*"}) : "";
      stmt = fmt::format("{}[{}] {}= {}", t->name, index, op, *source(view));
    }
  } else if (k == 5) {
    stmt = r_.chance(0.5) ? fmt::format("{}.zero_()", t->name)
                          : fmt::format("{}.fill_({})", t->name, t->dt == DT::Bool ? "True" : is_float(t->dt) ? "1.5" : "4");
  } else if (k == 6 && is_float(t->dt)) {
    std::vector<std::string> ops{"sin_()", "relu_()", "tanh_()", "abs_()", "neg_()", "sigmoid_()", "clamp_(min=-1.0, max=1.0)",
                                 "add_(1)", "mul_(5)"};
    stmt = t->name;
    for (int i = r_.between(1, 3); i > 0; --i) stmt += "." + r_.pick(ops);
  } else if (k == 7 && numeric) {
    const Var* c = pick([&](const Var& c) { return c.dt == DT::Bool && fits(c.shape, t->shape); });
    if (c) operand_of(*t, *c);
    std::string cond = c ? c->name : fmt::format("{} > 0", t->name);
    std::string value = is_float(t->dt) ? "-0.5" : "3";
    // x[mask] = v: a mask of x's own shape, a number (what masked_fill_ does)
    if ((!c || c->shape == t->shape) && r_.chance(0.4)) stmt = fmt::format("{}[{}] = {}", t->name, cond, value);
    else stmt = fmt::format("{}.masked_fill_({}, {})", t->name, cond, value);
  } else if (k == 8 && is_float(t->dt)) {
    const Var* a = pick([&](const Var& v) { return fits(v.shape, t->shape) && can_cast(v.dt, t->dt) && v.root != t->root; });
    if (!a) return std::nullopt;
    operand_of(*t, *a);
    stmt = r_.chance(0.5) || a->dt != t->dt ? fmt::format("{}.addcmul_({}, {}, value=0.5)", t->name, a->name, a->name)
                                            : fmt::format("{}.lerp_({}, 0.25)", t->name, a->name);  // (same dtype only)
  } else {
    return std::nullopt;
  }
  return stmt;
}

std::vector<std::string> Generator::body(int count, int depth) {
  std::vector<std::string> lines;
  std::string pad(size_t(depth) * 4, ' ');
  for (int i = 0; i < count; ++i) {
    int k = r_.below(20);
    if (k < 10) {
      if (std::optional<Var> v = value()) {
        v->name = fmt::format("{} = {}", new_name(), v->name);
        lines.push_back(pad + v->name);
        v->name = v->name.substr(0, v->name.find(' '));
        if (v->root < 0) v->root = next_root_++;
        vars_.push_back(*v);
      }
    } else if (k < 17) {
      if (grad_ && r_.chance(0.5)) continue;
      if (auto s = in_place()) lines.push_back(pad + *s);
    } else if (depth < 3) {
      std::vector<std::string> block = control(depth);
      lines.insert(lines.end(), block.begin(), block.end());
    }
  }
  return lines;
}

std::vector<std::string> Generator::arm(int depth, const std::string& loop_var) {
  std::string pad(size_t(depth) * 4, ' ');
  if (r_.chance(0.35)) {
    const Var* x = pick([](const Var& v) { return v.dt != DT::Bool; });
    if (x) {
      std::string by = loop_var.empty() ? number(is_float(x->dt)).first : loop_var;
      if (is_int(x->dt) && (by.find('.') != std::string::npos || by == "s")) by = "2";  // keep the dtype
      return {pad + fmt::format("{} = {} {} {}", x->name, x->name, r_.chance(0.5) ? "*" : "+", by)};
    }
  }
  if (auto s = in_place()) return {pad + *s};
  return {pad + "pass"};
}

std::vector<std::string> Generator::control(int depth) {
  std::string pad(size_t(depth) * 4, ' ');
  std::vector<std::string> lines;
  int k = r_.below(4);
  if (k <= 1) {
    std::string cond;
    const Var* sized = pick([](const Var& v) { return !v.shape.empty(); });
    if (k == 0 && has_n_) cond = fmt::format(fmt::runtime(r_.chance(0.3) ? "(n > {}) is True" : "n > {}"), r_.between(0, 3));
    else if (has_s_ && r_.chance(0.5)) cond = r_.chance(0.3) ? "(s > 0.5) is not False" : "s > 0.5";
    else if (sized) cond = fmt::format("{}.shape[{}] > {}", sized->name, dim(*sized), r_.between(1, 3));
    else return lines;
    lines.push_back(pad + "if " + cond + ":");
    for (auto& l : arm(depth + 1)) lines.push_back(l);
    if (r_.chance(0.6)) {
      lines.push_back(pad + "else:");
      for (auto& l : arm(depth + 1)) lines.push_back(l);
    }
  } else {
    std::string bound = has_n_ && r_.chance(0.6) ? "n % 3 + 1" : std::to_string(r_.between(1, 3));
    std::string i = fmt::format("i{}", depth);
    lines.push_back(pad + fmt::format("for {} in range({}):", i, bound));
    for (auto& l : arm(depth + 1, r_.chance(0.5) ? i : "")) lines.push_back(l);
  }
  return lines;
}

std::string Generator::returns() {
  if (grad_) {  // a 0-dim float64: the sum of some float values (the first argument's at least)
    std::vector<std::string> parts;
    std::set<std::string> seen;
    for (int i = r_.between(1, 3); i > 0; --i)
      if (const Var* v = pick([](const Var& v) { return is_float(v.dt); }); v && seen.insert(v->name).second)
        parts.push_back(fmt::format("{}.double().sum()", v->name));
    if (parts.empty()) parts.push_back("p0.double().sum()");
    return join(parts, " + ");
  }
  int count = r_.between(1, 3);
  std::vector<std::string> parts;
  std::set<std::string> seen;
  for (int i = 0; i < count; ++i) {
    const Var* v = r_.chance(0.3) ? pick([](const Var& v) { return v.input; }) : nullptr;
    if (!v) v = any();
    if (!seen.insert(v->name).second) continue;
    parts.push_back(v->name);
    returned_.push_back(*v);
  }
  if (packed_ && pack_ == Pack::List && r_.chance(0.25)) {
    parts.push_back("ps");  // the caller's list itself, as eager returns it
    Var list;
    list.name = "ps";
    list.list = true;
    returned_.push_back(list);
  }
  if (has_n_ && r_.chance(0.15)) {
    parts.push_back("n + 1");
    Var number;  // no name: a number, printed as it is
    number.dt = DT::I64;
    returned_.push_back(number);
  }
  return join(parts);
}

std::string Generator::make(DT dt, const std::vector<int64_t>& sizes) {
  std::string shape = shape_tuple(sizes), to = cuda_ ? ".to(\"cuda\")" : "";
  switch (dt) {
    case DT::F16: case DT::BF16: case DT::F32: case DT::F64: {
      std::string x = fmt::format("randn({}{})", shape, dt == DT::F32 ? "" : fmt::format(", dtype={}", dt_name(dt)));
      return fmt::format("{}{}", r_.chance(0.08) ? "special(" + x + ")" : x, to);
    }
    case DT::I64: return fmt::format("randint(-4, 5, {}){}", shape, to);
    case DT::I32: return fmt::format("randint(-4, 5, {}, dtype=int32){}", shape, to);
    case DT::Bool: return cuda_ ? fmt::format("(randn({}) > 0){}", shape, to) : fmt::format("randn({}) > 0", shape);
  }
  return "";
}

Generator::Call Generator::random_call() {
  Call c;
  for (int d = 0; d < rank_; ++d) c.sizes.push_back(zero_sizes_ && r_.chance(0.3) ? 0 : r_.between(1, 5));
  c.n = r_.between(0, 5);
  c.s = r_.pick(std::vector<double>{0.25, 0.75, 1.5, -1.0});
  for (size_t p = 0; p < params_.size(); ++p) {
    ArgKind a;
    std::vector<int64_t> sizes = concrete(c, params_[p].shape);
    int k = r_.below(14);
    for (size_t q = 0; q < p; ++q) {
      const Var &P = params_[p], &Q = params_[q];
      if (P.dt != Q.dt || !r_.chance(0.6)) continue;
      // Written from each other: only the very same dense tensor (each
      // element then reads itself), never a partial overlap.
      bool written = written_from_.count({int(q), int(p)}) > 0, scattered = scattered_from_.count({int(q), int(p)}) > 0;
      if (scattered) continue;
      if (P.shape == Q.shape && k < 3 && (!written || c.kinds[q].kind == ArgKind::Fresh)) a = {ArgKind::Same, int(q)};
      else if (written) continue;
      else if (P.shape == Q.shape && k < 5 && !P.shape.empty() && c.kinds[q].kind == ArgKind::Fresh)
        a = {ArgKind::Overlap, int(q)};
      else if (!Q.shape.empty() && Shape(Q.shape.begin() + 1, Q.shape.end()) == P.shape && k < 7 &&
               size_of(c, Q.shape[0]) >= 1)
        a = {ArgKind::Row, int(q)};
      else if (Q.shape.size() == 2 && P.shape == Shape{Q.shape[1], Q.shape[0]} && k < 8)
        a = {ArgKind::Transposed, int(q)};
      if (a.kind != ArgKind::Fresh) break;
    }
    if (a.kind == ArgKind::Fresh) {
      if (k == 8 && sizes.size() >= 2) a.kind = ArgKind::Permuted;
      else if (k == 9 && !sizes.empty()) a.kind = ArgKind::Strided;
      else if (k == 10 && !sizes.empty() && sizes[0] != 1) a.kind = ArgKind::Expanded;
    }
    c.kinds.push_back(a);
  }
  return c;
}

std::string Generator::calls(uint64_t seed) {
  std::vector<Call> done;
  std::string out;
  int count = r_.between(1, 4);
  int base = 0;
  for (int i = 0; i < count; ++i) {
    Call c;
    if (!done.empty() && r_.chance(0.35)) {
      c = r_.pick(done);  // the same call again: a hit (unless cache="none")
    } else if (!done.empty() && r_.chance(0.4)) {
      c = done.back();  // same inputs, other numbers
      c.n = r_.between(0, 5);
      c.s = r_.pick(std::vector<double>{0.25, 0.75, 1.5, -1.0});
    } else {
      c = random_call();
    }
    done.push_back(c);
    out += fmt::format("manual_seed({})\n", seed % 100000 + uint64_t(i));
    std::vector<std::string> bases, args(params_.size());
    for (size_t p = 0; p < params_.size(); ++p) {
      std::vector<int64_t> sizes = concrete(c, params_[p].shape);
      const ArgKind& a = c.kinds[p];
      DT dt = params_[p].dt;
      std::string b = fmt::format("b{}", base);
      auto new_base = [&](const std::vector<int64_t>& s) {
        out += fmt::format("{} = {}\n", b, make(dt, s));
        bases.push_back(b);
        ++base;
      };
      bool overlapped = false;
      for (size_t later = p + 1; later < params_.size(); ++later)
        overlapped |= c.kinds[later].kind == ArgKind::Overlap && c.kinds[later].other == int(p);
      switch (a.kind) {
        case ArgKind::Fresh:
          if (overlapped) {
            std::vector<int64_t> s = sizes;
            s[0] += 1;
            new_base(s);
            args[p] = b + "[:-1]";
          } else {
            new_base(sizes);
            args[p] = b;
          }
          break;
        case ArgKind::Permuted: {
          std::vector<int64_t> s(sizes.rbegin(), sizes.rend());
          new_base(s);
          std::vector<int> perm;
          for (int d = int(sizes.size()) - 1; d >= 0; --d) perm.push_back(d);
          args[p] = fmt::format("{}.permute({})", b, fmt::join(perm, ", "));
          break;
        }
        case ArgKind::Strided: {
          std::vector<int64_t> s = sizes;
          s.back() *= 2;
          new_base(s);
          args[p] = b + "[..., ::2]";
          break;
        }
        case ArgKind::Expanded: {
          std::vector<int64_t> s = sizes;
          s[0] = 1;
          new_base(s);
          args[p] = fmt::format("{}.expand{}", b, shape_tuple(sizes));
          break;
        }
        case ArgKind::Same: args[p] = args[size_t(a.other)]; break;
        case ArgKind::Overlap: {
          std::string q = args[size_t(a.other)];
          args[p] = q.substr(0, q.size() - std::string("[:-1]").size()) + "[1:]";
          break;
        }
        case ArgKind::Row: args[p] = args[size_t(a.other)] + "[0]"; break;
        case ArgKind::Transposed: args[p] = args[size_t(a.other)] + ".t()"; break;
      }
    }
    std::vector<std::string> call_args = args;
    if (packed_) {
      std::vector<std::string> named;
      for (size_t p = 0; p < args.size(); ++p)
        named.push_back(pack_ == Pack::Dict ? fmt::format("\"p{}\": {}", p, args[p]) : fmt::format("p{}={}", p, args[p]));
      if (counter_) named.push_back(pack_ == Pack::Dict ? "\"meta\": meta" : "meta=meta");
      if (pack_ == Pack::List) out += fmt::format("l = [{}]\n", join(args));
      else if (pack_ == Pack::Dict) out += fmt::format("l = {{{}}}\n", join(named));
      else out += fmt::format("l = Box({})\n", join(named));
      call_args = {"l"};
    }
    std::string shapes_key, numbers_key, kinds_key;
    for (size_t p = 0; p < params_.size(); ++p) {
      shapes_key += fmt::format("{}/", fmt::join(concrete(c, params_[p].shape), "x"));
      kinds_key += fmt::format("{}{}/", int(c.kinds[p].kind), c.kinds[p].other);
    }
    if (counter_) numbers_key += fmt::format("step{}", i + 1);  // (each call's is new)
    if (has_n_) {
      call_args.push_back(std::to_string(c.n));
      numbers_key += fmt::format("n{}", c.n);
    }
    if (has_s_) {
      call_args.push_back(fmt::format("{:.2f}", c.s));
      numbers_key += fmt::format("s{:.2f}", c.s);
    }
    std::string must = (shapes_ == "static" ? shapes_key : "") + (cache_ == "constant" ? numbers_key : "");
    std::string full = shapes_key + numbers_key + kinds_key;
    if (cache_ == "none") must = full = fmt::format("call{}", i);
    if (must.empty()) must = "-";
    out += fmt::format("r = g({})  # fuzz-key: {} {}\n", join(call_args), must, full);
    if (grad_) {  // the gradients, then the arguments (unchanged)
      for (size_t k = 0; k < params_.size(); ++k) out += fmt::format("show(r[{}])\n", k);
      for (const std::string& b : bases) out += fmt::format("show({})\n", b);
      continue;
    }
    bool tuple = returned_.size() > 1;
    std::vector<std::string> results;
    for (size_t k = 0; k < returned_.size(); ++k) {
      std::string rk = tuple ? fmt::format("r[{}]", k) : "r";
      if (returned_[k].name.empty()) out += fmt::format("print({})\n", rk);
      else if (returned_[k].list) out += fmt::format("print({} is l, len({}))\n", rk, rk);
      else {
        out += fmt::format("show({})\n", rk);
        results.push_back(rk);
      }
    }
    // A returned view of an input must still be one: write through it.
    if (!results.empty() && r_.chance(0.5)) out += fmt::format("{}.fill_(7)\n", r_.pick(results));
    if (packed_ && pack_ == Pack::List) out += "for t in l:\n    show(t)\n";
    const char* show_entry = counter_ ? "    print(t) if k == \"meta\" else show(t)\n" : "    show(t)\n";
    if (packed_ && pack_ == Pack::Dict) out += std::string("for k, t in l.items():\n    print(k)\n") + show_entry;
    if (packed_ && pack_ == Pack::Object) out += std::string("for k, t in l.__dict__.items():\n    print(k)\n") + show_entry;
    for (const std::string& b : bases) out += fmt::format("show({})\n", b);
  }
  return out;
}

}  // namespace fuzzgen

std::string fuzz_program(uint64_t seed, uint64_t index, bool cuda) {
  return fuzzgen::Generator(seed, index, cuda).program(seed, index);
}

}  // namespace thn
