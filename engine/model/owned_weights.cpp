#include "model/owned_weights.h"

#include "tensor/huge_page_buffer.h"
#include "tensor/row_tiles.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace cairn::model {

OwnedWeights::OwnedWeights(size_t budget) : budget_(budget) {}
OwnedWeights::~OwnedWeights() = default;

size_t OwnedWeights::defaultBudget() {
    if (const char* env = std::getenv("CAIRN_OWNED_WEIGHTS"); env && std::strcmp(env, "off") == 0) return 0;
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    return pages > 0 && pageSize > 0 ? size_t(pages) * size_t(pageSize) / 2 : 0;
}

ExecContext& OwnedWeights::team() {
    if (!team_) team_ = std::make_unique<ExecContext>(int(std::max(1u, std::thread::hardware_concurrency())));
    return *team_;
}

// Large matrices on every core: llama-1b F16 (2.4 GB, page-cached), a 1-token
// bench run took 0.74–1.03 s copying on two threads, 1.12–1.51 s on one (0.48–
// 0.51 s mapped), idle Intel Xeon, 2026-12-06. Small ones on the calling
// thread: a team is not worth starting for them, and qemu-user here cannot
// start a thread at all (tests/cross loads only tiny models).
void OwnedWeights::copy(const uint8_t* from, size_t bytes, uint8_t* to) {
    constexpr size_t kChunk = size_t(1) << 20;
    if (bytes < 4 * kChunk) {
        std::memcpy(to, from, bytes);
        return;
    }
    team().parallelFor(int64_t((bytes + kChunk - 1) / kChunk), 1, [&](int64_t c0, int64_t c1) {
        const size_t b0 = size_t(c0) * kChunk, b1 = std::min(bytes, size_t(c1) * kChunk);
        std::memcpy(to + b0, from + b0, b1 - b0);
    });
}

tensor::MatrixView OwnedWeights::own(const gguf::File& file, const tensor::MatrixView& w, bool tileable) {
    const size_t bytes = size_t(w.rows) * w.rowStride;
    if (bytes == 0 || bytes > budget_ - std::min(budget_, bytes_)) return w;  // stays mapped, evictable
    // Each matrix in its own mapping with the huge-page hint: its 2 MiB aligned
    // inside may be backed by huge pages, which makes the copy fault 512 times
    // less (llama-1b F16's 2.4 GB, copied on two threads: a 1-token bench run
    // took 1.3–1.5 s with 4 KiB pages, 1.0–1.1 s with the hint, 0.47 s
    // mapped), and unlike a 2 MiB aligned allocation it wastes nothing on the
    // small matrices.
    tensor::HugePageBuffer buffer(bytes);
    if (!buffer) return w;
    tensor::MatrixView owned = w;
    if (tileable && w.rows >= tensor::kTileRows && tensor::rowTilesWanted(w.type)) {
        owned = tensor::tileRows(w, buffer.data(), team());
        tiledBytes_ += bytes;
    } else {
        copy(w.data, bytes, buffer.data());
        owned.data = buffer.data();
    }
    file.releasePages(w.data, bytes);
    bytes_ += bytes;
    buffers_.push_back(std::move(buffer));
    return owned;
}

}  // namespace cairn::model
