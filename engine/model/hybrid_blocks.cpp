#include "model/hybrid_blocks.h"

#include "cairn/error.h"
#include "model/attention.h"
#include "model/ops.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace cairn::model {

std::vector<int64_t> perLayerInt(const gguf::File& f, const std::string& key, int64_t layers) {
    const auto* v = f.find(key);
    if (!v) throw Error("model", "missing metadata key " + key);
    std::vector<int64_t> out;
    if (v->isArray()) {
        if (v->elementType() == gguf::ValueType::String || v->elementType() == gguf::ValueType::Array)
            throw Error("model", "metadata key " + key + " must hold integers");
        if (int64_t(v->size()) != layers)
            throw Error("model",
                        "metadata key " + key + " has " + std::to_string(v->size()) + " values for " +
                            std::to_string(layers) + " layers");
        for (double d : v->numbers()) {
            if (d != std::floor(d) || d < 0 || d > 1e6)
                throw Error("model", "metadata key " + key + " holds a value that is not a count");
            out.push_back(int64_t(d));
        }
    } else {
        if (!v->isInteger() || v->asInt() < 0)
            throw Error("model", "metadata key " + key + " must be a count per layer");
        out.assign(size_t(layers), v->asInt());
    }
    return out;
}

HybridAttentionWeights bindHybridAttention(TensorBinder& bind, const std::string& b, int64_t e,
                                           const HybridAttentionConfig& c) {
    HybridAttentionWeights w;
    const int64_t qd = c.heads * c.headDim, kd = c.kvHeads * c.headDim;
    w.wq = bind.matrix(b + "attn_q.weight", e, c.outputGate ? 2 * qd : qd);
    w.wk = bind.matrix(b + "attn_k.weight", e, kd);
    w.wv = bind.matrix(b + "attn_v.weight", e, kd);
    w.wo = bind.matrix(b + "attn_output.weight", qd, e);
    if (c.qkNorm) {
        w.qNorm = bind.vec(b + "attn_q_norm.weight", c.headDim);
        w.kNorm = bind.vec(b + "attn_k_norm.weight", c.headDim);
    }
    return w;
}

void hybridAttention(const HybridAttentionConfig& c, const HybridAttentionWeights& w, memory::KvCache& cache,
                     int64_t cacheLayer, const float* xn, int64_t e, int64_t T, int64_t pos0, const float* cosv,
                     const float* sinv, int64_t first, float* out, ExecContext& ctx) {
    const int64_t hd = c.headDim, qd = c.heads * hd, kd = c.kvHeads * hd, pq = c.outputGate ? 2 * qd : qd;
    const int64_t pairs = c.rope ? c.rope->config().dims / 2 : 0;
    const int64_t n = T - first;  // positions with outputs; rows below `first` of proj, q, gate and att stay unused
    std::vector<float> proj(size_t(T * pq)), q(size_t(T * qd)), gate(c.outputGate ? size_t(T * qd) : 0),
        k(size_t(T * kd)), v(size_t(T * kd)), att(size_t(T * qd));
    if (n == T) {
        const tensor::MatmulOutput qkv[] = {{w.wq, proj.data(), pq}, {w.wk, k.data(), kd}, {w.wv, v.data(), kd}};
        tensor::matmulSameInput(qkv, xn, e, T, ctx);
    } else {
        if (n > 0) tensor::matmul(w.wq, xn + first * e, e, n, &proj[size_t(first * pq)], pq, ctx);
        tensor::matmul(w.wk, xn, e, T, k.data(), kd, ctx);
        tensor::matmul(w.wv, xn, e, T, v.data(), kd, ctx);
    }
    forEachPosition(T, ctx, [&](int64_t t) {
        float* qt = t >= first ? &q[size_t(t * qd)] : nullptr;
        float* kt = &k[size_t(t * kd)];
        const float* pt = &proj[size_t(t * pq)];
        for (int64_t h = 0; qt && h < c.heads; ++h) {
            const float* src = c.outputGate ? pt + 2 * h * hd : pt + h * hd;
            std::copy(src, src + hd, qt + h * hd);
            if (c.outputGate) std::copy(src + hd, src + 2 * hd, &gate[size_t(t * qd + h * hd)]);
        }
        if (c.qkNorm) {
            for (int64_t h = 0; qt && h < c.heads; ++h) rmsNorm(qt + h * hd, w.qNorm.data(), qt + h * hd, hd, c.eps);
            for (int64_t h = 0; h < c.kvHeads; ++h) rmsNorm(kt + h * hd, w.kNorm.data(), kt + h * hd, hd, c.eps);
        }
        if (c.rope) {
            if (qt) c.rope->apply(qt, c.heads, hd, cosv + t * pairs, sinv + t * pairs);
            c.rope->apply(kt, c.kvHeads, hd, cosv + t * pairs, sinv + t * pairs);
        }
        for (int64_t h = 0; h < c.kvHeads; ++h) {
            cache.writeK(cacheLayer, h, pos0 + t, kt + h * hd);
            cache.writeV(cacheLayer, h, pos0 + t, &v[size_t(t * kd + h * hd)]);
        }
    });
    if (n == 0) return;
    const AttentionShape shape{c.heads, c.kvHeads, hd, hd, c.scale, c.window};
    attention(cache, cacheLayer, shape, &q[size_t(first * qd)], qd, n, pos0 + first, &att[size_t(first * qd)], qd, ctx);
    if (c.outputGate)
        forEachPosition(first, T, ctx, [&](int64_t t) {
            float* o = &att[size_t(t * qd)];
            const float* g = &gate[size_t(t * qd)];
            for (int64_t i = 0; i < qd; ++i) o[i] *= 1.0f / (1.0f + std::exp(-g[i]));
        });
    tensor::matmul(w.wo, &att[size_t(first * qd)], qd, n, out + first * e, e, ctx);
}

FeedForwardWeights bindFeedForward(TensorBinder& bind, const std::string& b, int64_t e, int64_t ff) {
    return {bind.matrix(b + "ffn_gate.weight", e, ff), bind.matrix(b + "ffn_up.weight", e, ff),
            bind.matrix(b + "ffn_down.weight", ff, e)};
}

void feedForward(const FeedForwardWeights& w, const float* xn, int64_t e, int64_t ff, int64_t T, float* out,
                 ExecContext& ctx, GatedActivation act) {
    std::vector<float> gate(size_t(T * ff)), up(size_t(T * ff));
    tensor::matmul(w.gate, xn, e, T, gate.data(), ff, ctx);
    tensor::matmul(w.up, xn, e, T, up.data(), ff, ctx);
    auto* gated = act == GatedActivation::GeluTanh ? geglu : swiglu;
    forEachPosition(T, ctx,
                    [&](int64_t t) { gated(&gate[size_t(t * ff)], &up[size_t(t * ff)], &gate[size_t(t * ff)], ff); });
    tensor::matmul(w.down, gate.data(), ff, T, out, e, ctx);
}

memory::HybridMemory& hybridMemoryOf(Memory& mem, const memory::HybridShape& s) {
    auto* h = dynamic_cast<memory::HybridMemory*>(&mem);
    const memory::RecurrentShape* r = h && h->shape().attention == s.attention ? &h->shape().recurrent : nullptr;
    if (!r || h->isCheckpoint() || h->shape().kvHeads != s.kvHeads || h->shape().keyDim != s.keyDim ||
        h->shape().valueDim != s.valueDim || r->channels != s.recurrent.channels ||
        r->convWidth != s.recurrent.convWidth || r->stateSize != s.recurrent.stateSize ||
        r->lanes != s.recurrent.lanes || r->convChannels != s.recurrent.convChannels)
        throw Error("model", "this memory was not made by this model");
    return *h;
}

HybridChunk beginHybridChunk(Memory& mem, const memory::HybridShape& shape, int64_t T, const Rope* rope) {
    memory::HybridMemory& m = hybridMemoryOf(mem, shape);
    const int64_t pos0 = m.size();
    if (pos0 + T > m.capacity())
        throw Error("model",
                    "context is full: " + std::to_string(pos0) + " + " + std::to_string(T) +
                        " tokens exceed the context size of " + std::to_string(m.capacity()));
    HybridChunk c{m, pos0, {}, {}};
    const int64_t pairs = rope ? rope->config().dims / 2 : 0;
    c.cos.resize(size_t(T * pairs));
    c.sin.resize(size_t(T * pairs));
    for (int64_t t = 0; rope && t < T; ++t)
        rope->angles(pos0 + t, &c.cos[size_t(t * pairs)], &c.sin[size_t(t * pairs)]);
    return c;
}

}  // namespace cairn::model
