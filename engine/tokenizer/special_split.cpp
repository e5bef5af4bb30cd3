#include "special_split.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace cairn::tokenizer {
namespace {

// Whether [begin, end) overlaps one of the sorted, disjoint `spans`.
bool overlaps(std::span<const TextSpan> spans, size_t begin, size_t end) {
    auto it =
        std::upper_bound(spans.begin(), spans.end(), begin, [](size_t at, const TextSpan& s) { return at < s.end; });
    return it != spans.end() && it->begin < end;
}

}  // namespace

std::vector<Fragment> splitSpecial(const Vocabulary& vocab, std::string_view text, bool parseSpecial,
                                   std::span<const TextSpan> plainSpans) {
    std::vector<Fragment> fragments;
    if (text.empty()) return fragments;
    fragments.push_back({-1, text});
    // Bytes of the text: a special token whose first byte is missing cannot occur
    // (vocabularies have up to thousands of specials).
    std::array<bool, 256> present{};
    for (char c : text) present[static_cast<unsigned char>(c)] = true;
    std::vector<Fragment> next;
    for (int32_t id : vocab.specials) {
        const uint32_t attr = vocab.attrs[id];
        const bool parsed = attr & (AttrControl | AttrUnknown);
        if (!parseSpecial && parsed) continue;
        const bool guarded = parsed && !plainSpans.empty();
        const std::string_view special = vocab.texts[id];
        if (!present[static_cast<unsigned char>(special[0])]) continue;
        bool any = false;
        for (const auto& f : fragments)
            if (f.token < 0 && f.text.find(special) != std::string_view::npos) {
                any = true;
                break;
            }
        if (!any) continue;

        next.clear();
        for (const auto& f : fragments) {
            if (f.token >= 0) {
                next.push_back(f);
                continue;
            }
            std::string_view rest = f.text;
            size_t from = 0;
            while (!rest.empty()) {
                size_t at = rest.find(special, from);
                if (at == std::string_view::npos) {
                    next.push_back({-1, rest});
                    break;
                }
                const size_t offset = size_t(rest.data() - text.data()) + at;
                if (guarded && overlaps(plainSpans, offset, offset + special.size())) {
                    from = at + 1;  // plain text here; a later occurrence may still count
                    continue;
                }
                std::string_view left = rest.substr(0, at);
                if (attr & AttrLStrip)
                    while (!left.empty() && std::isspace(static_cast<unsigned char>(left.back())))
                        left.remove_suffix(1);
                if (!left.empty()) next.push_back({-1, left});
                next.push_back({id, rest.substr(at, special.size())});
                rest.remove_prefix(at + special.size());
                from = 0;
                if (attr & AttrRStrip)
                    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front())))
                        rest.remove_prefix(1);
            }
        }
        fragments.swap(next);
    }
    return fragments;
}

}  // namespace cairn::tokenizer
