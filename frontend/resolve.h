#pragma once
// Scope resolution: annotates every Name with where it lives, Python's way.
// A name bound anywhere in a function body (assignment, for target, def,
// import, parameter) is local to it; comprehension targets get their own
// slots and do not leak; other names are read from enclosing functions or,
// failing that, from the module globals and builtins. Each FunctionDef gets
// its frame layout (`locals`: parameters first).
#include "frontend/ast.h"

namespace thn {

void resolve(ast::Module& m);

}  // namespace thn
