// The error a quantization format should have, from its geometry alone: a
// uniform quantizer with L levels spanning a group's value range has step
// Δ = span / (L - 1) and, rounding to the nearest level, an error spread evenly
// over ±Δ/2, i.e. a mean squared error of Δ²/12 (the classical result for a
// fine uniform quantizer). Applied group by group to the data being quantized,
// this gives the expected error of a format without looking at its output.
//
// `span` is 2·max|x| for the symmetric formats and max(x, 0) − min(x, 0) for
// the ones with an offset (which covers both ggml's min-max formats and the K
// formats, whose offset is never positive). The step is then at least as large
// as ggml's actual one (Q4_0 uses max|x|/8 < 2·max|x|/15), so the model errs
// on the large side.
#pragma once

#include "cairn/tensor_type.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

namespace cairn::test {

struct QuantGeometry {
    int group;  // elements sharing one scale (and offset)
    int levels;  // quantization levels per element
    bool symmetric;  // no offset: the grid is centred on zero
};

inline std::optional<QuantGeometry> quantGeometry(TensorType type) {
    switch (type) {
    case TensorType::Q4_0: return QuantGeometry{32, 16, true};
    case TensorType::Q4_1: return QuantGeometry{32, 16, false};
    case TensorType::Q5_0: return QuantGeometry{32, 32, true};
    case TensorType::Q5_1: return QuantGeometry{32, 32, false};
    case TensorType::Q8_0: return QuantGeometry{32, 255, true};  // -127..127
    case TensorType::Q2_K: return QuantGeometry{16, 4, false};
    case TensorType::Q3_K: return QuantGeometry{16, 8, true};
    case TensorType::Q4_K: return QuantGeometry{32, 16, false};
    case TensorType::Q5_K: return QuantGeometry{32, 32, false};
    case TensorType::Q6_K: return QuantGeometry{16, 64, true};
    default: return std::nullopt;
    }
}

// Sum over the n values of the model's expected squared error (Δ_g²/12 each).
inline double nominalSquaredError(const QuantGeometry& g, const float* x, int64_t n) {
    double total = 0;
    for (int64_t start = 0; start < n; start += g.group) {
        double lo = 0, hi = 0, amax = 0;
        for (int64_t i = start; i < std::min<int64_t>(n, start + g.group); ++i) {
            lo = std::min(lo, double(x[i]));
            hi = std::max(hi, double(x[i]));
            amax = std::max(amax, std::fabs(double(x[i])));
        }
        const double span = g.symmetric ? 2 * amax : hi - lo;
        const double step = span / (g.levels - 1);
        total += std::min<int64_t>(g.group, n - start) * step * step / 12;
    }
    return total;
}

}  // namespace cairn::test
