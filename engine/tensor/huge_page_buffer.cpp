#include "tensor/huge_page_buffer.h"

#include <sys/mman.h>

#include <utility>

namespace cairn::tensor {

HugePageBuffer::HugePageBuffer(size_t bytes) {
    if (bytes == 0) return;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    madvise(p, bytes, MADV_HUGEPAGE);  // a hint: its failure changes nothing
    data_ = static_cast<uint8_t*>(p);
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
