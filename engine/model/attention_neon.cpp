// NEON attention kernels (aarch64): the canonical arithmetic of
// attention_kernels.h with the 16 lanes of a dot product in four float32x4.
// Not measured on Arm hardware (none here); CI checks their bits under qemu-user.
#include "model/attention_kernels.h"

#include <arm_neon.h>

namespace cairn::model::attn {
namespace {

template <bool F16>
inline float32x4_t load4(const uint8_t* row, int64_t d) {
    if constexpr (F16) return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(reinterpret_cast<const uint16_t*>(row) + d)));
    else return vld1q_f32(reinterpret_cast<const float*>(row) + d);
}

// For H queries sharing each key row (loaded and converted once for all).
template <bool F16, int H>
void scoresT(const float* const* q, const uint8_t* keys, int64_t n, int64_t dim, float scale, float* const* s) {
    const size_t rowBytes = size_t(dim) * (F16 ? 2 : 4);
    const int64_t full = dim / 16 * 16;
    for (int64_t j = 0; j < n; ++j) {
        const uint8_t* row = keys + size_t(j) * rowBytes;
        float32x4_t acc[H][4];
        for (int h = 0; h < H; ++h)
            for (int c = 0; c < 4; ++c) acc[h][c] = vdupq_n_f32(0.0f);
        for (int64_t d0 = 0; d0 < full; d0 += 16) {
            float32x4_t k[4];
            for (int c = 0; c < 4; ++c) k[c] = load4<F16>(row, d0 + 4 * c);
            for (int h = 0; h < H; ++h)
                for (int c = 0; c < 4; ++c) acc[h][c] = vfmaq_f32(acc[h][c], vld1q_f32(q[h] + d0 + 4 * c), k[c]);
        }
        for (int h = 0; h < H; ++h) {
            float lanes[16];
            for (int c = 0; c < 4; ++c) vst1q_f32(lanes + 4 * c, acc[h][c]);
            for (int64_t d = full; d < dim; ++d)
                lanes[d & 15] = fmaf32(q[h][d], cachedValue<F16>(row, d), lanes[d & 15]);
            s[h][j] = reduce16(lanes) * scale;
        }
    }
}

void scores(const float* const* q, int heads, const uint8_t* keys, bool f16, int64_t n, int64_t dim, float scale,
            float* const* s) {
    dispatchHeads(f16, heads, [&]<bool F16, int H>() { scoresT<F16, H>(q, keys, n, dim, scale, s); });
}

// The scalar code's comparison (a NaN never replaces the running max), per lane.
float maxOf(const float* s, int64_t n) {
    float32x4_t m = vdupq_n_f32(-INFINITY);
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
        const float32x4_t x = vld1q_f32(s + j);
        m = vbslq_f32(vcgtq_f32(x, m), x, m);
    }
    float lanes[4];
    vst1q_f32(lanes, m);
    float r = -INFINITY;
    for (float x : lanes) r = x > r ? x : r;
    for (; j < n; ++j) r = s[j] > r ? s[j] : r;
    return r;
}

// expCanonical on 4 lanes, step for step.
inline float32x4_t exp4(float32x4_t x) {
    const float32x4_t round = vdupq_n_f32(kExpRound);
    const float32x4_t t = vaddq_f32(vmulq_n_f32(x, kExpLog2e), round);
    const float32x4_t n = vsubq_f32(t, round);
    float32x4_t r = vfmaq_n_f32(x, n, -kExpC1);
    r = vfmaq_n_f32(r, n, -kExpC2);
    float32x4_t p = vdupq_n_f32(kExpP0);
    p = vfmaq_f32(vdupq_n_f32(kExpP1), p, r);
    p = vfmaq_f32(vdupq_n_f32(kExpP2), p, r);
    p = vfmaq_f32(vdupq_n_f32(kExpP3), p, r);
    p = vfmaq_f32(vdupq_n_f32(kExpP4), p, r);
    p = vfmaq_f32(vdupq_n_f32(kExpP5), p, r);
    const float32x4_t z = vmulq_f32(r, r);
    float32x4_t y = vfmaq_f32(r, p, z);
    y = vaddq_f32(y, vdupq_n_f32(1.0f));
    const uint32x4_t ni = vsubq_u32(vreinterpretq_u32_f32(t), vreinterpretq_u32_f32(round));
    y = vmulq_f32(y, vreinterpretq_f32_u32(vshlq_n_u32(vaddq_u32(ni, vdupq_n_u32(127)), 23)));
    // x < kExpMin gives 0 (a NaN compares false and keeps y, as in the scalar code)
    return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(y), vcltq_f32(x, vdupq_n_f32(kExpMin))));
}

float expSum(float* s, int64_t n, float max) {
    const float32x4_t vmax = vdupq_n_f32(max);
    float32x4_t sum[4];
    for (auto& v : sum) v = vdupq_n_f32(0.0f);
    int64_t j = 0;
    for (; j + 16 <= n; j += 16)
        for (int c = 0; c < 4; ++c) {
            const float32x4_t e = exp4(vsubq_f32(vld1q_f32(s + j + 4 * c), vmax));
            vst1q_f32(s + j + 4 * c, e);
            sum[c] = vaddq_f32(sum[c], e);
        }
    float lanes[16];
    for (int c = 0; c < 4; ++c) vst1q_f32(lanes + 4 * c, sum[c]);
    for (; j < n; ++j) {
        s[j] = expCanonical(s[j] - max);
        lanes[j & 15] = lanes[j & 15] + s[j];
    }
    return reduce16(lanes);
}

void normalize(float* w, int64_t n, float inv, bool f16) {
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
        float32x4_t x = vmulq_n_f32(vld1q_f32(w + j), inv);
        if (f16) x = vcvt_f32_f16(vcvt_f16_f32(x));  // round to nearest even, as roundToF16
        vst1q_f32(w + j, x);
    }
    for (; j < n; ++j) w[j] = f16 ? roundToF16(w[j] * inv) : w[j] * inv;
}

// H heads × C 4-wide columns from d0: each key's values are loaded once for
// all H heads; keys in order in every chain.
template <bool F16, int H, int C>
void accumulateBlock(const float* const* w, const uint8_t* values, size_t rowBytes, int64_t n, int64_t d0,
                     float* const* o) {
    float32x4_t acc[H][C];
    for (int h = 0; h < H; ++h)
        for (int c = 0; c < C; ++c) acc[h][c] = vdupq_n_f32(0.0f);
    for (int64_t j = 0; j < n; ++j) {
        const uint8_t* row = values + size_t(j) * rowBytes;
        float32x4_t v[C];
        for (int c = 0; c < C; ++c) v[c] = load4<F16>(row, d0 + 4 * c);
        for (int h = 0; h < H; ++h)
            for (int c = 0; c < C; ++c) acc[h][c] = vfmaq_n_f32(acc[h][c], v[c], w[h][j]);
    }
    for (int h = 0; h < H; ++h)
        for (int c = 0; c < C; ++c) vst1q_f32(o[h] + d0 + 4 * c, acc[h][c]);
}

template <bool F16, int H>
void accumulateT(const float* const* w, const uint8_t* values, int64_t n, int64_t dim, float* const* o) {
    constexpr int C = 16 / H;  // H·C = 16 accumulators of the 32 registers
    const size_t rowBytes = size_t(dim) * (F16 ? 2 : 4);
    const int64_t full = dim / 4 * 4;
    int64_t d0 = 0;
    for (; d0 + 4 * C <= full; d0 += 4 * C) accumulateBlock<F16, H, C>(w, values, rowBytes, n, d0, o);
    for (; d0 < full; d0 += 4) accumulateBlock<F16, H, 1>(w, values, rowBytes, n, d0, o);
    accumulateColumns<F16, H>(w, values, rowBytes, n, full, dim, o);
}

void accumulate(const float* const* w, int heads, const uint8_t* values, bool f16, int64_t n, int64_t dim,
                float* const* o) {
    dispatchHeads(f16, heads, [&]<bool F16, int H>() { accumulateT<F16, H>(w, values, n, dim, o); });
}

const Kernels kNeon{"neon", scores, maxOf, expSum, normalize, accumulate};

}  // namespace

const Kernels* neonKernels() { return &kNeon; }

}  // namespace cairn::model::attn
