// The pieces the hybrid architectures (granitehybrid, lfm2, qwen35) share:
// the per-layer layer-kind metadata, the attention block over the attention
// layers of a HybridMemory, the SwiGLU feed-forward block, and the memory
// check of forward(). Each architecture's file composes them with its own
// recurrent block.
//
// Exactness: as everywhere in the engine, projections are batched over the
// chunk (one matmul per weight), every other step computes a position from its
// own row in a fixed order, so chunking and threads never change a bit.
#pragma once

#include "cairn/exec.h"
#include "cairn/gguf.h"
#include "memory/hybrid_memory.h"
#include "model/rope.h"
#include "model/tensor_binder.h"
#include "tensor/matmul.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cairn::model {

// `key` as one value per layer: an integer array of exactly `layers` values,
// or one integer for every layer. Throws naming the key when it has another
// length, a non-integer or a negative value.
std::vector<int64_t> perLayerInt(const gguf::File& f, const std::string& key, int64_t layers);

struct HybridAttentionConfig {
    int64_t heads = 0, kvHeads = 0, headDim = 0;
    float scale = 1.0f;  // applied to q·k
    float eps = 1e-5f;  // of the q/k norms
    bool qkNorm = false;  // per-head RMSNorm of q and k (one headDim weight shared by the heads)
    bool outputGate = false;  // attn_q holds per head headDim query rows then headDim gate rows;
        // the output is o ⊙ sigmoid(gate) (Qwen3.5)
    const Rope* rope = nullptr;  // null: no position embedding (Granite 4.0-H)
    int64_t window = 0;  // > 0: sliding-window attention over the last `window` positions (Gemma 3)
};

struct HybridAttentionWeights {
    tensor::MatrixView wq, wk, wv, wo;
    std::vector<float> qNorm, kNorm;
};

HybridAttentionWeights bindHybridAttention(TensorBinder& bind, const std::string& prefix, int64_t embedding,
                                           const HybridAttentionConfig& c);

// out[t] = attn_output · attention(xn[t]) for the chunk's positions t in
// [first, T) (rows of `e`; firstOutputPosition), writing all T positions' K/V
// (at pos0 …) to `cache` layer `cacheLayer`.
// cosv/sinv: the chunk's RoPE angles (T rows of rope dims / 2), unused without rope.
void hybridAttention(const HybridAttentionConfig& c, const HybridAttentionWeights& w, memory::KvCache& cache,
                     int64_t cacheLayer, const float* xn, int64_t e, int64_t T, int64_t pos0, const float* cosv,
                     const float* sinv, int64_t first, float* out, ExecContext& ctx);

struct FeedForwardWeights {
    tensor::MatrixView gate, up, down;
};

FeedForwardWeights bindFeedForward(TensorBinder& bind, const std::string& prefix, int64_t embedding, int64_t ff);

enum class GatedActivation { SiLU, GeluTanh };

// out[t] = ffn_down · (act(ffn_gate · xn[t]) ⊙ ffn_up · xn[t])  (T rows of e);
// act is SiLU (SwiGLU) or GELU-tanh (Gemma's GeGLU).
void feedForward(const FeedForwardWeights& w, const float* xn, int64_t e, int64_t ff, int64_t T, float* out,
                 ExecContext& ctx, GatedActivation act = GatedActivation::SiLU);

// The HybridMemory this model made (same layer kinds and shapes), or throws.
memory::HybridMemory& hybridMemoryOf(Memory& mem, const memory::HybridShape& shape);

// The start of every hybrid forward(): the model's memory, with room for the
// chunk's T positions (else "context is full"), and the chunk's RoPE angles
// (T rows of rope dims / 2; empty without rope).
struct HybridChunk {
    memory::HybridMemory& memory;
    int64_t pos0;
    std::vector<float> cos, sin;
};
HybridChunk beginHybridChunk(Memory& mem, const memory::HybridShape& shape, int64_t T, const Rope* rope);

}  // namespace cairn::model
