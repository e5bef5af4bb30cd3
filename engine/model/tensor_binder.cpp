#include "model/tensor_binder.h"

#include "cairn/error.h"
#include "model/ops.h"

namespace cairn::model {

const gguf::TensorInfo& TensorBinder::get(const std::string& name) {
    const auto* t = file_.findTensor(name);
    if (!t) throw Error("model", "missing tensor " + name);
    used_.insert(name);
    return *t;
}

tensor::MatrixView TensorBinder::matrix(const std::string& name, int64_t ne0, int64_t ne1, bool tileable) {
    const auto& t = get(name);
    checkShape(t, ne0, ne1);
    const tensor::MatrixView view = matrixView(t);
    return owned_ ? owned_->own(file_, view, tileable) : view;
}

std::vector<float> TensorBinder::vec(const std::string& name, int64_t n) { return vectorF32(get(name), n); }

std::vector<float> TensorBinder::table(const std::string& name, int64_t ne0, int64_t ne1) {
    const auto& t = get(name);
    checkShape(t, ne0, ne1);
    return vectorF32(t, ne0 * ne1);
}

VocabularyHead TensorBinder::vocabularyHead(int64_t embedding, const std::string& finalNorm) {
    VocabularyHead h;
    const auto& te = get("token_embd.weight");
    if (te.nDims != 2 || te.ne[0] != embedding || te.ne[1] <= 0)
        throw Error("model", "token_embd.weight does not match embedding_length");
    if (!traits(te.type).supported)
        throw Error("model",
                    "tensor token_embd.weight has type " + std::string(tensorTypeName(te.type)) +
                        ", which Cairn cannot compute with");
    h.vocab = te.ne[1];
    h.outputNorm = vec(finalNorm, embedding);
    if (has("output.weight")) {
        h.tokenEmbd = matrixView(te);
        h.output = matrix("output.weight", embedding, h.vocab);
    } else {
        // Tied: the projection streams the whole table every token, so it is
        // bound like any weight (re-ordered where tiles pay), and the lookups
        // read that one copy.
        h.output = matrix("token_embd.weight", embedding, h.vocab);
        h.tokenEmbd = h.output;
    }
    return h;
}

void TensorBinder::skip(std::string_view prefix) {
    for (const auto& t : file_.tensors())
        if (t.name.substr(0, prefix.size()) == prefix) used_.insert(std::string(t.name));
}

void TensorBinder::requireAllUsed(std::string_view implementation) const {
    for (const auto& t : file_.tensors())
        if (!used_.count(t.name))
            throw Error("model",
                        "tensor " + std::string(t.name) + " is not supported by the " + std::string(implementation) +
                            " implementation");
}

void VocabularyHead::logits(const float* x, float* xn, int64_t T, int64_t first, int64_t e, float eps, float* out,
                            ExecContext& ctx) const {
    for (int64_t t = first; t < T; ++t) rmsNorm(x + t * e, outputNorm.data(), xn + t * e, e, eps);
    tensor::matmul(output, xn + first * e, e, T - first, out, vocab, ctx);
}

}  // namespace cairn::model
