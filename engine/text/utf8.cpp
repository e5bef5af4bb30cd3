#include "cairn/utf8.h"

namespace cairn::text {
namespace {

// Expected length of the character starting with `lead`, 0 if it cannot start one.
int sequenceLength(unsigned char lead) {
    if (lead < 0x80) return 1;
    if (lead >= 0xC2 && lead <= 0xDF) return 2;
    if (lead >= 0xE0 && lead <= 0xEF) return 3;
    if (lead >= 0xF0 && lead <= 0xF4) return 4;
    return 0;
}

// Whether `byte` may follow `lead` as the first continuation byte (rules out
// overlongs, surrogates and values past U+10FFFF).
bool validSecond(unsigned char lead, unsigned char byte) {
    if ((byte & 0xC0) != 0x80) return false;
    if (lead == 0xE0) return byte >= 0xA0;
    if (lead == 0xED) return byte <= 0x9F;
    if (lead == 0xF0) return byte >= 0x90;
    if (lead == 0xF4) return byte <= 0x8F;
    return true;
}

}  // namespace

void appendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

int32_t decodeUtf8(std::string_view s, size_t& pos) {
    if (pos >= s.size()) return -1;
    auto lead = static_cast<unsigned char>(s[pos]);
    int len = sequenceLength(lead);
    if (len == 0 || pos + size_t(len) > s.size()) return -1;
    if (len == 1) {
        ++pos;
        return lead;
    }
    if (!validSecond(lead, static_cast<unsigned char>(s[pos + 1]))) return -1;
    uint32_t cp = lead & (0xFF >> (len + 1));
    for (int i = 1; i < len; ++i) {
        auto b = static_cast<unsigned char>(s[pos + size_t(i)]);
        if ((b & 0xC0) != 0x80) return -1;
        cp = (cp << 6) | (b & 0x3F);
    }
    pos += size_t(len);
    return int32_t(cp);
}

bool isValidUtf8(std::string_view s) {
    size_t pos = 0;
    while (pos < s.size() && decodeUtf8(s, pos) >= 0) {}
    return pos == s.size();
}

bool replaceInvalidUtf8(std::string_view s, std::string& out) {
    size_t pos = 0;
    while (pos < s.size() && decodeUtf8(s, pos) >= 0) {}
    if (pos == s.size()) return false;
    out.assign(s.substr(0, pos));
    while (pos < s.size()) {
        size_t start = pos;
        if (decodeUtf8(s, pos) >= 0) {
            out.append(s.substr(start, pos - start));
        } else {
            out += "\xEF\xBF\xBD";
            ++pos;
        }
    }
    return true;
}

std::string validUtf8(std::string_view s) {
    std::string out;
    return replaceInvalidUtf8(s, out) ? out : std::string(s);
}

std::u32string codePoints(std::string_view s) {
    std::u32string out;
    out.reserve(s.size());
    for (size_t pos = 0; pos < s.size();) {
        int32_t cp = decodeUtf8(s, pos);
        if (cp >= 0) {
            out.push_back(char32_t(cp));
        } else {
            out.push_back(0xFFFD);
            ++pos;
        }
    }
    return out;
}

size_t utf8Length(std::string_view s) {
    size_t n = 0;
    for (size_t pos = 0; pos < s.size(); ++n)
        if (decodeUtf8(s, pos) < 0) ++pos;
    return n;
}

size_t utf8SafePrefix(std::string_view s) {
    // Only the last 3 bytes can belong to an unfinished character.
    size_t start = s.size() > 3 ? s.size() - 3 : 0;
    for (size_t i = start; i < s.size(); ++i) {
        auto lead = static_cast<unsigned char>(s[i]);
        int len = sequenceLength(lead);
        if (len <= 1 || i + size_t(len) <= s.size()) continue;  // ASCII, stray byte, or complete
        // Incomplete: hold it back only if the bytes so far could still form a character.
        bool plausible = true;
        for (size_t j = i + 1; j < s.size(); ++j) {
            auto b = static_cast<unsigned char>(s[j]);
            if (j == i + 1 ? !validSecond(lead, b) : (b & 0xC0) != 0x80) {
                plausible = false;
                break;
            }
        }
        if (plausible) return i;
    }
    return s.size();
}

}  // namespace cairn::text
