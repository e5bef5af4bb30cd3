// The one UTF-8 codec, shared by the tokenizers, the chat template
// interpreter and the API server (request strings must be valid; generated
// bytes go into JSON with U+FFFD for what is not): well-formed means no overlongs, surrogates or values past
// U+10FFFF, and every byte that does not start a well-formed character is one
// U+FFFD (as llama.cpp does before pre-tokenizing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cairn::text {

void appendUtf8(std::string& out, uint32_t codepoint);

// Decodes the well-formed character at `pos` (no overlongs, surrogates or values
// past U+10FFFF) and advances `pos`; returns -1 and leaves `pos` alone if there is none.
int32_t decodeUtf8(std::string_view s, size_t& pos);

// Whether every character of `s` is well-formed.
bool isValidUtf8(std::string_view s);

// `s` with every byte that does not start a well-formed character replaced by U+FFFD.
// Returns true and fills `out` only when something had to be replaced.
bool replaceInvalidUtf8(std::string_view s, std::string& out);
// The same, always returning the text.
std::string validUtf8(std::string_view s);

// Code points of `s`, each invalid byte one U+FFFD.
std::u32string codePoints(std::string_view s);
// Characters of `s`, counted as codePoints counts them.
size_t utf8Length(std::string_view s);

// Length of the longest prefix of `s` that does not end inside a character: a
// trailing incomplete (but so far well-formed) character is left out; bytes that can
// never become a character are included.
size_t utf8SafePrefix(std::string_view s);

}  // namespace cairn::text
