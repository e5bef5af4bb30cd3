// The machine's streaming read bandwidth: a plain read of a buffer larger than
// the caches, split over the thread team. It is the yardstick for decode,
// which streams every weight byte once per token (`cairn-cli bench
// --read-loop MIB` prints both).
#pragma once

#include "cairn/exec.h"
#include "tensor/huge_page_buffer.h"

#include <cstddef>
#include <cstdint>

namespace cairn::calibration {

struct ReadBandwidth {
    double bestGBs = 0;  // the fastest pass
    double medianGBs = 0;  // the median pass
};

// A buffer of `bytes` (rounded down to whole 64-byte lines, at least one),
// allocated and touched once (not timed), to be read again and again: beside
// a benchmark whose runs are minutes apart, a read right after each run says
// what the memory gave that run (a shared host's speed drifts by minutes).
class ReadLoop {
public:
    // std::bad_alloc when the buffer cannot be allocated.
    ReadLoop(size_t bytes, ExecContext& ctx);
    // Reads the buffer `passes` times on ctx's threads, each pass from memory
    // (evicted from the caches first where canEvictFromCaches()).
    ReadBandwidth measure(int passes);

private:
    ExecContext& ctx_;
    int64_t lines_ = 0;  // before buffer_, which is sized from it
    tensor::HugePageBuffer buffer_;
};

// ReadLoop(bytes, ctx).measure(passes).
ReadBandwidth measureReadBandwidth(size_t bytes, int passes, ExecContext& ctx);

}  // namespace cairn::calibration
