// The compute context: owns a oneTBB arena with a fixed thread count. There is
// no global pool; every engine call that computes takes an ExecContext.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace cairn {

class ExecContext {
public:
    explicit ExecContext(int threads = 1);
    ~ExecContext();
    ExecContext(const ExecContext&) = delete;
    ExecContext& operator=(const ExecContext&) = delete;

    int threads() const { return threads_; }

    // Calls fn(begin, end) on disjoint ranges covering [0, n), each of at most
    // `grain` items, in parallel (one call fn(0, n) on one thread or when
    // n <= grain). Callers write each output from exactly one range, so
    // results never depend on the split (no cross-thread reductions).
    void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

private:
    struct Arena;
    int threads_;
    std::unique_ptr<Arena> arena_;
};

} // namespace cairn
