// Weights re-ordered at load into the Tiles16 row layout (tensor/row_tiles.h),
// owned by the model: where this CPU's decode kernels read that layout, decode
// streams them at the memory's speed. The mapped file pages they replace are
// released, so a tiled weight costs no more memory than a mapped one.
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
    // `w` (a view of `file`'s mapping) in the Tiles16 layout when
    // tensor::rowTilesWanted(w.type); otherwise `w`.
    tensor::MatrixView tile(const gguf::File& file, const tensor::MatrixView& w);

    size_t bytes() const { return bytes_; }

    // Ends the load: the threads that re-order the weights are let go.
    void finishLoading() { team_.reset(); }

private:
    // Every core re-orders while the model loads (created at the first tile):
    // on 2 cores llama-1b Q4_0's 550 MB took 0.24 s on one thread.
    std::unique_ptr<ExecContext> team_;
    struct Free {
        void operator()(uint8_t* p) const { std::free(p); }
    };
    std::vector<std::unique_ptr<uint8_t, Free>> buffers_;
    size_t bytes_ = 0;
};

}  // namespace cairn::model
