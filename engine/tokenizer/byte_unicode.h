// GPT-2's reversible byte <-> printable code point mapping used by byte-level BPE
// vocabularies (space -> U+0120 'Ġ', newline -> U+010A 'Ċ', ...).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace cairn::tokenizer {

class ByteUnicode {
public:
    static const ByteUnicode& instance();

    // UTF-8 of the code point standing for `byte`.
    const std::string& encode(uint8_t byte) const { return encoded_[byte]; }
    // The byte a code point stands for, or -1.
    int byteOf(uint32_t codepoint) const { return codepoint < decoded_.size() ? decoded_[codepoint] : -1; }
    // Byte-level vocabulary text -> bytes; code points outside the mapping are kept as UTF-8.
    std::string decodeText(std::string_view text) const;

private:
    ByteUnicode();
    std::array<std::string, 256> encoded_;
    std::array<int16_t, 324> decoded_{};  // every mapped code point is < 324
};

}  // namespace cairn::tokenizer
