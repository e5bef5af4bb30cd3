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
// The frame: HybridModel; memory: KV + conv state + one keyDim × valueDim state per value head.
#include "cairn/error.h"
#include "model/architectures.h"
#include "model/delta_net.h"
#include "model/hybrid_model.h"
#include "model/hyperparameters.h"
#include "model/ops.h"
#include "model/ssm_ops.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace cairn::model {
namespace {

struct DeltaNetWeights {
    tensor::MatrixView qkv, gate, beta, alpha, out;
    std::vector<float> convW, dtBias, A, norm;
};

class Qwen35Model final : public HybridModel {
public:
    explicit Qwen35Model(std::unique_ptr<gguf::File> file) : HybridModel(std::move(file)) {
        const gguf::File& f = *file_;
        const std::string arch = f.architecture(), a = arch + ".";
        readCommon(arch, 1e-6);
        const int64_t blocks = intInRange(f, a + "block_count", 1, kMaxLayers);
        // The last nextn_predict_layers blocks are the multi-token-prediction head (speculative
        // decoding); the model's own output does not depend on them, so they are not run.
        const int64_t mtp = f.getInt(a + "nextn_predict_layers", 0);
        if (mtp < 0 || mtp >= blocks)
            throw Error("model",
                        a + "nextn_predict_layers " + std::to_string(mtp) + " does not fit block_count " +
                            std::to_string(blocks));
        const int64_t layers = blocks - mtp;
        const int64_t interval = requiredInt(f, a + "full_attention_interval");
        if (interval <= 0 || interval > layers)
            throw Error("model",
                        a + "full_attention_interval " + std::to_string(interval) + " does not fit " +
                            std::to_string(layers) + " layers");

        attn_.heads = requiredInt(f, a + "attention.head_count");
        attn_.kvHeads = requiredInt(f, a + "attention.head_count_kv");
        attn_.headDim = f.getInt(a + "attention.key_length", attn_.heads > 0 ? e_ / attn_.heads : 0);
        if (attn_.heads <= 0 || attn_.kvHeads <= 0 || attn_.heads > 4096 || attn_.heads % attn_.kvHeads ||
            attn_.headDim <= 0 || attn_.headDim > 4096 ||
            f.getInt(a + "attention.value_length", attn_.headDim) != attn_.headDim)
            throw Error("model",
                        a + "attention.head_count / head_count_kv / key_length / value_length are implausible");
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
                throw Error("model",
                            a + "rope.dimension_sections must cover the " + std::to_string(r.dims / 2) +
                                " rotated pairs in its first three sections");
        }
        r.neox = true;
        r.base = floatAbove(f, a + "rope.freq_base", 10000.0, 1.0);
        rope_ = std::make_unique<Rope>(r);
        attn_.rope = rope_.get();

        conv_ = requiredInt(f, a + "ssm.conv_kernel");
        dk_ = requiredInt(f, a + "ssm.state_size");
        nk_ = requiredInt(f, a + "ssm.group_count");
        nv_ = requiredInt(f, a + "ssm.time_step_rank");
        const int64_t inner = requiredInt(f, a + "ssm.inner_size");
        if (nk_ <= 0 || nv_ <= 0 || nk_ > 1024 || nv_ > 1024 || nv_ % nk_ || dk_ <= 0 || dk_ > 1024 ||
            inner != nv_ * dk_)
            throw Error("model",
                        a +
                            "ssm.state_size / group_count / time_step_rank / inner_size disagree (inner_size "
                            "must be time_step_rank × state_size)");
        dv_ = dk_;
        if (conv_ < 2 || conv_ > ssm::kMaxConv)
            throw Error("model",
                        a + "ssm.conv_kernel " + std::to_string(conv_) + " is not supported (2 to " +
                            std::to_string(ssm::kMaxConv) + ")");

        shape_.attention.resize(size_t(layers));
        for (int64_t l = 0; l < layers; ++l) shape_.attention[size_t(l)] = (l + 1) % interval == 0;
        shape_.kvHeads = attn_.kvHeads;
        shape_.keyDim = shape_.valueDim = attn_.headDim;
        // The delta-rule state is nv × dk × dv floats: as nv·dv channels × dk (the
        // layout is the delta rule's own, the state is only stored and copied).
        shape_.recurrent = memory::RecurrentShape{0, nv_ * dv_, conv_ - 1, dk_, ssm::kLanes, convChannels()};

        TensorBinder bind(f, ownedWeights_.get());
        head_ = bind.vocabularyHead(e_);
        const int64_t cc = convChannels(), vd = nv_ * dv_;
        layers_.resize(size_t(layers));
        deltaNets_.resize(size_t(layers));
        for (int64_t l = 0; l < layers; ++l) {
            bindLayer(bind, l, "post_attention_norm.weight");
            if (shape_.attention[size_t(l)]) continue;
            const std::string b = "blk." + std::to_string(l) + ".";
            DeltaNetWeights& L = deltaNets_[size_t(l)];
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
        for (int64_t l = layers; l < blocks; ++l) bind.skip("blk." + std::to_string(l) + ".");
        bind.requireAllUsed("qwen35");
        finishInfo(arch, true);
    }

private:
    void recurrentMix(int64_t l, memory::HybridMemory& m, const float* xn, int64_t T, float* out,
                      ExecContext& ctx) const override {
        const int64_t r = m.recurrentIndex(l);
        deltaNet(deltaNets_[size_t(l)], m.recurrent().conv(r), m.recurrent().ssm(r), xn, T, out, ctx);
    }

    int64_t convChannels() const { return 2 * nk_ * dk_ + nv_ * dv_; }

    void deltaNet(const DeltaNetWeights& L, float* convState, float* state, const float* xn, int64_t T, float* out,
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

    int64_t conv_ = 0, dk_ = 0, dv_ = 0, nk_ = 0, nv_ = 0;
    std::vector<DeltaNetWeights> deltaNets_;  // per layer; empty for attention layers
};

}  // namespace

std::unique_ptr<Model> loadQwen35(std::unique_ptr<gguf::File> file) {
    return std::make_unique<Qwen35Model>(std::move(file));
}

}  // namespace cairn::model
