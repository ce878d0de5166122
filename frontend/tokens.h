#pragma once
// Lexing: the ANTLR lexer's tokens, filtered into the stream the parser reads.
// Line breaks inside brackets and blank lines are dropped; indentation
// changes become INDENT / DEDENT. Tabs in indentation, unexpected indents,
// unterminated strings and unbalanced brackets are located SyntaxErrors.
#include <memory>
#include <vector>

#include <Token.h>

#include "frontend/source.h"

namespace thn {

std::vector<std::unique_ptr<antlr4::Token>> tokenize(const Source& src);

}  // namespace thn
