#include "model/transformer.h"

#include "cairn/error.h"
#include "cairn/gguf.h"
#include "memory/kv_cache.h"
#include "model/attention.h"
#include "model/hyperparameters.h"
#include "model/ops.h"
#include "model/vector_math.h"
#include "tensor/row_tiles.h"

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
        throw Error("model",
                    a + "attention.head_count " + std::to_string(p_.heads) + " is not a multiple of " + a +
                        "attention.head_count_kv " + std::to_string(p_.kvHeads));
    p_.keyDim =
        intInRange(f, a + "attention.key_length", std::max<int64_t>(1, p_.embedding / p_.heads), 1, kMaxHeadSize);
    p_.valueDim = intInRange(f, a + "attention.value_length", p_.keyDim, 1, kMaxHeadSize);
    p_.eps = normEpsilon(f, a + "attention.layer_norm_rms_epsilon");
    p_.trainedContext = intInRange(f, a + "context_length", 0, 0, kMaxContext);
    if (auto n = f.getInt(a + "expert_count", 0); n > 0)
        throw Error("model", "mixture-of-experts models (" + std::to_string(n) + " experts) are not supported");

    RopeConfig& r = p_.rope;
    r.dims = intInRange(f, a + "rope.dimension_count", p_.keyDim, 2, p_.keyDim);
    if (r.dims % 2)
        throw Error("model",
                    "metadata key " + a + "rope.dimension_count is " + std::to_string(r.dims) +
                        "; expected an even number");
    r.neox = variant_.neoxRope;
    r.base = floatAbove(f, a + "rope.freq_base", 10000.0, 1.0);
    readRopeScaling(f, a, p_.trainedContext, r);
}

void TransformerModel::bindTensors() {
    TensorBinder bind(*file_, ownedWeights_.get());

    head_ = bind.vocabularyHead(p_.embedding);
    p_.vocab = head_.vocab;
    if (bind.has("rope_freqs.weight")) {
        p_.rope.freqFactors = bind.vec("rope_freqs.weight", p_.rope.dims / 2);
        requirePositiveFinite(p_.rope.freqFactors, "rope_freqs.weight");
    }
    if (variant_.fused) bindLongRope(bind);
    rope_ = std::make_unique<Rope>(p_.rope);

    const int64_t e = p_.embedding, qd = p_.heads * p_.keyDim, kd = p_.kvHeads * p_.keyDim,
                  vd = p_.kvHeads * p_.valueDim, od = p_.heads * p_.valueDim, ff = p_.feedForward;
    layers_.resize(size_t(p_.layers));
    for (int64_t i = 0; i < p_.layers; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        auto& L = layers_[size_t(i)];
        L.attnNorm = bind.vec(b + "attn_norm.weight", e);
        if (variant_.fused) {
            const tensor::MatrixView qkv = bind.matrix(b + "attn_qkv.weight", e, qd + kd + vd,
                                                       qd % tensor::kTileRows == 0 && kd % tensor::kTileRows == 0);
            L.wq = rowSlice(qkv, 0, qd);
            L.wk = rowSlice(qkv, qd, kd);
            L.wv = rowSlice(qkv, qd + kd, vd);
        } else {
            L.wq = bind.matrix(b + "attn_q.weight", e, qd);
            L.wk = bind.matrix(b + "attn_k.weight", e, kd);
            L.wv = bind.matrix(b + "attn_v.weight", e, vd);
        }
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
        if (variant_.fused) {
            const tensor::MatrixView gateUp = bind.matrix(b + "ffn_up.weight", e, 2 * ff, ff % tensor::kTileRows == 0);
            L.gate = rowSlice(gateUp, 0, ff);
            L.up = rowSlice(gateUp, ff, ff);
        } else {
            L.gate = bind.matrix(b + "ffn_gate.weight", e, ff);
            L.up = bind.matrix(b + "ffn_up.weight", e, ff);
        }
        L.down = bind.matrix(b + "ffn_down.weight", ff, e);
    }
    bind.requireAllUsed(file_->architecture());
}

// LongRoPE (phi3): both factor tensors or neither (plain RoPE, Phi-3-mini-4k).
// As llama.cpp, the long factors when the context (padded to a multiple of
// 256, as llama.cpp pads n_ctx) exceeds original_context_length, else the short.
void TransformerModel::bindLongRope(TensorBinder& bind) {
    const bool hasLong = bind.has("rope_factors_long.weight"), hasShort = bind.has("rope_factors_short.weight");
    if (!hasLong && !hasShort) return;
    if (!hasLong || !hasShort)
        throw Error("model",
                    std::string("missing tensor ") +
                        (hasLong ? "rope_factors_short.weight" : "rope_factors_long.weight") +
                        " (LongRoPE needs both factor tensors)");
    const gguf::File& f = *file_;
    const std::string a = f.architecture() + ".";
    longRopeContext_ = intInRange(f, a + "rope.scaling.original_context_length", 1, kMaxContext);
    p_.rope.attnFactor = floatAbove(f, a + "rope.scaling.attn_factor", 1.0, 0.0);
    RopeConfig shortConfig = p_.rope;
    shortConfig.freqFactors = bind.vec("rope_factors_short.weight", p_.rope.dims / 2);
    requirePositiveFinite(shortConfig.freqFactors, "rope_factors_short.weight");
    p_.rope.freqFactors = bind.vec("rope_factors_long.weight", p_.rope.dims / 2);
    requirePositiveFinite(p_.rope.freqFactors, "rope_factors_long.weight");
    ropeShort_ = std::make_unique<Rope>(shortConfig);
}

const Rope& TransformerModel::ropeFor(int64_t capacity) const {
    if (!ropeShort_) return *rope_;
    const int64_t padded = (capacity + 255) / 256 * 256;
    return padded > longRopeContext_ ? *rope_ : *ropeShort_;
}

std::unique_ptr<Memory> TransformerModel::newMemory(const MemoryOptions& options) const {
    return std::make_unique<memory::KvCache>(p_.layers, p_.kvHeads, p_.keyDim, p_.valueDim, options.contextSize,
                                             options.kvType);
}

void TransformerModel::forward(Memory& mem, std::span<const int32_t> tokens, bool allLogits, float* logits,
                               ExecContext& ctx) const {
    auto* cache = dynamic_cast<memory::KvCache*>(&mem);
    if (!cache || cache->layers() != p_.layers || cache->kvHeads() != p_.kvHeads || cache->keyDim() != p_.keyDim ||
        cache->valueDim() != p_.valueDim)
        throw Error("model", "this memory was not made by this model");
    const int64_t T = int64_t(tokens.size());
    if (T == 0) return;
    const int64_t pos0 = cache->size();
    if (pos0 + T > cache->capacity())
        throw Error("model",
                    "context is full: " + std::to_string(pos0) + " + " + std::to_string(T) +
                        " tokens exceed the context size of " + std::to_string(cache->capacity()));

    const int64_t e = p_.embedding, qd = p_.heads * p_.keyDim, kd = p_.kvHeads * p_.keyDim,
                  vd = p_.kvHeads * p_.valueDim, od = p_.heads * p_.valueDim, ff = p_.feedForward;
    std::vector<float> x(size_t(T * e)), xn(size_t(T * e)), q(size_t(T * qd)), k(size_t(T * kd)), v(size_t(T * vd)),
        att(size_t(T * od)), gate(size_t(T * ff)), up(size_t(T * ff));
    embedTokens(head_.tokenEmbd, tokens, x.data(), e);

    // cos/sin of every chunk position, computed once per pass.
    const int64_t pairs = p_.rope.dims / 2;
    std::vector<float> cosv(size_t(T * pairs)), sinv(size_t(T * pairs));
    const Rope& rope = ropeFor(cache->capacity());
    for (int64_t t = 0; t < T; ++t) rope.angles(pos0 + t, &cosv[size_t(t * pairs)], &sinv[size_t(t * pairs)]);

    const AttentionShape shape{p_.heads, p_.kvHeads, p_.keyDim, p_.valueDim, float(1.0 / std::sqrt(double(p_.keyDim)))};

    for (int64_t l = 0; l < p_.layers; ++l) {
        ctx.atLayer(l, p_.layers);
        const TransformerLayer& L = layers_[size_t(l)];
        const bool useRope = variant_.noRopeInterval == 0 || (l + 1) % variant_.noRopeInterval != 0;
        const int64_t first = firstOutputPosition(l, p_.layers, T, allLogits, logits != nullptr);
        const int64_t n = T - first;  // tokens whose outputs this layer computes
        forEachPosition(
            T, ctx, [&](int64_t t) { rmsNorm(&x[size_t(t * e)], L.attnNorm.data(), &xn[size_t(t * e)], e, p_.eps); });
        if (n == T) {
            const tensor::MatmulOutput qkv[] = {{L.wq, q.data(), qd}, {L.wk, k.data(), kd}, {L.wv, v.data(), vd}};
            tensor::matmulSameInput(qkv, xn.data(), e, T, ctx);
        } else {
            if (n > 0) tensor::matmul(L.wq, &xn[size_t(first * e)], e, n, &q[size_t(first * qd)], qd, ctx);
            tensor::matmul(L.wk, xn.data(), e, T, k.data(), kd, ctx);
            tensor::matmul(L.wv, xn.data(), e, T, v.data(), vd, ctx);
        }
        forEachPosition(T, ctx, [&](int64_t t) {
            float* qt = t >= first ? &q[size_t(t * qd)] : nullptr;
            float* kt = &k[size_t(t * kd)];
            float* vt = &v[size_t(t * vd)];
            if (variant_.qkvBias) {
                if (qt) addInPlace(qt, L.bq.data(), qd);
                addInPlace(kt, L.bk.data(), kd);
                addInPlace(vt, L.bv.data(), vd);
            }
            if (variant_.qkNorm) {
                for (int64_t h = 0; qt && h < p_.heads; ++h)
                    rmsNorm(qt + h * p_.keyDim, L.qNorm.data(), qt + h * p_.keyDim, p_.keyDim, p_.eps);
                for (int64_t h = 0; h < p_.kvHeads; ++h)
                    rmsNorm(kt + h * p_.keyDim, L.kNorm.data(), kt + h * p_.keyDim, p_.keyDim, p_.eps);
            }
            if (useRope) {
                if (qt) rope.apply(qt, p_.heads, p_.keyDim, &cosv[size_t(t * pairs)], &sinv[size_t(t * pairs)]);
                rope.apply(kt, p_.kvHeads, p_.keyDim, &cosv[size_t(t * pairs)], &sinv[size_t(t * pairs)]);
            }
            for (int64_t h = 0; h < p_.kvHeads; ++h) {
                cache->writeK(l, h, pos0 + t, kt + h * p_.keyDim);
                cache->writeV(l, h, pos0 + t, vt + h * p_.valueDim);
            }
        });
        if (n == 0) continue;
        attention(*cache, l, shape, &q[size_t(first * qd)], qd, n, pos0 + first, &att[size_t(first * od)], od, ctx);
        tensor::matmul(L.wo, &att[size_t(first * od)], od, n, &xn[size_t(first * e)], e, ctx);
        forEachPosition(first, T, ctx, [&](int64_t t) {
            addInPlace(&x[size_t(t * e)], &xn[size_t(t * e)], e);
            rmsNorm(&x[size_t(t * e)], L.ffnNorm.data(), &xn[size_t(t * e)], e, p_.eps);
        });
        float* gateRows = &gate[size_t(first * ff)];
        float* upRows = &up[size_t(first * ff)];
        tensor::matmul(L.gate, &xn[size_t(first * e)], e, n, gateRows, ff, ctx);
        // SwiGLU on the up rows as they are written, on the thread that
        // wrote them (element-wise, in whole 16-lane vectors from a multiple
        // of 16: the same bits as one pass), instead of a pass of its own on
        // one thread per token. In one process alternating every 16 tokens
        // (Intel Xeon family 6 model 207, 2 threads, a slow stretch of the
        // host), time a token: llama-1b Q4_0 +3.8, -0.3, +1.3, +0.0 %; Q8_0
        // -0.6, -0.5 %; Q4_K_M +0.8, +1.8 %: about +0.8 %, within the noise.
        const tensor::RowsDone glu{vec::kLanes, [&](int64_t r0, int64_t r1) {
                                       for (int64_t t = 0; t < n; ++t)
                                           swiglu(&gateRows[t * ff + r0], &upRows[t * ff + r0], &gateRows[t * ff + r0],
                                                  r1 - r0);
                                   }};
        tensor::matmul(L.up, &xn[size_t(first * e)], e, n, upRows, ff, ctx, glu);
        tensor::matmul(L.down, gateRows, ff, n, &xn[size_t(first * e)], e, ctx);
        forEachPosition(first, T, ctx, [&](int64_t t) { addInPlace(&x[size_t(t * e)], &xn[size_t(t * e)], e); });
    }
    cache->advance(T);

    if (!logits) return;
    head_.logits(x.data(), xn.data(), T, allLogits ? 0 : T - 1, e, p_.eps, logits, ctx);
}

}  // namespace cairn::model
