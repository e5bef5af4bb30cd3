// Choosing the next token from logits: greedy, or temperature sampling with
// top-k, top-p and min-p truncation, after repetition / frequency / presence
// penalties over the recent history. A fixed seed reproduces the same choices
// on every run and platform (our own RNG and uniform mapping, no <random>
// distributions, whose output the standard leaves to the implementation).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace cairn {

// Added to one token's logit before the penalties and sampling (OpenAI's
// logit_bias: -100 all but bans a token, +100 all but forces it).
struct LogitBias {
    int32_t token = 0;
    float bias = 0.0f;
};

struct SamplerOptions {
    float temperature = 0.8f;  // <= 0: greedy (argmax, ties to the lower id)
    int32_t topK = 40;  // <= 0: off
    float topP = 0.95f;  // >= 1: off
    float minP = 0.05f;  // <= 0: off; keeps tokens with p >= minP · p(top)
    float repeatPenalty = 1.0f;  // 1: off; llama.cpp rule: logit > 0 ? /penalty : ·penalty
    float frequencyPenalty = 0.0f;  // minus count · this
    float presencePenalty = 0.0f;  // minus this if present
    int32_t penaltyLastN = 64;  // history window for the penalties (0: off, -1: all)
    uint64_t seed = 0;
    std::vector<LogitBias> logitBias;  // ids outside the vocabulary are ignored
};

class Sampler {
public:
    explicit Sampler(const SamplerOptions& options = {});
    const SamplerOptions& options() const { return opt_; }

    // Picks a token from `logits` (one per vocabulary entry). `history` holds
    // the tokens so far (prompt and generated), for the penalties.
    int32_t sample(std::span<const float> logits, std::span<const int32_t> history);

    // Restarts the random sequence (same seed: same choices again).
    void reseed(uint64_t seed);

    // argmax with ties resolved to the lower id.
    static int32_t greedy(std::span<const float> logits);

private:
    double uniform();  // [0, 1)
    SamplerOptions opt_;
    uint64_t state_ = 0;
    struct Candidate {
        int32_t id;
        float logit;
    };
    std::vector<Candidate> candidates_;
};

}  // namespace cairn
