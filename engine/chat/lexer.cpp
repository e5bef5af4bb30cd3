#include "lexer.h"

#include "cairn/error.h"
#include "unicode.h"

#include <cctype>

namespace cairn::chat {
namespace {

bool isAsciiSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Python str.rstrip() / lstrip() without arguments (Unicode whitespace).
std::string rstripUnicode(const std::string& s) {
    auto cps = unicode::decode(s);
    size_t end = cps.size();
    while (end > 0 && unicode::isSpace(cps[end - 1])) --end;
    return unicode::encode(std::u32string_view(cps).substr(0, end));
}

size_t skipWhitespace(const std::string& s, size_t pos) {
    // \s* after a `-` closer: Unicode whitespace
    while (pos < s.size()) {
        if (isAsciiSpace(s[pos])) {
            ++pos;
            continue;
        }
        unsigned char c = static_cast<unsigned char>(s[pos]);
        if (c < 0x80) break;
        size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
        auto cps = unicode::decode(s.substr(pos, len));
        if (cps.size() == 1 && unicode::isSpace(cps[0])) pos += len;
        else break;
    }
    return pos;
}

class Lexer {
public:
    explicit Lexer(std::string src) : s_(std::move(src)) {}

    std::vector<Token> run() {
        bool lineStarting = true;
        while (pos_ < s_.size()) {
            size_t open = findOpener(pos_);
            std::string text = s_.substr(pos_, open - pos_);
            if (open == s_.size()) {
                emitText(text, pos_);
                break;
            }
            char kind = s_[open + 1];  // '{', '%', '#'
            char sign = open + 2 < s_.size() ? s_[open + 2] : '\0';
            if (sign == '-') {
                text = rstripUnicode(text);
            } else if (sign != '+' && kind != '{') {
                size_t lpos = text.rfind('\n');
                lpos = lpos == std::string::npos ? 0 : lpos + 1;
                if (lpos > 0 || lineStarting) {
                    bool onlySpace = lpos < text.size();
                    for (char32_t c : unicode::decode(std::string_view(text).substr(lpos)))
                        if (!unicode::isSpace(c) || c == '\n') onlySpace = false;
                    if (onlySpace) text.resize(lpos);
                }
            }
            emitText(text, pos_);
            size_t bodyStart = open + 2 + ((sign == '-' || sign == '+') ? 1 : 0);
            if (kind == '#') {
                pos_ = closeComment(open, bodyStart, lineStarting);
                continue;
            }
            if (kind == '%' && isRawBlock(bodyStart)) {
                pos_ = rawBlock(open, bodyStart, lineStarting);
                continue;
            }
            push(kind == '{' ? Token::Type::VariableBegin : Token::Type::BlockBegin, "", open);
            pos_ = bodyStart;
            lineStarting = lexTag(kind == '{' ? '}' : '%', open);
        }
        push(Token::Type::End, "", s_.size());
        return std::move(tokens_);
    }

private:
    std::string s_;
    size_t pos_ = 0;
    std::vector<Token> tokens_;

    [[noreturn]] void fail(size_t at, const std::string& what) {
        auto [line, col] = position(at);
        throw Error("chat template", "line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what);
    }

    std::pair<int, int> position(size_t at) const {
        int line = 1, col = 1;
        for (size_t i = 0; i < at && i < s_.size(); ++i) {
            if (s_[i] == '\n') {
                ++line;
                col = 1;
            } else if ((static_cast<unsigned char>(s_[i]) & 0xC0) != 0x80) ++col;
        }
        return {line, col};
    }

    void push(Token::Type type, std::string text, size_t at) {
        Token t{type, std::move(text), 0, 0};
        // Positions are filled lazily from the offset to keep lexing linear.
        t.line = int(at);
        tokens_.push_back(std::move(t));
    }

    void emitText(const std::string& text, size_t at) {
        if (!text.empty()) push(Token::Type::Text, text, at);
    }

    size_t findOpener(size_t from) const {
        for (size_t i = from; i + 1 < s_.size(); ++i)
            if (s_[i] == '{' && (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#')) return i;
        return s_.size();
    }

    // After a block or comment closer: `-` eats all following whitespace, `+` keeps it,
    // otherwise trim_blocks drops one newline. Returns the new position and whether it ends a line.
    size_t afterCloser(size_t closerEnd, char sign, bool trim, bool& lineStarting) {
        size_t p = closerEnd;
        if (sign == '-') p = skipWhitespace(s_, p);
        else if (sign != '+' && trim && p < s_.size() && s_[p] == '\n') ++p;
        lineStarting = p > 0 && s_[p - 1] == '\n';
        return p;
    }

    size_t closeComment(size_t open, size_t from, bool& lineStarting) {
        size_t end = s_.find("#}", from);
        if (end == std::string::npos) fail(open, "unclosed comment");
        char sign = end > from && (s_[end - 1] == '-' || s_[end - 1] == '+') ? s_[end - 1] : '\0';
        return afterCloser(end + 2, sign, true, lineStarting);
    }

    bool isRawBlock(size_t p) const {
        while (p < s_.size() && isAsciiSpace(s_[p])) ++p;
        if (s_.compare(p, 3, "raw") != 0) return false;
        p += 3;
        while (p < s_.size() && isAsciiSpace(s_[p])) ++p;
        return s_.compare(p, 2, "%}") == 0 || s_.compare(p, 3, "-%}") == 0 || s_.compare(p, 3, "+%}") == 0;
    }

    size_t rawBlock(size_t open, size_t p, bool& lineStarting) {
        size_t close = s_.find("%}", p);
        char sign = s_[close - 1] == '-' ? '-' : '\0';
        size_t bodyStart = afterCloser(close + 2, sign, true, lineStarting);
        for (size_t i = bodyStart; i < s_.size(); ++i) {
            if (s_.compare(i, 2, "{%") != 0) continue;
            size_t q = i + 2;
            char openSign = q < s_.size() && (s_[q] == '-' || s_[q] == '+') ? s_[q] : '\0';
            if (openSign) ++q;
            while (q < s_.size() && isAsciiSpace(s_[q])) ++q;
            if (s_.compare(q, 6, "endraw") != 0) continue;
            q += 6;
            while (q < s_.size() && isAsciiSpace(s_[q])) ++q;
            char endSign = q < s_.size() && (s_[q] == '-' || s_[q] == '+') ? s_[q] : '\0';
            if (endSign) ++q;
            if (s_.compare(q, 2, "%}") != 0) continue;
            std::string body = s_.substr(bodyStart, i - bodyStart);
            if (openSign == '-') body = rstripUnicode(body);
            emitText(body, bodyStart);
            return afterCloser(q + 2, endSign, true, lineStarting);
        }
        fail(open, "missing endraw");
    }

    // Lexes the inside of {{ }} or {% %} up to its closer; returns lineStarting for the next text.
    bool lexTag(char closeChar, size_t open) {
        int depth = 0;
        for (;;) {
            while (pos_ < s_.size() && isAsciiSpace(s_[pos_])) ++pos_;
            if (pos_ >= s_.size()) fail(open, closeChar == '}' ? "unclosed '{{'" : "unclosed '{%'");
            char c = s_[pos_];
            if (depth == 0) {
                char sign = (c == '-' || c == '+') ? c : '\0';
                size_t q = pos_ + (sign ? 1 : 0);
                if (q + 1 < s_.size() && s_[q] == closeChar && s_[q + 1] == '}' && (closeChar == '%' || sign != '+')) {
                    push(closeChar == '}' ? Token::Type::VariableEnd : Token::Type::BlockEnd, "", pos_);
                    bool lineStarting = false;
                    pos_ = afterCloser(q + 2, sign, closeChar == '%', lineStarting);
                    return lineStarting;
                }
            }
            size_t start = pos_;
            if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
                while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
                    ++pos_;
                push(Token::Type::Name, s_.substr(start, pos_ - start), start);
            } else if (std::isdigit(static_cast<unsigned char>(c))) {
                lexNumber(start);
            } else if (c == '\'' || c == '"') {
                lexString(start);
            } else {
                static const char* twoChar[] = {"//", "**", "==", "!=", "<=", ">="};
                std::string op;
                for (const char* t : twoChar)
                    if (s_.compare(pos_, 2, t) == 0) op = t;
                if (op.empty()) {
                    if (std::string("+-/*%~[](){}<>=.:|,;!").find(c) == std::string::npos)
                        fail(pos_, std::string("unexpected character '") + c + "'");
                    op = std::string(1, c);
                }
                if (op == "(" || op == "[" || op == "{") ++depth;
                if ((op == ")" || op == "]" || op == "}") && depth > 0) --depth;
                pos_ += op.size();
                push(Token::Type::Operator, op, start);
            }
        }
    }

    void lexNumber(size_t start) {
        auto digits = [&] {
            while (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
        };
        digits();
        bool isFloat = false;
        if (pos_ + 1 < s_.size() && s_[pos_] == '.' && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1]))) {
            ++pos_;
            digits();
            isFloat = true;
        }
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            size_t q = pos_ + 1;
            if (q < s_.size() && (s_[q] == '+' || s_[q] == '-')) ++q;
            if (q < s_.size() && std::isdigit(static_cast<unsigned char>(s_[q]))) {
                pos_ = q;
                digits();
                isFloat = true;
            }
        }
        std::string text;
        for (size_t i = start; i < pos_; ++i)
            if (s_[i] != '_') text += s_[i];
        push(isFloat ? Token::Type::Float : Token::Type::Integer, text, start);
    }

    void lexString(size_t start) {
        char quote = s_[pos_++];
        std::string out;
        for (;;) {
            if (pos_ >= s_.size()) fail(start, "unterminated string");
            char c = s_[pos_++];
            if (c == quote) break;
            if (c != '\\') {
                out += c;
                continue;
            }
            if (pos_ >= s_.size()) fail(start, "unterminated string");
            char e = s_[pos_++];
            switch (e) {
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case 'r': out += '\r'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'v': out += '\v'; break;
            case 'a': out += '\a'; break;
            case '\\': out += '\\'; break;
            case '\'': out += '\''; break;
            case '"': out += '"'; break;
            case '\n': break;
            case 'x':
            case 'u':
            case 'U': {
                size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                if (pos_ + n > s_.size()) fail(pos_, "truncated \\" + std::string(1, e) + " escape");
                char32_t cp = 0;
                for (size_t k = 0; k < n; ++k) {
                    char h = s_[pos_ + k];
                    if (!std::isxdigit(static_cast<unsigned char>(h)))
                        fail(pos_, "bad \\" + std::string(1, e) + " escape");
                    cp = cp * 16 +
                        char32_t(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
                }
                pos_ += n;
                unicode::append(out, cp);
                break;
            }
            default:
                if (e >= '0' && e <= '7') {
                    char32_t cp = char32_t(e - '0');
                    for (int k = 0; k < 2 && pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '7'; ++k)
                        cp = cp * 8 + char32_t(s_[pos_++] - '0');
                    unicode::append(out, cp);
                } else {
                    out += '\\';
                    out += e;
                }
            }
        }
        push(Token::Type::String, out, start);
    }
};

// Jinja normalizes newlines to \n and, with keep_trailing_newline=False, drops one final newline.
std::string normalizeSource(const std::string& src) {
    std::string out;
    out.reserve(src.size());
    for (size_t i = 0; i < src.size(); ++i) {
        if (src[i] == '\r') {
            out += '\n';
            if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
        } else {
            out += src[i];
        }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

}  // namespace

std::vector<Token> tokenize(const std::string& source) {
    std::string src = normalizeSource(source);
    auto tokens = Lexer(src).run();
    // Convert offsets (stored in `line`) to line/column in one pass.
    int line = 1, col = 1;
    size_t offset = 0;
    for (auto& t : tokens) {
        size_t target = size_t(t.line);
        for (; offset < target && offset < src.size(); ++offset) {
            if (src[offset] == '\n') {
                ++line;
                col = 1;
            } else if ((static_cast<unsigned char>(src[offset]) & 0xC0) != 0x80) ++col;
        }
        t.line = line;
        t.column = col;
    }
    return tokens;
}

}  // namespace cairn::chat
