#include "cairn/exec.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cerrno>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace cairn {

struct ExecContext::Arena {
    explicit Arena(int n) : arena(n) {}
    tbb::task_arena arena;
};

namespace {

// Linux keeps a nice value per thread (setpriority on the thread id).
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

}  // namespace

ExecContext::ExecContext(int threads, ThreadPriority priority)
    : threads_(std::max(1, threads)), priority_(priority), arena_(std::make_unique<Arena>(threads_)) {}
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
    if (n <= 0) return;
    grain = std::max<int64_t>(1, grain);
    const bool background = priority_ == ThreadPriority::Background;
    if (threads_ == 1 || n <= grain) {
        if (background) lowerThisThreadOnce();
        fn(0, n);
        return;
    }
    arena_->arena.execute([&] {
        tbb::parallel_for(
            tbb::blocked_range<int64_t>(0, n, grain),
            [&](const tbb::blocked_range<int64_t>& r) {
                if (background) lowerThisThreadOnce();
                fn(r.begin(), r.end());
            },
            tbb::simple_partitioner());
    });
}

}  // namespace cairn
