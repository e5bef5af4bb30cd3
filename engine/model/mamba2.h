// Mamba-2 (the `mamba2` architecture of llama.cpp's GGUF files): RMSNorm →
// one in-projection to [z | xBC | dt] → causal depthwise conv1d + SiLU over
// xBC → selective scan with one scalar decay per head and B, C shared by the
// heads of a group → gate SiLU(z) → grouped RMSNorm → out-projection, added
// to the residual stream. Memory: RecurrentState (conv over xBC, SSM state
// d_inner × d_state).
#pragma once

#include "cairn/gguf.h"
#include "cairn/model.h"
#include "memory/recurrent_state.h"
#include "model/tensor_binder.h"
#include "tensor/matmul.h"

#include <memory>
#include <string>
#include <vector>

namespace cairn::model {

struct Mamba2Params {
    int64_t vocab = 0, embedding = 0, layers = 0, trainedContext = 0;
    int64_t inner = 0;  // d_inner = heads × headDim
    int64_t state = 0;  // d_state
    int64_t conv = 0;  // d_conv
    int64_t heads = 0;  // ssm.time_step_rank
    int64_t groups = 0;  // ssm.group_count: B and C are shared by heads / groups consecutive heads
    float eps = 1e-5f;

    int64_t headDim() const { return inner / heads; }
    int64_t convChannels() const { return inner + 2 * groups * state; }  // x, B, C
    int64_t inProj() const { return 2 * inner + 2 * groups * state + heads; }  // z, xBC, dt
};

// The Mamba-2 mixer of one layer (everything but its input norm), shared with granitehybrid.
struct Mamba2Layer {
    tensor::MatrixView in;  // [inProj rows × embedding]
    std::vector<float> convW;  // lane-packed [conv] taps per xBC channel
    std::vector<float> convB;  // [convChannels]
    std::vector<float> dtBias;  // per channel (the head's value repeated)
    std::vector<float> A;  // per channel: the head's A (the same for every state n)
    std::vector<float> D;  // per channel (the head's value repeated)
    std::vector<float> groupNorm;  // [inner]: groups × (inner / groups)
    tensor::MatrixView out;  // [embedding rows × inner]
};

// Reads the `ARCH.ssm.*` keys into p (inner, state, conv, heads, groups) and
// checks them; throws cairn::Error naming what is implausible or unsupported.
void readMamba2Params(const gguf::File& f, const std::string& arch, Mamba2Params& p);
// Binds blk.N.ssm_* (prefix "blk.N.").
Mamba2Layer bindMamba2Layer(TensorBinder& bind, const std::string& prefix, const Mamba2Params& p);
// out[t] = ssm_out · y[t] for the chunk's T normed inputs xn (rows of
// embedding), carrying the conv and SSM state of `layer` of `st`.
void mamba2Mix(const Mamba2Params& p, const Mamba2Layer& L, memory::RecurrentState& st, int64_t layer, const float* xn,
               int64_t T, float* out, ExecContext& ctx);
// The recurrent state shape of a Mamba-2 layer.
memory::RecurrentShape mamba2StateShape(const Mamba2Params& p, int64_t layers);

class Mamba2Model : public Model {
public:
    explicit Mamba2Model(std::unique_ptr<gguf::File> file);

    std::unique_ptr<Memory> newMemory(const MemoryOptions& options) const override;
    void forward(Memory& mem, std::span<const int32_t> tokens, bool allLogits, float* logits,
                 ExecContext& ctx) const override;

private:
    void readParams();
    void bindTensors();

    Mamba2Params p_;
    VocabularyHead head_;
    std::vector<std::vector<float>> norms_;  // attn_norm per layer
    std::vector<Mamba2Layer> layers_;
};

}  // namespace cairn::model
