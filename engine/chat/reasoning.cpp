#include "cairn/reasoning.h"

namespace cairn {
namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
    while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
    return s;
}

}  // namespace

ReasoningMarkers reasoningMarkersOf(std::string_view templateSource) {
    if (templateSource.find("seed:think>") != std::string_view::npos) return {"<seed:think>", "</seed:think>"};
    return {};
}

bool promptOpensReasoning(std::string_view prompt, const ReasoningMarkers& markers) {
    while (!prompt.empty() && isSpace(prompt.back())) prompt.remove_suffix(1);
    return !markers.open.empty() && prompt.ends_with(markers.open);
}

ReplySplit splitReasoning(std::string_view reply, const ReasoningMarkers& markers, bool startsInside) {
    ReplySplit split;
    if (markers.open.empty() || markers.close.empty()) return split;
    size_t bodyAt = 0;
    if (!startsInside) {
        size_t at = 0;
        while (at < reply.size() && isSpace(reply[at])) ++at;
        const std::string_view rest = reply.substr(at);
        if (!rest.starts_with(markers.open)) {
            split.undecided = std::string_view(markers.open).starts_with(rest);
            return split;
        }
        bodyAt = at + markers.open.size();
    }
    const size_t close = reply.find(markers.close, bodyAt);
    if (close == std::string_view::npos) {
        split.reasoningBytes = reply.size();
        return split;
    }
    split.reasoningBytes = close + markers.close.size();
    split.closed = true;
    return split;
}

std::string_view reasoningText(std::string_view segment, const ReasoningMarkers& markers) {
    segment = trimmed(segment);
    if (!markers.open.empty() && segment.starts_with(markers.open)) segment.remove_prefix(markers.open.size());
    if (!markers.close.empty() && segment.ends_with(markers.close)) segment.remove_suffix(markers.close.size());
    return trimmed(segment);
}

}  // namespace cairn
