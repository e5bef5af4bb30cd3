// Random-weight Mamba-1 models with real geometries, for benchmarks:
// the `mamba-370m` and `mamba-130m` presets of `cairn-cli synth`.
#pragma once

#include "cairn/tensor_type.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cairn::cli {

struct MambaPreset {
    std::string name;
    int64_t embedding, layers, inner, state, conv, dtRank;
};

const std::vector<MambaPreset>& mambaPresets();
const MambaPreset* findMambaPreset(const std::string& name);

// Writes a model of `preset` geometry with random weights to `path`: the 2-D
// weights in `type` (F32, F16, or a block format; ssm_conv1d and tensors whose
// rows do not fill whole blocks stay F32 / F16, as llama-quantize leaves
// them), the gpt-neox vocabulary from `vocabPath` cut to 50277 tokens and
// padded to 50280 as llama.cpp's Mamba conversion does. Streams the tensors,
// so memory stays small whatever the model size.
void writeMambaModel(const MambaPreset& preset, TensorType type, const std::string& vocabPath, const std::string& path,
                     uint64_t seed = 1);

}  // namespace cairn::cli
