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
    uint8_t* to = allocate(bytes);
    if (!to) return w;
    tensor::MatrixView owned = w;
    if (tileable && w.rows >= tensor::kTileRows && tensor::rowTilesFit(w.type, w.cols) &&
        tensor::rowTilesWanted(w.type)) {
        owned = tensor::tileRows(w, to, team());
        tiledBytes_ += bytes;
    } else {
        copy(w.data, bytes, to);
        owned.data = to;
    }
    file.releasePages(w.data, bytes);
    bytes_ += bytes;
    return owned;
}

// The matrices one after another in large huge-page-hinted arenas. Each in a
// mapping of its own left most of them in 4 KiB pages: the kernel merges
// neighbouring mappings, and a 2 MiB range shared by two matrices is not a
// huge page once the first one's 4 KiB pages are in it (llama-1b Q4_0: 352
// of its 534 MB of layer weights in huge pages, its 0.6 MB wk and wv in
// none). Untouched arena space costs only address space. Intel Xeon (family
// 6 model 207), 2026-12-07, tg t/s before / after (`bench -p 16 -n 256 -t 2
// -r 2`, interleaved, seven rounds): llama-1b Q4_K +2 to +7 % in every round
// (e.g. 34.31 / 36.63), Q4_0 +2 to +5 % in six (one -7 %), mamba-370m Q8_0
// +0.3 to +14 % in all seven; F16 and Q8_0, whose matrices were mostly huge
// pages already, within +-4 % either way over four rounds.
uint8_t* OwnedWeights::allocate(size_t bytes) {
    constexpr size_t kArenaBytes = size_t(256) << 20;
    constexpr size_t kAlign = 4096;  // each matrix on a 4 KiB boundary (a page on x86-64; more than the kernels need)
    size_t at = (arenaUsed_ + kAlign - 1) / kAlign * kAlign;
    if (buffers_.empty() || at + bytes > buffers_.back().size()) {
        tensor::HugePageBuffer arena(std::max(kArenaBytes, bytes));
        if (!arena) return nullptr;
        buffers_.push_back(std::move(arena));
        at = 0;
    }
    arenaUsed_ = at + bytes;
    return buffers_.back().data() + at;
}

}  // namespace cairn::model
