// qwen3: NeoX rope, per-head RMSNorm of q and k before rope, no biases, and a
// head size of its own (attention.key_length, not embedding / heads).
#include "model/architectures.h"
#include "model/transformer.h"

namespace cairn::model {

std::unique_ptr<Model> loadQwen3(std::unique_ptr<gguf::File> file) {
    TransformerVariant v;
    v.neoxRope = true;
    v.qkNorm = true;
    return std::make_unique<TransformerModel>(std::move(file), v);
}

}  // namespace cairn::model
