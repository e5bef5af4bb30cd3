// The frame the hybrid architectures (granitehybrid, lfm2, qwen35) share:
//   x = embedding (× embedding_scale)
//   per layer: x += s · mixer(norm(x)), mixer = attention or the layer's
//              recurrent block; x += s · SwiGLU(norm(x))   (s: residual_scale or 1)
//   logits = head(final norm(x)) (÷ logit_scale)
// A subclass reads its metadata and binds its tensors in its constructor,
// filling the members below (bindLayer() binds the shared part of a layer),
// and gives only its recurrent mixer. Memory: HybridMemory of shape_.
#pragma once

#include "cairn/model.h"
#include "model/hybrid_blocks.h"
#include "model/rope.h"

#include <memory>
#include <string>
#include <vector>

namespace cairn::model {

class HybridModel : public Model {
public:
    std::unique_ptr<Memory> newMemory(const MemoryOptions& options) const final;
    void forward(Memory& mem, std::span<const int32_t> tokens, bool allLogits, float* logits,
                 ExecContext& ctx) const final;

protected:
    explicit HybridModel(std::unique_ptr<gguf::File> file) : Model(std::move(file)) {}

    // out[t] = the recurrent block of layer `layer` on the chunk's T normed
    // inputs xn (rows of e_), carrying its state in m.
    virtual void recurrentMix(int64_t layer, memory::HybridMemory& m, const float* xn, int64_t T, float* out,
                              ExecContext& ctx) const = 0;

    // embedding_length, feed_forward_length (ff_) and the RMSNorm epsilon,
    // checked; a mixture-of-experts file is refused.
    void readCommon(const std::string& arch, double defaultEps);
    // Layer kinds from per-layer attention.head_count_kv (0: recurrent), as
    // lfm2 and granitehybrid write them: fills shape_.attention and attn_'s
    // head counts (one geometry for every attention layer, checked against
    // embedding_length). Returns whether any layer is recurrent.
    bool readLayerKindsFromKvHeads(const std::string& arch, int64_t layers);
    // The shared part of layer l: attn_norm, the attention weights (attention
    // layers), the FFN norm `ffnNorm` and the FFN. The layer's kind is shape_'s.
    void bindLayer(TensorBinder& bind, int64_t l, const char* ffnNorm);
    // info_ from the bound head and shape_.
    void finishInfo(const std::string& arch, bool recurrent);

    struct Layer {
        bool attention = false;
        std::vector<float> attnNorm, ffnNorm;
        HybridAttentionWeights attn;
        FeedForwardWeights ffn;
    };

    int64_t e_ = 0, ff_ = 0;
    float eps_ = 1e-5f;
    float embeddingScale_ = 0, residualScale_ = 0, logitFactor_ = 0;  // 0: not applied
    HybridAttentionConfig attn_;
    std::unique_ptr<Rope> rope_;
    memory::HybridShape shape_;
    VocabularyHead head_;
    std::vector<Layer> layers_;
};

}  // namespace cairn::model
