#pragma once
// String literals: prefixes, escape sequences, and the pieces of an f-string
// (its literal text and its replacement fields, whose expressions the parser
// parses on their own, located where they sit in the file).
#include <string>
#include <string_view>
#include <vector>

#include "frontend/source.h"

namespace thn {

// A STRING token taken apart: its prefix letters (lower-cased) and its body
// between the quotes, with where the body starts.
struct StringToken {
  bool raw = false, f = false;
  std::string_view body;
  Loc body_loc;
};
// Rejects prefixes thn has no meaning for (b"", ur"") as located SyntaxErrors.
StringToken split_string_token(const Loc& loc, std::string_view text);

// The value of a plain (not raw) string body: \n, \x41, \u00e9, ...
std::string decode_escapes(const Loc& loc, std::string_view body);

// One piece of an f-string: literal text, or a `{expr!c:spec}` field.
struct FSegment {
  bool field = false;
  std::string literal;          // !field: the text, escapes and {{ }} decoded
  std::string expr;             // field: the expression's source text
  Loc expr_loc;                 // where it starts
  char conversion = 0;          // 's', 'r', 'a' or 0
  std::string debug_text;       // f"{x = }": the text "x = " printed first
  bool has_spec = false;
  std::vector<FSegment> spec;   // the format spec: literals and nested fields
};
std::vector<FSegment> split_fstring(const StringToken& t);

}  // namespace thn
