// Re-ordering between the file layout and Tiles16 (row_tiles.h). Scalar code:
// it runs once per weight at load, and per tile on the paths that read only
// the file layout.
#include "tensor/row_tiles.h"

#include "cairn/error.h"
#include "tensor/blocks.h"
#include "tensor/kernels_common.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace cairn::tensor {

namespace {

// Where one block column of a tile keeps its rows' blocks: Q4_0 and Q8_0 as
// a 2-byte d and code chunks (kernels_common.h has the code positions), Q4_K
// and Q6_K as whole words (kernels::tileWordAt), then Q6_K's 2 bytes of d
// for each row in row order.
struct TileBlock {
    size_t fileBlock;  // bytes of one row's block in the file
    size_t tileBlock;  // bytes of the 16 rows' blocks in a tile
    uint8_t codeFlip;  // xor between a file code byte and its tile byte
    bool wordsOnly;  // every whole 4 bytes of a block are one word of its row's lane
    bool q6Order;  // the words in Q6_K's order (kernels::q6kTileSlot)
    int chunks() const { return int(fileBlock - 2) / 4; }
    size_t words() const { return fileBlock / 4; }
    size_t tailBytes() const { return fileBlock % 4; }  // after the words (Q6_K's d)
    // Where row i's tail bytes sit in a block column: after the 16 rows' words.
    size_t tailAt(int i) const { return kernels::tileWordAt(0, int(words())) + tailBytes() * size_t(i); }
};

TileBlock tileBlock(TensorType type) {
    if (type == TensorType::Q8_0)
        return {sizeof(BlockQ8_0), kernels::kQ8_0TileBlock, kernels::kQ8_0TileCodeFlip, false, false};
    if (type == TensorType::Q4_K) return {sizeof(BlockQ4_K), kernels::kQ4_KTileBlock, 0, true, false};
    if (type == TensorType::Q6_K) return {sizeof(BlockQ6_K), kernels::kQ6_KTileBlock, 0, true, true};
    return {sizeof(BlockQ4_0), kernels::kQ4_0TileBlock, 0, false, false};
}

// Row i's block of a block column (`column`, tile layout) to or from `block`
// (file layout).
void blockToTile(const TileBlock& tb, const uint8_t* block, int i, uint8_t* column) {
    if (tb.wordsOnly) {
        for (size_t k = 0; k < tb.words(); ++k)
            std::memcpy(column + kernels::tileWordAt(i, kernels::wordTileSlot(tb.q6Order, int(k))), block + 4 * k, 4);
        std::memcpy(column + tb.tailAt(i), block + 4 * tb.words(), tb.tailBytes());
        return;
    }
    std::memcpy(column + 2 * i, block, 2);
    for (int j = 0; j < tb.chunks(); ++j)
        for (int k = 0; k < 4; ++k)
            column[kernels::tileCodeWordAt(i, j) + k] = uint8_t(block[2 + 4 * j + k] ^ tb.codeFlip);
}
void blockFromTile(const TileBlock& tb, const uint8_t* column, int i, uint8_t* block) {
    if (tb.wordsOnly) {
        for (size_t k = 0; k < tb.words(); ++k)
            std::memcpy(block + 4 * k, column + kernels::tileWordAt(i, kernels::wordTileSlot(tb.q6Order, int(k))), 4);
        std::memcpy(block + 4 * tb.words(), column + tb.tailAt(i), tb.tailBytes());
        return;
    }
    std::memcpy(block, column + 2 * i, 2);
    for (int j = 0; j < tb.chunks(); ++j)
        for (int k = 0; k < 4; ++k)
            block[2 + 4 * j + k] = uint8_t(column[kernels::tileCodeWordAt(i, j) + k] ^ tb.codeFlip);
}

// Float types: row i of a tile to or from the file layout, chunk by chunk
// (kernels::floatRow has the chunk positions).
void floatRowToTile(size_t rowBytes, size_t chunk, const uint8_t* row, int i, uint8_t* tile) {
    uint8_t* pair = tile + size_t(i / 2) * 2 * rowBytes + size_t(i % 2) * chunk;
    for (size_t c = 0; c < rowBytes / chunk; ++c) std::memcpy(pair + 2 * c * chunk, row + c * chunk, chunk);
}
void floatRowFromTile(size_t rowBytes, size_t chunk, const uint8_t* tile, int i, uint8_t* row) {
    const uint8_t* pair = tile + size_t(i / 2) * 2 * rowBytes + size_t(i % 2) * chunk;
    for (size_t c = 0; c < rowBytes / chunk; ++c) std::memcpy(row + c * chunk, pair + 2 * c * chunk, chunk);
}
size_t floatChunkBytes(TensorType type) { return size_t(kernels::kFloatTileChunk * kernels::floatElementBytes(type)); }

// Whether path `ks` reads the Tiles16 layout of `type` for `nTokens` itself.
bool readsTiles(const kernels::KernelSet* ks, TensorType type, int64_t nTokens) {
    return hasRowTiles(type) && ks && ks->readsRowTiles && ks->readsRowTiles(type, nTokens);
}

void requireRowTiles(TensorType type) {
    if (!hasRowTiles(type)) throw Error("row tiles", "no tile layout for " + std::string(tensorTypeName(type)));
}

// Row i of a tile into `row` (file layout).
void unpackTileRow(TensorType type, const uint8_t* tile, int i, size_t rowBytes, uint8_t* row) {
    if (kernels::isFloatWeight(type)) return floatRowFromTile(rowBytes, floatChunkBytes(type), tile, i, row);
    const TileBlock tb = tileBlock(type);
    const size_t nb = rowBytes / tb.fileBlock;
    for (size_t b = 0; b < nb; ++b) blockFromTile(tb, tile + b * tb.tileBlock, i, row + b * tb.fileBlock);
}

}  // namespace

bool hasRowTiles(TensorType type) {
    return type == TensorType::Q4_0 || type == TensorType::Q8_0 || type == TensorType::Q4_K ||
        type == TensorType::Q6_K || kernels::isFloatWeight(type);
}

bool rowTilesFit(TensorType type, int64_t cols) {
    if (!kernels::isFloatWeight(type)) return hasRowTiles(type);
    return cols % kernels::kFloatTileChunk == 0 && cols <= kMaxFloatTileCols;
}

bool decodeReadsRowTiles(TensorType type) { return readsTiles(&kernels::activeKernels(type, 1), type, 1); }

bool pathReadsRowTiles(std::string_view path, TensorType type, int64_t nTokens) {
    return readsTiles(kernels::kernelsNamed(path), type, nTokens);
}

bool rowTilesWanted(TensorType type) {
    const char* env = std::getenv("CAIRN_ROW_TILES");
    return decodeReadsRowTiles(type) && !(env && std::strcmp(env, "off") == 0);
}

void packRowTile(TensorType type, const uint8_t* rows, size_t rowBytes, uint8_t* tile) {
    requireRowTiles(type);
    if (kernels::isFloatWeight(type)) {
        for (int i = 0; i < kTileRows; ++i)
            floatRowToTile(rowBytes, floatChunkBytes(type), rows + size_t(i) * rowBytes, i, tile);
        return;
    }
    const TileBlock tb = tileBlock(type);
    const size_t nb = rowBytes / tb.fileBlock;
    for (size_t b = 0; b < nb; ++b)
        for (int i = 0; i < kTileRows; ++i)
            blockToTile(tb, rows + size_t(i) * rowBytes + b * tb.fileBlock, i, tile + b * tb.tileBlock);
}

void unpackRowTile(TensorType type, const uint8_t* tile, size_t rowBytes, uint8_t* rows) {
    requireRowTiles(type);
    for (int i = 0; i < kTileRows; ++i) unpackTileRow(type, tile, i, rowBytes, rows + size_t(i) * rowBytes);
}

const uint8_t* fileLayoutRow(const MatrixView& w, int64_t r, uint8_t* scratch) {
    if (w.layout == RowLayout::File || r >= w.rows / kTileRows * kTileRows) return w.row(r);
    requireRowTiles(w.type);
    unpackTileRow(w.type, w.row(r / kTileRows * kTileRows), int(r % kTileRows), w.rowStride, scratch);
    return scratch;
}

MatrixView tileRows(const MatrixView& w, uint8_t* out, ExecContext& ctx) {
    requireRowTiles(w.type);
    if (!rowTilesFit(w.type, w.cols))
        throw Error("row tiles", std::to_string(w.cols) + " columns do not fit a float tile");
    const size_t rb = rowBytes(w.type, w.cols);
    if (w.layout != RowLayout::File || w.rowStride != rb)
        throw Error("row tiles", "the matrix is not stored as contiguous file rows");
    const int64_t tiles = w.rows / kTileRows;
    ctx.parallelFor(tiles, 16, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t)
            packRowTile(w.type, w.row(t * kTileRows), rb, out + size_t(t * kTileRows) * rb);
    });
    const size_t tail = size_t(w.rows - tiles * kTileRows) * rb;
    if (tail) std::memcpy(out + size_t(tiles * kTileRows) * rb, w.row(tiles * kTileRows), tail);
    MatrixView v = w;
    v.data = out;
    v.layout = RowLayout::Tiles16;
    return v;
}

}  // namespace cairn::tensor
