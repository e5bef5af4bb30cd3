// Weights re-ordered at load into the Tiles16 row layout (tensor/row_tiles.h),
// owned by the model: where this CPU's decode kernels read that layout, decode
// reads them faster (docs/PERFORMANCE.md, "Q4_0 in 16-row tiles", "Q8_0 in
// 16-row tiles"). The mapped file pages they replace are released, so a
// tiled weight takes no more memory than a mapped one — but memory the
// system cannot drop and read again from the file, hence the budget.
#pragma once

#include "cairn/exec.h"
#include "cairn/gguf.h"
#include "tensor/matmul.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

namespace cairn::model {

class TiledWeights {
public:
    // `budget`: the most bytes it re-orders; the weights past it stay mapped
    // from the file, so a model larger than half of this machine's memory
    // (the default) still loads and runs as it did without tiles.
    explicit TiledWeights(size_t budget = defaultBudget()) : budget_(budget) {}
    static size_t defaultBudget();

    // `w` (a view of `file`'s mapping) in the Tiles16 layout when
    // tensor::rowTilesWanted(w.type) and it fits the budget; otherwise `w`.
    tensor::MatrixView tile(const gguf::File& file, const tensor::MatrixView& w);

    size_t bytes() const { return bytes_; }

    // Ends the load: the threads that re-order the weights are let go.
    void finishLoading() { team_.reset(); }

private:
    // Every core re-orders while the model loads (created at the first tile):
    // llama-1b Q4_0's 547 MB from the page cache took 0.33 s on one thread,
    // 0.24 s on two.
    std::unique_ptr<ExecContext> team_;
    size_t budget_;
    struct Free {
        void operator()(uint8_t* p) const { std::free(p); }
    };
    std::vector<std::unique_ptr<uint8_t, Free>> buffers_;
    size_t bytes_ = 0;
};

}  // namespace cairn::model
