#include "tensor/huge_page_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

namespace cairn::tensor {

HugePageBuffer::HugePageBuffer(size_t bytes) {
    if (bytes == 0) return;
    // Mapped with room to start on a huge-page boundary, the rest unmapped:
    // only whole aligned 2 MiB inside a mapping can be huge pages, so an
    // unaligned start would leave its first and last 2 MiB in 4 KiB pages.
    const size_t slack = bytes >= kHugePageBytes ? kHugePageBytes : 0;
    void* p = mmap(nullptr, bytes + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    auto* raw = static_cast<uint8_t*>(p);
    uint8_t* start = raw;
    if (slack) {
        const auto at = reinterpret_cast<uintptr_t>(raw);
        start = raw + ((kHugePageBytes - at % kHugePageBytes) % kHugePageBytes);
        const size_t pageSize = size_t(sysconf(_SC_PAGESIZE));
        const size_t mapped = (bytes + pageSize - 1) / pageSize * pageSize;
        if (start > raw) munmap(raw, size_t(start - raw));
        if (raw + bytes + slack > start + mapped) munmap(start + mapped, size_t(raw + bytes + slack - (start + mapped)));
    }
    madvise(start, bytes, MADV_HUGEPAGE);  // a hint: its failure changes nothing
    data_ = start;
    bytes_ = bytes;
}

HugePageBuffer::~HugePageBuffer() {
    if (data_) munmap(data_, bytes_);
}

HugePageBuffer::HugePageBuffer(HugePageBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

HugePageBuffer& HugePageBuffer::operator=(HugePageBuffer&& other) noexcept {
    if (this != &other) {
        if (data_) munmap(data_, bytes_);
        data_ = std::exchange(other.data_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

}  // namespace cairn::tensor
