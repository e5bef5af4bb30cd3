// lfm2 (Liquid LFM2): gated short-convolution layers and GQA attention layers,
// chosen per layer by attention.head_count_kv (0 = short conv).
//   short conv: [B | C | u] = shortconv.in_proj · h; c = conv(B ⊙ u) over
//     shortconv.l_cache taps (no bias, no activation; the state is the last
//     l_cache − 1 values of B ⊙ u); output shortconv.out_proj · (C ⊙ c)
//   attention: per-head RMSNorm of q and k (attn_q_norm / attn_k_norm) before
//     NeoX RoPE over the whole head, 1/√head_dim
// then the SwiGLU FFN; the final norm is token_embd_norm (HF's embedding_norm,
// applied after the last layer). Memory: HybridMemory (KV + conv state).
#include "cairn/error.h"
#include "model/architectures.h"
#include "model/hyperparameters.h"
#include "model/hybrid_blocks.h"
#include "model/ops.h"
#include "model/ssm_ops.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace cairn::model {
namespace {

struct Lfm2Layer {
    bool attention = false;
    std::vector<float> attnNorm, ffnNorm;
    HybridAttentionWeights attn;
    tensor::MatrixView convIn, convOut;
    std::vector<float> convW;  // lane-packed [l_cache] taps per channel
    FeedForwardWeights ffn;
};

class Lfm2Model final : public Model {
public:
    explicit Lfm2Model(std::unique_ptr<gguf::File> file) : Model(std::move(file)) {
        const gguf::File& f = *file_;
        const std::string a = f.architecture() + ".";
        e_ = intInRange(f, a + "embedding_length", 1, kMaxEmbedding);
        const int64_t layers = intInRange(f, a + "block_count", 1, kMaxLayers);
        ff_ = intInRange(f, a + "feed_forward_length", 1, kMaxFeedForward);
        if (e_ <= 0 || e_ > (1 << 20) || layers <= 0 || layers > 4096 || ff_ <= 0 || ff_ > (1 << 22))
            throw Error("model", "implausible hyperparameters (embedding, layers, feed-forward)");
        eps_ = normEpsilon(f, a + "attention.layer_norm_rms_epsilon", 1e-5);
        const auto kvHeads = perLayerInt(f, a + "attention.head_count_kv", layers);
        const auto heads = perLayerInt(f, a + "attention.head_count", layers);
        lCache_ = requiredInt(f, a + "shortconv.l_cache");
        if (lCache_ < 2 || lCache_ > ssm::kMaxConv)
            throw Error("model", a + "shortconv.l_cache " + std::to_string(lCache_) + " is not supported (2 to " +
                                     std::to_string(ssm::kMaxConv) + ")");

        // The attention layers share one geometry (one KV cache).
        shape_.attention.resize(size_t(layers));
        for (int64_t l = 0; l < layers; ++l) {
            shape_.attention[size_t(l)] = kvHeads[size_t(l)] > 0;
            if (!shape_.attention[size_t(l)]) continue;
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
            attn_.headDim = e_ / attn_.heads;
            attn_.scale = float(1.0 / std::sqrt(double(attn_.headDim)));
            attn_.eps = eps_;
            attn_.qkNorm = true;
            RopeConfig r;
            r.dims = f.getInt(a + "rope.dimension_count", attn_.headDim);
            if (r.dims <= 0 || r.dims > attn_.headDim || r.dims % 2)
                throw Error("model", a + "rope.dimension_count " + std::to_string(r.dims) + " does not fit the head size");
            r.neox = true;
            r.base = floatAbove(f, a + "rope.freq_base", 10000.0, 1.0);
            if (!(r.base > 0)) throw Error("model", a + "rope.freq_base must be positive");
            rope_ = std::make_unique<Rope>(r);
            attn_.rope = rope_.get();
        }
        shape_.kvHeads = attn_.kvHeads;
        shape_.keyDim = shape_.valueDim = attn_.headDim;
        shape_.recurrent = RecurrentShape{0, e_, lCache_ - 1, 0, ssm::kLanes, 0};

        TensorBinder bind(f);
        head_ = bind.vocabularyHead(e_, "token_embd_norm.weight");
        layers_.resize(size_t(layers));
        for (int64_t l = 0; l < layers; ++l) {
            const std::string b = "blk." + std::to_string(l) + ".";
            Lfm2Layer& L = layers_[size_t(l)];
            L.attention = shape_.attention[size_t(l)];
            L.attnNorm = bind.vec(b + "attn_norm.weight", e_);
            if (L.attention) {
                L.attn = bindHybridAttention(bind, b, e_, attn_);
            } else {
                L.convIn = bind.matrix(b + "shortconv.in_proj.weight", e_, 3 * e_);
                L.convW = ssm::packLanes(bind.table(b + "shortconv.conv.weight", lCache_, e_).data(), e_, lCache_);
                L.convOut = bind.matrix(b + "shortconv.out_proj.weight", e_, e_);
            }
            L.ffnNorm = bind.vec(b + "ffn_norm.weight", e_);
            L.ffn = bindFeedForward(bind, b, e_, ff_);
        }
        bind.requireAllUsed("lfm2");

        info_.vocabSize = head_.vocab;
        info_.trainedContext = intInRange(f, a + "context_length", 0, 0, kMaxContext);
        info_.layers = layers;
        info_.embedding = e_;
        info_.recurrent = true;
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

        for (int64_t l = 0; l < int64_t(layers_.size()); ++l) {
            const Lfm2Layer& L = layers_[size_t(l)];
            forEachPosition(T, ctx, [&](int64_t t) { rmsNorm(&x[size_t(t * e)], L.attnNorm.data(), &xn[size_t(t * e)], e, eps_); });
            if (L.attention)
                hybridAttention(attn_, L.attn, m.kv(), m.kvIndex(l), xn.data(), e, T, pos0, chunk.cos.data(), chunk.sin.data(),
                                out.data(), ctx);
            else
                shortConv(L, m.recurrent().conv(m.recurrentIndex(l)), xn.data(), T, out.data(), ctx);
            forEachPosition(T, ctx, [&](int64_t t) {
                addInPlace(&x[size_t(t * e)], &out[size_t(t * e)], e);
                rmsNorm(&x[size_t(t * e)], L.ffnNorm.data(), &xn[size_t(t * e)], e, eps_);
            });
            feedForward(L.ffn, xn.data(), e, ff_, T, out.data(), ctx);
            forEachPosition(T, ctx, [&](int64_t t) { addInPlace(&x[size_t(t * e)], &out[size_t(t * e)], e); });
        }
        m.advance(T);

        if (!logits) return;
        head_.logits(x.data(), xn.data(), T, allLogits ? 0 : T - 1, e, eps_, logits, ctx);
    }

private:
    void shortConv(const Lfm2Layer& L, float* state, const float* xn, int64_t T, float* out, ExecContext& ctx) const {
        const int64_t e = e_;
        std::vector<float> bcx(size_t(T * 3 * e)), c(size_t(T * e));
        tensor::matmul(L.convIn, xn, e, T, bcx.data(), 3 * e, ctx);
        // B ⊙ u into the B rows, the conv input.
        forEachPosition(T, ctx, [&](int64_t t) {
            float* row = &bcx[size_t(t * 3 * e)];
            for (int64_t i = 0; i < e; ++i) row[i] *= row[2 * e + i];
        });
        ssm::conv1d(bcx.data(), 3 * e, T, e, lCache_, L.convW.data(), state, c.data(), e, ctx);
        forEachPosition(T, ctx, [&](int64_t t) {
            const float* row = &bcx[size_t(t * 3 * e)];
            float* ct = &c[size_t(t * e)];
            for (int64_t i = 0; i < e; ++i) ct[i] *= row[e + i];
        });
        tensor::matmul(L.convOut, c.data(), e, T, out, e, ctx);
    }

    int64_t e_ = 0, ff_ = 0, lCache_ = 0;
    float eps_ = 1e-5f;
    HybridAttentionConfig attn_;
    std::unique_ptr<Rope> rope_;
    HybridShape shape_;
    VocabularyHead head_;
    std::vector<Lfm2Layer> layers_;
};

} // namespace

std::unique_ptr<Model> loadLfm2(std::unique_ptr<gguf::File> file) { return std::make_unique<Lfm2Model>(std::move(file)); }

} // namespace cairn::model
