#include "cairn/exec.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>

namespace cairn {

struct ExecContext::Arena {
    explicit Arena(int n) : arena(n) {}
    tbb::task_arena arena;
};

ExecContext::ExecContext(int threads) : threads_(std::max(1, threads)), arena_(std::make_unique<Arena>(threads_)) {}
ExecContext::~ExecContext() = default;

void ExecContext::parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0) return;
    grain = std::max<int64_t>(1, grain);
    if (threads_ == 1 || n <= grain) {
        fn(0, n);
        return;
    }
    arena_->arena.execute([&] {
        tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, grain),
                          [&](const tbb::blocked_range<int64_t>& r) { fn(r.begin(), r.end()); },
                          tbb::simple_partitioner());
    });
}

} // namespace cairn
