// The Tiles16 row layout (RowLayout in tensor/matmul.h): weights re-ordered
// once at load so that the decode kernel reads each tile of 16 rows as one
// stream already in its register order.
//
// Why: decode streams every weight byte once per token, and from the file's
// layout (16 rows read side by side, each block's scale beside its codes) the
// AVX-512 Q4_0 tile spent more time moving bytes into lanes than multiplying:
// it read 28 GB/s from L2, the Tiles16 tile 43-44 GB/s (Intel Xeon family 6
// model 207, see docs/PERFORMANCE.md), which is what lets decode run at the
// memory's speed.
//
// Per block column b of a tile (16 rows' blocks, at b * 16 * block bytes):
//   bytes 0-31: the 16 rows' d (fp16), row order;
//   then 64-byte chunks (Q4_0: 4, Q8_0: 8), chunk j holding code bytes
//   4j..4j+3 of row i at 32 + 64 j + 4 i: one int32 lane per row, so the
//   kernel's dpbusd against 4 broadcast activation bytes sums the 16 rows in
//   their own lanes and needs no reduction across lanes;
//   Q8_0 codes stored as the unsigned codes the kernels multiply (q ^ 0x80).
// Q4_K's super-blocks are stored word by word instead: dword k of row i at
// 64k + 4i (d | dmin, the 12 scale bytes, then the codes), so every part of a
// row's block is in that row's int32 lane (kernels::tileWordAt). Q6_K's
// 210-byte super-blocks are stored the same way for their 52 whole words
// (codes and scales), in the order its decode kernels read them
// (kernels::q6kTileSlot), then the 16 rows' d (kernels::kQ6_KTileD).
// The AVX2 paths read the Q4_0, Q8_0, Q4_K and Q6_K tiles too, each 64
// bytes as two 256-bit halves (rows 0-7, 8-15); from L2 their decode
// tiles read 32, 41, 28 and 21.5 GB/s where the file layout's read 20, 28,
// 11-15 and 18.6 (kernels_avx2_impl.h).
// Float weights (F32, F16, BF16; columns a multiple of 16, at most
// kMaxFloatTileCols) are tiled as 8 pairs of rows, each pair's two rows
// interleaved in chunks of 16 elements (kernels::floatRow): a decode kernel
// then reads two rows as one stream, where rows side by side are as many
// streams as rows, each needing a software prefetch. AMD EPYC Zen 4 (family
// 25 model 17), F16 on 2 threads, each call alternating with a plain read
// loop's (a throwaway program; median share of the read loop, host fast /
// slow): 16384x2048 4 file rows side by side (the AVX2 kernel) 0.85-0.88 /
// 0.92-0.95, pairs 0.99-1.00 / 1.00-1.02; 2048x2048, host fast, 0.84
// against 0.96. But the pairs load the activations once per 2 rows, and
// from 4096 columns on (16 KiB of f32) these no longer stay in L1 beside
// the stream: 4 file rows / pairs, 4096x4096 0.85 / 0.57 (fast), 0.90 /
// 0.82 (slow); 2048x8192 0.83 / 0.51, 0.93 / 0.79. So wider matrices keep
// the file layout (kMaxFloatTileCols).
// Tied embeddings are tiled too (the projection streams the whole table every
// token); their lookups gather a row back with fileLayoutRow.
//
// A tile has the same bytes as the 16 file rows it replaces, so a Tiles16
// matrix has the file layout's size and its tiles start where the rows did.
#pragma once

#include "cairn/exec.h"
#include "cairn/tensor_type.h"
#include "tensor/matmul.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cairn::tensor {

constexpr int64_t kTileRows = 16;
constexpr int64_t kMaxFloatTileCols = 2048;  // see the comment at the top

// Whether `type` has a Tiles16 layout.
bool hasRowTiles(TensorType type);
// Whether a matrix of `type` with `cols` columns is tiled: float tiles need
// whole chunks of 16 columns, and at most kMaxFloatTileCols of them.
bool rowTilesFit(TensorType type, int64_t cols);

// Whether the kernels that decode (one token) `type` on this CPU read the
// Tiles16 layout themselves. Other paths give the same bits through
// unpackRowTile, at the cost of a copy, so a model tiles its weights only
// when this is true.
bool decodeReadsRowTiles(TensorType type);

// Whether kernel path `path` (matmulOnPath) reads the Tiles16 layout of
// `type` itself for this many tokens (false for a path this CPU lacks).
bool pathReadsRowTiles(std::string_view path, TensorType type, int64_t nTokens);

// Whether a weight of `type` is best stored in the Tiles16 layout on this
// CPU: decodeReadsRowTiles, unless the environment variable CAIRN_ROW_TILES
// is "off" (benchmarks compare the two layouts with it).
bool rowTilesWanted(TensorType type);

// 16 rows of the file layout (`rowBytes` apart, `rowBytes` long) into one tile.
void packRowTile(TensorType type, const uint8_t* rows, size_t rowBytes, uint8_t* tile);
// One tile back into 16 rows of the file layout, `rowBytes` apart.
void unpackRowTile(TensorType type, const uint8_t* tile, size_t rowBytes, uint8_t* rows);

// Row r of `w` in the file layout: where it is stored, or for a row inside a
// whole tile of a Tiles16 matrix, its bytes gathered into `scratch` (one row
// long). For lookups of single rows (the embedding table of tied embeddings).
const uint8_t* fileLayoutRow(const MatrixView& w, int64_t r, uint8_t* scratch);

// Writes `w` (File layout, rows stored contiguously) to `out` (rows * rowStride
// bytes) in the Tiles16 layout, tiles in parallel on `ctx`, and returns the
// view of `out`. cairn::Error if the type has no Tiles16 layout or the rows
// are not contiguous.
MatrixView tileRows(const MatrixView& w, uint8_t* out, ExecContext& ctx);

}  // namespace cairn::tensor
