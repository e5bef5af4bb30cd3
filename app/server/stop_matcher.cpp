#include "stop_matcher.h"

#include <algorithm>
#include <utility>

namespace cairn::server {

std::string StopMatcher::push(std::string_view piece) {
    if (stopped_) return {};
    pending_ += piece;
    size_t first = std::string::npos;
    for (const auto& s : stops_) first = std::min(first, pending_.find(s));
    if (first != std::string::npos) {
        stopped_ = true;
        std::string out = pending_.substr(0, first);
        pending_.clear();
        return out;
    }
    // Hold back the longest tail that is the start of some stop sequence.
    size_t hold = 0;
    for (const auto& s : stops_) {
        for (size_t n = std::min(s.size() - 1, pending_.size()); n > hold; --n) {
            if (std::string_view(pending_).substr(pending_.size() - n) == std::string_view(s).substr(0, n)) {
                hold = n;
                break;
            }
        }
    }
    std::string out = pending_.substr(0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    return out;
}

std::string StopMatcher::finish() {
    if (stopped_) return {};
    return std::exchange(pending_, {});
}

}  // namespace cairn::server
