#include "terminal_text.h"

#include <cstdio>

namespace cairn::cli {
namespace {

// The length of the UTF-8 sequence at `s` and its code point, or 0 when it is invalid.
size_t decodeOne(std::string_view s, char32_t& cp) {
    const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char c = b(0);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || n > s.size()) return 0;
    cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (size_t i = 1; i < n; ++i) {
        if ((b(i) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b(i) & 0x3F);
    }
    const char32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

bool hidden(char32_t cp) {
    return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) ||  // C0, DEL, C1 (0x9B is CSI)
        (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F;
}

}  // namespace

std::string terminalSafe(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    char buf[16];
    while (!text.empty()) {
        char32_t cp = 0;
        const size_t n = decodeOne(text, cp);
        if (n == 0) {
            std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned char>(text[0]));
            out += buf;
            text.remove_prefix(1);
            continue;
        }
        if (cp == '\\') out += "\\\\";
        else if (hidden(cp) && cp < 0x80) std::snprintf(buf, sizeof buf, "\\x%02X", unsigned(cp)), out += buf;
        else if (hidden(cp)) std::snprintf(buf, sizeof buf, "\\u{%04X}", unsigned(cp)), out += buf;
        else out.append(text.substr(0, n));
        text.remove_prefix(n);
    }
    return out;
}

}  // namespace cairn::cli
