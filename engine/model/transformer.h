// The decoder-only transformer shared by llama, qwen2, qwen3, smollm3 and
// phi3: pre-norm attention (GQA, RoPE, optional q/k/v biases, optional per-head
// q/k RMSNorm, optional NoPE layers, optional LongRoPE) and a SwiGLU
// feed-forward block, over a KV cache.
#pragma once

#include "cairn/gguf.h"
#include "cairn/model.h"
#include "model/rope.h"
#include "model/tensor_binder.h"
#include "tensor/matmul.h"

#include <memory>
#include <string>
#include <vector>

namespace cairn::model {

// What distinguishes the architectures built on this block.
struct TransformerVariant {
    bool neoxRope = false;  // rotate (i, i + d/2) instead of (2i, 2i+1)
    bool qkvBias = false;  // attn_q/k/v.bias required (qwen2)
    bool qkNorm = false;  // attn_q_norm / attn_k_norm required (qwen3)
    int64_t noRopeInterval = 0;  // > 0: layers with (l + 1) % n == 0 apply no RoPE (smollm3: 4)
    bool fused = false;  // attn_qkv (rows q, k, v) and ffn_up (rows gate, up) instead of separate
        // weights, rope_factors_long / _short for LongRoPE (phi3)
};

struct TransformerParams {
    int64_t vocab = 0, embedding = 0, layers = 0, heads = 0, kvHeads = 0;
    int64_t keyDim = 0, valueDim = 0, feedForward = 0, trainedContext = 0;
    float eps = 1e-5f;
    RopeConfig rope;
};

struct TransformerLayer {
    std::vector<float> attnNorm, ffnNorm, bq, bk, bv, qNorm, kNorm;
    tensor::MatrixView wq, wk, wv, wo, gate, up, down;
};

class TransformerModel : public Model {
public:
    // Reads `ARCH.*` hyperparameters and binds the tensors; throws cairn::Error
    // naming what is missing or unsupported.
    TransformerModel(std::unique_ptr<gguf::File> file, const TransformerVariant& variant);

    std::unique_ptr<Memory> newMemory(const MemoryOptions& options) const override;
    void forward(Memory& mem, std::span<const int32_t> tokens, bool allLogits, float* logits,
                 ExecContext& ctx) const override;

    const TransformerParams& params() const { return p_; }

private:
    void readParams();
    void bindTensors();
    void bindLongRope(TensorBinder& bind);

    TransformerVariant variant_;
    TransformerParams p_;
    // The RoPE of a memory of `capacity` positions: LongRoPE picks its factors by the context size.
    const Rope& ropeFor(int64_t capacity) const;

    std::unique_ptr<Rope> rope_;
    std::unique_ptr<Rope> ropeShort_;  // LongRoPE's short factors (null without LongRoPE)
    int64_t longRopeContext_ = 0;  // rope.scaling.original_context_length
    VocabularyHead head_;
    std::vector<TransformerLayer> layers_;
};

}  // namespace cairn::model
