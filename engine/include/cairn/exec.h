// The compute context: owns a oneTBB arena with a fixed thread count. There is
// no global pool; every engine call that computes takes an ExecContext.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace cairn {

// Background: every thread that runs a task of the context (its workers and
// the calling thread) lowers its own scheduling priority to nice
// kBackgroundNice, once, on Linux. The app computes this way so the UI and
// its render threads get the cores the moment they need them during a long
// prefill, and the engine still has every idle cycle. A thread cannot raise
// its priority again without privilege, and oneTBB shares its workers
// between contexts, so a process uses one priority for all its contexts.
enum class ThreadPriority { Normal, Background };
constexpr int kBackgroundNice = 10;

class ExecContext {
public:
    explicit ExecContext(int threads = 1, ThreadPriority priority = ThreadPriority::Normal);
    ~ExecContext();
    ExecContext(const ExecContext&) = delete;
    ExecContext& operator=(const ExecContext&) = delete;

    int threads() const { return threads_; }
    ThreadPriority priority() const { return priority_; }

    // Calls fn(begin, end) on disjoint ranges covering [0, n), each of at most
    // `grain` items, in parallel (one call fn(0, n) on one thread or when
    // n <= grain). Callers write each output from exactly one range, so
    // results never depend on the split (no cross-thread reductions).
    void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

private:
    struct Arena;
    int threads_;
    ThreadPriority priority_;
    std::unique_ptr<Arena> arena_;
};

}  // namespace cairn
