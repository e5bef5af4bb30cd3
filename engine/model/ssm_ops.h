// Mamba's per-chunk operations: the causal depthwise conv1d and the selective
// scan, each carrying its state from the previous chunk into the next.
//
// Layout and schedule. The projections produce row-major [T][channels] data.
// The work is split into blocks of kLanes consecutive channels; a block is one
// task and walks the whole chunk (channel-major order of work) with its kLanes
// channels side by side in the SIMD lanes, reading each token's kLanes values
// as one contiguous strip of the row. The conv first gathers its strip (after
// the carried inputs) into a small contiguous buffer, a cache-blocked
// transpose to channel-block-major order. In the scan's state loop the kLanes
// channels × d_state independent recurrences are interleaved, which hides the
// FMA latency without any horizontal reduction (y sums over n per lane).
//
// Per-channel tables with a second dimension (conv taps, A, the carried conv
// and SSM state) are kept "lane-packed": [blocks][width][kLanes], channel c at
// block c / kLanes, lane c % kLanes, zero-padded to whole blocks. A block's
// state then loads as whole vectors, which matters for decoding (T = 1).
//
// Exactness: a channel's outputs depend only on its own inputs, its state and
// the per-token B/C rows, computed by the same code whatever the chunk length,
// the block's position or the thread count. So a chunk of T tokens gives the
// same bits as T chunks of one token, on any number of threads.
#pragma once

#include "cairn/exec.h"

#include <cstdint>
#include <vector>

namespace cairn::model::ssm {

constexpr int64_t kLanes = 16;  // channels computed side by side
constexpr int64_t kMaxConv = 16;  // largest d_conv supported
constexpr int64_t kMaxState = 256;  // largest d_state supported

// Blocks of kLanes channels covering `channels`.
int64_t laneBlocks(int64_t channels);
// [channels][width] → lane-packed [laneBlocks(channels)][width][kLanes], and back.
std::vector<float> packLanes(const float* src, int64_t channels, int64_t width);
std::vector<float> unpackLanes(const float* packed, int64_t channels, int64_t width);

// xc[t][c] = SiLU(b[c] + Σ_{k<K} w[c][k] · x[t−K+1+k][c]), taps oldest first
// (PyTorch Conv1d, no flip), where inputs before the chunk come from `state`.
//   x:     T rows of `channels` inputs, `ldx` floats apart
//   w:     lane-packed [K] taps per channel; b: [channels] (null: no bias)
//   state: lane-packed [K−1] per channel: the previous K−1 inputs, oldest
//          first; replaced by the last K−1 inputs including this chunk's
//   out:   T rows of `channels`, `ldo` floats apart
void conv1dSilu(const float* x, int64_t ldx, int64_t T, int64_t channels, int64_t K, const float* w, const float* b,
                float* state, float* out, int64_t ldo, ExecContext& ctx);
// conv1dSilu of one token for channels [c0, c1) only, on this thread (the
// same bits): c0 a multiple of kLanes, c1 one too or `channels`. For running
// the conv on rows of the input projection as they are written (RowsDone).
void conv1dSiluOneToken(const float* x, int64_t c0, int64_t c1, int64_t channels, int64_t K, const float* w,
                        const float* b, float* state, float* out);
// The same causal conv without bias and activation (LFM2's short conv):
// out[t][c] = Σ_{k<K} w[c][k] · x[t−K+1+k][c].
void conv1d(const float* x, int64_t ldx, int64_t T, int64_t channels, int64_t K, const float* w, float* state,
            float* out, int64_t ldo, ExecContext& ctx);

struct ScanInputs {
    int64_t tokens = 0, channels = 0, stateSize = 0;
    const float* x = nullptr;
    int64_t ldx = 0;  // conv output [T][channels]
    const float* dt = nullptr;
    int64_t lddt = 0;  // W_dt · dt_low [T][channels], before bias and softplus
    const float* dtBias = nullptr;  // [channels]
    const float* B = nullptr;  // B[t·ldbc + n]
    const float* C = nullptr;  // C[t·ldbc + n]
    int64_t ldbc = 0;
    const float* A = nullptr;  // lane-packed [stateSize] per channel, as stored (−exp(A_log))
    const float* decayA = nullptr;  // instead of A: [channels], one A for every n (Mamba-2)
    const float* D = nullptr;  // [channels]
    const float* z = nullptr;
    int64_t ldz = 0;  // gate [T][channels]
};

// Per channel c, from the carried state h[c][·]:
//   Δ = softplus(dt + dtBias),  h[n] ← exp(Δ·A[c][n])·h[n] + Δ·B[n]·x,
//   y = (Σ_n h[n]·C[n] + D[c]·x) · SiLU(z)
// With decayA (Mamba-2: A[c][n] = decayA[c] for all n) exp(Δ·A) is computed
// once per channel and token instead of once per state: the same bits as
// passing the repeated table as A, at two multiplies and two adds per state
// instead of an exp (granite-4.0-h-1b: the scan fell from 27 % to 10 % of
// prefill time under perf; figures in docs/PERFORMANCE.md, Hybrid models).
// h: lane-packed [stateSize] per channel, updated in place; y: T rows of `channels`, `ldy` floats apart.
void selectiveScan(const ScanInputs& in, float* h, float* y, int64_t ldy, ExecContext& ctx);
// selectiveScan of a one-token `in` for channels [c0, c1) only, on this
// thread (the same bits): c0 a multiple of kLanes, c1 one too or `channels`;
// y is the token's row. For running the scan on rows of the Δ projection as
// they are written (RowsDone).
void selectiveScanOneToken(const ScanInputs& in, float* h, float* y, int64_t c0, int64_t c1);

// The element-wise functions used above, exposed for tests: exp with a
// relative error of a few ulp (inputs clamped to [−87.3, 88.7]), SiLU and
// softplus (v > 20 ? v : ln(1 + e^v)) built on it.
float expApprox(float x);
float siluApprox(float x);
float softplusApprox(float x);

}  // namespace cairn::model::ssm
