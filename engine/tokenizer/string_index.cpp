#include "string_index.h"

namespace cairn::tokenizer {

uint64_t StringIndex::hash(std::string_view s) {
    // FNV-1a, then a final mix so that the low bits used for the slot are well spread.
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 32);
}

void StringIndex::build(std::vector<std::string_view> keys, bool lastWins) {
    keys_ = std::move(keys);
    size_t capacity = 16;
    while (capacity < keys_.size() * 2) capacity *= 2;
    slots_.assign(capacity, -1);
    mask_ = capacity - 1;
    for (size_t i = 0; i < keys_.size(); ++i) {
        for (uint64_t slot = hash(keys_[i]) & mask_;; slot = (slot + 1) & mask_) {
            int32_t& s = slots_[slot];
            if (s < 0) {
                s = int32_t(i);
                break;
            }
            if (keys_[size_t(s)] == keys_[i]) {
                if (lastWins) s = int32_t(i);
                break;
            }
        }
    }
}

int32_t StringIndex::find(std::string_view key) const {
    if (slots_.empty()) return -1;
    for (uint64_t slot = hash(key) & mask_;; slot = (slot + 1) & mask_) {
        int32_t s = slots_[slot];
        if (s < 0) return -1;
        if (keys_[size_t(s)] == key) return s;
    }
}

}  // namespace cairn::tokenizer
