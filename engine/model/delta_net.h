// The gated delta rule of Qwen3.5's linear-attention layers (gated DeltaNet),
// over a chunk, token by token (a recurrence), heads side by side.
//
// Per value head j (its key/query head j mod keyHeads, the GGUF's tiled
// order) and token t, from the carried state S (keyDim × valueDim):
//   q, k ← q / max(‖q‖, eps), k / max(‖k‖, eps)
//   β = sigmoid(b_j),  g = A_j · softplus(a_j + dtBias_j)
//   S ← exp(g) · S;  δ = β · (v − Sᵀk);  S ← S + k δᵀ;  o = Sᵀq / √keyDim
//   y = RMSNorm(o) ⊙ norm ⊙ SiLU(z_j)
//
// Exactness: a head's outputs depend only on its inputs and state, in a fixed
// order; heads are split over threads, the chunk length never changes a bit.
#pragma once

#include "cairn/exec.h"

#include <cstdint>

namespace cairn::model {

struct DeltaNetInputs {
    int64_t tokens = 0, keyHeads = 0, valueHeads = 0, keyDim = 0, valueDim = 0;
    const float* qkv = nullptr;
    int64_t ldqkv = 0;  // per token [q (keyHeads·keyDim) | k (same) | v (valueHeads·valueDim)], after the conv
    const float* z = nullptr;
    int64_t ldz = 0;  // output gate [valueHeads·valueDim]
    const float* beta = nullptr;  // b, [T][valueHeads], before the sigmoid
    const float* alpha = nullptr;  // a, [T][valueHeads], before dtBias and softplus
    int64_t ldba = 0;
    const float* dtBias = nullptr;  // [valueHeads]
    const float* A = nullptr;  // [valueHeads], as stored (−exp(A_log))
    const float* norm = nullptr;  // [valueDim], the gated RMSNorm's weight
    float eps = 1e-6f;  // of the L2 norms and the RMSNorm
};

// state: valueHeads blocks of keyDim × valueDim floats (S[k][v] at k·valueDim + v),
// updated in place; y: T rows of valueHeads·valueDim, `ldy` floats apart.
void gatedDeltaRule(const DeltaNetInputs& in, float* state, float* y, int64_t ldy, ExecContext& ctx);

}  // namespace cairn::model
