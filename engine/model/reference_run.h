// Runs a prompt the way the llama.cpp reference harness did (see
// ../shared/reference/README.md): logits for every prompt position, their
// top-20, greedy continuation, and a second batch continuing the same memory.
// Used by `cairn-cli dump` and the conformance tests.
#pragma once

#include "cairn/model.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cairn::model {

struct PositionTop {
    int64_t pos = 0;
    int32_t argmax = 0;
    float margin = 0;  // top-1 − top-2 logit
    std::vector<std::pair<int32_t, float>> top;  // 20 best, logit descending, ties by lower id
};

struct GreedyStep {
    int32_t id = 0;
    float logit = 0;
    float margin = 0;
};

struct ReferenceRun {
    std::vector<int32_t> tokens, tokensB;
    std::vector<PositionTop> positions, positionsB;
    std::vector<float> lastLogits;  // full logits of the last prompt position
    std::vector<GreedyStep> greedy, greedyB;
};

struct ReferenceRunOptions {
    int64_t chunk = 64;
    KvType kvType = KvType::F16;
    int topN = 20;
    // The memory's context size (at least what the run needs): llama.cpp's
    // n_ctx of the references, which picks phi3's LongRoPE factors.
    int64_t contextSize = 512;
};

// The `topN` largest logits and the argmax/margin (same tie rule).
PositionTop topLogits(const float* logits, int64_t n, int64_t pos, int topN);

// Tokenizes `prompt` (BOS as the vocabulary says, control tokens parsed) and
// `promptB` (no BOS), and evaluates both. `greedy` of a two-batch run comes from
// a copy of the memory holding only the first batch.
ReferenceRun runReference(const Model& model, const std::string& prompt, const std::optional<std::string>& promptB,
                          int nGreedy, const ReferenceRunOptions& options, ExecContext& ctx);

}  // namespace cairn::model
