#include "frontend/tokens.h"

#include <algorithm>

#include <CommonToken.h>
#include <ANTLRInputStream.h>

#include "ThnLexer.h"
#include "ThnParser.h"
#include "frontend/unicode.h"

namespace thn {

namespace {

using thn_grammar::ThnLexer;

Loc loc_of(const Source& src, const antlr4::Token& t) {
  return Loc{&src, int(t.getLine()), int(t.getCharPositionInLine())};
}

std::unique_ptr<antlr4::CommonToken> make_token(size_t type, const antlr4::Token& at, std::string text = "") {
  auto t = std::make_unique<antlr4::CommonToken>(type, text);
  t->setLine(at.getLine());
  t->setCharPositionInLine(at.getCharPositionInLine());
  t->setStartIndex(at.getStartIndex());
  t->setStopIndex(at.getStartIndex() - 1);
  return t;
}

// Reports the first lexer error as a SyntaxError (ANTLR's console output is never shown).
class LexErrors : public antlr4::BaseErrorListener {
 public:
  explicit LexErrors(const Source& s) : src_(s) {}
  void syntaxError(antlr4::Recognizer*, antlr4::Token*, size_t line, size_t col, const std::string&,
                   std::exception_ptr) override {
    fail_at(Loc{&src_, int(line), int(col)}, ErrorKind::SyntaxError, "invalid syntax");
  }

 private:
  const Source& src_;
};

// ANTLR's input stream needs valid UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF); report the first bad byte as CPython
// does.
void check_utf8(const Source& src) {
  const char* why = nullptr;
  const size_t i = invalid_utf8(src.text, &why);
  if (i == std::string_view::npos) return;
  const size_t newline = i == 0 ? std::string::npos : src.text.rfind('\n', i - 1);
  const int line = 1 + int(std::count(src.text.begin(), src.text.begin() + std::ptrdiff_t(i), '\n'));
  fail_at(Loc{&src, line, int(newline == std::string::npos ? i : i - newline - 1)}, ErrorKind::SyntaxError,
          "(unicode error) 'utf-8' codec can't decode byte 0x{:02x} in position {}: {}",
          static_cast<unsigned char>(src.text[i]), i, why);
}

char closing_of(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

}  // namespace

std::vector<std::unique_ptr<antlr4::Token>> tokenize(const Source& src) {
  check_utf8(src);
  antlr4::ANTLRInputStream input(src.text);
  ThnLexer lexer(&input);
  LexErrors errors(src);
  lexer.removeErrorListeners();
  lexer.addErrorListener(&errors);
  std::vector<std::unique_ptr<antlr4::Token>> raw = lexer.getAllTokens();

  std::vector<std::unique_ptr<antlr4::Token>> out;
  std::vector<int> indents{0};
  struct Open {
    char c;
    Loc loc;
  };
  std::vector<Open> brackets;
  bool first_line = true;
  bool at_line_start = true;  // the next significant token starts a logical line
  bool block_expected = false;  // the previous logical line ended with ':'
  int pending_indent = 0;
  bool pending_tab = false;
  Loc pending_loc;

  auto indent_to = [&](const antlr4::Token& at) {
    Loc loc = loc_of(src, at);
    if (pending_tab) fail_at(pending_loc, ErrorKind::TabError, "tab character in indentation; thn indents with spaces");
    if (pending_indent > indents.back()) {
      // An unexpected indent is left to the parser, which reports it as such
      // unless the line before already was an error (a missing ':').
      indents.push_back(pending_indent);
      out.push_back(make_token(thn_grammar::ThnParser::INDENT, at));
    } else {
      if (block_expected) fail_at(loc, ErrorKind::IndentationError, "expected an indented block");
      while (pending_indent < indents.back()) {
        indents.pop_back();
        out.push_back(make_token(thn_grammar::ThnParser::DEDENT, at));
      }
      if (pending_indent != indents.back())
        fail_at(loc, ErrorKind::IndentationError, "unindent does not match any outer indentation level");
    }
    block_expected = false;
  };

  size_t last_type = 0;
  for (size_t i = 0; i < raw.size(); ++i) {
    antlr4::Token& t = *raw[i];
    size_t type = t.getType();
    if (type == ThnLexer::NEWLINE) {
      if (!brackets.empty()) continue;  // implicit line joining
      if (!at_line_start) {
        out.push_back(make_token(ThnLexer::NEWLINE, t, "\n"));
        block_expected = last_type == size_t(-1);
      }
      at_line_start = true;
      first_line = false;
      // The indentation of the next line: the whitespace after the line break.
      std::string text = t.getText();
      size_t k = text.find_first_of(" \t\f");
      std::string ws = k == std::string::npos ? "" : text.substr(k);
      pending_indent = int(ws.size());
      pending_tab = ws.find('\t') != std::string::npos;
      pending_loc = Loc{&src, int(t.getLine()) + 1, 0};
      continue;
    }
    Loc loc = loc_of(src, t);
    if (type == ThnLexer::UNTERMINATED_STRING)
      fail_at(loc, ErrorKind::SyntaxError, "unterminated string literal (detected at line {})", t.getLine());
    if (type == ThnLexer::ERROR_CHAR) {
      std::string text = t.getText();
      unsigned char c = text.empty() ? 0 : static_cast<unsigned char>(text[0]);
      if (c == 0) fail_at(loc, ErrorKind::SyntaxError, "source code cannot contain null bytes");
      if (c == '\\') fail_at(loc, ErrorKind::SyntaxError, "unexpected character after line continuation character");
      if (c == '$' || c == '?' || c == '`' || c == '!')
        fail_at(loc, ErrorKind::SyntaxError, "invalid syntax");
      fail_at(loc, ErrorKind::SyntaxError, "invalid character '{}'", text);
    }
    if (at_line_start) {
      if (first_line) {  // no line break came before: the indentation is the column
        pending_indent = int(t.getCharPositionInLine());
        pending_loc = Loc{&src, loc.line, 0};
        pending_tab = src.line(loc.line).substr(0, size_t(pending_indent)).find('\t') != std::string_view::npos;
      }
      indent_to(t);
      at_line_start = false;
    }
    std::string text = t.getText();
    if (text.size() == 1 && (text[0] == '(' || text[0] == '[' || text[0] == '{')) {
      brackets.push_back({text[0], loc});
      if (brackets.size() > 200) fail_at(loc, ErrorKind::SyntaxError, "too many nested parentheses");
    } else if (text.size() == 1 && (text[0] == ')' || text[0] == ']' || text[0] == '}')) {
      if (brackets.empty()) fail_at(loc, ErrorKind::SyntaxError, "unmatched '{}'", text);
      if (closing_of(brackets.back().c) != text[0])
        fail_at(loc, ErrorKind::SyntaxError, "closing parenthesis '{}' does not match opening parenthesis '{}'",
                text, brackets.back().c);
      brackets.pop_back();
    }
    // A ':' that ends a logical line opens a block; remember it with a marker type.
    last_type = (text == ":" && brackets.empty()) ? size_t(-1) : type;
    // Detached from the lexer's input stream, which dies with this function.
    auto kept = make_token(type, t, text);
    kept->setStopIndex(t.getStopIndex());
    out.push_back(std::move(kept));
  }
  if (!brackets.empty())
    fail_at(brackets.back().loc, ErrorKind::SyntaxError, "'{}' was never closed", brackets.back().c);

  // The end of the file closes the last line and every open block.
  antlr4::CommonToken eof_at(antlr4::Token::EOF);
  eof_at.setLine(src.lines.size());
  eof_at.setCharPositionInLine(0);
  eof_at.setStartIndex(src.text.size());
  if (!at_line_start) {
    out.push_back(make_token(ThnLexer::NEWLINE, eof_at, "\n"));
    block_expected = last_type == size_t(-1);
  }
  if (block_expected)
    fail_at(Loc{&src, int(src.lines.size()), 0}, ErrorKind::IndentationError, "expected an indented block");
  for (size_t k = 1; k < indents.size(); ++k) out.push_back(make_token(thn_grammar::ThnParser::DEDENT, eof_at));
  out.push_back(make_token(antlr4::Token::EOF, eof_at, "<EOF>"));
  return out;
}

}  // namespace thn
