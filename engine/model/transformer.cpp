#include "model/transformer.h"

#include "cairn/error.h"
#include "cairn/gguf.h"
#include "memory/kv_cache.h"
#include "model/attention.h"
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
    p_.embedding = requiredInt(f, a + "embedding_length");
    p_.layers = requiredInt(f, a + "block_count");
    p_.feedForward = requiredInt(f, a + "feed_forward_length");
    p_.heads = requiredInt(f, a + "attention.head_count");
    p_.kvHeads = f.find(a + "attention.head_count_kv") ? requiredInt(f, a + "attention.head_count_kv") : p_.heads;
    if (p_.embedding <= 0 || p_.layers <= 0 || p_.feedForward <= 0 || p_.heads <= 0 || p_.kvHeads <= 0 ||
        p_.heads % p_.kvHeads != 0 || p_.layers > 4096 || p_.embedding > (1 << 20) || p_.heads > 4096)
        throw Error("model", "implausible hyperparameters (embedding, layers, feed-forward, heads, KV heads)");
    p_.keyDim = f.find(a + "attention.key_length") ? requiredInt(f, a + "attention.key_length") : p_.embedding / p_.heads;
    p_.valueDim = f.find(a + "attention.value_length") ? requiredInt(f, a + "attention.value_length") : p_.keyDim;
    if (p_.keyDim <= 0 || p_.valueDim <= 0 || p_.keyDim > 4096 || p_.valueDim > 4096)
        throw Error("model", "implausible attention head size");
    p_.eps = float(f.getFloat(a + "attention.layer_norm_rms_epsilon", 1e-5));
    p_.trainedContext = f.getInt(a + "context_length", 0);
    if (auto n = f.getInt(a + "expert_count", 0); n > 0)
        throw Error("model", "mixture-of-experts models (" + std::to_string(n) + " experts) are not supported");

    RopeConfig& r = p_.rope;
    r.dims = f.getInt(a + "rope.dimension_count", p_.keyDim);
    if (r.dims <= 0 || r.dims > p_.keyDim || r.dims % 2)
        throw Error("model", "rope.dimension_count " + std::to_string(r.dims) + " does not fit the head size " +
                                 std::to_string(p_.keyDim));
    r.neox = variant_.neoxRope;
    r.base = f.getFloat(a + "rope.freq_base", 10000.0);
    std::string type(f.getString(a + "rope.scaling.type", "none"));
    r.factor = f.getFloat(a + "rope.scaling.factor", 0.0);
    if (r.factor == 0.0) {  // older files: rope.scale_linear
        double linear = f.getFloat(a + "rope.scale_linear", 0.0);
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
        r.originalContext = f.getInt(a + "rope.scaling.original_context_length", p_.trainedContext);
        r.extFactor = f.getFloat(a + "rope.scaling.yarn_ext_factor", 1.0);
        if (r.extFactor < 0) r.extFactor = 1.0;
        r.attnFactor = f.getFloat(a + "rope.scaling.attn_factor", 1.0);
        r.betaFast = f.getFloat(a + "rope.scaling.yarn_beta_fast", 32.0);
        r.betaSlow = f.getFloat(a + "rope.scaling.yarn_beta_slow", 1.0);
    } else {
        throw Error("model", "unsupported rope scaling type '" + type + "'");
    }
    if (!(r.base > 0) || !(r.factor > 0)) throw Error("model", "invalid rope base or scaling factor");
}

void TransformerModel::bindTensors() {
    TensorBinder bind(*file_);

    head_ = bind.vocabularyHead(p_.embedding);
    p_.vocab = head_.vocab;
    if (bind.has("rope_freqs.weight")) p_.rope.freqFactors = bind.vec("rope_freqs.weight", p_.rope.dims / 2);
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
