// ThreadTeam: the worker threads of one ExecContext. Between loops a worker
// spins for a short while, then sleeps on a futex, so the loops of a decode
// step (a few hundred a token, each 2-200 us of work) start within a cache
// line's transfer instead of a task scheduler's microseconds. Each thread
// first runs a contiguous block of the ranges, front to back (a matmul's rows
// stay one stream per thread, which its prefetch and the hardware's follow),
// then takes ranges from the back of the others' blocks: a thread that is
// late or preempted takes fewer and never holds the others up.
#pragma once

#include "cairn/exec.h"

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cairn::exec {

class ThreadTeam {
public:
    // `workers` threads besides the caller; each lowers its own priority
    // first when `priority` is Background.
    ThreadTeam(int workers, ThreadPriority priority);
    ~ThreadTeam();
    ThreadTeam(const ThreadTeam&) = delete;
    ThreadTeam& operator=(const ThreadTeam&) = delete;

    // Bits of a range index in a block's word, and so the most ranges one
    // loop may have (two indexes share the word with the loop's generation).
    static constexpr int kIndexBits = 22;
    static constexpr int64_t kMaxRanges = (int64_t(1) << kIndexBits) - 1;

    // Runs fn on the ranges [i * grain, min(n, (i + 1) * grain)) of [0, n)
    // on the calling thread and the workers; returns when every range is done
    // and rethrows the first exception a range threw (ranges not yet started
    // then do not run). Returns false, running nothing, when the team is
    // already running a loop (a loop nested in one of its ranges, or a second
    // calling thread) or the loop has more than kMaxRanges ranges.
    // `next` (when it has data) becomes the team's prefetch hint until a later
    // loop brings another: a thread with no ranges left, in this loop or in
    // the loops before the one that reads it, prefetches its part of the
    // hint, resuming where it stopped (a worker until the next loop is
    // published, the caller while the others still run ranges).
    bool tryRun(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn,
                const NextLoopReads& next = {});

private:
    // One thread's block of the current loop: generation (20 bits) | next
    // range (22) | end (22). The owner claims from the front and the others
    // from the back, each by one compare-exchange of the whole word, so a
    // thread that read a finished loop's word claims nothing of the next.
    struct alignas(64) Block {
        std::atomic<uint64_t> word{0};
    };
    // One thread's copy of the prefetch hint and how far it got; only that
    // thread touches it.
    struct alignas(64) IdlePrefetch {
        NextLoopReads reads;
        uint64_t id = 0;
        size_t done = 0;
    };

    void workerLoop(int slot, ThreadPriority priority);
    void runRanges(int slot);
    // Prefetches slot's part of its hint in steps, while keepGoing() holds.
    template <class KeepGoing>
    void prefetchPart(int slot, KeepGoing keepGoing);
    bool claim(Block& block, bool front, int64_t& range);
    void runRange(int64_t range);

    std::vector<std::thread> threads_;
    std::vector<Block> blocks_;  // [0] the caller's, [k + 1] worker k's
    std::vector<IdlePrefetch> idle_;  // per slot, as blocks_
    std::atomic<bool> busy_{false};
    std::atomic<bool> stop_{false};
    uint64_t generation_ = 0;
    std::atomic<uint32_t> wake_{0};  // moves once per loop; sleeping workers wait on it
    std::atomic<uint32_t> done_{0};  // ranges of the current loop finished, added by each thread when it has none left

    // The current loop: written by the caller before the blocks publish it and
    // read by a thread only after it claimed one of its ranges.
    int64_t n_ = 0;
    int64_t grain_ = 1;
    const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
    NextLoopReads hint_;  // the latest loop's hint that had data, and its number
    uint64_t hintId_ = 0;
    std::atomic<bool> failed_{false};
    std::mutex errorMutex_;
    std::exception_ptr error_;
};

}  // namespace cairn::exec
