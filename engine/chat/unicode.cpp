#include "unicode.h"

#include "cairn/utf8.h"

namespace cairn::chat::unicode {

std::u32string decode(std::string_view s) { return text::codePoints(s); }

void append(std::string& out, char32_t cp) { text::appendUtf8(out, uint32_t(cp)); }

std::string encode(std::u32string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char32_t c : text) append(out, c);
    return out;
}

size_t length(std::string_view s) { return text::utf8Length(s); }

bool isSpace(char32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
        (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool isDigit(char32_t c) { return c >= '0' && c <= '9'; }

// Case mapping for the scripts chat templates meet in roles and keywords:
// ASCII, Latin-1, Latin Extended-A (pairs), Greek and Cyrillic basic blocks.
char32_t toUpper(char32_t c) {
    if (c >= 'a' && c <= 'z') return c - 32;
    if (c < 0x80) return c;
    if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
    if (c == 0xFF) return 0x178;
    if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 && c != 0x17F) {
        bool oddLower = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
        if (oddLower ? (c % 2 == 0) : (c % 2 == 1)) return c - 1;
        return c;
    }
    if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
    if (c == 0x3C2) return 0x3A3;
    if (c >= 0x430 && c <= 0x44F) return c - 32;
    if (c >= 0x450 && c <= 0x45F) return c - 80;
    return c;
}

char32_t toLower(char32_t c) {
    if (c >= 'A' && c <= 'Z') return c + 32;
    if (c < 0x80) return c;
    if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
    if (c == 0x178) return 0xFF;
    if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 && c != 0x17F) {
        bool oddLower = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
        if (oddLower ? (c % 2 == 1) : (c % 2 == 0)) return c + 1;
        return c;
    }
    if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
    if (c >= 0x410 && c <= 0x42F) return c + 32;
    if (c >= 0x400 && c <= 0x40F) return c + 80;
    return c;
}

bool isUpper(char32_t c) { return toLower(c) != c; }
bool isLower(char32_t c) { return toUpper(c) != c || c == 0xDF; }

bool isAlpha(char32_t c) {
    if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (c == 0xAA || c == 0xB5 || c == 0xBA) return true;
    if (c >= 0xC0 && c <= 0x24F) return c != 0xD7 && c != 0xF7;
    if (isUpper(c) || isLower(c)) return true;
    // Most other non-punctuation code points above Latin are letters in practice (CJK, kana, ...).
    if (c >= 0x2000 && c <= 0x2BFF) return false;
    if (c >= 0x3000 && c <= 0x303F) return false;
    if (c >= 0xFF00 && c <= 0xFF20) return false;
    return c >= 0x370 && !isSpace(c);
}

std::string upper(std::string_view s) {
    std::string out;
    for (char32_t c : decode(s)) {
        if (c == 0xDF) {
            out += "SS";
            continue;
        }
        append(out, toUpper(c));
    }
    return out;
}

std::string lower(std::string_view s) {
    std::string out;
    for (char32_t c : decode(s)) append(out, toLower(c));
    return out;
}

std::string title(std::string_view s) {
    std::string out;
    bool prevCased = false;
    for (char32_t c : decode(s)) {
        bool cased = isUpper(c) || isLower(c);
        append(out, prevCased ? toLower(c) : toUpper(c));
        prevCased = cased || (prevCased && isAlpha(c));
        if (!isAlpha(c) && !cased) prevCased = false;
    }
    return out;
}

std::string capitalize(std::string_view s) {
    std::string out;
    bool first = true;
    for (char32_t c : decode(s)) {
        append(out, first ? toUpper(c) : toLower(c));
        first = false;
    }
    return out;
}

}  // namespace cairn::chat::unicode
