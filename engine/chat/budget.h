// The evaluation budget of one render: steps, bytes alive, recursion depth and
// cancellation. One Budget is installed per render (Budget::Active, thread-local);
// values, scopes and output buffers charge their bytes to it while they live, the
// evaluator and the builtins charge steps for the work they do, and every recursion
// (evaluation, repr, ==, <, tojson) holds a Budget::Depth. Outside a render
// (parsing, values made from JSON before it starts) nothing is charged.
#pragma once

#include "cairn/chat_template.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cairn::chat {

// Default limits (ChatRenderLimits()). Measured on the 24 real templates of
// ../shared/templates over all 528 renderings (test_chat_templates,
// budgetMarginsOnRealTemplates, prints them): at most 1,571 steps (Nemotron Nano v2,
// long_message), 13,374 bytes alive (Devstral, assistant_first) and depth 8 (Qwen3,
// thinking) -- margins of ~6,400x, ~2,500x and ~62x, room for conversations of
// thousands of messages. A hostile template stops within ~1.5 s of work (the slowest
// member of tests/chat/hostile on a loaded 2-core machine) and holds at most a few
// times maxBytes (transient copies of a value; the whole corpus peaks at ~250 MiB RSS).
constexpr uint64_t kDefaultMaxSteps = 10'000'000;
constexpr uint64_t kDefaultMaxBytes = uint64_t(32) << 20;
constexpr uint32_t kDefaultMaxDepth = 500;
// Work of builtins, in steps: one per this many bytes touched or values compared.
constexpr size_t kBytesPerStep = 16;
constexpr size_t kComparisonsPerStep = 8;
// A loop iteration makes a scope and the `loop` object: it costs this many steps.
constexpr uint64_t kLoopIterationSteps = 8;
// The stack an evaluation may use below where the render started (a second guard
// under the depth limit, whatever the frame sizes of the build).
constexpr size_t kMaxStackBytes = size_t(3) << 20;

class Budget {
public:
    Budget(const ChatRenderLimits& limits, const std::atomic<bool>* cancel);
    Budget(const Budget&) = delete;
    Budget& operator=(const Budget&) = delete;

    // The budget of the render running on this thread, or null.
    static Budget* current();

    void step(uint64_t n = 1) {
        steps_ += n;
        if (steps_ >= nextCheck_) checkSteps();
    }
    // Throws unless `bytes` more would fit (call before allocating them).
    void ensure(uint64_t bytes) const;
    void charge(uint64_t bytes);
    void release(uint64_t bytes) noexcept { alive_ -= bytes < alive_ ? bytes : alive_; }
    uint64_t id() const { return id_; }

    ChatRenderStats stats() const { return {steps_, peak_, peakDepth_}; }

    // Installs a budget as the thread's current one for its lifetime.
    class Active {
    public:
        explicit Active(Budget& b);
        ~Active();
        Active(const Active&) = delete;
        Active& operator=(const Active&) = delete;

    private:
        Budget* previous_;
    };

    // One level of recursion: throws past maxDepth or kMaxStackBytes.
    class Depth {
    public:
        Depth();
        ~Depth() {
            if (b_) --b_->depth_;
        }
        Depth(const Depth&) = delete;
        Depth& operator=(const Depth&) = delete;

    private:
        Budget* b_;
    };

private:
    void checkSteps();

    ChatRenderLimits limits_;
    const std::atomic<bool>* cancel_;
    uint64_t id_;
    uint64_t steps_ = 0, nextCheck_ = 0;
    uint64_t alive_ = 0, peak_ = 0;
    uint32_t depth_ = 0, peakDepth_ = 0;
    const char* stackBase_ = nullptr;
};

// Steps for work done outside the evaluator (no-ops outside a render).
inline void work(uint64_t steps) {
    if (Budget* b = Budget::current()) b->step(steps);
}
inline void workBytes(size_t bytes) { work(1 + bytes / kBytesPerStep); }
inline void workComparisons(size_t n) { work(1 + n / kComparisonsPerStep); }
// Throws unless `bytes` more would fit in the current budget.
inline void ensureBytes(uint64_t bytes) {
    if (Budget* b = Budget::current()) b->ensure(bytes);
}

// Bytes an object holds against the budget it was made under; released when it dies.
class Charge {
public:
    Charge() : budget_(Budget::current()), id_(budget_ ? budget_->id() : 0) {}
    ~Charge() { reset(); }
    Charge(const Charge&) = delete;
    Charge& operator=(const Charge&) = delete;

    void add(uint64_t n) {
        if (!budget_) return;
        budget_->charge(n);
        bytes_ += n;
    }
    void reset() noexcept;

private:
    Budget* budget_;
    uint64_t id_;
    uint64_t bytes_ = 0;
};

// The bytes a heap object of the interpreter is charged beyond its contents.
constexpr uint64_t kObjectBytes = 64;

}  // namespace cairn::chat
