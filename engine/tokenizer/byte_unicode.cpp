#include "byte_unicode.h"

#include "cairn/utf8.h"

namespace cairn::tokenizer {

ByteUnicode::ByteUnicode() {
    decoded_.fill(-1);
    // Printable Latin-1 bytes stand for themselves; the rest take 256, 257, ... in byte order.
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
        bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        uint32_t cp = printable ? uint32_t(b) : next++;
        text::appendUtf8(encoded_[size_t(b)], cp);
        decoded_[cp] = int16_t(b);
    }
}

const ByteUnicode& ByteUnicode::instance() {
    static const ByteUnicode table;
    return table;
}

std::string ByteUnicode::decodeText(std::string_view text) const {
    std::string out;
    out.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) {
        size_t start = pos;
        int32_t cp = text::decodeUtf8(text, pos);
        if (cp < 0) {  // not UTF-8: keep the byte
            out += text[pos++];
            continue;
        }
        int b = byteOf(uint32_t(cp));
        if (b >= 0) out += char(b);
        else out.append(text.substr(start, pos - start));
    }
    return out;
}

}  // namespace cairn::tokenizer
