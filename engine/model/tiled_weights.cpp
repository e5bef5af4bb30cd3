#include "model/tiled_weights.h"

#include "tensor/row_tiles.h"

#include <unistd.h>

#include <algorithm>
#include <new>
#include <thread>

namespace cairn::model {

size_t TiledWeights::defaultBudget() {
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    return pages > 0 && pageSize > 0 ? size_t(pages) * size_t(pageSize) / 2 : 0;
}

tensor::MatrixView TiledWeights::tile(const gguf::File& file, const tensor::MatrixView& w) {
    if (!tensor::rowTilesWanted(w.type) || w.rows < tensor::kTileRows) return w;
    const size_t bytes = size_t(w.rows) * w.rowStride;
    if (bytes > budget_ - std::min(budget_, bytes_)) return w;  // stays mapped, evictable
    std::unique_ptr<uint8_t, Free> buffer(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) & ~size_t(63))));
    if (!buffer) return w;
    if (!team_) team_ = std::make_unique<ExecContext>(int(std::max(1u, std::thread::hardware_concurrency())));
    const tensor::MatrixView tiled = tensor::tileRows(w, buffer.get(), *team_);
    file.releasePages(w.data, bytes);
    bytes_ += bytes;
    buffers_.push_back(std::move(buffer));
    return tiled;
}

}  // namespace cairn::model
