#include "model/transformer.h"

#include "cairn/error.h"
#include "cairn/gguf.h"
#include "memory/kv_cache.h"
#include "model/attention.h"
#include "model/hyperparameters.h"
#include "model/ops.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

namespace cairn::model {
TransformerModel::TransformerModel(std::unique_ptr<gguf::File> file, const TransformerVariant& variant)
    : Model(std::move(file)), variant_(variant) {
    readParams();
    bindTensors();
    info_.vocabSize = p_.vocab;
    info_.trainedContext = p_.trainedContext;
    info_.layers = p_.layers;
    info_.embedding = p_.embedding;
    info_.recurrent = false;
}

void TransformerModel::readParams() {
    const gguf::File& f = *file_;
    const std::string a = f.architecture() + ".";
    p_.embedding = intInRange(f, a + "embedding_length", 1, kMaxEmbedding);
    p_.layers = intInRange(f, a + "block_count", 1, kMaxLayers);
    p_.feedForward = intInRange(f, a + "feed_forward_length", 1, kMaxFeedForward);
    p_.heads = intInRange(f, a + "attention.head_count", 1, kMaxHeads);
    p_.kvHeads = intInRange(f, a + "attention.head_count_kv", p_.heads, 1, p_.heads);
    if (p_.heads % p_.kvHeads != 0)
        throw Error("model", a + "attention.head_count " + std::to_string(p_.heads) + " is not a multiple of " + a +
                                 "attention.head_count_kv " + std::to_string(p_.kvHeads));
    p_.keyDim = intInRange(f, a + "attention.key_length", std::max<int64_t>(1, p_.embedding / p_.heads), 1, kMaxHeadSize);
    p_.valueDim = intInRange(f, a + "attention.value_length", p_.keyDim, 1, kMaxHeadSize);
    p_.eps = normEpsilon(f, a + "attention.layer_norm_rms_epsilon");
    p_.trainedContext = intInRange(f, a + "context_length", 0, 0, kMaxContext);
    if (auto n = f.getInt(a + "expert_count", 0); n > 0)
        throw Error("model", "mixture-of-experts models (" + std::to_string(n) + " experts) are not supported");

    RopeConfig& r = p_.rope;
    r.dims = intInRange(f, a + "rope.dimension_count", p_.keyDim, 2, p_.keyDim);
    if (r.dims % 2)
        throw Error("model", "metadata key " + a + "rope.dimension_count is " + std::to_string(r.dims) + "; expected an even number");
    r.neox = variant_.neoxRope;
    r.base = floatAbove(f, a + "rope.freq_base", 10000.0, 1.0);
    std::string type(f.getString(a + "rope.scaling.type", "none"));
    // 0 stands for "not set", as in llama.cpp; older files have rope.scale_linear instead.
    r.factor = floatAbove(f, a + "rope.scaling.factor", 0.0, -1.0);
    if (r.factor < 0) throw Error("model", "metadata key " + a + "rope.scaling.factor is negative");
    if (r.factor == 0.0) {
        double linear = floatAbove(f, a + "rope.scale_linear", 0.0, -1.0);
        if (linear < 0) throw Error("model", "metadata key " + a + "rope.scale_linear is negative");
        if (linear != 0.0 && type == "none") type = "linear";
        r.factor = linear != 0.0 ? linear : 1.0;
    }
    if (type == "none" || r.factor == 1.0) {
        r.scaling = RopeScaling::None;
        r.factor = 1.0;
    } else if (type == "linear") {
        r.scaling = RopeScaling::Linear;
    } else if (type == "yarn") {
        r.scaling = RopeScaling::Yarn;
        r.originalContext = intInRange(f, a + "rope.scaling.original_context_length", p_.trainedContext, 1, kMaxContext);
        // A negative ext_factor means "the default", as in llama.cpp.
        r.extFactor = finiteFloat(f, a + "rope.scaling.yarn_ext_factor", 1.0);
        if (r.extFactor < 0) r.extFactor = 1.0;
        r.attnFactor = floatAbove(f, a + "rope.scaling.attn_factor", 1.0, 0.0);
        r.betaFast = floatAbove(f, a + "rope.scaling.yarn_beta_fast", 32.0, 0.0);
        r.betaSlow = floatAbove(f, a + "rope.scaling.yarn_beta_slow", 1.0, 0.0);
    } else {
        throw Error("model", "unsupported rope scaling type '" + type + "'");
    }
}

void TransformerModel::bindTensors() {
    TensorBinder bind(*file_);

    head_ = bind.vocabularyHead(p_.embedding);
    p_.vocab = head_.vocab;
    if (bind.has("rope_freqs.weight")) {
        p_.rope.freqFactors = bind.vec("rope_freqs.weight", p_.rope.dims / 2);
        requirePositiveFinite(p_.rope.freqFactors, "rope_freqs.weight");
    }
    rope_ = std::make_unique<Rope>(p_.rope);

    const int64_t e = p_.embedding, qd = p_.heads * p_.keyDim, kd = p_.kvHeads * p_.keyDim,
                  vd = p_.kvHeads * p_.valueDim, od = p_.heads * p_.valueDim, ff = p_.feedForward;
    layers_.resize(size_t(p_.layers));
    for (int64_t i = 0; i < p_.layers; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        auto& L = layers_[size_t(i)];
        L.attnNorm = bind.vec(b + "attn_norm.weight", e);
        L.wq = bind.matrix(b + "attn_q.weight", e, qd);
        L.wk = bind.matrix(b + "attn_k.weight", e, kd);
        L.wv = bind.matrix(b + "attn_v.weight", e, vd);
        L.wo = bind.matrix(b + "attn_output.weight", od, e);
        if (variant_.qkvBias) {
            L.bq = bind.vec(b + "attn_q.bias", qd);
            L.bk = bind.vec(b + "attn_k.bias", kd);
            L.bv = bind.vec(b + "attn_v.bias", vd);
        }
        if (variant_.qkNorm) {
            L.qNorm = bind.vec(b + "attn_q_norm.weight", p_.keyDim);
            L.kNorm = bind.vec(b + "attn_k_norm.weight", p_.keyDim);
        }
        L.ffnNorm = bind.vec(b + "ffn_norm.weight", e);
        L.gate = bind.matrix(b + "ffn_gate.weight", e, ff);
        L.up = bind.matrix(b + "ffn_up.weight", e, ff);
        L.down = bind.matrix(b + "ffn_down.weight", ff, e);
    }
    bind.requireAllUsed(file_->architecture());
}

std::unique_ptr<Memory> TransformerModel::newMemory(const MemoryOptions& options) const {
    return std::make_unique<KvCache>(p_.layers, p_.kvHeads, p_.keyDim, p_.valueDim, options.contextSize,
                                     options.kvType);
}

void TransformerModel::forward(Memory& mem, std::span<const int32_t> tokens, bool allLogits, float* logits,
                               ExecContext& ctx) const {
    auto* cache = dynamic_cast<KvCache*>(&mem);
    if (!cache || cache->layers() != p_.layers || cache->kvHeads() != p_.kvHeads || cache->keyDim() != p_.keyDim ||
        cache->valueDim() != p_.valueDim)
        throw Error("model", "this memory was not made by this model");
    const int64_t T = int64_t(tokens.size());
    if (T == 0) return;
    const int64_t pos0 = cache->size();
    if (pos0 + T > cache->capacity())
        throw Error("model", "context is full: " + std::to_string(pos0) + " + " + std::to_string(T) +
                                 " tokens exceed the context size of " + std::to_string(cache->capacity()));

    const int64_t e = p_.embedding, qd = p_.heads * p_.keyDim, kd = p_.kvHeads * p_.keyDim,
                  vd = p_.kvHeads * p_.valueDim, od = p_.heads * p_.valueDim, ff = p_.feedForward;
    std::vector<float> x(size_t(T * e)), xn(size_t(T * e)), q(size_t(T * qd)), k(size_t(T * kd)), v(size_t(T * vd)),
        att(size_t(T * od)), gate(size_t(T * ff)), up(size_t(T * ff));
    embedTokens(*head_.tokenEmbd, tokens, x.data(), e);

    // cos/sin of every chunk position, computed once per pass.
    const int64_t pairs = p_.rope.dims / 2;
    std::vector<float> cosv(size_t(T * pairs)), sinv(size_t(T * pairs));
    for (int64_t t = 0; t < T; ++t) rope_->angles(pos0 + t, &cosv[size_t(t * pairs)], &sinv[size_t(t * pairs)]);

    const AttentionShape shape{p_.heads, p_.kvHeads, p_.keyDim, p_.valueDim, float(1.0 / std::sqrt(double(p_.keyDim)))};
    auto perToken = [&](const std::function<void(int64_t)>& fn) {
        ctx.parallelFor(T, 1, [&](int64_t b, int64_t end) { for (int64_t t = b; t < end; ++t) fn(t); });
    };

    for (int64_t l = 0; l < p_.layers; ++l) {
        const TransformerLayer& L = layers_[size_t(l)];
        perToken([&](int64_t t) { rmsNorm(&x[size_t(t * e)], L.attnNorm.data(), &xn[size_t(t * e)], e, p_.eps); });
        tensor::matmul(L.wq, xn.data(), e, T, q.data(), qd, ctx);
        tensor::matmul(L.wk, xn.data(), e, T, k.data(), kd, ctx);
        tensor::matmul(L.wv, xn.data(), e, T, v.data(), vd, ctx);
        perToken([&](int64_t t) {
            float* qt = &q[size_t(t * qd)];
            float* kt = &k[size_t(t * kd)];
            float* vt = &v[size_t(t * vd)];
            if (variant_.qkvBias) {
                addInPlace(qt, L.bq.data(), qd);
                addInPlace(kt, L.bk.data(), kd);
                addInPlace(vt, L.bv.data(), vd);
            }
            if (variant_.qkNorm) {
                for (int64_t h = 0; h < p_.heads; ++h)
                    rmsNorm(qt + h * p_.keyDim, L.qNorm.data(), qt + h * p_.keyDim, p_.keyDim, p_.eps);
                for (int64_t h = 0; h < p_.kvHeads; ++h)
                    rmsNorm(kt + h * p_.keyDim, L.kNorm.data(), kt + h * p_.keyDim, p_.keyDim, p_.eps);
            }
            rope_->apply(qt, p_.heads, p_.keyDim, &cosv[size_t(t * pairs)], &sinv[size_t(t * pairs)]);
            rope_->apply(kt, p_.kvHeads, p_.keyDim, &cosv[size_t(t * pairs)], &sinv[size_t(t * pairs)]);
            for (int64_t h = 0; h < p_.kvHeads; ++h) {
                cache->writeK(l, h, pos0 + t, kt + h * p_.keyDim);
                cache->writeV(l, h, pos0 + t, vt + h * p_.valueDim);
            }
        });
        attention(*cache, l, shape, q.data(), qd, T, pos0, att.data(), od, ctx);
        tensor::matmul(L.wo, att.data(), od, T, xn.data(), e, ctx);
        perToken([&](int64_t t) {
            addInPlace(&x[size_t(t * e)], &xn[size_t(t * e)], e);
            rmsNorm(&x[size_t(t * e)], L.ffnNorm.data(), &xn[size_t(t * e)], e, p_.eps);
        });
        tensor::matmul(L.gate, xn.data(), e, T, gate.data(), ff, ctx);
        tensor::matmul(L.up, xn.data(), e, T, up.data(), ff, ctx);
        perToken([&](int64_t t) { swiglu(&gate[size_t(t * ff)], &up[size_t(t * ff)], &gate[size_t(t * ff)], ff); });
        tensor::matmul(L.down, gate.data(), ff, T, xn.data(), e, ctx);
        perToken([&](int64_t t) { addInPlace(&x[size_t(t * e)], &xn[size_t(t * e)], e); });
    }
    cache->advance(T);

    if (!logits) return;
    head_.logits(x.data(), xn.data(), T, allLogits ? 0 : T - 1, e, p_.eps, logits, ctx);
}

} // namespace cairn::model
