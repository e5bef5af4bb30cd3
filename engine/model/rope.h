// Rotary position embedding: the pairing (adjacent or NeoX halves), per-pair
// frequency divisors (Llama-3.1 `rope_freqs`), linear and YaRN scaling.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace cairn::model {

enum class RopeScaling { None, Linear, Yarn };

struct RopeConfig {
    int64_t dims = 0;  // rotated elements per head (rope.dimension_count), even
    bool neox = false;  // pairs (i, i + dims/2) instead of (2i, 2i+1)
    double base = 10000.0;  // rope.freq_base
    RopeScaling scaling = RopeScaling::None;
    double factor = 1.0;  // rope.scaling.factor (angles are divided by it)
    std::vector<float> freqFactors;  // rope_freqs: divisor of pair i's frequency (empty: none)
    // YaRN
    int64_t originalContext = 0;
    double extFactor = 1.0;
    double attnFactor = 1.0;  // cos and sin are multiplied by it (YaRN: times 1 + 0.1 ln factor)
    double betaFast = 32.0;
    double betaSlow = 1.0;
};

class Rope {
public:
    explicit Rope(RopeConfig config);
    const RopeConfig& config() const { return cfg_; }

    // cos and sin of every pair for position `pos` (dims/2 values each),
    // already multiplied by the YaRN magnitude scale.
    void angles(int64_t pos, float* cosOut, float* sinOut) const;

    // Rotates `heads` heads of `headDim` values (contiguous) with the angles of one position.
    void apply(float* x, int64_t heads, int64_t headDim, const float* cosv, const float* sinv) const;

private:
    RopeConfig cfg_;
    std::vector<double> invFreq_;  // per pair: base^(-2i/dims) / freqFactor[i]
    std::vector<double> rampMix_;  // YaRN: weight of the extrapolated angle per pair
    double mscale_ = 1.0;
};

}  // namespace cairn::model
