#pragma once
// The AST of a thn module. Nodes own their children; every node carries the
// location of its first token. Name nodes are annotated by frontend/resolve
// with where the name lives (a function slot, an enclosing function's slot, or
// the module globals), so the interpreter never looks locals up by string.
#include <memory>
#include <string>
#include <vector>

#include "frontend/source.h"

namespace thn::ast {

// ---- expressions ----
#define THN_EXPR_KINDS(X) \
  X(Name) X(Constant) X(TupleExpr) X(ListExpr) X(ListComp) X(Call) X(Attribute) X(Subscript) X(Slice) \
  X(Binary) X(Unary) X(Not) X(BoolOp) X(Compare) X(IfExp) X(Dict) X(Lambda) X(FString) X(FormattedValue) \
  X(Starred)

enum class ExprKind {
#define THN_X(k) k,
  THN_EXPR_KINDS(THN_X)
#undef THN_X
};

struct Expr {
  ExprKind kind;
  Loc loc;
  Expr(ExprKind k, Loc l) : kind(k), loc(l) {}
  virtual ~Expr() = default;
};
using ExprPtr = std::unique_ptr<Expr>;

// Class: a name bound in a class body, which lives in the class's namespace
// (read from there, else from the globals, as Python does).
enum class Scope : uint8_t { Unresolved, Local, Enclosing, Global, Class };
struct Name : Expr {
  std::string id;
  Scope scope = Scope::Unresolved;
  int slot = -1;   // Local/Enclosing: index in the function's frame
  int depth = 0;   // Enclosing: how many frames out
  Name(Loc l, std::string n) : Expr(ExprKind::Name, l), id(std::move(n)) {}
};

struct Constant : Expr {
  enum class Type { None, Bool, Int, Float, Str, Ellipsis } type;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  Constant(Loc l, Type t) : Expr(ExprKind::Constant, l), type(t) {}
};

struct TupleExpr : Expr {
  std::vector<ExprPtr> elts;
  explicit TupleExpr(Loc l) : Expr(ExprKind::TupleExpr, l) {}
};
struct ListExpr : Expr {
  std::vector<ExprPtr> elts;
  explicit ListExpr(Loc l) : Expr(ExprKind::ListExpr, l) {}
};

// `for target in iter if cond...`; nested clauses run left to right.
struct Comprehension {
  ExprPtr target;  // Name or TupleExpr of names
  ExprPtr iter;
  std::vector<ExprPtr> ifs;
};
// A list comprehension, or a dict comprehension when `key` is set.
struct ListComp : Expr {
  ExprPtr key;
  ExprPtr elt;
  std::vector<Comprehension> generators;
  explicit ListComp(Loc l) : Expr(ExprKind::ListComp, l) {}
};

struct Keyword {
  std::string name;  // empty for `**mapping`
  ExprPtr value;
  Loc loc;
};
struct Call : Expr {
  ExprPtr func;
  std::vector<ExprPtr> args;  // a Starred one unpacks an iterable
  std::vector<Keyword> keywords;
  explicit Call(Loc l) : Expr(ExprKind::Call, l) {}
};

struct Attribute : Expr {
  ExprPtr value;
  std::string attr;
  Attribute(Loc l, ExprPtr v, std::string a) : Expr(ExprKind::Attribute, l), value(std::move(v)), attr(std::move(a)) {}
};

// x[i], x[a:b], x[i, ..., None]: `index` holds one Expr per subscript (a
// Slice node for `a:b:c`); `tuple` is set when the subscripts were written
// with a comma, so `x[i,]` differs from `x[i]` as in Python.
struct Subscript : Expr {
  ExprPtr value;
  std::vector<ExprPtr> index;
  bool tuple = false;
  explicit Subscript(Loc l) : Expr(ExprKind::Subscript, l) {}
};
struct Slice : Expr {
  ExprPtr lower, upper, step;  // each may be null
  explicit Slice(Loc l) : Expr(ExprKind::Slice, l) {}
};

enum class BinOp : uint8_t { Add, Sub, Mul, Div, FloorDiv, Mod, Pow, MatMul, LShift, RShift, BitAnd, BitOr, BitXor };
const char* binop_symbol(BinOp op);
struct Binary : Expr {
  BinOp op;
  ExprPtr lhs, rhs;
  Binary(Loc l, BinOp o, ExprPtr a, ExprPtr b) : Expr(ExprKind::Binary, l), op(o), lhs(std::move(a)), rhs(std::move(b)) {}
};

enum class UnaryOp : uint8_t { Neg, Pos, Invert };
struct Unary : Expr {
  UnaryOp op;
  ExprPtr operand;
  Unary(Loc l, UnaryOp o, ExprPtr e) : Expr(ExprKind::Unary, l), op(o), operand(std::move(e)) {}
};
struct Not : Expr {
  ExprPtr operand;
  Not(Loc l, ExprPtr e) : Expr(ExprKind::Not, l), operand(std::move(e)) {}
};
struct BoolOp : Expr {
  bool is_and;
  ExprPtr lhs, rhs;
  BoolOp(Loc l, bool a, ExprPtr x, ExprPtr y) : Expr(ExprKind::BoolOp, l), is_and(a), lhs(std::move(x)), rhs(std::move(y)) {}
};

enum class CmpOp : uint8_t { Lt, Gt, Eq, Ge, Le, Ne, In, NotIn, Is, IsNot };
const char* cmpop_symbol(CmpOp op);
// a < b <= c: one node, each operand evaluated once, as in Python.
struct Compare : Expr {
  ExprPtr first;
  std::vector<CmpOp> ops;
  std::vector<ExprPtr> rest;
  explicit Compare(Loc l) : Expr(ExprKind::Compare, l) {}
};
struct IfExp : Expr {
  ExprPtr test, body, orelse;
  explicit IfExp(Loc l) : Expr(ExprKind::IfExp, l) {}
};

// {k: v, **m}: a null key marks a `**m` whose value is the mapping.
struct Dict : Expr {
  std::vector<ExprPtr> keys, values;
  explicit Dict(Loc l) : Expr(ExprKind::Dict, l) {}
};
// `*x` in a call's arguments, a tuple or list display, or an assignment target.
struct Starred : Expr {
  ExprPtr value;
  Starred(Loc l, ExprPtr v) : Expr(ExprKind::Starred, l), value(std::move(v)) {}
};
struct FunctionDef;
// lambda params: body, as a FunctionDef named <lambda> whose body returns it.
struct Lambda : Expr {
  std::unique_ptr<FunctionDef> def;
  explicit Lambda(Loc l);
  ~Lambda() override;
};
// f"...": Constant strings and FormattedValues, in order.
struct FString : Expr {
  std::vector<ExprPtr> parts;
  explicit FString(Loc l) : Expr(ExprKind::FString, l) {}
};
// {value!conversion:spec}; conversion is 0, 's', 'r' or 'a'; spec an FString or null.
struct FormattedValue : Expr {
  ExprPtr value;
  char conversion = 0;
  ExprPtr spec;
  explicit FormattedValue(Loc l) : Expr(ExprKind::FormattedValue, l) {}
};

// ---- statements ----
#define THN_STMT_KINDS(X) \
  X(ExprStmt) X(Assign) X(AugAssign) X(If) X(While) X(For) X(Break) X(Continue) X(Pass) X(Return) \
  X(FunctionDef) X(Import) X(FromImport) X(Assert) X(Try) X(Raise) X(Delete) X(ClassDef) X(With)

enum class StmtKind {
#define THN_X(k) k,
  THN_STMT_KINDS(THN_X)
#undef THN_X
};

struct Stmt {
  StmtKind kind;
  Loc loc;
  Stmt(StmtKind k, Loc l) : kind(k), loc(l) {}
  virtual ~Stmt() = default;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct ExprStmt : Stmt {
  ExprPtr value;
  ExprStmt(Loc l, ExprPtr v) : Stmt(StmtKind::ExprStmt, l), value(std::move(v)) {}
};
// t1 = t2 = value; each target a Name, Subscript or Tuple/List of targets.
struct Assign : Stmt {
  std::vector<ExprPtr> targets;
  ExprPtr value;
  explicit Assign(Loc l) : Stmt(StmtKind::Assign, l) {}
};
struct AugAssign : Stmt {
  BinOp op;
  ExprPtr target;  // Name or Subscript
  ExprPtr value;
  AugAssign(Loc l, BinOp o) : Stmt(StmtKind::AugAssign, l), op(o) {}
};
struct If : Stmt {
  ExprPtr test;
  Body body, orelse;  // elif chains nest in orelse
  explicit If(Loc l) : Stmt(StmtKind::If, l) {}
};
struct While : Stmt {
  ExprPtr test;
  Body body, orelse;  // orelse: run when the loop ends without a break
  explicit While(Loc l) : Stmt(StmtKind::While, l) {}
};
struct For : Stmt {
  ExprPtr target;
  ExprPtr iter;
  Body body, orelse;  // orelse: run when the loop ends without a break
  explicit For(Loc l) : Stmt(StmtKind::For, l) {}
};
struct Break : Stmt {
  explicit Break(Loc l) : Stmt(StmtKind::Break, l) {}
};
struct Continue : Stmt {
  explicit Continue(Loc l) : Stmt(StmtKind::Continue, l) {}
};
struct Pass : Stmt {
  explicit Pass(Loc l) : Stmt(StmtKind::Pass, l) {}
};
struct Return : Stmt {
  ExprPtr value;  // may be null
  explicit Return(Loc l) : Stmt(StmtKind::Return, l) {}
};

struct Param {
  std::string name;
  ExprPtr default_value;  // may be null
  bool kwonly = false;
  bool star = false;   // *args: the extra positional arguments, as a tuple
  bool dstar = false;  // **kwargs: the extra keyword arguments, as a dict
  Loc loc;
};
struct FunctionDef : Stmt {
  std::string name;
  std::string qualname;  // Class.name for a method (argument errors name it so)
  std::vector<Param> params;
  std::vector<ExprPtr> decorators;
  Body body;
  // Filled by resolve: the frame layout (params first, then other locals),
  // whether an inner function reads this frame, and which locals it reads
  // (one flag per local: the rest are dropped when a call's frame outlives it).
  std::vector<std::string> locals;
  bool captured = false;
  // A function defined at module level that reads a module-level
  // comprehension's variable (`[(lambda: i)() for i in xs]`): it keeps the
  // module's frame, where those are.
  bool reads_module_frame = false;
  std::vector<char> captured_slots;
  // The local the function's own name binds to in its defining scope.
  std::unique_ptr<Name> binding;
  explicit FunctionDef(Loc l) : Stmt(StmtKind::FunctionDef, l) {}
};

struct Alias {
  std::string name;                // dotted for `import a.b`
  std::unique_ptr<Name> asname;    // the name bound
  Loc loc;
};
struct Import : Stmt {
  std::vector<Alias> names;
  explicit Import(Loc l) : Stmt(StmtKind::Import, l) {}
};
struct FromImport : Stmt {
  std::string module;
  std::vector<Alias> names;  // empty means `*`
  explicit FromImport(Loc l) : Stmt(StmtKind::FromImport, l) {}
};
struct Assert : Stmt {
  ExprPtr test, msg;
  explicit Assert(Loc l) : Stmt(StmtKind::Assert, l) {}
};

struct Handler {
  ExprPtr type;                // null: a bare `except:`
  std::unique_ptr<Name> name;  // `as name`, or null
  Body body;
  Loc loc;
};
struct Try : Stmt {
  Body body;
  std::vector<Handler> handlers;
  Body orelse, finalbody;
  explicit Try(Loc l) : Stmt(StmtKind::Try, l) {}
};
struct Raise : Stmt {
  ExprPtr exc, cause;  // both null: re-raise the exception being handled
  explicit Raise(Loc l) : Stmt(StmtKind::Raise, l) {}
};
struct Delete : Stmt {
  std::vector<ExprPtr> targets;  // Names, Subscripts, Attributes
  explicit Delete(Loc l) : Stmt(StmtKind::Delete, l) {}
};
// `with no_grad():` / `with enable_grad():` (the only context managers).
struct With : Stmt {
  std::vector<ExprPtr> items;
  Body body;
  explicit With(Loc l) : Stmt(StmtKind::With, l) {}
};
// The body runs once in its own frame (slots for comprehension variables
// only); the names it binds become the class's attributes.
struct ClassDef : Stmt {
  std::string name;
  ExprPtr base;  // may be null
  std::vector<ExprPtr> decorators;
  Body body;
  std::vector<std::string> locals;
  std::unique_ptr<Name> binding;
  explicit ClassDef(Loc l) : Stmt(StmtKind::ClassDef, l) {}
};

struct Module {
  std::shared_ptr<const Source> source;
  Body body;
  std::vector<std::string> locals;  // slots of module-level comprehension variables
};

// The tree, one node per line indented by depth, with each node's line:col
// and, once resolved, where each name lives (`thn run --emit=ast`).
std::string print_ast(const Module& m);

}  // namespace thn::ast
