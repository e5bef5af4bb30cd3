// qwen2: NeoX rope (halves), biases on q, k and v, often YaRN scaling.
#include "model/architectures.h"
#include "model/transformer.h"

namespace cairn::model {

std::unique_ptr<Model> loadQwen2(std::unique_ptr<gguf::File> file) {
    TransformerVariant v;
    v.neoxRope = true;
    v.qkvBias = true;
    return std::make_unique<TransformerModel>(std::move(file), v);
}

}  // namespace cairn::model
