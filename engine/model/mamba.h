// Mamba-1 (the `mamba` architecture of llama.cpp's GGUF files): RMSNorm →
// in-projection to x and z → causal depthwise conv1d + SiLU → selective scan
// gated by SiLU(z) → out-projection, added to the residual stream; tied or
// separate output matrix. The per-conversation memory is a RecurrentState.
#pragma once

#include "cairn/gguf.h"
#include "cairn/model.h"
#include "model/tensor_binder.h"
#include "tensor/matmul.h"

#include <memory>
#include <vector>

namespace cairn::model {

struct MambaParams {
    int64_t vocab = 0, embedding = 0, layers = 0, trainedContext = 0;
    int64_t inner = 0;  // d_inner: channels of the conv and the scan
    int64_t state = 0;  // d_state
    int64_t conv = 0;  // d_conv: taps of the causal conv1d
    int64_t dtRank = 0;  // rank of the Δ projection
    float eps = 1e-5f;
};

struct MambaLayer {
    std::vector<float> norm;  // [embedding]
    tensor::MatrixView in;  // [2·inner rows × embedding]: x rows, then z rows
    std::vector<float> convW;  // [inner][conv] taps, lane-packed (ssm_ops.h)
    std::vector<float> convB;  // [inner]
    tensor::MatrixView xProj;  // [(dtRank + 2·state) rows × inner]: dt_low, B, C
    tensor::MatrixView dtProj;  // [inner rows × dtRank]
    std::vector<float> dtBias;  // [inner]
    std::vector<float> A;  // [inner][state] as stored (−exp(A_log)), lane-packed
    std::vector<float> D;  // [inner]
    tensor::MatrixView out;  // [embedding rows × inner]
};

class MambaModel : public Model {
public:
    explicit MambaModel(std::unique_ptr<gguf::File> file);

    std::unique_ptr<Memory> newMemory(const MemoryOptions& options) const override;
    void forward(Memory& mem, std::span<const int32_t> tokens, bool allLogits, float* logits,
                 ExecContext& ctx) const override;

    const MambaParams& params() const { return p_; }

private:
    void readParams();
    void bindTensors();

    MambaParams p_;
    VocabularyHead head_;
    std::vector<MambaLayer> layers_;
};

}  // namespace cairn::model
