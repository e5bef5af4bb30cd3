#include "model/rope.h"

#include "cairn/error.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace cairn::model {
namespace {

// The dimension index at which pair rotation completes `rotations` turns over
// the original context (YaRN "correction dims").
double yarnCorrDim(int64_t dims, int64_t ctxOrig, double rotations, double base) {
    return double(dims) * std::log(double(ctxOrig) / (rotations * 2.0 * std::numbers::pi)) / (2.0 * std::log(base));
}

}  // namespace

Rope::Rope(RopeConfig config) : cfg_(std::move(config)) {
    if (cfg_.dims <= 0 || cfg_.dims % 2) throw Error("model", "rope dimension count must be even and positive");
    const int64_t pairs = cfg_.dims / 2;
    if (!cfg_.freqFactors.empty() && int64_t(cfg_.freqFactors.size()) != pairs)
        throw Error("model",
                    "rope_freqs has " + std::to_string(cfg_.freqFactors.size()) + " values, expected " +
                        std::to_string(pairs));
    if (!(cfg_.factor > 0)) throw Error("model", "rope scaling factor must be positive");
    invFreq_.resize(size_t(pairs));
    rampMix_.assign(size_t(pairs), 0.0);
    for (int64_t i = 0; i < pairs; ++i) {
        double f = std::pow(cfg_.base, -2.0 * double(i) / double(cfg_.dims));
        if (!cfg_.freqFactors.empty()) f /= double(cfg_.freqFactors[size_t(i)]);
        invFreq_[size_t(i)] = f;
    }
    if (cfg_.scaling == RopeScaling::Yarn && cfg_.extFactor != 0.0) {
        if (cfg_.originalContext <= 0) throw Error("model", "YaRN needs rope.scaling.original_context_length");
        double low = std::floor(yarnCorrDim(cfg_.dims, cfg_.originalContext, cfg_.betaFast, cfg_.base));
        double high = std::ceil(yarnCorrDim(cfg_.dims, cfg_.originalContext, cfg_.betaSlow, cfg_.base));
        low = std::max(0.0, low);
        high = std::min(double(cfg_.dims - 1), high);
        for (int64_t i = 0; i < pairs; ++i) {
            double y = (double(i) - low) / std::max(0.001, high - low);
            rampMix_[size_t(i)] = (1.0 - std::clamp(y, 0.0, 1.0)) * cfg_.extFactor;
        }
        mscale_ = cfg_.attnFactor * (1.0 + 0.1 * std::log(cfg_.factor));
    } else {
        mscale_ = cfg_.attnFactor;  // YaRN without extrapolation, or LongRoPE's attention factor (phi3)
    }
}

void Rope::angles(int64_t pos, float* cosOut, float* sinOut) const {
    const int64_t pairs = cfg_.dims / 2;
    const double scale = cfg_.scaling == RopeScaling::None ? 1.0 : 1.0 / cfg_.factor;
    for (int64_t i = 0; i < pairs; ++i) {
        const double extrap = double(pos) * invFreq_[size_t(i)];
        double theta = extrap * scale;
        if (cfg_.scaling == RopeScaling::Yarn) {
            const double mix = rampMix_[size_t(i)];
            theta = theta * (1.0 - mix) + extrap * mix;
        }
        cosOut[i] = float(std::cos(theta) * mscale_);
        sinOut[i] = float(std::sin(theta) * mscale_);
    }
}

void Rope::apply(float* x, int64_t heads, int64_t headDim, const float* cosv, const float* sinv) const {
    const int64_t pairs = cfg_.dims / 2;
    for (int64_t h = 0; h < heads; ++h) {
        float* v = x + h * headDim;
        for (int64_t i = 0; i < pairs; ++i) {
            const int64_t a = cfg_.neox ? i : 2 * i;
            const int64_t b = cfg_.neox ? i + pairs : 2 * i + 1;
            const float x0 = v[a], x1 = v[b];
            v[a] = x0 * cosv[i] - x1 * sinv[i];
            v[b] = x0 * sinv[i] + x1 * cosv[i];
        }
    }
}

}  // namespace cairn::model
