// lfm2 (Liquid LFM2): gated short-convolution layers and GQA attention layers,
// chosen per layer by attention.head_count_kv (0 = short conv).
//   short conv: [B | C | u] = shortconv.in_proj · h; c = conv(B ⊙ u) over
//     shortconv.l_cache taps (no bias, no activation; the state is the last
//     l_cache − 1 values of B ⊙ u); output shortconv.out_proj · (C ⊙ c)
//   attention: per-head RMSNorm of q and k (attn_q_norm / attn_k_norm) before
//     NeoX RoPE over the whole head, 1/√head_dim
// then the SwiGLU FFN; the final norm is token_embd_norm (HF's embedding_norm,
// applied after the last layer). The frame: HybridModel; memory: KV + conv state.
#include "cairn/error.h"
#include "model/architectures.h"
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

struct ShortConvWeights {
    tensor::MatrixView in, out;
    std::vector<float> taps;  // lane-packed [l_cache] taps per channel
};

class Lfm2Model final : public HybridModel {
public:
    explicit Lfm2Model(std::unique_ptr<gguf::File> file) : HybridModel(std::move(file)) {
        const gguf::File& f = *file_;
        const std::string arch = f.architecture(), a = arch + ".";
        readCommon(arch, 1e-5);
        const int64_t layers = intInRange(f, a + "block_count", 1, kMaxLayers);
        lCache_ = requiredInt(f, a + "shortconv.l_cache");
        if (lCache_ < 2 || lCache_ > ssm::kMaxConv)
            throw Error("model",
                        a + "shortconv.l_cache " + std::to_string(lCache_) + " is not supported (2 to " +
                            std::to_string(ssm::kMaxConv) + ")");

        readLayerKindsFromKvHeads(arch, layers);
        if (attn_.heads > 0) {
            attn_.headDim = e_ / attn_.heads;
            attn_.scale = float(1.0 / std::sqrt(double(attn_.headDim)));
            attn_.eps = eps_;
            attn_.qkNorm = true;
            RopeConfig r;
            r.dims = f.getInt(a + "rope.dimension_count", attn_.headDim);
            if (r.dims <= 0 || r.dims > attn_.headDim || r.dims % 2)
                throw Error("model",
                            a + "rope.dimension_count " + std::to_string(r.dims) + " does not fit the head size");
            r.neox = true;
            r.base = floatAbove(f, a + "rope.freq_base", 10000.0, 1.0);
            rope_ = std::make_unique<Rope>(r);
            attn_.rope = rope_.get();
        }
        shape_.kvHeads = attn_.kvHeads;
        shape_.keyDim = shape_.valueDim = attn_.headDim;
        shape_.recurrent = memory::RecurrentShape{0, e_, lCache_ - 1, 0, ssm::kLanes, 0};

        TensorBinder bind(f, ownedWeights_.get());
        head_ = bind.vocabularyHead(e_, "token_embd_norm.weight");
        layers_.resize(size_t(layers));
        convs_.resize(size_t(layers));
        for (int64_t l = 0; l < layers; ++l) {
            bindLayer(bind, l, "ffn_norm.weight");
            if (shape_.attention[size_t(l)]) continue;
            const std::string b = "blk." + std::to_string(l) + ".";
            ShortConvWeights& c = convs_[size_t(l)];
            c.in = bind.matrix(b + "shortconv.in_proj.weight", e_, 3 * e_);
            c.taps = ssm::packLanes(bind.table(b + "shortconv.conv.weight", lCache_, e_).data(), e_, lCache_);
            c.out = bind.matrix(b + "shortconv.out_proj.weight", e_, e_);
        }
        bind.requireAllUsed("lfm2");
        finishInfo(arch, true);
    }

private:
    void recurrentMix(int64_t l, memory::HybridMemory& m, const float* xn, int64_t T, float* out,
                      ExecContext& ctx) const override {
        const ShortConvWeights& w = convs_[size_t(l)];
        float* state = m.recurrent().conv(m.recurrentIndex(l));
        const int64_t e = e_;
        std::vector<float> bcx(size_t(T * 3 * e)), c(size_t(T * e));
        tensor::matmul(w.in, xn, e, T, bcx.data(), 3 * e, ctx);
        // B ⊙ u into the B rows, the conv input.
        forEachPosition(T, ctx, [&](int64_t t) {
            float* row = &bcx[size_t(t * 3 * e)];
            for (int64_t i = 0; i < e; ++i) row[i] *= row[2 * e + i];
        });
        ssm::conv1d(bcx.data(), 3 * e, T, e, lCache_, w.taps.data(), state, c.data(), e, ctx);
        forEachPosition(T, ctx, [&](int64_t t) {
            const float* row = &bcx[size_t(t * 3 * e)];
            float* ct = &c[size_t(t * e)];
            for (int64_t i = 0; i < e; ++i) ct[i] *= row[e + i];
        });
        tensor::matmul(w.out, c.data(), e, T, out, e, ctx);
    }

    int64_t lCache_ = 0;
    std::vector<ShortConvWeights> convs_;  // per layer; empty for attention layers
};

}  // namespace

std::unique_ptr<Model> loadLfm2(std::unique_ptr<gguf::File> file) {
    return std::make_unique<Lfm2Model>(std::move(file));
}

}  // namespace cairn::model
