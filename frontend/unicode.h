#pragma once
// Unicode for str: code points of UTF-8 text, and the character properties
// and case mappings of Python's str methods (generated from CPython's own by
// scripts/unicode-tables into unicode_data.inc).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace thn {

// The offset of s's first byte that is not valid UTF-8 (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF), or npos; `why`
// then says what it is: "invalid start byte", "invalid continuation byte"
// or "unexpected end of data" (CPython's words).
size_t invalid_utf8(std::string_view s, const char** why);
// The byte offset of each character of s, then s.size().
std::vector<size_t> char_offsets(std::string_view s);
// The number of characters (code points) of s.
size_t char_count(std::string_view s);
// Whether s is ASCII only (a byte is then a character).
bool is_ascii(std::string_view s);
// The code point at s[i] (a character's first byte), and i moved past it.
char32_t next_char(std::string_view s, size_t& i);
void append_char(std::string& out, char32_t c);

// Python's str.isalpha, isdecimal, isdigit, isnumeric, isspace and
// isprintable of one character.
bool char_is_alpha(char32_t c);
bool char_is_decimal(char32_t c);
bool char_is_digit(char32_t c);
bool char_is_numeric(char32_t c);
bool char_is_space(char32_t c);
bool char_is_printable(char32_t c);

// Python's str.upper() and str.lower() (full case mappings; lower() maps a
// final capital sigma to ς).
std::string to_upper(std::string_view s);
std::string to_lower(std::string_view s);

}  // namespace thn
