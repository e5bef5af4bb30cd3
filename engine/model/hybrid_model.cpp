#include "model/hybrid_model.h"

#include "cairn/error.h"
#include "model/hyperparameters.h"
#include "model/ops.h"

namespace cairn::model {
namespace {

void scaleRows(float* x, int64_t n, float s) {
    for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

}  // namespace

void HybridModel::readCommon(const std::string& arch, double defaultEps) {
    const gguf::File& f = *file_;
    const std::string a = arch + ".";
    e_ = intInRange(f, a + "embedding_length", 1, kMaxEmbedding);
    ff_ = intInRange(f, a + "feed_forward_length", 1, kMaxFeedForward);
    if (auto n = f.getInt(a + "expert_count", 0); n > 0)
        throw Error("model", "mixture-of-experts models (" + std::to_string(n) + " experts) are not supported");
    eps_ = normEpsilon(f, a + "attention.layer_norm_rms_epsilon", defaultEps);
}

bool HybridModel::readLayerKindsFromKvHeads(const std::string& arch, int64_t layers) {
    const gguf::File& f = *file_;
    const std::string a = arch + ".";
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
    if (attn_.heads > 0 &&
        (attn_.heads > 4096 || attn_.kvHeads > attn_.heads || attn_.heads % attn_.kvHeads || e_ % attn_.heads))
        throw Error("model",
                    a + "attention.head_count " + std::to_string(attn_.heads) + " / head_count_kv " +
                        std::to_string(attn_.kvHeads) + " do not fit embedding_length " + std::to_string(e_));
    return anyRecurrent;
}

void HybridModel::bindLayer(TensorBinder& bind, int64_t l, const char* ffnNorm) {
    const std::string b = "blk." + std::to_string(l) + ".";
    Layer& L = layers_[size_t(l)];
    L.attention = shape_.attention[size_t(l)];
    L.attnNorm = bind.vec(b + "attn_norm.weight", e_);
    if (L.attention) L.attn = bindHybridAttention(bind, b, e_, attn_);
    L.ffnNorm = bind.vec(b + ffnNorm, e_);
    L.ffn = bindFeedForward(bind, b, e_, ff_);
}

void HybridModel::finishInfo(const std::string& arch, bool recurrent) {
    info_.vocabSize = head_.vocab;
    info_.trainedContext = intInRange(*file_, arch + ".context_length", 0, 0, kMaxContext);
    info_.layers = int64_t(layers_.size());
    info_.embedding = e_;
    info_.recurrent = recurrent;
}

std::unique_ptr<Memory> HybridModel::newMemory(const MemoryOptions& options) const {
    return std::make_unique<memory::HybridMemory>(shape_, options);
}

void HybridModel::forward(Memory& mem, std::span<const int32_t> tokens, bool allLogits, float* logits,
                          ExecContext& ctx) const {
    const int64_t T = int64_t(tokens.size());
    if (T == 0) return;
    HybridChunk chunk = beginHybridChunk(mem, shape_, T, rope_.get());
    memory::HybridMemory& m = chunk.memory;
    const int64_t e = e_;
    std::vector<float> x(size_t(T * e)), xn(size_t(T * e)), out(size_t(T * e));
    embedTokens(head_.tokenEmbd, tokens, x.data(), e);
    if (embeddingScale_ != 0.0f) scaleRows(x.data(), T * e, embeddingScale_);

    auto addBranch = [&](int64_t t) {
        float* o = &out[size_t(t * e)];
        if (residualScale_ != 0.0f) scaleRows(o, e, residualScale_);
        addInPlace(&x[size_t(t * e)], o, e);
    };
    for (int64_t l = 0; l < int64_t(layers_.size()); ++l) {
        ctx.atLayer(l, int64_t(layers_.size()));
        const Layer& L = layers_[size_t(l)];
        // A recurrent last layer still mixes every position (its state
        // carries them); its feed-forward runs on the wanted ones alone.
        const int64_t first = firstOutputPosition(l, int64_t(layers_.size()), T, allLogits, logits != nullptr);
        forEachPosition(T, ctx,
                        [&](int64_t t) { rmsNorm(&x[size_t(t * e)], L.attnNorm.data(), &xn[size_t(t * e)], e, eps_); });
        if (L.attention)
            hybridAttention(attn_, L.attn, m.kv(), m.kvIndex(l), xn.data(), e, T, chunk.pos0, chunk.cos.data(),
                            chunk.sin.data(), first, out.data(), ctx);
        else recurrentMix(l, m, xn.data(), T, out.data(), ctx);
        if (first == T) continue;
        forEachPosition(first, T, ctx, [&](int64_t t) {
            addBranch(t);
            rmsNorm(&x[size_t(t * e)], L.ffnNorm.data(), &xn[size_t(t * e)], e, eps_);
        });
        feedForward(L.ffn, &xn[size_t(first * e)], e, ff_, T - first, &out[size_t(first * e)], ctx);
        forEachPosition(first, T, ctx, addBranch);
    }
    m.advance(T);

    if (!logits) return;
    const int64_t first = allLogits ? 0 : T - 1;
    head_.logits(x.data(), xn.data(), T, first, e, eps_, logits, ctx);
    if (logitFactor_ != 0.0f) scaleRows(logits, (T - first) * head_.vocab, logitFactor_);
}

}  // namespace cairn::model
