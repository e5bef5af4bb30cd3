// qwen35 (Qwen3.5 dense, no MoE; MTP layers are skipped): gated DeltaNet layers and, every
// full_attention_interval layers ((l + 1) % interval == 0), gated attention.
//   DeltaNet: [q | k | v] = attn_qkv · h, z = attn_gate · h, b = ssm_beta · h,
//     a = ssm_alpha · h; SiLU(causal conv over q | k | v, no bias); the gated
//     delta rule (delta_net.h); output ssm_out · y
//   attention: attn_q · h holds per head the query then its gate; per-head
//     RMSNorm of q and k; RoPE on the first rope.dimension_count dims of each
//     head (NeoX pairs; the multi-section RoPE with text positions reduces to
//     this); output attn_output · (o ⊙ sigmoid(gate))
// then the SwiGLU FFN after post_attention_norm; final output_norm.
// Memory: HybridMemory (KV + conv state + one keyDim × valueDim state per value head).
#include "cairn/error.h"
#include "model/architectures.h"
#include "model/hyperparameters.h"
#include "model/delta_net.h"
#include "model/hybrid_blocks.h"
#include "model/ops.h"
#include "model/ssm_ops.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace cairn::model {
namespace {

struct Qwen35Layer {
    bool attention = false;
    std::vector<float> attnNorm, ffnNorm;
    HybridAttentionWeights attn;
    tensor::MatrixView qkv, gate, beta, alpha, out;
    std::vector<float> convW, dtBias, A, norm;
    FeedForwardWeights ffn;
};

class Qwen35Model final : public Model {
public:
    explicit Qwen35Model(std::unique_ptr<gguf::File> file) : Model(std::move(file)) {
        const gguf::File& f = *file_;
        const std::string a = f.architecture() + ".";
        e_ = intInRange(f, a + "embedding_length", 1, kMaxEmbedding);
        const int64_t blocks = intInRange(f, a + "block_count", 1, kMaxLayers);
        // The last nextn_predict_layers blocks are the multi-token-prediction head (speculative
        // decoding); the model's own output does not depend on them, so they are not run.
        const int64_t mtp = f.getInt(a + "nextn_predict_layers", 0);
        if (mtp < 0 || mtp >= blocks)
            throw Error("model", a + "nextn_predict_layers " + std::to_string(mtp) + " does not fit block_count " +
                                     std::to_string(blocks));
        const int64_t layers = blocks - mtp;
        ff_ = intInRange(f, a + "feed_forward_length", 1, kMaxFeedForward);
        if (e_ <= 0 || e_ > (1 << 20) || layers <= 0 || layers > 4096 || ff_ <= 0 || ff_ > (1 << 22))
            throw Error("model", "implausible hyperparameters (embedding, layers, feed-forward)");
        if (auto n = f.getInt(a + "expert_count", 0); n > 0)
            throw Error("model", "mixture-of-experts models (" + std::to_string(n) + " experts) are not supported");
        eps_ = normEpsilon(f, a + "attention.layer_norm_rms_epsilon", 1e-6);
        const int64_t interval = requiredInt(f, a + "full_attention_interval");
        if (interval <= 0 || interval > layers)
            throw Error("model", a + "full_attention_interval " + std::to_string(interval) + " does not fit " +
                                     std::to_string(layers) + " layers");

        attn_.heads = requiredInt(f, a + "attention.head_count");
        attn_.kvHeads = requiredInt(f, a + "attention.head_count_kv");
        attn_.headDim = f.getInt(a + "attention.key_length", attn_.heads > 0 ? e_ / attn_.heads : 0);
        if (attn_.heads <= 0 || attn_.kvHeads <= 0 || attn_.heads > 4096 || attn_.heads % attn_.kvHeads ||
            attn_.headDim <= 0 || attn_.headDim > 4096 ||
            f.getInt(a + "attention.value_length", attn_.headDim) != attn_.headDim)
            throw Error("model", a + "attention.head_count / head_count_kv / key_length / value_length are implausible");
        attn_.scale = float(1.0 / std::sqrt(double(attn_.headDim)));
        attn_.eps = eps_;
        attn_.qkNorm = true;
        attn_.outputGate = true;
        RopeConfig r;
        r.dims = requiredInt(f, a + "rope.dimension_count");
        if (r.dims <= 0 || r.dims > attn_.headDim || r.dims % 2)
            throw Error("model", a + "rope.dimension_count " + std::to_string(r.dims) + " does not fit the head size");
        if (const auto* sec = f.find(a + "rope.dimension_sections")) {
            // Text positions are (p, p, p, 0): sections over the first three cover pairs rotated by p;
            // a fourth section would rotate by 0, which this reduction does not implement.
            std::vector<double> s = sec->isArray() ? sec->numbers() : std::vector<double>{};
            double firstThree = 0;
            for (size_t i = 0; i < s.size() && i < 3; ++i) firstThree += s[i];
            if (s.size() < 3 || firstThree != double(r.dims / 2) || (s.size() > 3 && s[3] != 0))
                throw Error("model", a + "rope.dimension_sections must cover the " + std::to_string(r.dims / 2) +
                                         " rotated pairs in its first three sections");
        }
        r.neox = true;
        r.base = floatAbove(f, a + "rope.freq_base", 10000.0, 1.0);
        if (!(r.base > 0)) throw Error("model", a + "rope.freq_base must be positive");
        rope_ = std::make_unique<Rope>(r);
        attn_.rope = rope_.get();

        conv_ = requiredInt(f, a + "ssm.conv_kernel");
        dk_ = requiredInt(f, a + "ssm.state_size");
        nk_ = requiredInt(f, a + "ssm.group_count");
        nv_ = requiredInt(f, a + "ssm.time_step_rank");
        const int64_t inner = requiredInt(f, a + "ssm.inner_size");
        if (nk_ <= 0 || nv_ <= 0 || nk_ > 1024 || nv_ > 1024 || nv_ % nk_ || dk_ <= 0 || dk_ > 1024 ||
            inner != nv_ * dk_)
            throw Error("model", a + "ssm.state_size / group_count / time_step_rank / inner_size disagree (inner_size "
                                     "must be time_step_rank × state_size)");
        dv_ = dk_;
        if (conv_ < 2 || conv_ > ssm::kMaxConv)
            throw Error("model", a + "ssm.conv_kernel " + std::to_string(conv_) + " is not supported (2 to " +
                                     std::to_string(ssm::kMaxConv) + ")");

        shape_.attention.resize(size_t(layers));
        for (int64_t l = 0; l < layers; ++l) shape_.attention[size_t(l)] = (l + 1) % interval == 0;
        shape_.kvHeads = attn_.kvHeads;
        shape_.keyDim = shape_.valueDim = attn_.headDim;
        // The delta-rule state is nv × dk × dv floats: as nv·dv channels × dk (the
        // layout is the delta rule's own, the state is only stored and copied).
        shape_.recurrent = RecurrentShape{0, nv_ * dv_, conv_ - 1, dk_, ssm::kLanes, convChannels()};

        TensorBinder bind(f);
        head_ = bind.vocabularyHead(e_);
        const int64_t cc = convChannels(), vd = nv_ * dv_;
        layers_.resize(size_t(layers));
        for (int64_t l = 0; l < layers; ++l) {
            const std::string b = "blk." + std::to_string(l) + ".";
            Qwen35Layer& L = layers_[size_t(l)];
            L.attention = shape_.attention[size_t(l)];
            L.attnNorm = bind.vec(b + "attn_norm.weight", e_);
            if (L.attention) {
                L.attn = bindHybridAttention(bind, b, e_, attn_);
            } else {
                L.qkv = bind.matrix(b + "attn_qkv.weight", e_, cc);
                L.gate = bind.matrix(b + "attn_gate.weight", e_, vd);
                L.beta = bind.matrix(b + "ssm_beta.weight", e_, nv_);
                L.alpha = bind.matrix(b + "ssm_alpha.weight", e_, nv_);
                L.convW = ssm::packLanes(bind.table(b + "ssm_conv1d.weight", conv_, cc).data(), cc, conv_);
                L.dtBias = bind.vec(b + "ssm_dt.bias", nv_);
                L.A = bind.vec(b + "ssm_a", nv_);
                L.norm = bind.vec(b + "ssm_norm.weight", dv_);
                L.out = bind.matrix(b + "ssm_out.weight", vd, e_);
            }
            L.ffnNorm = bind.vec(b + "post_attention_norm.weight", e_);
            L.ffn = bindFeedForward(bind, b, e_, ff_);
        }
        for (int64_t l = layers; l < blocks; ++l) bind.skip("blk." + std::to_string(l) + ".");
        bind.requireAllUsed("qwen35");

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
            const Qwen35Layer& L = layers_[size_t(l)];
            forEachPosition(T, ctx, [&](int64_t t) { rmsNorm(&x[size_t(t * e)], L.attnNorm.data(), &xn[size_t(t * e)], e, eps_); });
            if (L.attention) {
                hybridAttention(attn_, L.attn, m.kv(), m.kvIndex(l), xn.data(), e, T, pos0, chunk.cos.data(), chunk.sin.data(),
                                out.data(), ctx);
            } else {
                const int64_t r = m.recurrentIndex(l);
                deltaNet(L, m.recurrent().conv(r), m.recurrent().ssm(r), xn.data(), T, out.data(), ctx);
            }
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
    int64_t convChannels() const { return 2 * nk_ * dk_ + nv_ * dv_; }

    void deltaNet(const Qwen35Layer& L, float* convState, float* state, const float* xn, int64_t T, float* out,
                  ExecContext& ctx) const {
        const int64_t e = e_, cc = convChannels(), vd = nv_ * dv_;
        std::vector<float> qkv(size_t(T * cc)), conv(size_t(T * cc)), z(size_t(T * vd)), b(size_t(T * nv_)),
            a(size_t(T * nv_)), y(size_t(T * vd));
        tensor::matmul(L.qkv, xn, e, T, qkv.data(), cc, ctx);
        tensor::matmul(L.gate, xn, e, T, z.data(), vd, ctx);
        tensor::matmul(L.beta, xn, e, T, b.data(), nv_, ctx);
        tensor::matmul(L.alpha, xn, e, T, a.data(), nv_, ctx);
        ssm::conv1dSilu(qkv.data(), cc, T, cc, conv_, L.convW.data(), nullptr, convState, conv.data(), cc, ctx);
        DeltaNetInputs in;
        in.tokens = T;
        in.keyHeads = nk_;
        in.valueHeads = nv_;
        in.keyDim = dk_;
        in.valueDim = dv_;
        in.qkv = conv.data();
        in.ldqkv = cc;
        in.z = z.data();
        in.ldz = vd;
        in.beta = b.data();
        in.alpha = a.data();
        in.ldba = nv_;
        in.dtBias = L.dtBias.data();
        in.A = L.A.data();
        in.norm = L.norm.data();
        in.eps = eps_;
        gatedDeltaRule(in, state, y.data(), vd, ctx);
        tensor::matmul(L.out, y.data(), vd, T, out, e, ctx);
    }

    int64_t e_ = 0, ff_ = 0, conv_ = 0, dk_ = 0, dv_ = 0, nk_ = 0, nv_ = 0;
    float eps_ = 1e-6f;
    HybridAttentionConfig attn_;
    std::unique_ptr<Rope> rope_;
    HybridShape shape_;
    VocabularyHead head_;
    std::vector<Qwen35Layer> layers_;
};

} // namespace

std::unique_ptr<Model> loadQwen35(std::unique_ptr<gguf::File> file) { return std::make_unique<Qwen35Model>(std::move(file)); }

} // namespace cairn::model
