// llama (Llama 2/3, TinyLlama, Mistral-style, SmolLM): rope on adjacent pairs
// (the q/k rows are stored permuted by the converter), optional `rope_freqs`
// (Llama-3.1 scaling), tied or separate output matrix.
#include "model/architectures.h"
#include "model/transformer.h"

namespace cairn::model {

std::unique_ptr<Model> loadLlama(std::unique_ptr<gguf::File> file) {
    TransformerVariant v;
    v.neoxRope = false;
    return std::make_unique<TransformerModel>(std::move(file), v);
}

}  // namespace cairn::model
