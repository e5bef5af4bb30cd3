// Binding a GGUF file's tensors to an architecture's weights, shared by every
// architecture: lookup with shape checks, the embedding / final norm / output
// projection every language model has, and the refusal of tensors no code reads.
#pragma once

#include "cairn/exec.h"
#include "cairn/gguf.h"
#include "model/owned_weights.h"
#include "tensor/matmul.h"

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::model {

// The token embedding table, the final RMSNorm and the output projection (the
// embedding table itself when the file has no output.weight: tied embeddings).
struct VocabularyHead {
    // token_embd.weight ([n_embd, n_vocab]) for embedTokens: with tied
    // embeddings the same view as `output`, so it may be in the Tiles16 layout.
    tensor::MatrixView tokenEmbd;
    std::vector<float> outputNorm;
    tensor::MatrixView output;
    int64_t vocab = 0;

    // Logits of positions [first, T) of the hidden states x (T rows of e
    // floats): final norm into the scratch xn (same shape), then the projection.
    void logits(const float* x, float* xn, int64_t T, int64_t first, int64_t e, float eps, float* out,
                ExecContext& ctx) const;
};

// Every lookup throws cairn::Error naming the tensor when it is missing or has
// the wrong shape; every tensor looked up is remembered for requireAllUsed().
class TensorBinder {
public:
    // `owned`: where the matrices copied for decode are kept (the model's);
    // null: every matrix is a view of the mapping.
    explicit TensorBinder(const gguf::File& file, OwnedWeights* owned = nullptr) : file_(file), owned_(owned) {}

    bool has(const std::string& name) const { return file_.findTensor(name) != nullptr; }
    const gguf::TensorInfo& get(const std::string& name);
    // A 2-D weight [ne0, ne1] as a matmul operand: its owned copy
    // (OwnedWeights::own), or a view of the mapping past the budget. The copy
    // may be in Tiles16 only when `tileable` — false for a fused matrix split
    // by rowSlice at rows that are not multiples of 16.
    tensor::MatrixView matrix(const std::string& name, int64_t ne0, int64_t ne1, bool tileable = true);
    // A 1-D tensor of n values (norm weight, bias) as f32.
    std::vector<float> vec(const std::string& name, int64_t n);
    // A small 2-D table [ne0, ne1] as f32 values, ne0 fastest.
    std::vector<float> table(const std::string& name, int64_t ne0, int64_t ne1);

    // `finalNorm`: the final RMSNorm's tensor (LFM2 names it token_embd_norm).
    VocabularyHead vocabularyHead(int64_t embedding, const std::string& finalNorm = "output_norm.weight");

    // Marks every tensor whose name starts with `prefix` as read: parts of the
    // file Cairn deliberately does not run (Qwen3.5's multi-token-prediction layers).
    void skip(std::string_view prefix);

    // A tensor no code reads means a feature we do not implement: refuse the file.
    void requireAllUsed(std::string_view implementation) const;

private:
    const gguf::File& file_;
    OwnedWeights* owned_;
    std::set<std::string, std::less<>> used_;
};

}  // namespace cairn::model
