// An open-addressing hash index from strings to their position in a list:
// built once with no per-entry allocation (vocabularies have 10^5 tokens and
// merges, and a node-based map makes loading several times slower).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace cairn::tokenizer {

class StringIndex {
public:
    // `keys` must outlive the index. With duplicates, `lastWins` keeps the later position.
    void build(std::vector<std::string_view> keys, bool lastWins);
    // Position of `key`, or -1.
    int32_t find(std::string_view key) const;

private:
    static uint64_t hash(std::string_view s);
    std::vector<std::string_view> keys_;
    std::vector<int32_t> slots_;  // -1 = empty
    uint64_t mask_ = 0;
};

}  // namespace cairn::tokenizer
