#include "cairn/sampler.h"

#include "cairn/error.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace cairn {

Sampler::Sampler(const SamplerOptions& options) : opt_(options) { reseed(options.seed); }

void Sampler::reseed(uint64_t seed) {
    opt_.seed = seed;
    state_ = seed;
}

// SplitMix64: tiny, fast, and fully specified.
double Sampler::uniform() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return double(z >> 11) * 0x1.0p-53;
}

int32_t Sampler::greedy(std::span<const float> logits) {
    if (logits.empty()) throw Error("sampler", "no logits");
    size_t best = 0;
    for (size_t i = 1; i < logits.size(); ++i)
        if (logits[i] > logits[best]) best = i;
    return int32_t(best);
}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> history) {
    if (logits.empty()) throw Error("sampler", "no logits");
    const int32_t n = int32_t(logits.size());
    candidates_.resize(size_t(n));
    for (int32_t i = 0; i < n; ++i) candidates_[size_t(i)] = {i, logits[size_t(i)]};
    for (const LogitBias& b : opt_.logitBias)
        if (b.token >= 0 && b.token < n) candidates_[size_t(b.token)].logit += b.bias;

    // Penalties over the last penaltyLastN tokens of the history.
    const bool penalize = opt_.repeatPenalty != 1.0f || opt_.frequencyPenalty != 0.0f || opt_.presencePenalty != 0.0f;
    if (penalize && opt_.penaltyLastN != 0 && !history.empty()) {
        size_t window = opt_.penaltyLastN < 0 ? history.size() : std::min(history.size(), size_t(opt_.penaltyLastN));
        std::unordered_map<int32_t, int> counts;
        for (size_t i = history.size() - window; i < history.size(); ++i) counts[history[i]]++;
        for (auto [id, count] : counts) {
            if (id < 0 || id >= n) continue;
            float& l = candidates_[size_t(id)].logit;
            if (opt_.repeatPenalty != 1.0f) l = l > 0 ? l / opt_.repeatPenalty : l * opt_.repeatPenalty;
            l -= float(count) * opt_.frequencyPenalty + opt_.presencePenalty;
        }
    }

    if (opt_.temperature <= 0.0f) {
        size_t best = 0;
        for (size_t i = 1; i < candidates_.size(); ++i)
            if (candidates_[i].logit > candidates_[best].logit) best = i;
        return candidates_[best].id;
    }

    // Highest first, ties to the lower id: a total order, so the result never depends on the sort algorithm.
    auto higher = [](const Candidate& a, const Candidate& b) {
        return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
    };
    size_t keep = candidates_.size();
    if (opt_.topK > 0 && size_t(opt_.topK) < keep) {
        keep = size_t(opt_.topK);
        std::partial_sort(candidates_.begin(), candidates_.begin() + ptrdiff_t(keep), candidates_.end(), higher);
    } else {
        std::sort(candidates_.begin(), candidates_.end(), higher);
    }
    candidates_.resize(keep);

    // Softmax at the temperature (double, in order).
    std::vector<double> p(keep);
    const double top = candidates_[0].logit;
    double sum = 0.0;
    for (size_t i = 0; i < keep; ++i) {
        p[i] = std::exp((double(candidates_[i].logit) - top) / double(opt_.temperature));
        sum += p[i];
    }
    for (auto& x : p) x /= sum;

    // min-p: relative to the most likely token.
    if (opt_.minP > 0.0f) {
        size_t k = 1;
        while (k < keep && p[k] >= double(opt_.minP) * p[0]) ++k;
        keep = k;
    }
    // top-p: the smallest prefix whose mass reaches topP.
    if (opt_.topP < 1.0f) {
        double cum = 0.0;
        size_t k = 0;
        while (k < keep) {
            cum += p[k++];
            if (cum >= double(opt_.topP)) break;
        }
        keep = std::max<size_t>(1, k);
    }
    double mass = 0.0;
    for (size_t i = 0; i < keep; ++i) mass += p[i];
    double r = uniform() * mass;
    for (size_t i = 0; i < keep; ++i) {
        r -= p[i];
        if (r < 0) return candidates_[i].id;
    }
    return candidates_[keep - 1].id;
}

}  // namespace cairn
