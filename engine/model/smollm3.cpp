// smollm3 (SmolLM3): llama with NoPE layers — every fourth layer
// ((l + 1) % 4 == 0) applies no RoPE to q and k. There is no metadata key for
// it: llama.cpp hard-codes the interval (HF no_rope_layer_interval 4), and so
// do we. The other layers rotate adjacent pairs (q/k rows permuted as llama's).
#include "model/architectures.h"
#include "model/transformer.h"

namespace cairn::model {

std::unique_ptr<Model> loadSmolLm3(std::unique_ptr<gguf::File> file) {
    TransformerVariant v;
    v.neoxRope = false;
    v.noRopeInterval = 4;
    return std::make_unique<TransformerModel>(std::move(file), v);
}

}  // namespace cairn::model
