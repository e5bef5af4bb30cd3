// NextWeights: which weights the next decode matmul will read, learned from
// the order of the last ones, so that the threads of this one can prefetch
// them while they would otherwise wait (NextLoopReads, ThreadTeam).
//
// Why: decode streams its weights from memory, and between two matmuls the
// memory sits idle (the last ranges of a matmul on one thread, the norms,
// attention and sampling between). llama-1b Q4_0 spent about 6 % of its
// decode there (perf, Intel Xeon family 6 model 207). Prefetching the head
// of each thread's part of the next matrix into its L2 in that time made
// llama-1b Q4_0 decode 3-4 % faster and mamba-370m 2-3 % (docs/PERFORMANCE.md,
// "Prefetch while idle").
//
// A decode step runs the same matmuls in the same order every token, so the
// successor of each weight matrix the last time is the guess; a wrong guess
// costs only bandwidth (a prefetch never faults, even on freed memory).
#pragma once

#include "cairn/exec.h"
#include "tensor/matmul.h"

#include <cstddef>
#include <unordered_map>

namespace cairn::tensor {

class NextWeights {
public:
    // headBytes: how much of each thread's part to prefetch.
    explicit NextWeights(size_t headBytes) : headBytes_(headBytes) {}

    // Records `w` as the successor of the previous call's weights and returns
    // what followed `w` the last time (no data if nothing has yet).
    NextLoopReads after(const MatrixView& w);

    // Half the L2 cache of a core (so the prefetched head and the running
    // matmul's own stream both fit), 512 KiB where the size is unknown; 0 when
    // the environment variable CAIRN_IDLE_PREFETCH is "off" (benchmarks
    // compare with it).
    static size_t defaultHeadBytes();

    // The most matrices remembered; past it the table starts over (a model
    // has a few hundred).
    static constexpr size_t kMaxEntries = 4096;

private:
    struct Region {
        const void* data;
        size_t bytes;
    };
    size_t headBytes_;
    const void* last_ = nullptr;
    std::unordered_map<const void*, Region> next_;
};

}  // namespace cairn::tensor
