// Reference quantizers of the K formats: ports of ggml's quantize_row_q*_K_ref
// and their search helpers (make_qx_quants, make_q3_quants, make_qkx2_quants).
//
// Byte-identical output needs ggml's float arithmetic step for step: the same
// operations in the same order, each rounded (no fused multiply-adds, see
// quant_math.h). The search loops compare float sums, so any other order of
// evaluation changes which candidate wins in some groups.
#include "tensor/quant.h"
#include "tensor/quant_k.h"
#include "tensor/quant_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace cairn::tensor {
namespace {

using detail::nearestInt;

constexpr float kGroupMaxEps = 1e-15f;  // below this a group counts as all zero

// Symmetric quantization of a group to [-nmax, nmax-1] (stored + nmax) with
// weights x^2, trying 19 scales around nmax/max (make_qx_quants, rmse_type 1).
float makeQxQuants(int n, int nmax, const float* x, int8_t* L) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax < kGroupMaxEps) {
        std::fill(L, L + n, int8_t(0));
        return 0.f;
    }
    auto sums = [&](float iscale, float& sumlx, float& suml2) {
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::clamp(nearestInt(iscale * x[i]), -nmax, nmax - 1);
            const float w = x[i] * x[i];
            sumlx += w * x[i] * float(l);
            suml2 += w * float(l) * float(l);
        }
    };
    auto assign = [&](float iscale) {
        for (int i = 0; i < n; ++i) L[i] = int8_t(nmax + std::clamp(nearestInt(iscale * x[i]), -nmax, nmax - 1));
    };
    float iscale = float(-nmax) / max;
    float sumlx, suml2;
    sums(iscale, sumlx, suml2);
    assign(iscale);
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(float(nmax) + 0.1f * float(is)) / max;
        sums(iscale, sumlx, suml2);
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            assign(iscale);
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

// Symmetric 3-bit quantization of a group to [-nmax, nmax-1] (stored + nmax),
// refined by coordinate descent on the x^2-weighted error (make_q3_quants, do_rmse).
float makeQ3Quants(int n, int nmax, const float* x, int8_t* L) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax < kGroupMaxEps) {
        std::fill(L, L + n, int8_t(0));
        return 0.f;
    }
    const float iscale = float(-nmax) / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = std::clamp(nearestInt(iscale * x[i]), -nmax, nmax - 1);
        L[i] = int8_t(l);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * float(l);
        suml2 += w * float(l) * float(l);
    }
    for (int itry = 0; itry < 5; ++itry) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            const float wx = w * x[i];
            float slx = sumlx - wx * float(L[i]);
            if (slx > 0) {
                float sl2 = suml2 - w * float(L[i]) * float(L[i]);
                const int newL = std::clamp(nearestInt(x[i] * sl2 / slx), -nmax, nmax - 1);
                if (newL != L[i]) {
                    slx += wx * float(newL);
                    sl2 += w * float(newL) * float(newL);
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = int8_t(newL);
                        sumlx = slx;
                        suml2 = sl2;
                        ++changed;
                    }
                }
            }
        }
        if (!changed) break;
    }
    for (int i = 0; i < n; ++i) L[i] = int8_t(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Asymmetric quantization x ≈ scale * L - theMin with L in [0, nmax]: least
// squares (or least absolute deviations with useMad) over nstep+1 candidate
// scales (make_qkx2_quants). Returns the scale; *theMin receives the offset.
float makeQkx2Quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* theMin, uint8_t* Laux,
                     float rmin, float rdelta, int nstep, bool useMad) {
    float min = x[0], max = x[0];
    float sumW = weights[0];
    float sumX = sumW * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sumW += weights[i];
        sumX += weights[i] * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        std::fill(L, L + n, uint8_t(0));
        *theMin = -min;
        return 0.f;
    }
    auto error = [&](float scale, float offset, const uint8_t* q) {
        float total = 0;
        for (int i = 0; i < n; ++i) {
            float diff = scale * float(q[i]) + offset - x[i];
            diff = useMad ? std::fabs(diff) : diff * diff;
            total += weights[i] * diff;
        }
        return total;
    };
    float iscale = float(nmax) / (max - min);
    float scale = 1 / iscale;
    for (int i = 0; i < n; ++i) L[i] = uint8_t(std::clamp(nearestInt(iscale * (x[i] - min)), 0, nmax));
    float bestError = error(scale, min, L);
    if (nstep < 1) {
        *theMin = -min;
        return scale;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * float(is) + float(nmax)) / (max - min);
        float sumL = 0, sumL2 = 0, sumXL = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::clamp(nearestInt(iscale * (x[i] - min)), 0, nmax);
            Laux[i] = uint8_t(l);
            const float wl = weights[i] * float(l);
            sumL += wl;
            sumL2 += wl * float(l);
            sumXL += wl * x[i];
        }
        const float D = sumW * sumL2 - sumL * sumL;
        if (D > 0) {
            float thisScale = (sumW * sumXL - sumX * sumL) / D;
            float thisMin = (sumL2 * sumX - sumL * sumXL) / D;
            if (thisMin > 0) {
                thisMin = 0;
                thisScale = sumXL / sumL2;
            }
            const float curError = error(thisScale, thisMin, Laux);
            if (curError < bestError) {
                std::copy(Laux, Laux + n, L);
                bestError = curError;
                scale = thisScale;
                min = thisMin;
            }
        }
    }
    *theMin = -min;
    return scale;
}

// The 12-byte packing of eight 6-bit scales and eight 6-bit mins (Q4_K, Q5_K).
void packScaleMinK4(const uint8_t ls[8], const uint8_t lm[8], uint8_t out[12]) {
    for (int j = 0; j < 8; ++j) {
        if (j < 4) {
            out[j] = ls[j];
            out[j + 4] = lm[j];
        } else {
            out[j + 4] = uint8_t((ls[j] & 0xf) | ((lm[j] & 0xf) << 4));
            out[j - 4] |= uint8_t((ls[j] >> 4) << 6);
            out[j] |= uint8_t((lm[j] >> 4) << 6);
        }
    }
}

void unpackScaleMinK4(int j, const uint8_t q[12], uint8_t& sc, uint8_t& m) {
    if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        sc = uint8_t((q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4));
        m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// Shared by Q4_K and Q5_K: 8 groups of 32 with 6-bit scales and mins; leaves
// the levels in L (0..nmax) and fills d, dmin and the packed scales.
void quantizeScaleMinGroups(const float* x, int nmax, float rmin, int nstep, uint16_t& dOut, uint16_t& dminOut,
                            uint8_t packed[12], uint8_t L[kQK_K]) {
    float mins[8], scales[8], weights[32];
    uint8_t Laux[32];
    float maxScale = 0, maxMin = 0;
    for (int j = 0; j < 8; ++j) {
        const float* g = x + 32 * j;
        float sumX2 = 0;
        for (int l = 0; l < 32; ++l) sumX2 += g[l] * g[l];
        const float avX = std::sqrt(sumX2 / 32);
        for (int l = 0; l < 32; ++l) weights[l] = avX + std::fabs(g[l]);
        scales[j] = makeQkx2Quants(32, nmax, g, weights, L + 32 * j, &mins[j], Laux, rmin, 0.1f, nstep, false);
        if (scales[j] > maxScale) maxScale = scales[j];
        if (mins[j] > maxMin) maxMin = mins[j];
    }
    const float invScale = maxScale > 0 ? 63.f / maxScale : 0.f;
    const float invMin = maxMin > 0 ? 63.f / maxMin : 0.f;
    uint8_t ls[8], lm[8];
    for (int j = 0; j < 8; ++j) {
        ls[j] = std::min<uint8_t>(63, uint8_t(nearestInt(invScale * scales[j])));
        lm[j] = std::min<uint8_t>(63, uint8_t(nearestInt(invMin * mins[j])));
    }
    std::memset(packed, 0, 12);
    packScaleMinK4(ls, lm, packed);
    dOut = f32ToF16(maxScale / 63.f);
    dminOut = f32ToF16(maxMin / 63.f);
    for (int j = 0; j < 8; ++j) {
        uint8_t sc, m;
        unpackScaleMinK4(j, packed, sc, m);
        const float d = f16ToF32(dOut) * float(sc);
        if (d == 0.0f) continue;
        const float dm = f16ToF32(dminOut) * float(m);
        for (int i = 0; i < 32; ++i) L[32 * j + i] = uint8_t(std::clamp(nearestInt((x[32 * j + i] + dm) / d), 0, nmax));
    }
}

}  // namespace

void quantizeRowQ2_K(const float* x, BlockQ2_K* y, int64_t n) {
    uint8_t L[kQK_K], Laux[16];
    float weights[16], mins[16], scales[16];
    const float q4scale = 15.f;
    for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
        BlockQ2_K& out = y[b];
        float maxScale = 0, maxMin = 0;
        for (int j = 0; j < 16; ++j) {
            for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
            scales[j] = makeQkx2Quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
            if (scales[j] > maxScale) maxScale = scales[j];
            if (mins[j] > maxMin) maxMin = mins[j];
        }
        if (maxScale > 0) {
            const float iscale = q4scale / maxScale;
            for (int j = 0; j < 16; ++j) out.scales[j] = uint8_t(nearestInt(iscale * scales[j]));
            out.d = f32ToF16(maxScale / q4scale);
        } else {
            std::memset(out.scales, 0, sizeof(out.scales));
            out.d = f32ToF16(0.f);
        }
        if (maxMin > 0) {
            const float iscale = q4scale / maxMin;
            for (int j = 0; j < 16; ++j) out.scales[j] |= uint8_t(nearestInt(iscale * mins[j]) << 4);
            out.dmin = f32ToF16(maxMin / q4scale);
        } else {
            out.dmin = f32ToF16(0.f);
        }
        for (int j = 0; j < 16; ++j) {
            const float d = f16ToF32(out.d) * float(out.scales[j] & 0xf);
            if (d == 0.0f) continue;
            const float dm = f16ToF32(out.dmin) * float(out.scales[j] >> 4);
            for (int i = 0; i < 16; ++i)
                L[16 * j + i] = uint8_t(std::clamp(nearestInt((x[16 * j + i] + dm) / d), 0, 3));
        }
        for (int j = 0; j < kQK_K; j += 128)
            for (int l = 0; l < 32; ++l)
                out.qs[j / 4 + l] =
                    uint8_t(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
    }
}

void quantizeRowQ3_K(const float* x, BlockQ3_K* y, int64_t n) {
    int8_t L[kQK_K];
    float scales[16];
    for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
        BlockQ3_K& out = y[b];
        float maxScale = 0, amax = 0;
        for (int j = 0; j < 16; ++j) {
            scales[j] = makeQ3Quants(16, 4, x + 16 * j, L + 16 * j);
            if (std::fabs(scales[j]) > amax) {
                amax = std::fabs(scales[j]);
                maxScale = scales[j];
            }
        }
        std::memset(out.scales, 0, sizeof(out.scales));
        if (maxScale != 0.0f) {
            const float iscale = -32.f / maxScale;
            for (int j = 0; j < 16; ++j) {
                int8_t l = int8_t(nearestInt(iscale * scales[j]));
                l = int8_t(std::clamp<int>(l, -32, 31) + 32);
                if (j < 8) out.scales[j] = uint8_t(l & 0xf);
                else out.scales[j - 8] |= uint8_t((l & 0xf) << 4);
                out.scales[j % 4 + 8] |= uint8_t((l >> 4) << (2 * (j / 4)));
            }
            out.d = f32ToF16(1 / iscale);
        } else {
            out.d = f32ToF16(0.f);
        }
        for (int j = 0; j < 16; ++j) {
            const int low = j < 8 ? out.scales[j] & 0xf : out.scales[j - 8] >> 4;
            const int sc = (low | (((out.scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
            const float d = f16ToF32(out.d) * float(sc);
            if (d == 0.0f) continue;
            for (int i = 0; i < 16; ++i) L[16 * j + i] = int8_t(std::clamp(nearestInt(x[16 * j + i] / d), -4, 3) + 4);
        }
        // High bit of element j goes to bit j/32 of hmask[j % 32].
        std::memset(out.hmask, 0, sizeof(out.hmask));
        for (int j = 0; j < kQK_K; ++j) {
            if (L[j] > 3) {
                out.hmask[j % 32] |= uint8_t(1u << (j / 32));
                L[j] = int8_t(L[j] - 4);
            }
        }
        for (int j = 0; j < kQK_K; j += 128)
            for (int l = 0; l < 32; ++l)
                out.qs[j / 4 + l] =
                    uint8_t(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
    }
}

void quantizeRowQ4_K(const float* x, BlockQ4_K* y, int64_t n) {
    uint8_t L[kQK_K];
    for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
        BlockQ4_K& out = y[b];
        quantizeScaleMinGroups(x, 15, -1.f, 20, out.d, out.dmin, out.scales, L);
        for (int j = 0, o = 0; j < kQK_K; j += 64, o += 32)
            for (int l = 0; l < 32; ++l) out.qs[o + l] = uint8_t(L[j + l] | (L[j + l + 32] << 4));
    }
}

void quantizeRowQ5_K(const float* x, BlockQ5_K* y, int64_t n) {
    uint8_t L[kQK_K];
    for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
        BlockQ5_K& out = y[b];
        quantizeScaleMinGroups(x, 31, -0.5f, 15, out.d, out.dmin, out.scales, L);
        std::memset(out.qh, 0, sizeof(out.qh));
        uint8_t m1 = 1, m2 = 2;
        for (int j = 0, o = 0; j < kQK_K; j += 64, o += 32, m1 <<= 2, m2 <<= 2) {
            for (int l = 0; l < 32; ++l) {
                int l1 = L[j + l], l2 = L[j + l + 32];
                if (l1 > 15) {
                    l1 -= 16;
                    out.qh[l] |= m1;
                }
                if (l2 > 15) {
                    l2 -= 16;
                    out.qh[l] |= m2;
                }
                out.qs[o + l] = uint8_t(l1 | (l2 << 4));
            }
        }
    }
}

void quantizeRowQ6_K(const float* x, BlockQ6_K* y, int64_t n) {
    int8_t L[kQK_K];
    float scales[16];
    for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
        BlockQ6_K& out = y[b];
        float maxScale = 0, maxAbsScale = 0;
        for (int j = 0; j < 16; ++j) {
            scales[j] = makeQxQuants(16, 32, x + 16 * j, L + 16 * j);
            if (std::fabs(scales[j]) > maxAbsScale) {
                maxAbsScale = std::fabs(scales[j]);
                maxScale = scales[j];
            }
        }
        if (maxAbsScale < kGroupMaxEps) {
            std::memset(&out, 0, sizeof(out));
            continue;
        }
        const float iscale = -128.f / maxScale;
        out.d = f32ToF16(1 / iscale);
        for (int j = 0; j < 16; ++j) out.scales[j] = int8_t(std::min(127, nearestInt(iscale * scales[j])));
        for (int j = 0; j < 16; ++j) {
            const float d = f16ToF32(out.d) * float(out.scales[j]);
            if (d == 0.0f) continue;
            for (int i = 0; i < 16; ++i)
                L[16 * j + i] = int8_t(std::clamp(nearestInt(x[16 * j + i] / d), -32, 31) + 32);
        }
        for (int j = 0, o = 0; j < kQK_K; j += 128, o += 1) {
            uint8_t* ql = out.ql + 64 * o;
            uint8_t* qh = out.qh + 32 * o;
            for (int l = 0; l < 32; ++l) {
                const int q1 = L[j + l], q2 = L[j + l + 32], q3 = L[j + l + 64], q4 = L[j + l + 96];
                ql[l] = uint8_t((q1 & 0xf) | ((q3 & 0xf) << 4));
                ql[l + 32] = uint8_t((q2 & 0xf) | ((q4 & 0xf) << 4));
                qh[l] = uint8_t((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
            }
        }
    }
}

}  // namespace cairn::tensor
