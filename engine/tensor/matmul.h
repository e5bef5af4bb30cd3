// The one matrix product the models use:  y[t][r] = W[r] · x[t].
//
// Exactness contract (the invariants the tests check bit for bit): y[t][r]
// depends only on W[r] and x[t] — not on the number of tokens in the call,
// not on which rows are computed together, not on the thread count. Each
// weight block is decoded once per call and applied to all tokens of the call.
#pragma once

#include "cairn/exec.h"
#include "cairn/tensor_type.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::tensor {

// How a matrix's rows are stored.
//   File: row after row, as in the GGUF file.
//   Tiles16: each whole tile of 16 rows (rows 16t to 16t + 15, the same bytes
//     as in the file layout, at the same place) has its blocks re-ordered for
//     the decode kernels (tensor/row_tiles.h); rows past the last whole tile
//     are stored as in the file. Only types with hasRowTiles() use it.
enum class RowLayout : uint8_t { File, Tiles16 };

// A 2-D weight: `rows` rows of `cols` elements of `type`.
struct MatrixView {
    TensorType type = TensorType::F32;
    const uint8_t* data = nullptr;
    int64_t rows = 0;
    int64_t cols = 0;
    size_t rowStride = 0;  // bytes between rows
    RowLayout layout = RowLayout::File;
    // Row r in the file layout; with Tiles16, the start of r's tile when r is a
    // multiple of 16 (a row inside a whole tile is not stored as a row).
    const uint8_t* row(int64_t r) const { return data + size_t(r) * rowStride; }
};

// x: nTokens rows of `cols` floats, `ldx` floats apart; y: nTokens rows, `ldy` floats apart.
void matmul(const MatrixView& w, const float* x, int64_t ldx, int64_t nTokens, float* y, int64_t ldy, ExecContext& ctx);

// Work on output rows as soon as they are written (an epilogue): fn(r0, r1)
// runs once per task, on the thread that computed rows [r0, r1) of every
// token, right after them; r0 and r1 are multiples of rowMultiple, or r1 is
// the last row. So the next step on those rows needs no pass of its own and
// no wait for the other rows (Mamba's conv runs on its x rows this way while
// the other thread still streams the input projection).
struct RowsDone {
    int64_t rowMultiple = 1;
    std::function<void(int64_t r0, int64_t r1)> fn;
};
void matmul(const MatrixView& w, const float* x, int64_t ldx, int64_t nTokens, float* y, int64_t ldy, ExecContext& ctx,
            const RowsDone& then);

// One output of matmulSameInput: y = W · x, rows `ldy` floats apart per token.
struct MatmulOutput {
    MatrixView w;
    float* y = nullptr;
    int64_t ldy = 0;
};
// matmul of each output on the same activations x (a layer's query, key and
// value projections), each with the bits matmul gives it. On one token with
// a thread team, consecutive outputs of the same weight type, columns and
// layout run as one call: the activations are quantized once and the
// threads share out all their rows and meet once, instead of once per
// matrix, where the small ones were mostly ramp-up and wait. AMD EPYC Zen 4
// (family 25 model 17): 16 llama-1b-shaped Q4_0 layers' q, k, v and o
// (avx512vnni-hwpf, one process alternating with a plain read loop), share
// of the read loop in the host's fast minutes, separate / together: 0.812 /
// 0.893, 0.784 / 0.888 (slow minutes 1.031 / 1.038); whole llama-1b decode,
// alternating every other token in one process, time a token: Q4_0 +2.0,
// +1.0 % (fast minutes), -0.1 to +0.5 % (slow); Q4_K_M +1.5, +1.2, +0.9,
// -0.4 %; Q8_0 0.0 to +0.5 %; F16 +0.1 to +0.6 %.
void matmulSameInput(std::span<const MatmulOutput> outputs, const float* x, int64_t ldx, int64_t nTokens,
                     ExecContext& ctx);

// matmul on the kernel path named `path` whatever the choice (the
// calibration times each path this way); a path this CPU lacks is a cairn::Error.
void matmulOnPath(std::string_view path, const MatrixView& w, const float* x, int64_t ldx, int64_t nTokens, float* y,
                  int64_t ldy, ExecContext& ctx);

// Whether matmul quantizes activations to 8 bits for this weight type (as
// llama.cpp does: Q8_0 blocks for the 32-element formats, Q8_K for K formats).
// Decides which llama.cpp reference a conformance test compares against.
bool quantizesActivations(TensorType weightType);

// Name of the base kernel path chosen at run time on this CPU ("avx512vnni", "avx2",
// "neon-dotprod", "neon", "scalar"); an applied KernelChoice (cairn/kernel_choice.h)
// may run others per weight family and regime (kernelPathFor). The environment variable
// CAIRN_KERNELS=scalar|avx2|avx512|neon|neon-dotprod selects a lower path.
// Every path gives the same bits (one canonical arithmetic, see kernels_common.h).
const char* kernelPath();

// Paths this binary has and this CPU runs, best first.
std::vector<std::string> availableKernelPaths();

// Switches to path `name` everywhere, dropping any applied KernelChoice (for
// tests and benchmarks; not while a matmul runs).
// Returns false, changing nothing, when this CPU or build lacks it.
bool forceKernelPath(std::string_view name);

}  // namespace cairn::tensor
