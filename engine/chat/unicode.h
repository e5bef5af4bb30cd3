// UTF-8 helpers with Python `str` semantics: code-point indexing, Unicode whitespace, case.
// Decoding is the engine's one codec (cairn/utf8.h): an overlong, a surrogate or any
// other byte that does not start a well-formed character is one U+FFFD.
#pragma once

#include <string>
#include <string_view>

namespace cairn::chat::unicode {

std::u32string decode(std::string_view utf8);  // each invalid byte becomes U+FFFD
std::string encode(std::u32string_view text);
void append(std::string& out, char32_t cp);
size_t length(std::string_view utf8);  // code points, as decode() counts them

bool isSpace(char32_t c);  // Python str.isspace()
bool isAlpha(char32_t c);  // letters (approximate outside Latin/Greek/Cyrillic)
bool isDigit(char32_t c);
bool isUpper(char32_t c);
bool isLower(char32_t c);
char32_t toUpper(char32_t c);
char32_t toLower(char32_t c);

std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string title(std::string_view s);  // Python str.title()
std::string capitalize(std::string_view s);  // Python str.capitalize()

}  // namespace cairn::chat::unicode
