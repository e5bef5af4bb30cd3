// The compute context: owns its worker threads (threads - 1 of them; the
// calling thread is the last). There is no global pool; every engine call
// that computes takes an ExecContext.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>

namespace cairn {

namespace exec {
class ThreadTeam;  // engine/exec/thread_team.h
}

// Background: every thread that runs a task of the context (its workers and
// the calling thread) lowers its own scheduling priority to nice
// kBackgroundNice, once, on Linux. The app computes this way so the UI and
// its render threads get the cores the moment they need them during a long
// prefill, and the engine still has every idle cycle. A thread cannot raise
// its priority again without privilege, so a thread that called a
// Background context's loop stays lowered.
enum class ThreadPriority { Normal, Background };
constexpr int kBackgroundNice = 10;

// Thrown when a cancel flag stops work: between the layers of a forward pass
// (see LayerWatch) or between a session's prefill chunks.
struct Cancelled : std::exception {
    const char* what() const noexcept override { return "cancelled"; }
};

// What a caller watches during a forward pass. Every model calls
// ExecContext::atLayer() before each layer, so a long prefill chunk can be
// stopped, and report progress, within about one layer's time. A stopped pass
// throws Cancelled and leaves the memory's length unchanged; a recurrent state
// may be part-updated, so its caller restores it (Session::run does).
struct LayerWatch {
    const std::atomic<bool>* cancel = nullptr;
    std::function<void(int64_t layer, int64_t layers)> onLayer;  // before each layer but the first
};

// Memory that the loop after this one is expected to read, split into one
// contiguous part per thread in order (thread 0, the caller, the first part),
// as a decode matmul reads its weight rows. A thread with no ranges left in
// the current loop prefetches the first `headBytes` of its part toward its
// cache while it would otherwise wait; only a hint (see ThreadTeam).
struct NextLoopReads {
    const void* data = nullptr;
    size_t bytes = 0;
    size_t headBytes = 0;
};

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
    // The same, with what the next loop will read for the idle threads to
    // prefetch (nothing is prefetched on one thread).
    void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn,
                     const NextLoopReads& next);

    // The watch read by atLayer(), or none (nullptr); the caller keeps it alive
    // while it is set. Returns the previous one.
    const LayerWatch* setLayerWatch(const LayerWatch* watch);
    // Called by a forward pass before layer `layer` of `layers`: reports
    // progress, then throws Cancelled when the watch's flag is set.
    void atLayer(int64_t layer, int64_t layers) const;

private:
    int threads_;
    ThreadPriority priority_;
    std::unique_ptr<exec::ThreadTeam> team_;  // none with one thread
    const LayerWatch* watch_ = nullptr;
};

// Sets a LayerWatch on a context for one scope.
class ScopedLayerWatch {
public:
    ScopedLayerWatch(ExecContext& ctx, const LayerWatch& watch) : ctx_(ctx), previous_(ctx.setLayerWatch(&watch)) {}
    ~ScopedLayerWatch() { ctx_.setLayerWatch(previous_); }
    ScopedLayerWatch(const ScopedLayerWatch&) = delete;
    ScopedLayerWatch& operator=(const ScopedLayerWatch&) = delete;

private:
    ExecContext& ctx_;
    const LayerWatch* previous_;
};

}  // namespace cairn
