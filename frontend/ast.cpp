#include "frontend/ast.h"

#include <fmt/format.h>

namespace thn::ast {

const char* binop_symbol(BinOp op) {
  static const char* s[] = {"+", "-", "*", "/", "//", "%", "**", "@", "<<", ">>", "&", "|", "^"};
  return s[int(op)];
}
const char* cmpop_symbol(CmpOp op) {
  static const char* s[] = {"<", ">", "==", ">=", "<=", "!=", "in", "not in", "is", "is not"};
  return s[int(op)];
}

namespace {

struct Printer {
  std::string out;

  void line(int depth, const Loc& loc, const std::string& text) {
    out += fmt::format("{:{}}{}  @{}:{}\n", "", depth * 2, text, loc.line, loc.col + 1);
  }
  // A labelled child slot (`else:`, `step:`) with no node of its own.
  void label(int depth, const char* text) { out += fmt::format("{:{}}{}\n", "", depth * 2, text); }

  static std::string where(const Name& n) {
    switch (n.scope) {
      case Scope::Local: return fmt::format(" (local {})", n.slot);
      case Scope::Enclosing: return fmt::format(" (enclosing {} out, slot {})", n.depth, n.slot);
      case Scope::Global: return " (global)";
      case Scope::Class: return " (class)";
      case Scope::Unresolved: break;
    }
    return "";
  }

  static std::string constant(const Constant& c) {
    switch (c.type) {
      case Constant::Type::None: return "None";
      case Constant::Type::Bool: return c.b ? "True" : "False";
      case Constant::Type::Int: return std::to_string(c.i);
      case Constant::Type::Float: {
        std::string f = fmt::format("{}", c.f);  // shortest round trip, as Python's repr
        if (f.find_first_of(".eni") == std::string::npos) f += ".0";
        return f;
      }
      case Constant::Type::Str: {
        std::string s = "'";
        for (char ch : c.s) {
          if (ch == '\'' || ch == '\\') s += '\\';
          if (ch == '\n') s += "\\n";
          else s += ch;
        }
        return s + "'";
      }
      case Constant::Type::Ellipsis: return "...";
    }
    return "?";
  }

  void opt(const ExprPtr& e, int depth, const char* label_text) {
    if (!e) return;
    label(depth, label_text);
    expr(*e, depth + 1);
  }

  void expr(const Expr& e, int d) {
    switch (e.kind) {
      case ExprKind::Name: {
        auto& n = static_cast<const Name&>(e);
        line(d, e.loc, "Name " + n.id + where(n));
        return;
      }
      case ExprKind::Constant: line(d, e.loc, "Constant " + constant(static_cast<const Constant&>(e))); return;
      case ExprKind::TupleExpr:
        line(d, e.loc, "Tuple");
        for (auto& x : static_cast<const TupleExpr&>(e).elts) expr(*x, d + 1);
        return;
      case ExprKind::ListExpr:
        line(d, e.loc, "List");
        for (auto& x : static_cast<const ListExpr&>(e).elts) expr(*x, d + 1);
        return;
      case ExprKind::ListComp: {
        auto& c = static_cast<const ListComp&>(e);
        line(d, e.loc, c.key ? "DictComp" : "ListComp");
        opt(c.key, d + 1, "key:");
        expr(*c.elt, d + 1);
        for (auto& g : c.generators) {
          label(d + 1, "for:");
          expr(*g.target, d + 2);
          label(d + 1, "in:");
          expr(*g.iter, d + 2);
          for (auto& i : g.ifs) opt(i, d + 1, "if:");
        }
        return;
      }
      case ExprKind::Call: {
        auto& c = static_cast<const Call&>(e);
        line(d, e.loc, "Call");
        expr(*c.func, d + 1);
        for (auto& a : c.args) expr(*a, d + 1);
        for (auto& k : c.keywords) {
          line(d + 1, k.loc, k.name.empty() ? "keyword **" : "keyword " + k.name + "=");
          expr(*k.value, d + 2);
        }
        return;
      }
      case ExprKind::Attribute: {
        auto& a = static_cast<const Attribute&>(e);
        line(d, e.loc, "Attribute ." + a.attr);
        expr(*a.value, d + 1);
        return;
      }
      case ExprKind::Subscript: {
        auto& s = static_cast<const Subscript&>(e);
        line(d, e.loc, s.tuple ? "Subscript (tuple index)" : "Subscript");
        expr(*s.value, d + 1);
        for (auto& i : s.index) expr(*i, d + 1);
        return;
      }
      case ExprKind::Slice: {
        auto& s = static_cast<const Slice&>(e);
        line(d, e.loc, "Slice");
        opt(s.lower, d + 1, "lower:");
        opt(s.upper, d + 1, "upper:");
        opt(s.step, d + 1, "step:");
        return;
      }
      case ExprKind::Binary: {
        auto& b = static_cast<const Binary&>(e);
        line(d, e.loc, fmt::format("Binary {}", binop_symbol(b.op)));
        expr(*b.lhs, d + 1);
        expr(*b.rhs, d + 1);
        return;
      }
      case ExprKind::Unary: {
        auto& u = static_cast<const Unary&>(e);
        static const char* ops[] = {"-", "+", "~"};
        line(d, e.loc, fmt::format("Unary {}", ops[int(u.op)]));
        expr(*u.operand, d + 1);
        return;
      }
      case ExprKind::Not:
        line(d, e.loc, "Not");
        expr(*static_cast<const Not&>(e).operand, d + 1);
        return;
      case ExprKind::BoolOp: {
        auto& b = static_cast<const BoolOp&>(e);
        line(d, e.loc, b.is_and ? "BoolOp and" : "BoolOp or");
        expr(*b.lhs, d + 1);
        expr(*b.rhs, d + 1);
        return;
      }
      case ExprKind::Compare: {
        auto& c = static_cast<const Compare&>(e);
        std::string ops;
        for (CmpOp op : c.ops) ops += fmt::format(" {}", cmpop_symbol(op));
        line(d, e.loc, "Compare" + ops);
        expr(*c.first, d + 1);
        for (auto& r : c.rest) expr(*r, d + 1);
        return;
      }
      case ExprKind::IfExp: {
        auto& i = static_cast<const IfExp&>(e);
        line(d, e.loc, "IfExp");
        expr(*i.body, d + 1);
        opt(i.test, d + 1, "if:");
        opt(i.orelse, d + 1, "else:");
        return;
      }
      case ExprKind::Dict: {
        auto& m = static_cast<const Dict&>(e);
        line(d, e.loc, "Dict");
        for (size_t i = 0; i < m.keys.size(); ++i) {
          if (m.keys[i]) opt(m.keys[i], d + 1, "key:");
          opt(m.values[i], d + 1, m.keys[i] ? "value:" : "**:");
        }
        return;
      }
      case ExprKind::Lambda: function(*static_cast<const Lambda&>(e).def, d); return;
      case ExprKind::FString:
        line(d, e.loc, "FString");
        for (auto& x : static_cast<const FString&>(e).parts) expr(*x, d + 1);
        return;
      case ExprKind::FormattedValue: {
        auto& v = static_cast<const FormattedValue&>(e);
        line(d, e.loc, v.conversion ? fmt::format("FormattedValue !{}", v.conversion) : "FormattedValue");
        expr(*v.value, d + 1);
        opt(v.spec, d + 1, "spec:");
        return;
      }
      case ExprKind::Starred:
        line(d, e.loc, "Starred");
        expr(*static_cast<const Starred&>(e).value, d + 1);
        return;
    }
  }

  void function(const FunctionDef& f, int d) {
    std::string params;
    for (auto& p : f.params)
      params += fmt::format("{}{}{}", params.empty() ? "" : ", ", p.star ? "*" : p.dstar ? "**" : p.kwonly ? "kw " : "", p.name);
    std::string frame;
    if (!f.locals.empty()) frame = fmt::format(" locals=[{}]", fmt::join(f.locals, ", "));
    line(d, f.loc, fmt::format("FunctionDef {}({}){}{}", f.name, params, frame, f.captured ? " captured" : ""));
    for (auto& dec : f.decorators) opt(dec, d + 1, "decorator:");
    for (auto& p : f.params) opt(p.default_value, d + 1, fmt::format("default {}:", p.name).c_str());
    body(f.body, d + 1);
  }

  void body(const Body& b, int d) {
    for (auto& s : b) stmt(*s, d);
  }

  void stmt(const Stmt& s, int d) {
    switch (s.kind) {
      case StmtKind::ExprStmt:
        line(d, s.loc, "Expr");
        expr(*static_cast<const ExprStmt&>(s).value, d + 1);
        return;
      case StmtKind::Assign: {
        auto& a = static_cast<const Assign&>(s);
        line(d, s.loc, "Assign");
        for (auto& t : a.targets) opt(t, d + 1, "target:");
        opt(a.value, d + 1, "value:");
        return;
      }
      case StmtKind::AugAssign: {
        auto& a = static_cast<const AugAssign&>(s);
        line(d, s.loc, fmt::format("AugAssign {}=", binop_symbol(a.op)));
        expr(*a.target, d + 1);
        expr(*a.value, d + 1);
        return;
      }
      case StmtKind::If: {
        auto& i = static_cast<const If&>(s);
        line(d, s.loc, "If");
        expr(*i.test, d + 1);
        label(d + 1, "then:");
        body(i.body, d + 2);
        if (!i.orelse.empty()) {
          label(d + 1, "else:");
          body(i.orelse, d + 2);
        }
        return;
      }
      case StmtKind::While: {
        auto& w = static_cast<const While&>(s);
        line(d, s.loc, "While");
        expr(*w.test, d + 1);
        label(d + 1, "do:");
        body(w.body, d + 2);
        if (!w.orelse.empty()) {
          label(d + 1, "else:");
          body(w.orelse, d + 2);
        }
        return;
      }
      case StmtKind::For: {
        auto& f = static_cast<const For&>(s);
        line(d, s.loc, "For");
        expr(*f.target, d + 1);
        opt(f.iter, d + 1, "in:");
        label(d + 1, "do:");
        body(f.body, d + 2);
        if (!f.orelse.empty()) {
          label(d + 1, "else:");
          body(f.orelse, d + 2);
        }
        return;
      }
      case StmtKind::Break: line(d, s.loc, "Break"); return;
      case StmtKind::Continue: line(d, s.loc, "Continue"); return;
      case StmtKind::Pass: line(d, s.loc, "Pass"); return;
      case StmtKind::Return: {
        line(d, s.loc, "Return");
        auto& r = static_cast<const Return&>(s);
        if (r.value) expr(*r.value, d + 1);
        return;
      }
      case StmtKind::FunctionDef: function(static_cast<const FunctionDef&>(s), d); return;
      case StmtKind::ClassDef: {
        auto& c = static_cast<const ClassDef&>(s);
        line(d, s.loc, "ClassDef " + c.name + where(*c.binding));
        for (auto& dec : c.decorators) opt(dec, d + 1, "decorator:");
        opt(c.base, d + 1, "base:");
        body(c.body, d + 1);
        return;
      }
      case StmtKind::Try: {
        auto& t = static_cast<const Try&>(s);
        line(d, s.loc, "Try");
        body(t.body, d + 1);
        for (auto& h : t.handlers) {
          line(d + 1, h.loc, h.name ? "except as " + h.name->id + where(*h.name) : "except");
          opt(h.type, d + 2, "type:");
          body(h.body, d + 2);
        }
        if (!t.orelse.empty()) {
          label(d + 1, "else:");
          body(t.orelse, d + 2);
        }
        if (!t.finalbody.empty()) {
          label(d + 1, "finally:");
          body(t.finalbody, d + 2);
        }
        return;
      }
      case StmtKind::Raise: {
        auto& r = static_cast<const Raise&>(s);
        line(d, s.loc, "Raise");
        opt(r.exc, d + 1, "exception:");
        opt(r.cause, d + 1, "from:");
        return;
      }
      case StmtKind::With: {
        auto& w = static_cast<const With&>(s);
        line(d, s.loc, "With");
        for (auto& i : w.items) opt(i, d + 1, "context:");
        label(d + 1, "do:");
        body(w.body, d + 2);
        return;
      }
      case StmtKind::Delete:
        line(d, s.loc, "Delete");
        for (auto& t : static_cast<const Delete&>(s).targets) expr(*t, d + 1);
        return;
      case StmtKind::Import:
        for (auto& a : static_cast<const Import&>(s).names)
          line(d, s.loc, fmt::format("Import {}{}", a.name, a.asname ? " as " + a.asname->id + where(*a.asname) : ""));
        return;
      case StmtKind::FromImport: {
        auto& f = static_cast<const FromImport&>(s);
        std::string names;
        for (auto& a : f.names) names += fmt::format("{}{}{}", names.empty() ? "" : ", ", a.name, a.asname && a.asname->id != a.name ? " as " + a.asname->id : "");
        line(d, s.loc, fmt::format("FromImport {} import {}", f.module, names.empty() ? "*" : names));
        return;
      }
      case StmtKind::Assert: {
        auto& a = static_cast<const Assert&>(s);
        line(d, s.loc, "Assert");
        expr(*a.test, d + 1);
        opt(a.msg, d + 1, "message:");
        return;
      }
    }
  }
};

}  // namespace

Lambda::Lambda(Loc l) : Expr(ExprKind::Lambda, l) {}
Lambda::~Lambda() = default;

std::string print_ast(const Module& m) {
  Printer p;
  p.out = fmt::format("Module {}\n", m.source ? m.source->path : "<unknown>");
  p.body(m.body, 1);
  return p.out;
}

}  // namespace thn::ast
