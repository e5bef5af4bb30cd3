// A FeedProgress for the Stop tests: it records every progress report and
// raises its cancel flag once `stop(done)` says so.
#pragma once

#include "cairn/session.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace cairn::test {

struct StopWhen {
    std::atomic<bool> cancel{false};
    std::vector<int64_t> reported;
    FeedProgress progress;

    explicit StopWhen(std::function<bool(int64_t done)> stop) {
        progress.cancel = &cancel;
        progress.onProgress = [this, stop = std::move(stop)](int64_t done, int64_t) {
            reported.push_back(done);
            if (stop(done)) cancel = true;
        };
    }
    StopWhen(const StopWhen&) = delete;  // progress points into this object
    StopWhen& operator=(const StopWhen&) = delete;
};

}  // namespace cairn::test
