// granitehybrid (IBM Granite 4.0-H, dense FFN): Mamba-2 layers (where
// attention.head_count_kv[l] = 0; the mixer of mamba2.cpp) and attention
// layers, each followed by the SwiGLU FFN, with Granite's multipliers:
// x₀ = embedding_scale · token_embd[t]; both branch outputs × residual_scale
// before they are added; q·k × attention.scale (instead of 1/√head_dim);
// logits ÷ logit_scale. A multiplier that is absent or 0 is not applied, as in
// llama.cpp. RoPE (adjacent pairs; the q/k rows are stored permuted) only when
// rope.scaling.finetuned is true or absent — llama.cpp reads the key as
// Granite's RoPE switch, defaulting to on. The frame: HybridModel.
#include "cairn/error.h"
#include "model/architectures.h"
#include "model/hybrid_model.h"
#include "model/hyperparameters.h"
#include "model/mamba2.h"
#include "model/ops.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace cairn::model {
namespace {

class GraniteHybridModel final : public HybridModel {
public:
    explicit GraniteHybridModel(std::unique_ptr<gguf::File> file) : HybridModel(std::move(file)) {
        const gguf::File& f = *file_;
        const std::string arch = f.architecture(), a = arch + ".";
        readCommon(arch, 1e-5);
        const int64_t layers = intInRange(f, a + "block_count", 1, kMaxLayers);
        embeddingScale_ = float(finiteFloat(f, a + "embedding_scale", 0.0));
        residualScale_ = float(finiteFloat(f, a + "residual_scale", 0.0));
        const double logitScale = finiteFloat(f, a + "logit_scale", 0.0);
        logitFactor_ = logitScale != 0.0 ? float(1.0 / logitScale) : 0.0f;

        const bool anyRecurrent = readLayerKindsFromKvHeads(arch, layers);
        if (attn_.heads > 0) {
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
                    throw Error("model",
                                a + "rope.dimension_count " + std::to_string(r.dims) + " does not fit the head size");
                r.neox = false;
                r.base = floatAbove(f, a + "rope.freq_base", 10000.0, 1.0);
                rope_ = std::make_unique<Rope>(r);
                attn_.rope = rope_.get();
            }
        }
        mamba_.embedding = e_;
        mamba_.layers = layers;
        mamba_.eps = eps_;
        if (anyRecurrent) readMamba2Params(f, arch, mamba_);
        shape_.kvHeads = attn_.kvHeads;
        shape_.keyDim = shape_.valueDim = attn_.headDim;
        if (anyRecurrent) shape_.recurrent = mamba2StateShape(mamba_, 0);

        TensorBinder bind(f, ownedWeights_.get());
        head_ = bind.vocabularyHead(e_);
        layers_.resize(size_t(layers));
        mixers_.resize(size_t(layers));
        for (int64_t l = 0; l < layers; ++l) {
            bindLayer(bind, l, "ffn_norm.weight");
            if (!shape_.attention[size_t(l)])
                mixers_[size_t(l)] = bindMamba2Layer(bind, "blk." + std::to_string(l) + ".", mamba_);
        }
        bind.requireAllUsed("granitehybrid");
        finishInfo(arch, anyRecurrent);
    }

private:
    void recurrentMix(int64_t l, memory::HybridMemory& m, const float* xn, int64_t T, float* out,
                      ExecContext& ctx) const override {
        mamba2Mix(mamba_, mixers_[size_t(l)], m.recurrent(), m.recurrentIndex(l), xn, T, out, ctx);
    }

    Mamba2Params mamba_;
    std::vector<Mamba2Layer> mixers_;  // per layer; empty for attention layers
};

}  // namespace

std::unique_ptr<Model> loadGraniteHybrid(std::unique_ptr<gguf::File> file) {
    return std::make_unique<GraniteHybridModel>(std::move(file));
}

}  // namespace cairn::model
