// Memory for weights that decode streams, and for everything that times such
// a stream: anonymous memory in its own mapping, with a huge-page hint.
//
// Owned weights (model/owned_weights.h) live in it, so the read loop that
// decode is measured against (calibration/read_bandwidth.h), the kernel
// calibration's synthetic weights and `cairn-cli bench-kernels` use it too:
// each then reads the kind of memory a model's decode reads. It matters to
// the figures: Intel Xeon (family 6 model 207), 2026-12-06, a 1 GiB read
// loop by two threads (a program outside the repo, three rounds of 7 passes),
// best GB/s 4 KiB pages / hinted: 29.8 / 30.4, 29.5 / 30.4, 29.5 / 30.2;
// `bench-kernels --rows 8192 --cols 2048 -p 1 -t 2 -r 9`, three interleaved
// rounds, GB/s: Q4_0 24.6-24.9 / 26.0-26.1, Q8_0 26.4-26.8 / 27.8-28.1,
// Q4_K 22.0-22.3 / 23.0-23.4.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cairn::tensor {

class HugePageBuffer {
public:
    // The huge-page size of x86-64 and of arm64 with 4 KiB pages.
    static constexpr size_t kHugePageBytes = size_t(2) << 20;

    HugePageBuffer() = default;
    // `bytes` of zeroed memory, starting on a kHugePageBytes boundary when it
    // is at least that large; empty (data() null) when the system refuses the
    // mapping. The hint is ignored where transparent huge pages are off.
    explicit HugePageBuffer(size_t bytes);
    ~HugePageBuffer();
    HugePageBuffer(HugePageBuffer&& other) noexcept;
    HugePageBuffer& operator=(HugePageBuffer&& other) noexcept;
    HugePageBuffer(const HugePageBuffer&) = delete;
    HugePageBuffer& operator=(const HugePageBuffer&) = delete;

    uint8_t* data() const { return data_; }
    size_t size() const { return bytes_; }
    explicit operator bool() const { return data_ != nullptr; }

private:
    uint8_t* data_ = nullptr;
    size_t bytes_ = 0;
};

}  // namespace cairn::tensor
