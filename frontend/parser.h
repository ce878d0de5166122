#pragma once
// Source text -> AST. Syntax errors are LocatedErrors (SyntaxError,
// IndentationError, TabError); ANTLR's own console output is never shown.
#include <memory>

#include "frontend/ast.h"

namespace thn {

std::unique_ptr<ast::Module> parse(std::shared_ptr<const Source> src);

}  // namespace thn
