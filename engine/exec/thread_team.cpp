#include "exec/thread_team.h"

#include "exec/thread_priority.h"

#include <algorithm>
#include <chrono>

namespace cairn::exec {

namespace {

// How long a thread spins for the next loop (a worker) or for the last
// ranges of a loop (the caller) before it sleeps. Longer than the gaps
// between the loops of a decode step (norms, rope, a few us; sampling a
// token, well under a millisecond on 128k logits), shorter than anything a
// person would notice as a busy core while the model waits for them.
// (1 ms is a choice, not a measurement: 50 us and 5 ms were not compared.)
constexpr auto kSpin = std::chrono::microseconds(1000);

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Spins until pred() holds or kSpin has passed; true when pred() held.
template <class Pred>
bool spinUntil(Pred pred) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (;;) {
        for (int i = 0; i < 32; ++i) {
            if (pred()) return true;
            cpuRelax();
        }
        if (std::chrono::steady_clock::now() >= until) return pred();
    }
}

constexpr int kIndexBits = ThreadTeam::kIndexBits;
constexpr uint64_t kIndexMask = (uint64_t(1) << kIndexBits) - 1;
constexpr uint64_t kGenerationMask = (uint64_t(1) << (64 - 2 * kIndexBits)) - 1;

uint64_t packBlock(uint64_t generation, uint64_t next, uint64_t end) {
    return (generation << (2 * kIndexBits)) | (next << kIndexBits) | end;
}
uint64_t nextOf(uint64_t word) { return (word >> kIndexBits) & kIndexMask; }
uint64_t endOf(uint64_t word) { return word & kIndexMask; }

}  // namespace

ThreadTeam::ThreadTeam(int workers, ThreadPriority priority)
    : blocks_(size_t(workers) + 1), idle_(size_t(workers) + 1) {
    threads_.reserve(size_t(workers));
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this, i, priority] { workerLoop(i + 1, priority); });
}

ThreadTeam::~ThreadTeam() {
    stop_.store(true, std::memory_order_release);
    wake_.fetch_add(1, std::memory_order_release);
    wake_.notify_all();
    for (auto& t : threads_) t.join();
}

void ThreadTeam::workerLoop(int slot, ThreadPriority priority) {
    if (priority == ThreadPriority::Background) lowerThisThreadOnce();
    uint32_t seen = 0;  // wake_ at construction: a loop (or the stop) published before this thread ran still counts
    for (;;) {
        if (!spinUntil([&] { return wake_.load(std::memory_order_acquire) != seen; })) {
            while (wake_.load(std::memory_order_acquire) == seen) wake_.wait(seen, std::memory_order_acquire);
        }
        seen = wake_.load(std::memory_order_acquire);
        if (stop_.load(std::memory_order_acquire)) return;
        runRanges(slot);
        prefetchPart(slot, [&] { return wake_.load(std::memory_order_acquire) == seen; });
    }
}

// Claims one range of `block`: its first (front) or its last.
bool ThreadTeam::claim(Block& block, bool front, int64_t& range) {
    uint64_t word = block.word.load(std::memory_order_acquire);
    for (;;) {
        const uint64_t next = nextOf(word), end = endOf(word);
        if (next >= end) return false;
        const uint64_t claimed = front ? word + (uint64_t(1) << kIndexBits) : word - 1;
        if (block.word.compare_exchange_weak(word, claimed, std::memory_order_acq_rel, std::memory_order_acquire)) {
            range = int64_t(front ? next : end - 1);
            return true;
        }
    }
}

void ThreadTeam::runRange(int64_t range) {
    if (!failed_.load(std::memory_order_relaxed)) {
        try {
            const int64_t b = range * grain_;
            (*fn_)(b, std::min(n_, b + grain_));
        } catch (...) {
            std::lock_guard lock(errorMutex_);
            if (!error_) error_ = std::current_exception();
            failed_.store(true, std::memory_order_relaxed);
        }
    }
}

// The thread's own block front to back, then the others' from their backs;
// then what it ran is added to done_ at once. One add a thread and loop
// rather than one a range: the line of done_ moves between the cores once,
// not at each of a one-token matmul's 24 ranges. AMD EPYC Zen 4 (family 25
// model 17), one process decoding 16 tokens from an empty context each way
// in turn, 80-100 rounds, median of the rounds' speed-ups in the host's fast
// minutes: mamba-370m Q8_0 +0.6 %, +0.9 %; llama-1b Q4_0 +0.6 %.
void ThreadTeam::runRanges(int slot) {
    uint32_t ranCount = 0;
    int64_t range = 0;
    auto run = [&](int64_t r) {
        // The loop stays current (the caller waits for this range) until it
        // runs, so its hint is read here.
        if (ranCount == 0 && idle_[size_t(slot)].id != hintId_) idle_[size_t(slot)] = {hint_, hintId_, 0};
        ++ranCount;
        runRange(r);
    };
    while (claim(blocks_[size_t(slot)], true, range)) run(range);
    const int count = int(blocks_.size());
    for (int d = 1; d < count; ++d) {
        Block& other = blocks_[size_t((slot + d) % count)];
        while (claim(other, false, range)) run(range);
    }
    if (ranCount == 0) return;
    const auto ranges = uint32_t((n_ + grain_ - 1) / grain_);
    // After this the caller may return and publish another loop.
    if (done_.fetch_add(ranCount, std::memory_order_acq_rel) + ranCount == ranges) done_.notify_all();
}

template <class KeepGoing>
void ThreadTeam::prefetchPart(int slot, KeepGoing keepGoing) {
    IdlePrefetch& idle = idle_[size_t(slot)];
    const NextLoopReads& next = idle.reads;
    if (!next.data) return;
    const auto count = size_t(blocks_.size());
    const auto* part = static_cast<const char*>(next.data) + next.bytes / count * size_t(slot);
    const size_t bytes = std::min(next.headBytes, next.bytes / count);
    // 4 KiB a step: 64 lines, a fraction of a microsecond from memory, so a
    // new loop waits at most that long for this thread.
    constexpr size_t kStep = 4096;
    while (idle.done < bytes && keepGoing()) {
        const size_t end = std::min(bytes, idle.done + kStep);
        for (size_t line = idle.done; line < end; line += 64)
            __builtin_prefetch(part + line, 0, 2);  // toward L2 (prefetcht1 on x86)
        idle.done = end;
    }
}

bool ThreadTeam::tryRun(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn,
                        const NextLoopReads& next) {
    const int64_t ranges = (n + grain - 1) / grain;
    if (ranges > kMaxRanges) return false;
    if (busy_.exchange(true, std::memory_order_acquire)) return false;
    n_ = n;
    grain_ = grain;
    fn_ = &fn;
    if (next.data) {
        hint_ = next;
        ++hintId_;
    }
    failed_.store(false, std::memory_order_relaxed);
    error_ = nullptr;
    done_.store(0, std::memory_order_relaxed);
    generation_ = (generation_ + 1) & kGenerationMask;
    const auto count = int64_t(blocks_.size());
    for (int64_t s = 0; s < count; ++s)
        blocks_[size_t(s)].word.store(
            packBlock(generation_, uint64_t(ranges * s / count), uint64_t(ranges * (s + 1) / count)),
            std::memory_order_release);
    wake_.fetch_add(1, std::memory_order_release);
    wake_.notify_all();

    const auto all = uint32_t(ranges);
    runRanges(0);
    prefetchPart(0, [&] { return done_.load(std::memory_order_acquire) != all; });
    if (!spinUntil([&] { return done_.load(std::memory_order_acquire) == all; })) {
        for (uint32_t d; (d = done_.load(std::memory_order_acquire)) != all;) done_.wait(d, std::memory_order_acquire);
    }
    std::exception_ptr error = error_;
    busy_.store(false, std::memory_order_release);
    if (error) std::rethrow_exception(error);
    return true;
}

}  // namespace cairn::exec
