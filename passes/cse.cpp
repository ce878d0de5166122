#include "passes/cse.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace thn {

namespace {

template <class T> void append_bytes(const T& x, std::string& out) {
  out.append(reinterpret_cast<const char*>(&x), sizeof x);
}

// Arguments as a key: proxies by identity, numbers by type and bits, other
// constants by type and repr.
void key_of(const Value& v, std::string& out) {
  if (v.is_proxy()) {
    out += '%';
    append_bytes(&v.symbolic(), out);
  } else if (v.is_sequence() || v.is(Type::Slice)) {
    out += v.is(Type::List) ? "[" : v.is(Type::Slice) ? "slice(" : "(";
    for_each_item(v, [&](const Value& x) {
      key_of(x, out);
      out += ',';
    });
    out += ')';
  } else if (v.is_number()) {
    out += char('0' + int(v.type()));
    if (v.is(Type::Float)) append_bytes(v.raw_float(), out);
    else append_bytes(v.raw_int(), out);
  } else {
    out += type_name(v);
    out += ':';
    out += to_repr(v);
  }
}

// The symbol as a key.
std::string key_of(const Symbol& s) {
  std::string out;
  append_bytes(s.op, out);
  out += char(s.prim);
  out += char(s.inplace);
  out += char(s.is_prim);
  return out;
}

}  // namespace

Trace cse(Trace t) {
  // Values a step writes in place later (a library step functionalize left
  // as it is, setitem_ with tensor indices), directly or through a view:
  // two equal computations of one are two tensors, not one.
  std::unordered_map<const Symbolic*, const Symbolic*> base;  // a view -> what it views
  auto root = [&](const Symbolic* s) {
    for (auto it = base.find(s); it != base.end(); it = base.find(s)) s = it->second;
    return s;
  };
  std::unordered_set<const Symbolic*> written;  // roots
  for (const BoundSymbol& b : t.body) {
    if (b.sym.is_view() && !b.args.empty() && b.args[0].is_proxy() && b.out.is_proxy())
      base[&b.out.symbolic()] = &b.args[0].symbolic();
    if (!b.sym.mutates() || b.args.empty()) continue;
    std::vector<Value> targets;
    collect_proxies(b.args[b.sym.op ? size_t(std::max(b.sym.op->schema.self_index, 0)) : 0], targets);
    for (const Value& v : targets) written.insert(root(&v.symbolic()));
  }
  // Whether a proxy of v has its root in `roots`.
  auto rooted_in = [&](const Value& v, const std::unordered_set<const Symbolic*>& roots) {
    bool in = false;
    for_each_proxy(v, [&](const Value& p) { in = in || roots.count(root(&p.symbolic())); });
    return in;
  };
  auto is_written = [&](const Value& v) { return rooted_in(v, written); };
  // Returned tensors (and views of them) eager made apart stay apart: the
  // caller may write into one and read the other. (A value merged into a
  // returned one is returned too.)
  std::unordered_set<const Symbolic*> returned;  // roots
  std::vector<Value> outs;
  collect_proxies(t.output, outs);
  for (const Value& o : outs)
    if (o.is(Type::Tensor)) returned.insert(root(&o.symbolic()));
  auto is_returned = [&](const Value& v) { return rooted_in(v, returned); };
  std::unordered_map<const Symbolic*, Value> replace;
  std::unordered_map<std::string, Value> seen;  // key -> the first one's outputs
  std::vector<BoundSymbol> body;
  body.reserve(t.body.size());
  for (BoundSymbol& c : t.body) {
    for (Value& a : c.args) a = substitute(a, replace);
    if (c.sym.mutates()) seen.clear();  // what was read before a write is not what is read after it
    // A view of all of a tensor as it is (x.view(x.shape): what detach() is
    // in a trace, where autograd is done) is the tensor: later uses read it.
    if (c.sym.is_view() && c.sym.op && c.sym.op->id == OpId::reshape && is_tensor_proxy(c.out) &&
        is_tensor_proxy(c.args[0]) && same_sizes(tensor_proxy(c.out), tensor_proxy(c.args[0])) && !is_returned(c.out) &&
        !is_written(c.out)) {
      replace[&c.out.symbolic()] = c.args[0];
      continue;
    }
    if (!c.sym.has_side_effect() && !c.out.is_none() && !is_written(c.out)) {
      std::string key = key_of(c.sym);
      for (const Value& a : c.args) key_of(a, key);
      auto [it, fresh] = seen.try_emplace(key, c.out);
      if (!fresh && !(is_returned(c.out) && is_returned(it->second))) {
        std::vector<Value> mine, theirs;
        collect_proxies(c.out, mine);
        collect_proxies(it->second, theirs);
        if (is_returned(c.out))  // the first one is returned in its place now
          for (const Value& p : theirs) returned.insert(root(&p.symbolic()));
        for (size_t i = 0; i < mine.size() && i < theirs.size(); ++i) replace[&mine[i].symbolic()] = theirs[i];
        continue;
      }
    }
    body.push_back(std::move(c));
  }
  t.body = std::move(body);
  t.output = substitute(t.output, replace);
  return t;
}

}  // namespace thn
