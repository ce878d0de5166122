#include "frontend/parser.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <BailErrorStrategy.h>
#include <CommonTokenStream.h>
#include <ListTokenSource.h>
#include <atn/ParserATNSimulator.h>
#include <Exceptions.h>

#include "ThnLexer.h"
#include "ThnParser.h"
#include "frontend/tokens.h"

namespace thn {

namespace {

using namespace ast;
using P = thn_grammar::ThnParser;
using thn_grammar::ThnLexer;

// Reports the first syntax error of the full (LL) parse as a SyntaxError.
class ParseErrors : public antlr4::BaseErrorListener {
 public:
  explicit ParseErrors(const Source& s) : src_(s) {}
  void syntaxError(antlr4::Recognizer* r, antlr4::Token* tok, size_t line, size_t col, const std::string&,
                   std::exception_ptr) override {
    Loc loc{&src_, int(line), int(col)};
    if (tok && tok->getType() == P::INDENT) fail_at(loc, ErrorKind::IndentationError, "unexpected indent");
    auto* parser = static_cast<antlr4::Parser*>(r);
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

class Builder {
 public:
  explicit Builder(const Source& s) : src_(s) {}

  Body file(P::File_inputContext* c) {
    Body body;
    for (auto* s : c->stmt()) stmt(s, body);
    return body;
  }

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
      w->body = block(x->block());
      return out.push_back(std::move(w));
    }
    if (auto* x = cs->for_stmt()) {
      auto f = std::make_unique<For>(loc(x));
      f->target = targetlist(x->targetlist());
      f->iter = exprlist(x->exprlist());
      f->body = block(x->block());
      return out.push_back(std::move(f));
    }
    if (auto* x = cs->funcdef()) return out.push_back(funcdef(x, {}));
    auto* d = cs->decorated();
    std::vector<ExprPtr> decorators;
    for (auto* dec : d->decorator()) decorators.push_back(expr(dec->expr()));
    out.push_back(funcdef(d->funcdef(), std::move(decorators)));
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
    bool kwonly = false, seen_default = false, star_last = false;
    if (auto* pl = c->paramlist()) {
      for (auto* p : pl->param()) {
        if (p->star) {
          if (kwonly) error(loc(p), "* argument may appear only once");
          kwonly = star_last = true;
          continue;
        }
        star_last = false;
        Param param;
        param.name = p->NAME()->getText();
        param.loc = loc(p);
        param.kwonly = kwonly;
        if (p->expr()) param.default_value = expr(p->expr());
        if (!kwonly && !param.default_value && seen_default)
          error(param.loc, "parameter without a default follows parameter with a default");
        seen_default |= param.default_value && !kwonly;
        for (auto& q : f->params)
          if (q.name == param.name) error(param.loc, "duplicate argument '{}' in function definition", param.name);
        f->params.push_back(std::move(param));
      }
    }
    if (star_last) error(loc(c), "named arguments must follow bare *");
    f->body = block(c->block());
    return f;
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
      default: return "expression";
    }
  }

  void check_target(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Name: case ExprKind::Subscript: case ExprKind::Attribute: return;
      case ExprKind::TupleExpr:
        for (auto& x : static_cast<const TupleExpr&>(e).elts) check_target(*x);
        return;
      case ExprKind::ListExpr:
        for (auto& x : static_cast<const ListExpr&>(e).elts) check_target(*x);
        return;
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
  ExprPtr exprlist(P::ExprlistContext* c) {
    auto es = c->expr();
    if (es.size() == 1 && !c->trailing) return expr(es[0]);
    auto t = std::make_unique<TupleExpr>(loc(c));
    for (auto* e : es) t->elts.push_back(expr(e));
    return t;
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
      for (auto* a : al->argument()) {
        Loc l = loc(a);
        if (a->star || a->dstar) error(l, "argument unpacking with * and ** is not supported in thn");
        if (a->comp_for()) error(l, "generator expressions are not supported in thn; use a list comprehension");
        if (a->NAME()) {
          std::string name = a->NAME()->getText();
          for (auto& k : call->keywords)
            if (k.name == name) error(l, "keyword argument repeated: {}", name);
          call->keywords.push_back(Keyword{name, expr(a->expr()), l});
        } else {
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
    if (dynamic_cast<P::NameAtomContext*>(c)) return std::make_unique<Name>(l, c->getText());
    if (auto* a = dynamic_cast<P::NumberAtomContext*>(c)) return number(l, a->getText());
    if (auto* a = dynamic_cast<P::StringAtomContext*>(c)) {
      auto k = std::make_unique<Constant>(l, Constant::Type::Str);
      for (auto* s : a->STRING()) k->s += string(loc(s->getSymbol()), s->getText());
      return k;
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
      for (auto* e : a->exprlist()->expr()) list->elts.push_back(expr(e));
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
    if (dynamic_cast<P::DictAtomContext*>(c)) error(l, "dict and set displays are not supported in thn v1");
    error(l, "lambda is not supported in thn v1; use def");
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

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) out += char(cp);
    else if (cp < 0x800) out += {char(0xC0 | (cp >> 6)), char(0x80 | (cp & 0x3F))};
    else if (cp < 0x10000) out += {char(0xE0 | (cp >> 12)), char(0x80 | ((cp >> 6) & 0x3F)), char(0x80 | (cp & 0x3F))};
    else
      out += {char(0xF0 | (cp >> 18)), char(0x80 | ((cp >> 12) & 0x3F)), char(0x80 | ((cp >> 6) & 0x3F)),
              char(0x80 | (cp & 0x3F))};
  }

  std::string string(const Loc& l, const std::string& tok) {
    bool raw = tok[0] == 'r' || tok[0] == 'R';
    std::string_view body(tok);
    if (raw) body.remove_prefix(1);
    size_t q = body.size() >= 6 && body.substr(0, 3) == std::string(3, body[0]) ? 3 : 1;
    body = body.substr(q, body.size() - 2 * q);
    if (raw) return std::string(body);
    std::string out;
    for (size_t i = 0; i < body.size(); ++i) {
      char ch = body[i];
      if (ch != '\\' || i + 1 == body.size()) {
        out += ch;
        continue;
      }
      char e = body[++i];
      auto hex = [&](size_t n) {
        std::string digits(body.substr(i + 1, std::min(n, body.size() - i - 1)));
        if (digits.size() < n || digits.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
          error(l, "(unicode error) truncated \\{} escape", e);
        uint32_t v = uint32_t(std::stoul(digits, nullptr, 16));
        if (v > 0x10FFFF) error(l, "(unicode error) illegal Unicode character");
        i += n;
        return v;
      };
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '0': out += '\0'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case '\n': break;  // line continuation inside the string
        case 'x': append_utf8(out, hex(2)); break;
        case 'u': append_utf8(out, hex(4)); break;
        case 'U': append_utf8(out, hex(8)); break;
        default: out += '\\'; out += e;
      }
    }
    return out;
  }
};

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
