// Random-weight hybrid models with real geometries, for benchmarks: the
// `granite-4.0-h-1b` (granitehybrid), `lfm2-1.2b` (lfm2) and `qwen3.5-0.8b`
// (qwen35) presets of `cairn-cli synth`.
#pragma once

#include "cairn/exec.h"
#include "cairn/tensor_type.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cairn::cli {

struct HybridPreset {
    const char* name;
    const char* arch;  // "granitehybrid", "lfm2" or "qwen35"
    const char* vocabFile;  // in the vocabulary directory (a stand-in where the model's own is not there)
    int64_t embedding, layers, heads, kvHeads, headDim, feedForward, context;
    std::vector<int> attentionLayers;  // the others are recurrent (qwen35: from the interval)
    double ropeBase;
    // granitehybrid: Mamba-2 geometry and the multipliers
    int64_t ssmHeads = 0, ssmHeadDim = 0, ssmState = 0, ssmGroups = 0, ssmConv = 0;
    float embeddingScale = 0, residualScale = 0, attentionScale = 0, logitScale = 0;
    // lfm2: short-conv taps
    int64_t convCache = 0;
    // qwen35: every `interval`-th layer is attention; DeltaNet heads; rotated dims per head
    int64_t interval = 0, keyHeads = 0, valueHeads = 0, linearHeadDim = 0, linearConv = 0, ropeDims = 0;
};

const std::vector<HybridPreset>& hybridPresets();
const HybridPreset* findHybridPreset(const std::string& name);

// Writes the preset with random weights in `type` (tensors that must stay
// F32 stay F32, as in llama.cpp's files), streaming the tensors.
void writeHybridModel(const HybridPreset& preset, TensorType type, const std::string& vocabDir, const std::string& path,
                      uint64_t seed, ExecContext& ctx);

}  // namespace cairn::cli
