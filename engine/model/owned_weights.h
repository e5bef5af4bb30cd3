// Weights copied at load into memory the model owns, instead of read from the
// file's mapping at every token: in the Tiles16 row layout (tensor/row_tiles.h)
// where this CPU's decode kernels read it, otherwise as the file stores them.
//
// Why own them: decode streams every weight once a token, and the page
// cache's pages behind a file mapping stream at a speed that depends on how
// the system happened to cache the file (folio sizes, where the pages lie);
// memory the process allocates does not. On the Intel Xeon (family 6 model
// 207) KVM guest of 2026-12-06, a 1 GiB AVX-512 read loop by two threads read
// the page-cached llama-1b F16 file's mapping at 16–18 GB/s and an anonymous
// copy at 22–25 for an hour (F16 decode tg 7.0–7.4 → 8.9–9.8 t/s owned,
// mamba-370m F16 +10–18 %), then both alike; owned was never slower beyond
// the noise (docs/PERFORMANCE.md, "Owned weights").
//
// The mapped pages a copy replaces are released, so an owned weight takes no
// more memory than a mapped one — but memory the system cannot drop and read
// again from the file, hence the budget (half of physical memory by default).
// CAIRN_OWNED_WEIGHTS=off keeps every weight mapped.
#pragma once

#include "cairn/exec.h"
#include "cairn/gguf.h"
#include "tensor/huge_page_buffer.h"
#include "tensor/matmul.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace cairn::model {

class OwnedWeights {
public:
    // `budget`: the most bytes it copies; the weights past it stay mapped
    // from the file, so a model larger than the budget still loads and runs.
    explicit OwnedWeights(size_t budget = defaultBudget());
    ~OwnedWeights();
    // Half of physical memory, or 0 when CAIRN_OWNED_WEIGHTS=off.
    static size_t defaultBudget();

    // `w` (a view of `file`'s mapping) copied into owned memory when it fits
    // the budget: in the Tiles16 layout when `tileable`, w has at least one
    // whole tile, its columns fit (tensor::rowTilesFit) and
    // tensor::rowTilesWanted(w.type); else in the file's
    // layout. Otherwise `w` itself.
    tensor::MatrixView own(const gguf::File& file, const tensor::MatrixView& w, bool tileable = true);

    size_t bytes() const { return bytes_; }  // owned, in either layout
    size_t tiledBytes() const { return tiledBytes_; }  // of those, in Tiles16

    // Ends the load: the threads that copy the weights are let go.
    void finishLoading() { team_.reset(); }

private:
    // Every core copies and re-orders while the model loads (created at the
    // first matrix that needs it): llama-1b Q4_0's 547 MB re-ordered from the
    // page cache took 0.33 s on one thread, 0.24 s on two.
    ExecContext& team();
    void copy(const uint8_t* from, size_t bytes, uint8_t* to);
    // `bytes` of zeroed memory in the last arena or a new one; null when the
    // system refuses a mapping.
    uint8_t* allocate(size_t bytes);
    std::unique_ptr<ExecContext> team_;
    size_t budget_;
    std::vector<tensor::HugePageBuffer> buffers_;  // the arenas
    size_t arenaUsed_ = 0;  // bytes used of the last one
    size_t bytes_ = 0;
    size_t tiledBytes_ = 0;
};

}  // namespace cairn::model
