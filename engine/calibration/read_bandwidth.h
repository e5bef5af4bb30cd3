// The machine's streaming read bandwidth: a plain read of a buffer larger than
// the caches, split over the thread team. It is the yardstick for decode,
// which streams every weight byte once per token (`cairn-cli bench
// --read-loop MIB` prints both).
#pragma once

#include "cairn/exec.h"

#include <cstddef>

namespace cairn::calibration {

struct ReadBandwidth {
    double bestGBs = 0;  // the fastest pass
    double medianGBs = 0;  // the median pass
};

// Reads `bytes` (rounded down to whole 64-byte lines, at least one) `passes`
// times on ctx's threads, each pass from memory (the buffer is evicted from
// the caches first where canEvictFromCaches()). Allocates and touches the
// buffer first; that is not timed.
ReadBandwidth measureReadBandwidth(size_t bytes, int passes, ExecContext& ctx);

}  // namespace cairn::calibration
