// granitehybrid (IBM Granite 4.0-H, dense FFN): Mamba-2 layers (where
// attention.head_count_kv[l] = 0; the mixer of mamba2.cpp) and attention
// layers, each followed by the SwiGLU FFN, with Granite's multipliers:
// x₀ = embedding_scale · token_embd[t]; both branch outputs × residual_scale
// before they are added; q·k × attention.scale (instead of 1/√head_dim);
// logits ÷ logit_scale. A multiplier that is absent or 0 is not applied, as in
// llama.cpp. RoPE (adjacent pairs; the q/k rows are stored permuted) only when
// rope.scaling.finetuned is true or absent — llama.cpp reads the key as
// Granite's RoPE switch, defaulting to on. Memory: HybridMemory.
#include "cairn/error.h"
#include "model/architectures.h"
#include "model/hyperparameters.h"
#include "model/hybrid_blocks.h"
#include "model/mamba2.h"
#include "model/ops.h"
#include "model/ssm_ops.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace cairn::model {
namespace {

struct GraniteHybridLayer {
    bool attention = false;
    std::vector<float> attnNorm, ffnNorm;
    HybridAttentionWeights attn;
    Mamba2Layer mamba;
    FeedForwardWeights ffn;
};

void scaleRows(float* x, int64_t n, float s) {
    for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

class GraniteHybridModel final : public Model {
public:
    explicit GraniteHybridModel(std::unique_ptr<gguf::File> file) : Model(std::move(file)) {
        const gguf::File& f = *file_;
        const std::string a = f.architecture() + ".";
        e_ = intInRange(f, a + "embedding_length", 1, kMaxEmbedding);
        const int64_t layers = intInRange(f, a + "block_count", 1, kMaxLayers);
        ff_ = intInRange(f, a + "feed_forward_length", 1, kMaxFeedForward);
        if (e_ <= 0 || e_ > (1 << 20) || layers <= 0 || layers > 4096 || ff_ <= 0 || ff_ > (1 << 22))
            throw Error("model", "implausible hyperparameters (embedding, layers, feed-forward)");
        if (auto n = f.getInt(a + "expert_count", 0); n > 0)
            throw Error("model", "mixture-of-experts models (" + std::to_string(n) + " experts) are not supported");
        eps_ = normEpsilon(f, a + "attention.layer_norm_rms_epsilon", 1e-5);
        embeddingScale_ = float(finiteFloat(f, a + "embedding_scale", 0.0));
        residualScale_ = float(finiteFloat(f, a + "residual_scale", 0.0));
        const double logitScale = finiteFloat(f, a + "logit_scale", 0.0);
        logitFactor_ = logitScale != 0.0 ? float(1.0 / logitScale) : 0.0f;

        const auto kvHeads = perLayerInt(f, a + "attention.head_count_kv", layers);
        const auto heads = perLayerInt(f, a + "attention.head_count", layers);
        shape_.attention.resize(size_t(layers));
        bool anyRecurrent = false;
        for (int64_t l = 0; l < layers; ++l) {
            const bool att = kvHeads[size_t(l)] > 0;
            shape_.attention[size_t(l)] = att;
            anyRecurrent |= !att;
            if (!att) continue;
            if (heads[size_t(l)] == 0)
                throw Error("model", a + "attention.head_count is 0 for attention layer " + std::to_string(l));
            if (attn_.heads == 0) {
                attn_.heads = heads[size_t(l)];
                attn_.kvHeads = kvHeads[size_t(l)];
            }
            if (heads[size_t(l)] != attn_.heads || kvHeads[size_t(l)] != attn_.kvHeads)
                throw Error("model", a + "attention.head_count / head_count_kv differ between attention layers");
        }
        if (attn_.heads > 0) {
            if (attn_.heads > 4096 || attn_.kvHeads > attn_.heads || attn_.heads % attn_.kvHeads || e_ % attn_.heads)
                throw Error("model", a + "attention.head_count " + std::to_string(attn_.heads) + " / head_count_kv " +
                                         std::to_string(attn_.kvHeads) + " do not fit embedding_length " +
                                         std::to_string(e_));
            attn_.headDim = f.getInt(a + "attention.key_length", e_ / attn_.heads);
            if (attn_.headDim <= 0 || attn_.headDim > 4096 ||
                f.getInt(a + "attention.value_length", attn_.headDim) != attn_.headDim)
                throw Error("model", a + "attention.key_length / value_length are not supported");
            const double scale = finiteFloat(f, a + "attention.scale", 0.0);
            attn_.scale = scale != 0.0 ? float(scale) : float(1.0 / std::sqrt(double(attn_.headDim)));
            attn_.eps = eps_;
            if (f.getBool(a + "rope.scaling.finetuned", true)) {
                RopeConfig r;
                r.dims = f.getInt(a + "rope.dimension_count", attn_.headDim);
                if (r.dims <= 0 || r.dims > attn_.headDim || r.dims % 2)
                    throw Error("model", a + "rope.dimension_count " + std::to_string(r.dims) +
                                             " does not fit the head size");
                r.neox = false;
                r.base = floatAbove(f, a + "rope.freq_base", 10000.0, 1.0);
                if (!(r.base > 0)) throw Error("model", a + "rope.freq_base must be positive");
                rope_ = std::make_unique<Rope>(r);
                attn_.rope = rope_.get();
            }
        }
        mamba_.embedding = e_;
        mamba_.layers = layers;
        mamba_.eps = eps_;
        if (anyRecurrent) readMamba2Params(f, f.architecture(), mamba_);
        shape_.kvHeads = attn_.kvHeads;
        shape_.keyDim = shape_.valueDim = attn_.headDim;
        if (anyRecurrent) shape_.recurrent = mamba2StateShape(mamba_, 0);

        TensorBinder bind(f);
        head_ = bind.vocabularyHead(e_);
        layers_.resize(size_t(layers));
        for (int64_t l = 0; l < layers; ++l) {
            const std::string b = "blk." + std::to_string(l) + ".";
            GraniteHybridLayer& L = layers_[size_t(l)];
            L.attention = shape_.attention[size_t(l)];
            L.attnNorm = bind.vec(b + "attn_norm.weight", e_);
            if (L.attention) L.attn = bindHybridAttention(bind, b, e_, attn_);
            else L.mamba = bindMamba2Layer(bind, b, mamba_);
            L.ffnNorm = bind.vec(b + "ffn_norm.weight", e_);
            L.ffn = bindFeedForward(bind, b, e_, ff_);
        }
        bind.requireAllUsed("granitehybrid");

        info_.vocabSize = head_.vocab;
        info_.trainedContext = intInRange(f, a + "context_length", 0, 0, kMaxContext);
        info_.layers = layers;
        info_.embedding = e_;
        info_.recurrent = anyRecurrent;
    }

    std::unique_ptr<Memory> newMemory(const MemoryOptions& options) const override {
        return std::make_unique<HybridMemory>(shape_, options);
    }

    void forward(Memory& mem, std::span<const int32_t> tokens, bool allLogits, float* logits,
                 ExecContext& ctx) const override {
        const int64_t T = int64_t(tokens.size());
        if (T == 0) return;
        HybridChunk chunk = beginHybridChunk(mem, shape_, T, rope_.get());
        HybridMemory& m = chunk.memory;
        const int64_t pos0 = chunk.pos0, e = e_;
        std::vector<float> x(size_t(T * e)), xn(size_t(T * e)), out(size_t(T * e));
        embedTokens(*head_.tokenEmbd, tokens, x.data(), e);
        if (embeddingScale_ != 0.0f) scaleRows(x.data(), T * e, embeddingScale_);


        // x += residual_scale · branch
        auto addBranch = [&](int64_t t) {
            float* o = &out[size_t(t * e)];
            if (residualScale_ != 0.0f) scaleRows(o, e, residualScale_);
            addInPlace(&x[size_t(t * e)], o, e);
        };
        for (int64_t l = 0; l < int64_t(layers_.size()); ++l) {
            const GraniteHybridLayer& L = layers_[size_t(l)];
            forEachPosition(T, ctx, [&](int64_t t) { rmsNorm(&x[size_t(t * e)], L.attnNorm.data(), &xn[size_t(t * e)], e, eps_); });
            if (L.attention)
                hybridAttention(attn_, L.attn, m.kv(), m.kvIndex(l), xn.data(), e, T, pos0, chunk.cos.data(), chunk.sin.data(),
                                out.data(), ctx);
            else
                mamba2Mix(mamba_, L.mamba, m.recurrent(), m.recurrentIndex(l), xn.data(), T, out.data(), ctx);
            forEachPosition(T, ctx, [&](int64_t t) {
                addBranch(t);
                rmsNorm(&x[size_t(t * e)], L.ffnNorm.data(), &xn[size_t(t * e)], e, eps_);
            });
            feedForward(L.ffn, xn.data(), e, ff_, T, out.data(), ctx);
            forEachPosition(T, ctx, addBranch);
        }
        m.advance(T);

        if (!logits) return;
        const int64_t first = allLogits ? 0 : T - 1;
        head_.logits(x.data(), xn.data(), T, first, e, eps_, logits, ctx);
        if (logitFactor_ != 0.0f) scaleRows(logits, (T - first) * head_.vocab, logitFactor_);
    }

private:
    int64_t e_ = 0, ff_ = 0;
    float eps_ = 1e-5f, embeddingScale_ = 0, residualScale_ = 0, logitFactor_ = 0;
    HybridAttentionConfig attn_;
    std::unique_ptr<Rope> rope_;
    Mamba2Params mamba_;
    HybridShape shape_;
    VocabularyHead head_;
    std::vector<GraniteHybridLayer> layers_;
};

} // namespace

std::unique_ptr<Model> loadGraniteHybrid(std::unique_ptr<gguf::File> file) {
    return std::make_unique<GraniteHybridModel>(std::move(file));
}

} // namespace cairn::model
