// phi3 (Phi-3, Phi-3.5, Phi-4-mini): NeoX RoPE (possibly over part of the
// head), fused projections — attn_qkv holds the q, k and v rows, ffn_up the
// gate rows then the up rows — and LongRoPE: per-pair frequency divisors
// rope_factors_long / rope_factors_short, the long ones when the context
// exceeds rope.scaling.original_context_length (as llama.cpp chooses: by the
// context size, not the sequence length), and cos/sin times
// rope.scaling.attn_factor. The model's sliding_window key is ignored, as by
// llama.cpp.
#include "model/architectures.h"
#include "model/transformer.h"

namespace cairn::model {

std::unique_ptr<Model> loadPhi3(std::unique_ptr<gguf::File> file) {
    TransformerVariant v;
    v.neoxRope = true;
    v.fused = true;
    return std::make_unique<TransformerModel>(std::move(file), v);
}

}  // namespace cairn::model
