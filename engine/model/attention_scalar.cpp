// The scalar attention kernels (the definition of the canonical arithmetic in
// attention_kernels.h, and the path for CPUs without a SIMD one), and the choice of
// path, which follows the matmul kernels' choice.
#include "model/attention_kernels.h"

#include "tensor/matmul.h"

#include <string_view>

namespace cairn::model::attn {
namespace {

// `n` elements of a cached row as f32.
void loadRow(const uint8_t* row, bool f16, int64_t n, float* out) {
    if (!f16) {
        const auto* f = reinterpret_cast<const float*>(row);
        for (int64_t i = 0; i < n; ++i) out[i] = f[i];
        return;
    }
    const auto* h = reinterpret_cast<const uint16_t*>(row);
    for (int64_t i = 0; i < n; ++i) out[i] = tensor::f16ToF32(h[i]);
}

void scoresOne(const float* q, const uint8_t* keys, bool f16, int64_t n, int64_t dim, float scale, float* s) {
    const size_t rowBytes = size_t(dim) * (f16 ? 2 : 4);
    float k[64];
    for (int64_t j = 0; j < n; ++j) {
        const uint8_t* row = keys + size_t(j) * rowBytes;
        float acc[16] = {};
        for (int64_t d0 = 0; d0 < dim; d0 += 64) {
            const int64_t len = dim - d0 < 64 ? dim - d0 : 64;
            loadRow(row + size_t(d0) * (f16 ? 2 : 4), f16, len, k);
            for (int64_t i = 0; i < len; ++i) acc[(d0 + i) & 15] = fmaf32(q[d0 + i], k[i], acc[(d0 + i) & 15]);
        }
        s[j] = reduce16(acc) * scale;
    }
}

void scores(const float* const* q, int heads, const uint8_t* keys, bool f16, int64_t n, int64_t dim, float scale,
            float* const* s) {
    for (int h = 0; h < heads; ++h) scoresOne(q[h], keys, f16, n, dim, scale, s[h]);
}

float maxOf(const float* s, int64_t n) {
    float m = -INFINITY;
    for (int64_t j = 0; j < n; ++j) m = s[j] > m ? s[j] : m;
    return m;
}

float expSum(float* s, int64_t n, float max) {
    float lanes[16] = {};
    for (int64_t j = 0; j < n; ++j) {
        s[j] = expCanonical(s[j] - max);
        lanes[j & 15] = lanes[j & 15] + s[j];
    }
    return reduce16(lanes);
}

void normalize(float* w, int64_t n, float inv, bool f16) {
    for (int64_t j = 0; j < n; ++j) w[j] = f16 ? roundToF16(w[j] * inv) : w[j] * inv;
}

void accumulateOne(const float* w, const uint8_t* values, bool f16, int64_t n, int64_t dim, float* o) {
    const size_t rowBytes = size_t(dim) * (f16 ? 2 : 4);
    float v[64];
    for (int64_t d0 = 0; d0 < dim; d0 += 64) {
        const int64_t len = dim - d0 < 64 ? dim - d0 : 64;
        float* od = o + d0;
        for (int64_t i = 0; i < len; ++i) od[i] = 0.0f;
        for (int64_t j = 0; j < n; ++j) {
            loadRow(values + size_t(j) * rowBytes + size_t(d0) * (f16 ? 2 : 4), f16, len, v);
            for (int64_t i = 0; i < len; ++i) od[i] = fmaf32(w[j], v[i], od[i]);
        }
    }
}

void accumulate(const float* const* w, int heads, const uint8_t* values, bool f16, int64_t n, int64_t dim,
                float* const* o) {
    for (int h = 0; h < heads; ++h) accumulateOne(w[h], values, f16, n, dim, o[h]);
}

const Kernels kScalar{"scalar", scores, maxOf, expSum, normalize, accumulate};

}  // namespace

#if !(defined(__x86_64__) || defined(_M_X64))
const Kernels* avx2Kernels() { return nullptr; }
const Kernels* avx512Kernels() { return nullptr; }
#endif
#if !defined(__aarch64__)
const Kernels* neonKernels() { return nullptr; }
#endif

const Kernels& scalarKernels() { return kScalar; }

const Kernels& activeKernels() {
    const std::string_view path = tensor::kernelPath();
    if (path.starts_with("avx512")) {
        if (const Kernels* k = avx512Kernels()) return *k;
    }
    if (path.starts_with("avx")) {  // avx2, or avx512 without its attention kernels
        if (const Kernels* k = avx2Kernels()) return *k;
    }
    if (path.starts_with("neon")) {  // neon or neon-dotprod (no integer dots here)
        if (const Kernels* k = neonKernels()) return *k;
    }
    return kScalar;
}

}  // namespace cairn::model::attn
