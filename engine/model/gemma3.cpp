// gemma3 (Gemma 3 text models), as llama.cpp evaluates them:
//   x = token_embd[t] · √n_embd; per layer
//   x += RMSNorm(attention(RMSNorm(x) ⊙ attn_norm)) ⊙ post_attention_norm
//   x += RMSNorm(ffn_down · (GELU-tanh(ffn_gate · h) ⊙ ffn_up · h)) ⊙ post_ffw_norm,  h = RMSNorm(x) ⊙ ffn_norm
//   logits = cap · tanh(token_embd · (RMSNorm(x) ⊙ output_norm) / cap)  (final_logit_softcapping)
// Attention: per-head RMSNorm of q and k before NeoX RoPE, scale 1/√head_dim
// (1/√(n_embd / n_head) for the 62-layer 27B, as llama.cpp). Sliding-window
// ("local") layers see the last attention.sliding_window positions and use
// rope.freq_base_swa unscaled; global layers see everything with rope.freq_base
// and the file's rope scaling. Which layers are local: sliding_window_pattern,
// one period P (layer l local iff P == 0 or l % P < P − 1; 6 when absent, as
// llama.cpp) or one flag per layer. Norm weights are used as stored: Gemma's
// converter already wrote 1 + w.
//
// Memory: the full KV cache for every layer (the local layers mask by window),
// so truncation, prefix reuse and snapshots work as for llama (see
// docs/ARCHITECTURE.md for the measured trade-off against a ring buffer).
#include "cairn/error.h"
#include "memory/kv_cache.h"
#include "model/architectures.h"
#include "model/hybrid_blocks.h"
#include "model/hyperparameters.h"
#include "model/ops.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace cairn::model {
namespace {

struct Gemma3Layer {
    bool local = false;
    std::vector<float> attnNorm, postAttnNorm, ffnNorm, postFfnNorm;
    HybridAttentionWeights attn;
    FeedForwardWeights ffn;
};

// Whether each layer is a sliding-window one (see the file comment).
std::vector<bool> slidingLayers(const gguf::File& f, const std::string& key, int64_t layers) {
    std::vector<bool> local(static_cast<size_t>(layers));
    const gguf::Value* v = f.find(key);
    if (v && v->isArray()) {
        const auto flags = perLayerInt(f, key, layers);
        for (int64_t l = 0; l < layers; ++l) local[size_t(l)] = flags[size_t(l)] != 0;
        return local;
    }
    const int64_t period = intInRange(f, key, 6, 0, kMaxLayers);
    for (int64_t l = 0; l < layers; ++l) local[size_t(l)] = period == 0 || l % period < period - 1;
    return local;
}

class Gemma3Model final : public Model {
public:
    explicit Gemma3Model(std::unique_ptr<gguf::File> file) : Model(std::move(file)) {
        const gguf::File& f = *file_;
        const std::string a = f.architecture() + ".";
        e_ = intInRange(f, a + "embedding_length", 1, kMaxEmbedding);
        const int64_t layers = intInRange(f, a + "block_count", 1, kMaxLayers);
        ff_ = intInRange(f, a + "feed_forward_length", 1, kMaxFeedForward);
        eps_ = normEpsilon(f, a + "attention.layer_norm_rms_epsilon", 1e-6);
        HybridAttentionConfig c;
        c.heads = intInRange(f, a + "attention.head_count", 1, kMaxHeads);
        c.kvHeads = intInRange(f, a + "attention.head_count_kv", c.heads, 1, c.heads);
        if (c.heads % c.kvHeads)
            throw Error("model",
                        a + "attention.head_count " + std::to_string(c.heads) + " is not a multiple of " + a +
                            "attention.head_count_kv " + std::to_string(c.kvHeads));
        c.headDim = intInRange(f, a + "attention.key_length", std::max<int64_t>(1, e_ / c.heads), 1, kMaxHeadSize);
        if (intInRange(f, a + "attention.value_length", c.headDim, 1, kMaxHeadSize) != c.headDim)
            throw Error("model", a + "attention.value_length differs from " + a + "attention.key_length");
        c.scale = float(1.0 / std::sqrt(double(layers == 62 ? e_ / c.heads : c.headDim)));
        c.eps = eps_;
        c.qkNorm = true;

        RopeConfig global;
        global.dims = intInRange(f, a + "rope.dimension_count", c.headDim, 2, c.headDim);
        if (global.dims % 2)
            throw Error("model",
                        "metadata key " + a + "rope.dimension_count is " + std::to_string(global.dims) +
                            "; expected an even number");
        global.neox = true;
        const int64_t trained = intInRange(f, a + "context_length", 0, 0, kMaxContext);
        global.base = floatAbove(f, a + "rope.freq_base", 1000000.0, 1.0);
        readRopeScaling(f, a, trained, global);
        RopeConfig local;
        local.dims = global.dims;
        local.neox = true;
        local.base = floatAbove(f, a + "rope.freq_base_swa", 10000.0, 1.0);
        globalRope_ = std::make_unique<Rope>(global);
        localRope_ = std::make_unique<Rope>(local);

        globalAttn_ = c;
        globalAttn_.rope = globalRope_.get();
        localAttn_ = c;
        localAttn_.rope = localRope_.get();
        localAttn_.window = intInRange(f, a + "attention.sliding_window", 1, kMaxContext);
        const auto isLocal = slidingLayers(f, a + "attention.sliding_window_pattern", layers);

        if (f.find(a + "final_logit_softcapping"))
            softcap_ = float(floatAbove(f, a + "final_logit_softcapping", 0.0, 0.0));

        TensorBinder bind(f, ownedWeights_.get());
        head_ = bind.vocabularyHead(e_);
        layers_.resize(size_t(layers));
        for (int64_t l = 0; l < layers; ++l) {
            const std::string b = "blk." + std::to_string(l) + ".";
            Gemma3Layer& L = layers_[size_t(l)];
            L.local = isLocal[size_t(l)];
            L.attnNorm = bind.vec(b + "attn_norm.weight", e_);
            L.attn = bindHybridAttention(bind, b, e_, c);
            L.postAttnNorm = bind.vec(b + "post_attention_norm.weight", e_);
            L.ffnNorm = bind.vec(b + "ffn_norm.weight", e_);
            L.ffn = bindFeedForward(bind, b, e_, ff_);
            L.postFfnNorm = bind.vec(b + "post_ffw_norm.weight", e_);
        }
        bind.requireAllUsed("gemma3");

        info_.vocabSize = head_.vocab;
        info_.trainedContext = trained;
        info_.layers = layers;
        info_.embedding = e_;
        info_.recurrent = false;
    }

    std::unique_ptr<Memory> newMemory(const MemoryOptions& options) const override {
        return std::make_unique<memory::KvCache>(int64_t(layers_.size()), globalAttn_.kvHeads, globalAttn_.headDim,
                                                 globalAttn_.headDim, options.contextSize, options.kvType);
    }

    void forward(Memory& mem, std::span<const int32_t> tokens, bool allLogits, float* logits,
                 ExecContext& ctx) const override {
        auto* cache = dynamic_cast<memory::KvCache*>(&mem);
        if (!cache || cache->layers() != int64_t(layers_.size()) || cache->kvHeads() != globalAttn_.kvHeads ||
            cache->keyDim() != globalAttn_.headDim || cache->valueDim() != globalAttn_.headDim)
            throw Error("model", "this memory was not made by this model");
        const int64_t T = int64_t(tokens.size());
        if (T == 0) return;
        const int64_t pos0 = cache->size(), e = e_;
        if (pos0 + T > cache->capacity())
            throw Error("model",
                        "context is full: " + std::to_string(pos0) + " + " + std::to_string(T) +
                            " tokens exceed the context size of " + std::to_string(cache->capacity()));

        std::vector<float> x(size_t(T * e)), xn(size_t(T * e)), out(size_t(T * e));
        embedTokens(head_.tokenEmbd, tokens, x.data(), e);
        const float embedScale = std::sqrt(float(e));
        for (float& v : x) v *= embedScale;

        const int64_t pairs = globalRope_->config().dims / 2;
        std::vector<float> cosG(size_t(T * pairs)), sinG(cosG.size()), cosL(cosG.size()), sinL(cosG.size());
        for (int64_t t = 0; t < T; ++t) {
            globalRope_->angles(pos0 + t, &cosG[size_t(t * pairs)], &sinG[size_t(t * pairs)]);
            localRope_->angles(pos0 + t, &cosL[size_t(t * pairs)], &sinL[size_t(t * pairs)]);
        }

        for (int64_t l = 0; l < int64_t(layers_.size()); ++l) {
            ctx.atLayer(l, int64_t(layers_.size()));
            const Gemma3Layer& L = layers_[size_t(l)];
            const int64_t first = firstOutputPosition(l, int64_t(layers_.size()), T, allLogits, logits != nullptr);
            forEachPosition(
                T, ctx, [&](int64_t t) { rmsNorm(&x[size_t(t * e)], L.attnNorm.data(), &xn[size_t(t * e)], e, eps_); });
            if (L.local)
                hybridAttention(localAttn_, L.attn, *cache, l, xn.data(), e, T, pos0, cosL.data(), sinL.data(), first,
                                out.data(), ctx);
            else
                hybridAttention(globalAttn_, L.attn, *cache, l, xn.data(), e, T, pos0, cosG.data(), sinG.data(), first,
                                out.data(), ctx);
            if (first == T) continue;
            forEachPosition(first, T, ctx, [&](int64_t t) {
                float* o = &out[size_t(t * e)];
                rmsNorm(o, L.postAttnNorm.data(), o, e, eps_);
                addInPlace(&x[size_t(t * e)], o, e);
                rmsNorm(&x[size_t(t * e)], L.ffnNorm.data(), &xn[size_t(t * e)], e, eps_);
            });
            feedForward(L.ffn, &xn[size_t(first * e)], e, ff_, T - first, &out[size_t(first * e)], ctx,
                        GatedActivation::GeluTanh);
            forEachPosition(first, T, ctx, [&](int64_t t) {
                float* o = &out[size_t(t * e)];
                rmsNorm(o, L.postFfnNorm.data(), o, e, eps_);
                addInPlace(&x[size_t(t * e)], o, e);
            });
        }
        cache->advance(T);

        if (!logits) return;
        head_.logits(x.data(), xn.data(), T, allLogits ? 0 : T - 1, e, eps_, logits, ctx);
        if (softcap_ > 0) {
            const int64_t n = (allLogits ? T : 1) * head_.vocab;
            const float inv = 1.0f / softcap_;
            for (int64_t i = 0; i < n; ++i) logits[i] = softcap_ * std::tanh(logits[i] * inv);
        }
    }

private:
    int64_t e_ = 0, ff_ = 0;
    float eps_ = 1e-6f, softcap_ = 0.0f;
    HybridAttentionConfig localAttn_, globalAttn_;
    std::unique_ptr<Rope> localRope_, globalRope_;
    VocabularyHead head_;
    std::vector<Gemma3Layer> layers_;
};

}  // namespace

std::unique_ptr<Model> loadGemma3(std::unique_ptr<gguf::File> file) {
    return std::make_unique<Gemma3Model>(std::move(file));
}

}  // namespace cairn::model
