#include "session/prompt_text.h"

#include <algorithm>
#include <optional>
#include <string_view>

namespace cairn::session {
namespace {

// Noncharacters: valid UTF-8 that no tokenizer has a special token for.
constexpr std::string_view kMarkOpen = "\xEF\xB7\x90";  // U+FDD0
constexpr std::string_view kMarkClose = "\xEF\xB7\x91";  // U+FDD1
constexpr std::string_view kHoleOpen = "\xEF\xB7\x92";  // U+FDD2
constexpr std::string_view kHoleClose = "\xEF\xB7\x93";  // U+FDD3

std::string tag(std::string_view open, size_t index, std::string_view close) {
    return std::string(open) + std::to_string(index) + std::string(close);
}

// The index of the tag `open digits close` at `at` (and its length), if one is there and below `count`.
std::optional<std::pair<size_t, size_t>> readTag(std::string_view text, size_t at, std::string_view open,
                                                 std::string_view close, size_t count) {
    if (text.substr(at, open.size()) != open) return std::nullopt;
    size_t i = at + open.size(), index = 0, digits = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 9; ++i, ++digits)
        index = index * 10 + size_t(text[i] - '0');
    if (digits == 0 || index >= count || text.substr(i, close.size()) != close) return std::nullopt;
    return std::pair{index, i + close.size() - at};
}

// `s` with every control-token text (and every U+FDD0) replaced by a marker naming its entry in `originals`.
std::string escape(std::string_view s, const Tokenizer& tok, std::vector<std::string>& originals) {
    std::vector<TextSpan> spans;
    for (const auto& special : tok.parsedSpecials(s)) spans.push_back(special.text);
    for (size_t at = s.find(kMarkOpen); at != std::string_view::npos; at = s.find(kMarkOpen, at + kMarkOpen.size()))
        spans.push_back({at, at + kMarkOpen.size()});
    if (spans.empty()) return std::string(s);
    std::sort(spans.begin(), spans.end(), [](const TextSpan& a, const TextSpan& b) { return a.begin < b.begin; });
    std::string out;
    size_t done = 0;
    for (const TextSpan& span : spans) {
        if (span.begin < done) continue;  // overlapping (a control token spelling U+FDD0): already escaped
        out.append(s.substr(done, span.begin - done));
        out += tag(kMarkOpen, originals.size(), kMarkClose);
        originals.emplace_back(s.substr(span.begin, span.end - span.begin));
        done = span.end;
    }
    out.append(s.substr(done));
    return out;
}

// Where the holes' contents are in `real`, if filling the holes of `shape` gives exactly `real`.
std::optional<std::vector<TextSpan>> fillHoles(std::string_view shape, std::string_view real,
                                               const std::vector<ChatMessage>& contents) {
    std::vector<TextSpan> spans;
    size_t at = 0, done = 0, filled = 0;
    while ((at = shape.find(kHoleOpen, at)) != std::string_view::npos) {
        auto hole = readTag(shape, at, kHoleOpen, kHoleClose, contents.size());
        if (!hole) {
            at += kHoleOpen.size();
            continue;
        }
        const std::string_view before = shape.substr(done, at - done);
        const std::string& content = contents[hole->first].content;
        if (real.substr(filled, before.size()) != before ||
            real.substr(filled + before.size(), content.size()) != content)
            return std::nullopt;
        filled += before.size();
        if (!content.empty()) spans.push_back({filled, filled + content.size()});
        filled += content.size();
        done = at = at + hole->second;
    }
    if (real.substr(filled) != shape.substr(done)) return std::nullopt;
    return spans;
}

// Maps positions of the escaped text to the text with the markers replaced.
struct Unescaped {
    struct Marker {
        size_t escBegin, escEnd, begin, end;
    };
    std::string text;
    std::vector<Marker> markers;

    size_t mapBegin(size_t p) const { return map(p, false); }
    size_t mapEnd(size_t p) const { return map(p, true); }

private:
    size_t map(size_t p, bool end) const {
        auto it = std::upper_bound(markers.begin(), markers.end(), p,
                                   [](size_t at, const Marker& m) { return at < m.escEnd; });
        // `it` is the first marker ending after p: inside it, a span edge widens to the whole replacement.
        if (it != markers.end() && it->escBegin < p) return end ? it->end : it->begin;
        if (it == markers.begin()) return p;
        const Marker& m = *std::prev(it);
        return p - m.escEnd + m.end;
    }
};

Unescaped unescape(std::string_view text, const std::vector<std::string>& originals) {
    Unescaped u;
    u.text.reserve(text.size());
    size_t at = 0, done = 0;
    while (!originals.empty() && (at = text.find(kMarkOpen, at)) != std::string_view::npos) {
        auto mark = readTag(text, at, kMarkOpen, kMarkClose, originals.size());
        if (!mark) {
            at += kMarkOpen.size();
            continue;
        }
        u.text.append(text.substr(done, at - done));
        const std::string& original = originals[mark->first];
        u.markers.push_back({at, at + mark->second, u.text.size(), u.text.size() + original.size()});
        u.text += original;
        done = at = at + mark->second;
    }
    u.text.append(text.substr(done));
    return u;
}

}  // namespace

PromptText renderPromptText(const ChatRenderer& render, const std::vector<ChatMessage>& messages,
                            const Tokenizer& tokenizer) {
    std::vector<std::string> originals;
    std::vector<ChatMessage> escaped = messages;
    for (auto& m : escaped) {
        m.role = escape(m.role, tokenizer, originals);
        m.content = escape(m.content, tokenizer, originals);
    }
    PromptText p;
    p.rendering = render(escaped);

    std::vector<ChatMessage> holes = escaped;
    for (size_t i = 0; i < holes.size(); ++i)
        if (!holes[i].content.empty()) holes[i].content = tag(kHoleOpen, i, kHoleClose);
    const ChatRendering shape = render(holes);
    std::vector<TextSpan> content;
    if (shape.usedFallback == p.rendering.usedFallback) {
        if (auto spans = fillHoles(shape.text, p.rendering.text, escaped)) {
            content = std::move(*spans);
            p.exact = true;
        }
    }

    Unescaped u = unescape(p.rendering.text, originals);
    for (const TextSpan& s : content) p.plain.push_back({u.mapBegin(s.begin), u.mapEnd(s.end)});
    for (const auto& m : u.markers) p.plain.push_back({m.begin, m.end});
    std::sort(p.plain.begin(), p.plain.end(), [](const TextSpan& a, const TextSpan& b) { return a.begin < b.begin; });
    std::vector<TextSpan> merged;
    for (const TextSpan& s : p.plain) {
        if (s.begin >= s.end) continue;
        if (!merged.empty() && s.begin <= merged.back().end) merged.back().end = std::max(merged.back().end, s.end);
        else merged.push_back(s);
    }
    p.plain = std::move(merged);
    p.rendering.text = std::move(u.text);
    return p;
}

}  // namespace cairn::session
