#include "frontend/resolve.h"

#include <map>
#include <set>

namespace thn {

namespace {

using namespace ast;

// One function body (or the module body) being resolved.
struct FunctionScope {
  FunctionScope* parent = nullptr;
  FunctionDef* def = nullptr;  // none for the module
  bool is_module = false;
  bool is_class = false;                                 // a class body: names bound in it are the class's
  std::set<std::string> class_names;
  std::vector<std::string>* locals = nullptr;            // the frame layout
  std::map<std::string, int> slots;                      // names bound in the body
  std::vector<std::map<std::string, int>> comprehensions;  // innermost last
};

class Resolver {
 public:
  void module(Module& m, std::vector<std::string>& frame) {
    FunctionScope scope;
    scope.is_module = true;
    scope.locals = &frame;
    cur_ = &scope;
    body(m.body);
  }

 private:
  FunctionScope* cur_ = nullptr;

  // Names bound in a body, not looking into nested functions or comprehensions.
  static void collect(const Body& b, std::vector<std::string>& out) {
    for (auto& s : b) collect(*s, out);
  }
  static void collect_target(const Expr& e, std::vector<std::string>& out) {
    if (e.kind == ExprKind::Name) out.push_back(static_cast<const Name&>(e).id);
    else if (e.kind == ExprKind::Starred) collect_target(*static_cast<const Starred&>(e).value, out);
    else if (e.kind == ExprKind::TupleExpr)
      for (auto& x : static_cast<const TupleExpr&>(e).elts) collect_target(*x, out);
    else if (e.kind == ExprKind::ListExpr)
      for (auto& x : static_cast<const ListExpr&>(e).elts) collect_target(*x, out);
  }
  static void collect(const Stmt& s, std::vector<std::string>& out) {
    switch (s.kind) {
      case StmtKind::Assign:
        for (auto& t : static_cast<const Assign&>(s).targets) collect_target(*t, out);
        break;
      case StmtKind::AugAssign: collect_target(*static_cast<const AugAssign&>(s).target, out); break;
      case StmtKind::For: {
        auto& f = static_cast<const For&>(s);
        collect_target(*f.target, out);
        collect(f.body, out);
        collect(f.orelse, out);
        break;
      }
      case StmtKind::If: {
        auto& i = static_cast<const If&>(s);
        collect(i.body, out);
        collect(i.orelse, out);
        break;
      }
      case StmtKind::While:
        collect(static_cast<const While&>(s).body, out);
        collect(static_cast<const While&>(s).orelse, out);
        break;
      case StmtKind::FunctionDef: out.push_back(static_cast<const FunctionDef&>(s).name); break;
      case StmtKind::ClassDef: out.push_back(static_cast<const ClassDef&>(s).name); break;
      case StmtKind::Try: {
        auto& t = static_cast<const Try&>(s);
        collect(t.body, out);
        for (auto& h : t.handlers) {
          if (h.name) out.push_back(h.name->id);
          collect(h.body, out);
        }
        collect(t.orelse, out);
        collect(t.finalbody, out);
        break;
      }
      case StmtKind::Delete:
        for (auto& t : static_cast<const Delete&>(s).targets) collect_target(*t, out);
        break;
      case StmtKind::With: collect(static_cast<const With&>(s).body, out); break;
      case StmtKind::Import:
        for (auto& a : static_cast<const Import&>(s).names) out.push_back(a.asname->id);
        break;
      case StmtKind::FromImport:
        for (auto& a : static_cast<const FromImport&>(s).names) out.push_back(a.asname->id);
        break;
      default: break;
    }
  }

  static int add_slot(FunctionScope& f, const std::string& name) {
    f.locals->push_back(name);
    return int(f.locals->size()) - 1;
  }

  void name(Name& n) {
    for (auto it = cur_->comprehensions.rbegin(); it != cur_->comprehensions.rend(); ++it) {
      if (auto s = it->find(n.id); s != it->end()) {
        n.scope = Scope::Local;
        n.slot = s->second;
        return;
      }
    }
    if (cur_->is_class && cur_->class_names.count(n.id)) {
      n.scope = Scope::Class;
      return;
    }
    int depth = 0;
    FunctionScope* inner = nullptr;  // the scope just inside f
    for (FunctionScope* f = cur_; f; inner = f, f = f->parent, ++depth) {
      // A function in a comprehension (a lambda) reads its variables, which
      // are slots of the frame the comprehension runs in (the module's too).
      if (depth > 0)
        for (auto it = f->comprehensions.rbegin(); it != f->comprehensions.rend(); ++it)
          if (auto s = it->find(n.id); s != it->end()) return enclosing(n, *f, *inner, depth, s->second);
      if (f->is_module) break;
      if (auto s = f->slots.find(n.id); s != f->slots.end()) {
        if (depth == 0) {
          n.scope = Scope::Local;
          n.slot = s->second;
          return;
        }
        return enclosing(n, *f, *inner, depth, s->second);
      }
    }
    n.scope = Scope::Global;
  }

  // n is slot `slot` of f's frame, `depth` frames out; `inner` is the
  // function defined in f that leads to n.
  static void enclosing(Name& n, FunctionScope& f, FunctionScope& inner, int depth, int slot) {
    n.scope = Scope::Enclosing;
    n.slot = slot;
    n.depth = depth;
    if (f.is_module) {  // (a module-level function then keeps the module's frame)
      inner.def->reads_module_frame = true;
      return;
    }
    if (!f.def) return;  // (a class body's frame: the function keeps it)
    f.def->captured = true;
    if (f.def->captured_slots.size() <= size_t(slot)) f.def->captured_slots.resize(size_t(slot) + 1, 0);
    f.def->captured_slots[size_t(slot)] = 1;
  }

  int loops_ = 0;  // loops enclosing the statement, within the current function

  void function(FunctionDef& f) {
    for (auto& d : f.decorators) expr(*d);
    for (auto& p : f.params)
      if (p.default_value) expr(*p.default_value);
    if (f.binding) name(*f.binding);  // (a lambda binds no name)

    FunctionScope scope;
    scope.parent = cur_;
    scope.def = &f;
    scope.locals = &f.locals;
    for (auto& p : f.params) scope.slots.emplace(p.name, add_slot(scope, p.name));
    std::vector<std::string> bound;
    collect(f.body, bound);
    for (auto& b : bound)
      if (!scope.slots.count(b)) scope.slots.emplace(b, add_slot(scope, b));
    body_in(scope, f.body);
  }

  // Resolves a function's or class's body in its scope (loops do not reach
  // into it: a `break` there needs a loop of its own).
  void body_in(FunctionScope& scope, Body& b) {
    FunctionScope* saved = cur_;
    int saved_loops = loops_;
    cur_ = &scope;
    loops_ = 0;
    body(b);
    cur_ = saved;
    loops_ = saved_loops;
  }

  // A class body runs in a frame of its own whose slots hold only
  // comprehension variables; every other name it binds is an attribute of
  // the class. Functions defined in it skip it when they look names up.
  void class_def(ClassDef& c) {
    for (auto& d : c.decorators) expr(*d);
    if (c.base) expr(*c.base);
    name(*c.binding);
    FunctionScope scope;
    scope.parent = cur_;
    scope.is_class = true;
    scope.locals = &c.locals;
    std::vector<std::string> bound;
    collect(c.body, bound);
    scope.class_names.insert(bound.begin(), bound.end());
    body_in(scope, c.body);
  }

  void body(Body& b) {
    for (auto& s : b) stmt(*s);
  }

  void stmt(Stmt& s) {
    switch (s.kind) {
      case StmtKind::ExprStmt: expr(*static_cast<ExprStmt&>(s).value); break;
      case StmtKind::Assign: {
        auto& a = static_cast<Assign&>(s);
        expr(*a.value);
        for (auto& t : a.targets) expr(*t);
        break;
      }
      case StmtKind::AugAssign: {
        auto& a = static_cast<AugAssign&>(s);
        expr(*a.value);
        expr(*a.target);
        break;
      }
      case StmtKind::If: {
        auto& i = static_cast<If&>(s);
        expr(*i.test);
        body(i.body);
        body(i.orelse);
        break;
      }
      case StmtKind::While: {
        auto& w = static_cast<While&>(s);
        expr(*w.test);
        ++loops_;
        body(w.body);
        --loops_;
        body(w.orelse);
        break;
      }
      case StmtKind::For: {
        auto& f = static_cast<For&>(s);
        expr(*f.iter);
        expr(*f.target);
        ++loops_;
        body(f.body);
        --loops_;
        body(f.orelse);
        break;
      }
      case StmtKind::Return:
        if (cur_->is_module || cur_->is_class) fail_at(s.loc, ErrorKind::SyntaxError, "'return' outside function");
        if (auto& v = static_cast<Return&>(s).value) expr(*v);
        break;
      case StmtKind::FunctionDef: function(static_cast<FunctionDef&>(s)); break;
      case StmtKind::ClassDef: class_def(static_cast<ClassDef&>(s)); break;
      case StmtKind::Try: {
        auto& t = static_cast<Try&>(s);
        body(t.body);
        for (auto& h : t.handlers) {
          if (h.type) expr(*h.type);
          if (h.name) name(*h.name);
          body(h.body);
        }
        body(t.orelse);
        body(t.finalbody);
        break;
      }
      case StmtKind::Raise: {
        auto& r = static_cast<Raise&>(s);
        if (r.exc) expr(*r.exc);
        if (r.cause) expr(*r.cause);
        break;
      }
      case StmtKind::Delete:
        for (auto& t : static_cast<Delete&>(s).targets) expr(*t);
        break;
      case StmtKind::With: {
        auto& w = static_cast<With&>(s);
        for (auto& i : w.items) expr(*i);
        body(w.body);
        break;
      }
      case StmtKind::Import:
        for (auto& a : static_cast<Import&>(s).names) name(*a.asname);
        break;
      case StmtKind::FromImport:
        for (auto& a : static_cast<FromImport&>(s).names) name(*a.asname);
        break;
      case StmtKind::Assert: {
        auto& a = static_cast<Assert&>(s);
        expr(*a.test);
        if (a.msg) expr(*a.msg);
        break;
      }
      case StmtKind::Break:
        if (!loops_) fail_at(s.loc, ErrorKind::SyntaxError, "'break' outside loop");
        break;
      case StmtKind::Continue:
        if (!loops_) fail_at(s.loc, ErrorKind::SyntaxError, "'continue' not properly in loop");
        break;
      case StmtKind::Pass: break;
    }
  }

  void expr(Expr& e) {
    switch (e.kind) {
      case ExprKind::Name: name(static_cast<Name&>(e)); break;
      case ExprKind::Constant: break;
      case ExprKind::TupleExpr:
        for (auto& x : static_cast<TupleExpr&>(e).elts) expr(*x);
        break;
      case ExprKind::ListExpr:
        for (auto& x : static_cast<ListExpr&>(e).elts) expr(*x);
        break;
      case ExprKind::ListComp: {
        // Each `for` clause opens a scope for its targets (Python 3: they do
        // not leak); the first iterable is evaluated outside all of them.
        auto& c = static_cast<ListComp&>(e);
        size_t opened = 0;
        for (auto& g : c.generators) {
          expr(*g.iter);
          std::vector<std::string> targets;
          collect_target(*g.target, targets);
          std::map<std::string, int> scope;
          for (auto& t : targets)
            if (!scope.count(t)) scope.emplace(t, add_slot(*cur_, t));
          cur_->comprehensions.push_back(std::move(scope));
          ++opened;
          expr(*g.target);
          for (auto& cond : g.ifs) expr(*cond);
        }
        if (c.key) expr(*c.key);
        expr(*c.elt);
        for (size_t i = 0; i < opened; ++i) cur_->comprehensions.pop_back();
        break;
      }
      case ExprKind::Call: {
        auto& c = static_cast<Call&>(e);
        expr(*c.func);
        for (auto& a : c.args) expr(*a);
        for (auto& k : c.keywords) expr(*k.value);
        break;
      }
      case ExprKind::Attribute: expr(*static_cast<Attribute&>(e).value); break;
      case ExprKind::Subscript: {
        auto& s = static_cast<Subscript&>(e);
        expr(*s.value);
        for (auto& i : s.index) expr(*i);
        break;
      }
      case ExprKind::Slice: {
        auto& s = static_cast<Slice&>(e);
        for (auto* p : {&s.lower, &s.upper, &s.step})
          if (*p) expr(**p);
        break;
      }
      case ExprKind::Binary: {
        auto& b = static_cast<Binary&>(e);
        expr(*b.lhs);
        expr(*b.rhs);
        break;
      }
      case ExprKind::Unary: expr(*static_cast<Unary&>(e).operand); break;
      case ExprKind::Not: expr(*static_cast<Not&>(e).operand); break;
      case ExprKind::BoolOp: {
        auto& b = static_cast<BoolOp&>(e);
        expr(*b.lhs);
        expr(*b.rhs);
        break;
      }
      case ExprKind::Compare: {
        auto& c = static_cast<Compare&>(e);
        expr(*c.first);
        for (auto& r : c.rest) expr(*r);
        break;
      }
      case ExprKind::IfExp: {
        auto& i = static_cast<IfExp&>(e);
        expr(*i.test);
        expr(*i.body);
        expr(*i.orelse);
        break;
      }
      case ExprKind::Dict: {
        auto& d = static_cast<Dict&>(e);
        for (size_t i = 0; i < d.keys.size(); ++i) {
          if (d.keys[i]) expr(*d.keys[i]);
          expr(*d.values[i]);
        }
        break;
      }
      case ExprKind::Lambda: function(*static_cast<Lambda&>(e).def); break;
      case ExprKind::FString:
        for (auto& x : static_cast<FString&>(e).parts) expr(*x);
        break;
      case ExprKind::FormattedValue: {
        auto& v = static_cast<FormattedValue&>(e);
        expr(*v.value);
        if (v.spec) expr(*v.spec);
        break;
      }
      case ExprKind::Starred: expr(*static_cast<Starred&>(e).value); break;
    }
  }
};

}  // namespace

void resolve(ast::Module& m) { Resolver().module(m, m.locals); }

}  // namespace thn
