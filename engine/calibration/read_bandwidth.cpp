#include "calibration/read_bandwidth.h"

#include "calibration/cache_eviction.h"
#include "tensor/vector_clones.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

namespace cairn::calibration {
namespace {

// One 64-byte line as a vector of words (GCC/Clang vector extension).
typedef uint64_t Line __attribute__((vector_size(64)));

// The read loop in the widest loads this CPU has (CAIRN_VECTOR_CLONES). The
// width matters though memory is the limit: with four 16-byte loads a line
// the out-of-order window holds fewer lines in flight: on an Intel Xeon
// (family 6 model 207, 2 threads, 1 GiB, alternating runs) an SSE2 loop read
// 17-23 GB/s, this one 32-34.
CAIRN_VECTOR_CLONES uint64_t sumLines(const Line* from, const Line* to) {
    Line a{}, b{}, c{}, d{};
    const Line* p = from;
    for (; p + 4 <= to; p += 4) {
        a += p[0];
        b += p[1];
        c += p[2];
        d += p[3];
    }
    for (; p < to; ++p) a += *p;
    const Line s = (a + b) + (c + d);
    uint64_t t = 0;
    for (int i = 0; i < 8; ++i) t += s[i];
    return t;
}

// Slices of 2 MiB claimed by the threads as they go, so a thread that is
// descheduled for a moment does not hold the pass back (one slice a thread
// read no faster).
constexpr int64_t kSliceLines = (2 << 20) / 64;

int64_t sliceCount(int64_t lines) { return (lines + kSliceLines - 1) / kSliceLines; }

// Slice s of a buffer of `lines` lines at `data`: [first, last).
std::pair<Line*, Line*> slice(Line* data, int64_t lines, int64_t s) {
    return {data + s * kSliceLines, data + std::min(lines, (s + 1) * kSliceLines)};
}

}  // namespace

ReadLoop::ReadLoop(size_t bytes, ExecContext& ctx)
    : ctx_(ctx), lines_(int64_t(std::max<size_t>(1, bytes / sizeof(Line)))),
      // The memory kind a model's owned weights live in (tensor/huge_page_buffer.h).
      buffer_(size_t(lines_) * sizeof(Line)) {
    if (!buffer_) throw std::bad_alloc();
    Line* data = reinterpret_cast<Line*>(buffer_.data());
    ctx_.parallelFor(sliceCount(lines_), 1, [&](int64_t a, int64_t b) {
        for (int64_t s = a; s < b; ++s) {
            auto [from, to] = slice(data, lines_, s);
            std::fill(from, to, Line{} + uint64_t(s));  // touches every page on the thread that reads it
        }
    });
}

ReadBandwidth ReadLoop::measure(int passes) {
    Line* data = reinterpret_cast<Line*>(buffer_.data());
    const int64_t slices = sliceCount(lines_);
    std::vector<double> gbs;
    std::vector<uint64_t> sums(static_cast<size_t>(slices));
    for (int pass = 0; pass < std::max(1, passes); ++pass) {
        evictFromCaches(buffer_.data(), size_t(lines_) * sizeof(Line), ctx_);
        const auto t0 = std::chrono::steady_clock::now();
        ctx_.parallelFor(slices, 1, [&](int64_t a, int64_t b) {
            for (int64_t s = a; s < b; ++s) {
                auto [from, to] = slice(data, lines_, s);
                sums[size_t(s)] = sumLines(from, to);  // kept, so the reads are not optimized away
            }
        });
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        gbs.push_back(double(lines_) * sizeof(Line) / seconds / 1e9);
    }
    volatile uint64_t sink = 0;
    for (uint64_t s : sums) sink = sink + s;
    std::sort(gbs.begin(), gbs.end());
    return {gbs.back(), gbs[gbs.size() / 2]};
}

ReadBandwidth measureReadBandwidth(size_t bytes, int passes, ExecContext& ctx) {
    return ReadLoop(bytes, ctx).measure(passes);
}

}  // namespace cairn::calibration
