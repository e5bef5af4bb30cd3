// Causal multi-head attention with grouped KV heads over the KV cache.
#pragma once

#include "cairn/exec.h"
#include "memory/kv_cache.h"

#include <cstdint>

namespace cairn::model {

struct AttentionShape {
    int64_t heads = 0;
    int64_t kvHeads = 0;
    int64_t keyDim = 0;
    int64_t valueDim = 0;
    float scale = 1.0f;  // applied to q·k (1/sqrt(keyDim))
    int64_t window = 0;  // > 0: a query at p sees only keys p - window < k <= p (sliding-window layers)
};

// For chunk row t (position pos0 + t) and query head h: softmax over the cached
// keys 0 … pos0 + t (the last `window` of them when shape.window > 0) of KV
// head h / (heads / kvHeads), then the weighted sum of their values, in
// position order. The cache must already hold the chunk's K/V.
// q: nTokens rows of heads·keyDim, ldq apart; out: nTokens rows of heads·valueDim, ldo apart.
// Every (t, h) follows one fixed arithmetic (attention_kernels.h) on every kernel
// path, so the result never depends on chunking, threads or the CPU's path.
void attention(const memory::KvCache& cache, int64_t layer, const AttentionShape& shape, const float* q, int64_t ldq,
               int64_t nTokens, int64_t pos0, float* out, int64_t ldo, ExecContext& ctx);

}  // namespace cairn::model
