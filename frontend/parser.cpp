#include "frontend/parser.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <ANTLRInputStream.h>
#include <BailErrorStrategy.h>
#include <CommonTokenStream.h>
#include <ListTokenSource.h>
#include <atn/ParserATNSimulator.h>
#include <Exceptions.h>

#include "ThnLexer.h"
#include "ThnParser.h"
#include "frontend/strings.h"
#include "frontend/tokens.h"

namespace thn {

namespace {

using namespace ast;
using P = thn_grammar::ThnParser;
using thn_grammar::ThnLexer;

// Python keywords that thn's grammar leaves out, so that they would otherwise
// parse as names (`x = yield`, `lambda: await y`).
const char* unsupported_keyword(const std::string& text) {
  if (text == "yield") return "generators ('yield') are not supported in thn";
  if (text == "async" || text == "await") return "'async' and 'await' are not supported in thn";
  return nullptr;
}

// Python constructs thn leaves out, named when they make a line fail to parse
// (rather than a bare "invalid syntax").
const char* unsupported_on_line(antlr4::Parser* parser, antlr4::Token* tok) {
  antlr4::TokenStream* ts = parser->getTokenStream();
  if (auto* buffered = dynamic_cast<antlr4::BufferedTokenStream*>(ts)) buffered->fill();
  if (!ts || !tok || tok->getTokenIndex() >= ts->size()) return nullptr;
  auto line_break = [&](size_t k) {
    size_t t = ts->get(k)->getType();
    return t == ThnLexer::NEWLINE || t == P::INDENT || t == P::DEDENT;
  };
  size_t b = tok->getTokenIndex();
  while (b > 0 && !line_break(b - 1)) --b;
  for (size_t k = b; k < ts->size() && !line_break(k) && ts->get(k)->getType() != antlr4::Token::EOF; ++k) {
    antlr4::Token* t = ts->get(k);
    std::string text = t->getText();
    if (const char* what = unsupported_keyword(text)) return what;
    if (k == b && text == "match") return "'match' is not supported in thn";
    antlr4::Token* next = k + 1 < ts->size() ? ts->get(k + 1) : nullptr;
    bool adjacent = next && next->getStartIndex() == t->getStopIndex() + 1;
    if (text == "except" && next && next->getText() == "*")
      return "'except*' (exception groups) is not supported in thn";
    if (t->getType() == ThnLexer::NUMBER && adjacent && next->getType() == ThnLexer::NAME &&
        (next->getText()[0] == 'j' || next->getText()[0] == 'J'))
      return "complex numbers are not supported in thn";
    if (text == ":" && adjacent && next->getText() == "=")
      return "assignment expressions (':=') are not supported in thn";
  }
  return nullptr;
}

// Reports the first syntax error of the full (LL) parse as a SyntaxError.
class ParseErrors : public antlr4::BaseErrorListener {
 public:
  explicit ParseErrors(const Source& s) : src_(s) {}
  void syntaxError(antlr4::Recognizer* r, antlr4::Token* tok, size_t line, size_t col, const std::string&,
                   std::exception_ptr) override {
    Loc loc{&src_, int(line), int(col)};
    if (tok && tok->getType() == P::INDENT) fail_at(loc, ErrorKind::IndentationError, "unexpected indent");
    auto* parser = static_cast<antlr4::Parser*>(r);
    if (const char* what = unsupported_on_line(parser, tok)) fail_at(loc, ErrorKind::SyntaxError, "{}", what);
    antlr4::misc::IntervalSet expected = parser->getExpectedTokens();
    if (tok && tok->getType() == ThnLexer::NEWLINE && expected.contains(parser->getTokenType(":")))
      fail_at(loc, ErrorKind::SyntaxError, "expected ':'");
    if (tok && tok->getType() == antlr4::Token::EOF)
      fail_at(loc, ErrorKind::SyntaxError, "unexpected end of file");
    fail_at(loc, ErrorKind::SyntaxError, "invalid syntax");
  }

 private:
  const Source& src_;
};

// Parses an f-string field's expression, located at `at` in `src`.
ast::ExprPtr parse_fragment(const Source& src, const std::string& text, const Loc& at);

class Builder {
 public:
  explicit Builder(const Source& s) : src_(s) {}

  Body file(P::File_inputContext* c) {
    Body body;
    for (auto* s : c->stmt()) stmt(s, body);
    return body;
  }
  ExprPtr fragment(P::Eval_inputContext* c) { return exprlist(c->exprlist()); }

 private:
  const Source& src_;

  Loc loc(antlr4::Token* t) const { return Loc{&src_, int(t->getLine()), int(t->getCharPositionInLine())}; }
  Loc loc(antlr4::ParserRuleContext* c) const { return loc(c->getStart()); }
  template <class... A>
  [[noreturn]] void error(const Loc& l, fmt::format_string<A...> f, A&&... a) const {
    fail_at(l, ErrorKind::SyntaxError, f, std::forward<A>(a)...);
  }

  // ---- statements ----
  void stmt(P::StmtContext* c, Body& out) {
    if (auto* s = c->simple_stmts()) return simple_stmts(s, out);
    auto* cs = c->compound_stmt();
    if (auto* x = cs->if_stmt()) return out.push_back(if_stmt(x));
    if (auto* x = cs->while_stmt()) {
      auto w = std::make_unique<While>(loc(x));
      w->test = expr(x->expr());
      w->body = block(x->block(0));
      if (x->else_block) w->orelse = block(x->else_block);
      return out.push_back(std::move(w));
    }
    if (auto* x = cs->for_stmt()) {
      auto f = std::make_unique<For>(loc(x));
      f->target = targetlist(x->targetlist());
      f->iter = exprlist(x->exprlist());
      f->body = block(x->block(0));
      if (x->else_block) f->orelse = block(x->else_block);
      return out.push_back(std::move(f));
    }
    if (auto* x = cs->funcdef()) return out.push_back(funcdef(x, {}));
    if (auto* x = cs->classdef()) return out.push_back(classdef(x, {}));
    if (auto* x = cs->try_stmt()) return out.push_back(try_stmt(x));
    if (auto* x = cs->with_stmt()) {
      if (!x->NAME().empty())
        error(loc(x->NAME(0)->getSymbol()), "'with ... as' is not supported in thn: the only context managers are no_grad() and enable_grad()");
      auto w = std::make_unique<With>(loc(x));
      for (auto* e : x->expr()) w->items.push_back(expr(e));
      w->body = block(x->block());
      return out.push_back(std::move(w));
    }
    auto* d = cs->decorated();
    std::vector<ExprPtr> decorators;
    for (auto* dec : d->decorator()) decorators.push_back(expr(dec->expr()));
    if (d->classdef()) return out.push_back(classdef(d->classdef(), std::move(decorators)));
    out.push_back(funcdef(d->funcdef(), std::move(decorators)));
  }

  StmtPtr try_stmt(P::Try_stmtContext* c) {
    auto t = std::make_unique<Try>(loc(c));
    const std::vector<P::BlockContext*> blocks = c->block();
    t->body = block(blocks[0]);
    const std::vector<P::Except_clauseContext*> clauses = c->except_clause();
    for (size_t k = 0; k < clauses.size(); ++k) {
      Handler h;
      h.loc = loc(clauses[k]);
      if (clauses[k]->expr()) h.type = expr(clauses[k]->expr());
      else if (k + 1 < clauses.size()) error(h.loc, "default 'except:' must be last");
      if (auto* n = clauses[k]->NAME()) h.name = std::make_unique<Name>(loc(n->getSymbol()), n->getText());
      h.body = block(blocks[k + 1]);
      t->handlers.push_back(std::move(h));
    }
    if (c->else_block) t->orelse = block(c->else_block);
    if (c->finally_block) t->finalbody = block(c->finally_block);
    return t;
  }

  StmtPtr classdef(P::ClassdefContext* c, std::vector<ExprPtr> decorators) {
    auto k = std::make_unique<ClassDef>(loc(c));
    k->name = c->NAME()->getText();
    k->decorators = std::move(decorators);
    k->binding = std::make_unique<Name>(loc(c->NAME()->getSymbol()), k->name);
    if (auto* al = c->arglist()) {
      const std::vector<P::ArgumentContext*> bases = al->argument();
      for (auto* a : bases)
        if (a->NAME() || a->star || a->dstar || a->comp_for())
          error(loc(a), "class keywords and unpacked bases are not supported in thn");
      if (bases.size() > 1) error(loc(bases[1]), "multiple inheritance is not supported in thn");
      if (!bases.empty()) k->base = expr(bases[0]->expr());
    }
    k->body = block(c->block());
    for (auto& st : k->body)
      if (st->kind == StmtKind::FunctionDef) {
        auto& fn = static_cast<FunctionDef&>(*st);
        fn.qualname = k->name + "." + fn.name;
      }
    return k;
  }

  // if/elif/else as nested Ifs, each elif the orelse of the one before.
  // (The context's children are fetched once: ANTLR finds the k-th by a
  // walk over them, which per branch made a long elif chain quadratic.)
  StmtPtr if_stmt(P::If_stmtContext* c) {
    const std::vector<P::ExprContext*> tests = c->expr();
    const std::vector<P::BlockContext*> blocks = c->block();
    std::vector<std::unique_ptr<If>> branches;
    for (size_t k = 0; k < tests.size(); ++k) {  // (in source order: errors come in it)
      auto node = std::make_unique<If>(loc(k == 0 ? c->getStart() : tests[k]->getStart()));
      node->test = expr(tests[k]);
      node->body = block(blocks[k]);
      branches.push_back(std::move(node));
    }
    if (c->else_block) branches.back()->orelse = block(c->else_block);
    for (size_t k = branches.size() - 1; k > 0; --k) branches[k - 1]->orelse.push_back(std::move(branches[k]));
    return std::move(branches.front());
  }

  Body block(P::BlockContext* c) {
    Body body;
    if (auto* s = c->simple_stmts()) simple_stmts(s, body);
    for (auto* s : c->stmt()) stmt(s, body);
    return body;
  }

  StmtPtr funcdef(P::FuncdefContext* c, std::vector<ExprPtr> decorators) {
    auto f = std::make_unique<FunctionDef>(loc(c));
    f->name = c->NAME()->getText();
    f->decorators = std::move(decorators);
    f->binding = std::make_unique<Name>(loc(c->NAME()->getSymbol()), f->name);
    if (auto* pl = c->paramlist()) {
      for (auto* p : pl->param())
        if (p->slash) error(loc(p), "positional-only parameters ('/') are not supported in thn");
      params(*f, pl->param());
    }
    f->body = block(c->block());
    return f;
  }

  // Parameters as Python orders them: plain ones (defaults last), then *args
  // or a bare *, keyword-only ones, and **kwargs last.
  template <class Ctx>
  void params(FunctionDef& f, const std::vector<Ctx*>& list) {
    bool kwonly = false, seen_default = false, star_last = false, seen_dstar = false;
    for (auto* p : list) {
      Param param;
      param.loc = loc(p);
      if (seen_dstar) error(param.loc, "arguments cannot follow var-keyword argument");
      if (p->star) {
        if (kwonly) error(param.loc, "* argument may appear only once");
        kwonly = true;
        star_last = !p->NAME();
        if (!p->NAME()) continue;
        param.star = true;
      }
      if (p->dstar) {
        param.dstar = seen_dstar = true;
        star_last = false;
      }
      if (!p->star && !p->dstar) {
        star_last = false;
        param.kwonly = kwonly;
        if (p->dflt) param.default_value = expr(p->dflt);
        if (!kwonly && !param.default_value && seen_default)
          error(param.loc, "parameter without a default follows parameter with a default");
        seen_default |= param.default_value && !kwonly;
      }
      param.name = p->NAME()->getText();
      for (auto& q : f.params)
        if (q.name == param.name) error(param.loc, "duplicate argument '{}' in function definition", param.name);
      f.params.push_back(std::move(param));
    }
    if (star_last) error(f.loc, "named arguments must follow bare *");
  }

  void simple_stmts(P::Simple_stmtsContext* c, Body& out) {
    for (auto* s : c->simple_stmt()) out.push_back(simple_stmt(s));
  }

  StmtPtr simple_stmt(P::Simple_stmtContext* c) {
    Loc l = loc(c);
    if (auto* s = dynamic_cast<P::ExprStmtContext*>(c)) {
      auto lists = s->exprlist();
      if (lists.size() == 1) return std::make_unique<ExprStmt>(l, exprlist(lists[0]));
      auto a = std::make_unique<Assign>(l);
      for (size_t i = 0; i + 1 < lists.size(); ++i) {
        a->targets.push_back(exprlist(lists[i]));
        check_target(*a->targets.back());
      }
      a->value = exprlist(lists.back());
      return a;
    }
    if (auto* s = dynamic_cast<P::AnnAssignStmtContext*>(c)) {
      // `x: T = v` assigns v and ignores T, as Python does at run time (the
      // annotation is not evaluated: `from __future__ import annotations`);
      // `x: T` alone does nothing.
      if (s->lhs->star) error(loc(s->lhs), "invalid syntax");
      ExprPtr target = expr(s->lhs->expr());
      if (target->kind != ExprKind::Name && target->kind != ExprKind::Subscript &&
          target->kind != ExprKind::Attribute)
        error(target->loc, "{}", target->kind == ExprKind::TupleExpr ? "only single target (not tuple) can be annotated"
                                                                      : "illegal target for annotation");
      if (!s->value) return std::make_unique<Pass>(l);
      auto a = std::make_unique<Assign>(l);
      a->targets.push_back(std::move(target));
      a->value = exprlist(s->value);
      return a;
    }
    if (auto* s = dynamic_cast<P::AugAssignStmtContext*>(c)) {
      std::string op = s->augassign()->getText();
      op.pop_back();
      auto a = std::make_unique<AugAssign>(l, binop(op));
      a->target = exprlist(s->exprlist(0));
      if (a->target->kind != ExprKind::Name && a->target->kind != ExprKind::Subscript &&
          a->target->kind != ExprKind::Attribute)
        error(a->target->loc, "'{}' is an illegal expression for augmented assignment", describe(*a->target));
      a->value = exprlist(s->exprlist(1));
      return a;
    }
    if (dynamic_cast<P::PassStmtContext*>(c)) return std::make_unique<Pass>(l);
    if (dynamic_cast<P::BreakStmtContext*>(c)) return std::make_unique<Break>(l);
    if (dynamic_cast<P::ContinueStmtContext*>(c)) return std::make_unique<Continue>(l);
    if (auto* s = dynamic_cast<P::ReturnStmtContext*>(c)) {
      auto r = std::make_unique<Return>(l);
      if (s->exprlist()) r->value = exprlist(s->exprlist());
      return r;
    }
    if (auto* s = dynamic_cast<P::ImportStmtContext*>(c)) {
      auto imp = std::make_unique<Import>(l);
      for (auto* d : s->dotted_as_name()) {
        Alias a{d->dotted_name()->getText(), nullptr, loc(d)};
        // `import a.b` binds `a`; `import a.b as c` binds c to a.b.
        std::string bound = d->NAME() ? d->NAME()->getText() : a.name.substr(0, a.name.find('.'));
        a.asname = std::make_unique<Name>(a.loc, bound);
        imp->names.push_back(std::move(a));
      }
      return imp;
    }
    if (auto* s = dynamic_cast<P::FromImportStmtContext*>(c)) {
      auto imp = std::make_unique<FromImport>(l);
      imp->module = s->dotted_name()->getText();
      for (auto* n : s->import_names()->import_as_name()) {
        auto names = n->NAME();
        Alias a{names[0]->getText(), nullptr, loc(n)};
        a.asname = std::make_unique<Name>(a.loc, names.back()->getText());
        imp->names.push_back(std::move(a));
      }
      return imp;
    }
    if (auto* s = dynamic_cast<P::RaiseStmtContext*>(c)) {
      auto r = std::make_unique<Raise>(l);
      if (!s->expr().empty()) r->exc = expr(s->expr(0));
      if (s->cause) r->cause = expr(s->cause);
      return r;
    }
    if (auto* s = dynamic_cast<P::DelStmtContext*>(c)) {
      auto d = std::make_unique<Delete>(l);
      ExprPtr targets = exprlist(s->exprlist());
      auto add = [&](ExprPtr& t) {
        if (t->kind != ExprKind::Name && t->kind != ExprKind::Subscript && t->kind != ExprKind::Attribute)
          error(t->loc, "cannot delete {}", describe(*t));
        d->targets.push_back(std::move(t));
      };
      if (targets->kind == ExprKind::TupleExpr)
        for (auto& t : static_cast<TupleExpr&>(*targets).elts) add(t);
      else
        add(targets);
      return d;
    }
    if (auto* s = dynamic_cast<P::ScopeStmtContext*>(c))
      error(l, "'{}' is not supported in thn; pass values in and return them", s->kw->getText());
    auto* s = static_cast<P::AssertStmtContext*>(c);
    auto a = std::make_unique<Assert>(l);
    a->test = expr(s->expr(0));
    if (s->expr().size() > 1) a->msg = expr(s->expr(1));
    return a;
  }

  static const char* describe(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Call: return "function call";
      case ExprKind::Constant: return "literal";
      case ExprKind::TupleExpr: return "tuple";
      case ExprKind::ListExpr: return "list";
      case ExprKind::ListComp: return "list comprehension";
      case ExprKind::Compare: return "comparison";
      case ExprKind::BoolOp: case ExprKind::Not: case ExprKind::Unary: case ExprKind::Binary: return "expression";
      case ExprKind::IfExp: return "conditional expression";
      case ExprKind::Dict: return "dict literal";
      case ExprKind::Lambda: return "lambda";
      case ExprKind::FString: return "f-string expression";
      case ExprKind::Starred: return "starred";
      default: return "expression";
    }
  }

  void check_target(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Name: case ExprKind::Subscript: case ExprKind::Attribute: return;
      case ExprKind::TupleExpr: case ExprKind::ListExpr: {
        auto& elts = e.kind == ExprKind::TupleExpr ? static_cast<const TupleExpr&>(e).elts
                                                   : static_cast<const ListExpr&>(e).elts;
        bool starred = false;
        for (auto& x : elts) {
          if (x->kind == ExprKind::Starred) {
            if (starred) error(x->loc, "multiple starred expressions in assignment");
            starred = true;
            check_target(*static_cast<const Starred&>(*x).value);
          } else {
            check_target(*x);
          }
        }
        return;
      }
      default: error(e.loc, "cannot assign to {}", describe(e));
    }
  }

  ExprPtr targetlist(P::TargetlistContext* c) {
    auto ts = c->target();
    if (ts.size() == 1 && !c->trailing) return target(ts[0]);
    auto t = std::make_unique<TupleExpr>(loc(c));
    for (auto* x : ts) t->elts.push_back(target(x));
    return t;
  }
  ExprPtr target(P::TargetContext* c) {
    if (c->NAME()) return std::make_unique<Name>(loc(c), c->NAME()->getText());
    return targetlist(c->targetlist());
  }

  // ---- expressions ----
  // A lone expression, or a tuple of (possibly starred) items.
  ExprPtr exprlist(P::ExprlistContext* c) {
    const std::vector<P::Star_exprContext*> es = c->star_expr();
    if (es.size() == 1 && !c->trailing) {
      if (es[0]->star) error(loc(es[0]), "can't use starred expression here");
      return expr(es[0]->expr());
    }
    auto t = std::make_unique<TupleExpr>(loc(c));
    for (auto* e : es) t->elts.push_back(star_expr(e));
    return t;
  }
  ExprPtr star_expr(P::Star_exprContext* c) {
    ExprPtr e = expr(c->expr());
    if (!c->star) return e;
    return std::make_unique<Starred>(loc(c), std::move(e));
  }

  static BinOp binop(const std::string& op) {
    static const std::pair<const char*, BinOp> table[] = {
        {"+", BinOp::Add}, {"-", BinOp::Sub}, {"*", BinOp::Mul}, {"/", BinOp::Div}, {"//", BinOp::FloorDiv},
        {"%", BinOp::Mod}, {"**", BinOp::Pow}, {"@", BinOp::MatMul}, {"<<", BinOp::LShift},
        {">>", BinOp::RShift}, {"&", BinOp::BitAnd}, {"|", BinOp::BitOr}, {"^", BinOp::BitXor}};
    for (auto& [s, o] : table)
      if (op == s) return o;
    throw std::logic_error("unknown operator " + op);
  }
  static CmpOp cmpop(const std::string& op) {
    static const std::pair<const char*, CmpOp> table[] = {
        {"<", CmpOp::Lt}, {">", CmpOp::Gt}, {"==", CmpOp::Eq}, {">=", CmpOp::Ge}, {"<=", CmpOp::Le},
        {"!=", CmpOp::Ne}, {"in", CmpOp::In}, {"notin", CmpOp::NotIn}, {"is", CmpOp::Is}, {"isnot", CmpOp::IsNot}};
    for (auto& [s, o] : table)
      if (op == s) return o;
    throw std::logic_error("unknown comparison " + op);
  }

  ExprPtr expr(P::ExprContext* c) {
    Loc l = loc(c);
    if (auto* e = dynamic_cast<P::PrimaryExprContext*>(c)) {
      ExprPtr x = atom(e->atom());
      for (auto* t : e->trailer()) x = trailer(std::move(x), t);
      return x;
    }
    if (auto* e = dynamic_cast<P::BinaryExprContext*>(c))
      return std::make_unique<Binary>(loc(e->op), binop(e->op->getText()), expr(e->expr(0)), expr(e->expr(1)));
    if (auto* e = dynamic_cast<P::UnaryExprContext*>(c)) {
      char op = e->op->getText()[0];
      return std::make_unique<Unary>(l, op == '-' ? UnaryOp::Neg : op == '+' ? UnaryOp::Pos : UnaryOp::Invert,
                                     expr(e->expr()));
    }
    if (auto* e = dynamic_cast<P::CompareExprContext*>(c)) {
      ExprPtr lhs = expr(e->expr(0));
      std::unique_ptr<Compare> cmp;
      // a < b < c parses as (a < b) < c; an unparenthesized comparison on the left extends the chain.
      if (dynamic_cast<P::CompareExprContext*>(e->expr(0))) {
        cmp.reset(static_cast<Compare*>(lhs.release()));
      } else {
        cmp = std::make_unique<Compare>(l);
        cmp->first = std::move(lhs);
      }
      cmp->ops.push_back(cmpop(e->comp_op()->getText()));
      cmp->rest.push_back(expr(e->expr(1)));
      return cmp;
    }
    if (auto* e = dynamic_cast<P::NotExprContext*>(c)) return std::make_unique<Not>(l, expr(e->expr()));
    if (auto* e = dynamic_cast<P::BoolExprContext*>(c))
      return std::make_unique<BoolOp>(loc(e->op), e->op->getText() == "and", expr(e->expr(0)), expr(e->expr(1)));
    auto* e = static_cast<P::CondExprContext*>(c);
    auto node = std::make_unique<IfExp>(l);
    node->body = expr(e->expr(0));
    node->test = expr(e->expr(1));
    node->orelse = expr(e->expr(2));
    return node;
  }

  ExprPtr trailer(ExprPtr value, P::TrailerContext* c) {
    if (auto* t = dynamic_cast<P::AttrTrailerContext*>(c))
      return std::make_unique<Attribute>(loc(t->NAME()->getSymbol()), std::move(value), t->NAME()->getText());
    if (auto* t = dynamic_cast<P::IndexTrailerContext*>(c)) {
      auto s = std::make_unique<Subscript>(value->loc);
      s->value = std::move(value);
      for (auto* sub : t->subscript()) s->index.push_back(subscript(sub));
      s->tuple = s->index.size() > 1 || t->trailing;
      return s;
    }
    auto* t = static_cast<P::CallTrailerContext*>(c);
    auto call = std::make_unique<Call>(value->loc);
    call->func = std::move(value);
    if (auto* al = t->arglist()) {
      bool mapping_seen = false;
      for (auto* a : al->argument()) {
        Loc l = loc(a);
        if (a->comp_for()) error(l, "generator expressions are not supported in thn; use a list comprehension");
        if (a->NAME() || a->dstar) {
          std::string name = a->NAME() ? a->NAME()->getText() : "";
          for (auto& k : call->keywords)
            if (!name.empty() && k.name == name) error(l, "keyword argument repeated: {}", name);
          mapping_seen |= a->dstar != nullptr;
          call->keywords.push_back(Keyword{name, expr(a->expr()), l});
        } else if (a->star) {
          if (mapping_seen) error(l, "iterable argument unpacking follows keyword argument unpacking");
          call->args.push_back(std::make_unique<Starred>(l, expr(a->expr())));
        } else {
          if (mapping_seen) error(l, "positional argument follows keyword argument unpacking");
          if (!call->keywords.empty()) error(l, "positional argument follows keyword argument");
          call->args.push_back(expr(a->expr()));
        }
      }
    }
    return call;
  }

  ExprPtr subscript(P::SubscriptContext* c) {
    bool is_slice = false;
    for (auto* ch : c->children)
      if (ch->getText() == ":" && dynamic_cast<antlr4::tree::TerminalNode*>(ch)) is_slice = true;
    if (!is_slice) return expr(c->expr(0));
    auto s = std::make_unique<Slice>(loc(c));
    if (c->lower) s->lower = expr(c->lower);
    if (c->upper) s->upper = expr(c->upper);
    if (c->step) s->step = expr(c->step);
    return s;
  }

  std::vector<Comprehension> comp_for(P::Comp_forContext* c) {
    std::vector<Comprehension> gens;
    for (; c; c = c->comp_for()) {
      Comprehension g;
      g.target = targetlist(c->targetlist());
      auto es = c->expr();
      g.iter = expr(es[0]);
      for (size_t i = 1; i < es.size(); ++i) g.ifs.push_back(expr(es[i]));
      gens.push_back(std::move(g));
    }
    return gens;
  }

  ExprPtr atom(P::AtomContext* c) {
    Loc l = loc(c);
    if (dynamic_cast<P::NameAtomContext*>(c)) {
      if (const char* what = unsupported_keyword(c->getText())) error(l, "{}", what);
      return std::make_unique<Name>(l, c->getText());
    }
    if (auto* a = dynamic_cast<P::NumberAtomContext*>(c)) return number(l, a->getText());
    if (auto* a = dynamic_cast<P::StringAtomContext*>(c)) {
      return strings(l, a);
    }
    if (dynamic_cast<P::NoneAtomContext*>(c)) return std::make_unique<Constant>(l, Constant::Type::None);
    if (dynamic_cast<P::EllipsisAtomContext*>(c)) return std::make_unique<Constant>(l, Constant::Type::Ellipsis);
    if (dynamic_cast<P::TrueAtomContext*>(c) || dynamic_cast<P::FalseAtomContext*>(c)) {
      auto k = std::make_unique<Constant>(l, Constant::Type::Bool);
      k->b = dynamic_cast<P::TrueAtomContext*>(c) != nullptr;
      return k;
    }
    if (dynamic_cast<P::EmptyTupleAtomContext*>(c)) return std::make_unique<TupleExpr>(l);
    if (auto* a = dynamic_cast<P::ParenAtomContext*>(c)) {
      ExprPtr e = exprlist(a->exprlist());
      if (e->kind == ExprKind::TupleExpr) e->loc = l;
      return e;
    }
    if (dynamic_cast<P::EmptyListAtomContext*>(c)) return std::make_unique<ListExpr>(l);
    if (auto* a = dynamic_cast<P::ListAtomContext*>(c)) {
      auto list = std::make_unique<ListExpr>(l);
      for (auto* e : a->exprlist()->star_expr()) list->elts.push_back(star_expr(e));
      return list;
    }
    if (auto* a = dynamic_cast<P::ListCompAtomContext*>(c)) {
      auto comp = std::make_unique<ListComp>(l);
      comp->elt = expr(a->expr());
      comp->generators = comp_for(a->comp_for());
      return comp;
    }
    if (dynamic_cast<P::GeneratorAtomContext*>(c))
      error(l, "generator expressions are not supported in thn; use a list comprehension");
    if (dynamic_cast<P::EmptyDictAtomContext*>(c)) return std::make_unique<Dict>(l);
    if (auto* a = dynamic_cast<P::DictAtomContext*>(c)) {
      auto d = std::make_unique<Dict>(l);
      for (auto* item : a->dict_item()) {
        d->keys.push_back(item->key ? expr(item->key) : nullptr);
        d->values.push_back(expr(item->key ? item->value : item->expr(0)));
      }
      return d;
    }
    if (auto* a = dynamic_cast<P::DictCompAtomContext*>(c)) {
      auto comp = std::make_unique<ListComp>(l);
      comp->key = expr(a->key);
      comp->elt = expr(a->value);
      comp->generators = comp_for(a->comp_for());
      return comp;
    }
    if (dynamic_cast<P::SetAtomContext*>(c) || dynamic_cast<P::SetCompAtomContext*>(c))
      error(l, "sets are not supported in thn; use a dict or a list");
    auto* a = static_cast<P::LambdaAtomContext*>(c);
    auto lambda = std::make_unique<Lambda>(l);
    lambda->def = std::make_unique<FunctionDef>(l);
    lambda->def->name = "<lambda>";
    if (auto* pl = a->lambda_params()) params(*lambda->def, pl->lambda_param());
    auto ret = std::make_unique<Return>(loc(a->expr()));
    ret->value = expr(a->expr());
    lambda->def->body.push_back(std::move(ret));
    return lambda;
  }

  ExprPtr number(const Loc& l, std::string text) {
    std::erase(text, '_');
    bool hex = text.size() > 1 && text[0] == '0' && std::strchr("xXoObB", text[1]);  // 0x 0o 0b
    if (!hex && text.find_first_of(".eE") != std::string::npos) {
      auto k = std::make_unique<Constant>(l, Constant::Type::Float);
      k->f = std::strtod(text.c_str(), nullptr);
      return k;
    }
    auto k = std::make_unique<Constant>(l, Constant::Type::Int);
    int base = 10;
    const char* digits = text.c_str();
    if (hex) {
      char b = char(text[1] | 0x20);
      base = b == 'x' ? 16 : b == 'o' ? 8 : 2;
      digits += 2;
    } else if (text.size() > 1 && text[0] == '0' && text.find_first_not_of('0') != std::string::npos) {
      error(l, "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers");
    }
    errno = 0;
    unsigned long long v = std::strtoull(digits, nullptr, base);
    if (errno == ERANGE || v > uint64_t(INT64_MAX))
      fail_at(l, ErrorKind::OverflowError, "integer literal {} does not fit in a 64-bit int", text);
    k->i = int64_t(v);
    return k;
  }

  // Adjacent literals concatenate; with any f-string among them the result
  // is an FString of literal and field parts.
  ExprPtr strings(const Loc& l, P::StringAtomContext* a) {
    auto joined = std::make_unique<FString>(l);
    std::string text;
    bool any_f = false;
    for (auto* tok : a->STRING()) {
      const std::string token_text = tok->getText();  // (t views it)
      StringToken t = split_string_token(loc(tok->getSymbol()), token_text);
      if (!t.f) {
        text += t.raw ? std::string(t.body) : decode_escapes(t.body_loc, t.body);
        continue;
      }
      any_f = true;
      for (FSegment& seg : split_fstring(t)) {
        if (!seg.field) {
          text += seg.literal;
          continue;
        }
        literal_part(*joined, text);
        if (!seg.debug_text.empty()) {
          text = seg.debug_text;
          literal_part(*joined, text);
        }
        joined->parts.push_back(field(seg));
      }
    }
    if (!any_f) {
      auto k = std::make_unique<Constant>(l, Constant::Type::Str);
      k->s = std::move(text);
      return k;
    }
    literal_part(*joined, text);
    return joined;
  }
  static void literal_part(FString& f, std::string& text) {
    if (text.empty()) return;
    auto k = std::make_unique<Constant>(f.loc, Constant::Type::Str);
    k->s = std::move(text);
    text.clear();
    f.parts.push_back(std::move(k));
  }
  ExprPtr field(const FSegment& seg) {
    auto v = std::make_unique<FormattedValue>(seg.expr_loc);
    v->value = parse_fragment(src_, seg.expr, seg.expr_loc);
    v->conversion = seg.conversion;
    if (seg.has_spec) {
      auto spec = std::make_unique<FString>(seg.expr_loc);
      std::string text;
      for (const FSegment& s : seg.spec) {
        if (!s.field) {
          text += s.literal;
          continue;
        }
        literal_part(*spec, text);
        spec->parts.push_back(field(s));
      }
      literal_part(*spec, text);
      v->spec = std::move(spec);
    }
    return v;
  }
};

ast::ExprPtr parse_fragment(const Source& src, const std::string& text, const Loc& at) {
  antlr4::ANTLRInputStream input(text);
  ThnLexer lexer(&input);
  lexer.removeErrorListeners();
  std::vector<std::unique_ptr<antlr4::Token>> tokens;
  for (auto& t : lexer.getAllTokens()) {
    // Placed where the text sits in the file; line breaks are inside brackets.
    Loc l{&src, at.line + int(t->getLine()) - 1, int(t->getCharPositionInLine()) + (t->getLine() == 1 ? at.col : 0)};
    if (t->getType() == ThnLexer::NEWLINE) continue;
    if (t->getType() == ThnLexer::ERROR_CHAR || t->getType() == ThnLexer::UNTERMINATED_STRING)
      fail_at(l, ErrorKind::SyntaxError, "f-string: invalid syntax");
    auto kept = std::make_unique<antlr4::CommonToken>(t.get());
    kept->setLine(size_t(l.line));
    kept->setCharPositionInLine(size_t(l.col));
    tokens.push_back(std::move(kept));
  }
  auto eof = std::make_unique<antlr4::CommonToken>(antlr4::Token::EOF, "<EOF>");
  eof->setLine(size_t(at.line));
  eof->setCharPositionInLine(size_t(at.col + int(text.size())));
  tokens.push_back(std::move(eof));
  antlr4::ListTokenSource source(std::move(tokens));
  antlr4::CommonTokenStream stream(&source);
  P parser(&stream);
  parser.removeErrorListeners();
  ParseErrors errors(src);
  parser.addErrorListener(&errors);
  P::Eval_inputContext* tree = parser.eval_input();
  return Builder(src).fragment(tree);
}

}  // namespace

std::unique_ptr<ast::Module> parse(std::shared_ptr<const Source> src) {
  std::vector<std::unique_ptr<antlr4::Token>> tokens = tokenize(*src);
  // Two-stage parse: the fast SLL mode, and the full LL mode (which reports
  // errors precisely) only when SLL fails.
  auto run = [&](bool sll) {
    std::vector<std::unique_ptr<antlr4::Token>> copy;
    for (auto& t : tokens) copy.push_back(std::make_unique<antlr4::CommonToken>(t.get()));
    antlr4::ListTokenSource source(std::move(copy));
    antlr4::CommonTokenStream stream(&source);
    P parser(&stream);
    parser.removeErrorListeners();
    ParseErrors errors(*src);
    if (sll) {
      parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::SLL);
      parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
    } else {
      parser.addErrorListener(&errors);
    }
    auto module = std::make_unique<ast::Module>();
    module->source = src;
    module->body = Builder(*src).file(parser.file_input());
    return module;
  };
  try {
    return run(true);
  } catch (antlr4::ParseCancellationException&) {
    return run(false);
  }
}

}  // namespace thn
