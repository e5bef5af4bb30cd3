#include "special_split.h"

#include <array>
#include <cctype>

namespace cairn::tokenizer {

std::vector<Fragment> splitSpecial(const Vocabulary& vocab, std::string_view text, bool parseSpecial) {
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
        if (!parseSpecial && (attr & (AttrControl | AttrUnknown))) continue;
        const std::string_view special = vocab.texts[id];
        if (!present[static_cast<unsigned char>(special[0])]) continue;
        bool any = false;
        for (const auto& f : fragments)
            if (f.token < 0 && f.text.find(special) != std::string_view::npos) { any = true; break; }
        if (!any) continue;

        next.clear();
        for (const auto& f : fragments) {
            if (f.token >= 0) { next.push_back(f); continue; }
            std::string_view rest = f.text;
            while (!rest.empty()) {
                size_t at = rest.find(special);
                if (at == std::string_view::npos) { next.push_back({-1, rest}); break; }
                std::string_view left = rest.substr(0, at);
                if (attr & AttrLStrip)
                    while (!left.empty() && std::isspace(static_cast<unsigned char>(left.back()))) left.remove_suffix(1);
                if (!left.empty()) next.push_back({-1, left});
                next.push_back({id, {}});
                rest.remove_prefix(at + special.size());
                if (attr & AttrRStrip)
                    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
            }
        }
        fragments.swap(next);
    }
    return fragments;
}

} // namespace cairn::tokenizer
