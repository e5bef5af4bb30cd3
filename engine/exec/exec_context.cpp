#include "cairn/exec.h"

#include "exec/thread_priority.h"
#include "exec/thread_team.h"

#include <algorithm>
#include <cerrno>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace cairn {

namespace exec {

void lowerThisThreadOnce() {
#if defined(__linux__)
    thread_local bool lowered = false;
    if (lowered) return;
    lowered = true;
    const auto tid = id_t(syscall(SYS_gettid));
    errno = 0;
    const int now = getpriority(PRIO_PROCESS, tid);
    if (errno == 0 && now < kBackgroundNice) setpriority(PRIO_PROCESS, tid, kBackgroundNice);
#endif
}

}  // namespace exec

ExecContext::ExecContext(int threads, ThreadPriority priority)
    : threads_(std::max(1, threads)), priority_(priority),
      team_(threads_ > 1 ? std::make_unique<exec::ThreadTeam>(threads_ - 1, priority) : nullptr) {}
ExecContext::~ExecContext() = default;

const LayerWatch* ExecContext::setLayerWatch(const LayerWatch* watch) {
    const LayerWatch* previous = watch_;
    watch_ = watch;
    return previous;
}

void ExecContext::atLayer(int64_t layer, int64_t layers) const {
    if (!watch_) return;
    if (layer > 0 && watch_->onLayer) watch_->onLayer(layer, layers);  // first: it may set the flag
    if (watch_->cancel && watch_->cancel->load(std::memory_order_relaxed)) throw Cancelled();
}

void ExecContext::parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
    parallelFor(n, grain, fn, NextLoopReads{});
}

void ExecContext::parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn,
                              const NextLoopReads& next) {
    if (n <= 0) return;
    grain = std::max<int64_t>(1, grain);
    if (priority_ == ThreadPriority::Background) exec::lowerThisThreadOnce();
    if (threads_ == 1 || n <= grain) {
        fn(0, n);
        return;
    }
    if (team_->tryRun(n, grain, fn, next)) return;
    // The team is busy (a loop nested in one of its ranges, or another
    // calling thread): this thread runs the whole loop, range by range.
    for (int64_t b = 0; b < n; b += grain) fn(b, std::min(n, b + grain));
}

}  // namespace cairn
