// Small UTF-8 helpers for the tokenizers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cairn::tokenizer {

void appendUtf8(std::string& out, uint32_t codepoint);

// Decodes the well-formed character at `pos` (no overlongs, surrogates or values
// past U+10FFFF) and advances `pos`; returns -1 and leaves `pos` alone if there is none.
int32_t decodeUtf8(std::string_view s, size_t& pos);

// `s` with every byte that does not start a well-formed character replaced by U+FFFD
// (as llama.cpp does before pre-tokenizing). Returns true and fills `out` only when
// something had to be replaced.
bool replaceInvalidUtf8(std::string_view s, std::string& out);

// Length of the longest prefix of `s` that does not end inside a character: a
// trailing incomplete (but so far well-formed) character is left out; bytes that can
// never become a character are included.
size_t utf8SafePrefix(std::string_view s);

} // namespace cairn::tokenizer
