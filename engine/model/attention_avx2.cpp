// AVX2 attention kernels: the canonical arithmetic of attention_kernels.h,
// the 16 lanes of a dot product in two registers, 4 keys reduced together
// with the same tree.
#include "model/attention_kernels.h"

#include <immintrin.h>

namespace cairn::model::attn {
namespace {

template <bool F16>
inline __m256 load8(const uint8_t* row, int64_t d) {
    if constexpr (F16)
        return _mm256_cvtph_ps(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(reinterpret_cast<const uint16_t*>(row) + d)));
    else return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + d);
}

// Elements [d, end) of a row into 16 zero-padded floats (the last, partial chunk).
template <bool F16>
inline void loadTail(const uint8_t* row, int64_t d, int64_t end, float* out) {
    for (int i = 0; i < 16; ++i) {
        const int64_t k = d + i;
        if (k >= end) out[i] = 0.0f;
        else if constexpr (F16) out[i] = tensor::f16ToF32(reinterpret_cast<const uint16_t*>(row)[k]);
        else out[i] = reinterpret_cast<const float*>(row)[k];
    }
}

inline __m256 laneMask(int64_t count) {  // lanes [0, count) set
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(int(count)), idx));
}

// Element i of the result: reduce16 of key i's lanes (lo: 0-7, hi: 8-15), 4 keys.
inline __m128 reduce16x4(const __m256* lo, const __m256* hi) {
    __m256 s8[4];
    for (int i = 0; i < 4; ++i) s8[i] = _mm256_add_ps(lo[i], hi[i]);
    __m256 c[2];  // c[p] = [s4(key 2p) | s4(key 2p+1)]
    for (int p = 0; p < 2; ++p)
        c[p] = _mm256_add_ps(_mm256_permute2f128_ps(s8[2 * p], s8[2 * p + 1], 0x20),
                             _mm256_permute2f128_ps(s8[2 * p], s8[2 * p + 1], 0x31));
    const __m256d x = _mm256_castps_pd(c[0]), y = _mm256_castps_pd(c[1]);
    // [s2a, s2b of key 0, of key 2 | of key 1, of key 3]
    const __m256 e =
        _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(x, y)), _mm256_castpd_ps(_mm256_unpackhi_pd(x, y)));
    const __m256 r = _mm256_hadd_ps(e, e);  // [k0, k2, k0, k2 | k1, k3, k1, k3]
    return _mm_unpacklo_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps(r, 1));
}

// H queries (1 or 2) × 4/H keys per block: accumulator pair h·(4/H) + i is
// query h with key j0 + i, so one reduce16x4 serves the block and each key
// row is loaded (and converted) once for the H queries.
template <bool F16, int H>
void scoresT(const float* const* q, const uint8_t* keys, int64_t n, int64_t dim, float scale, float* const* s) {
    constexpr int K = 4 / H;
    const size_t rowBytes = size_t(dim) * (F16 ? 2 : 4);
    const int64_t full = dim / 16 * 16;
    alignas(32) float qt[H][16], kt[16];
    if (full < dim)
        for (int h = 0; h < H; ++h) loadTail<false>(reinterpret_cast<const uint8_t*>(q[h]), full, dim, qt[h]);
    const __m256 tailLo = laneMask(dim - full), tailHi = laneMask(dim - full - 8);
    const __m128 vscale = _mm_set1_ps(scale);
    for (int64_t j0 = 0; j0 < n; j0 += K) {
        const uint8_t* rows[K];
        for (int i = 0; i < K; ++i) rows[i] = keys + size_t(j0 + i < n ? j0 + i : n - 1) * rowBytes;
        prefetchRowsAhead(keys + size_t(j0) * rowBytes, K * int64_t(rowBytes));
        __m256 lo[4], hi[4];
        for (int i = 0; i < 4; ++i) lo[i] = hi[i] = _mm256_setzero_ps();
        for (int64_t d0 = 0; d0 < full; d0 += 16) {
            for (int i = 0; i < K; ++i) {
                const __m256 klo = load8<F16>(rows[i], d0), khi = load8<F16>(rows[i], d0 + 8);
                for (int h = 0; h < H; ++h) {
                    lo[h * K + i] = _mm256_fmadd_ps(_mm256_loadu_ps(q[h] + d0), klo, lo[h * K + i]);
                    hi[h * K + i] = _mm256_fmadd_ps(_mm256_loadu_ps(q[h] + d0 + 8), khi, hi[h * K + i]);
                }
            }
        }
        if (full < dim) {  // lanes without an element keep their sum exactly
            for (int i = 0; i < K; ++i) {
                loadTail<F16>(rows[i], full, dim, kt);
                const __m256 klo = _mm256_load_ps(kt), khi = _mm256_load_ps(kt + 8);
                for (int h = 0; h < H; ++h) {
                    const int a = h * K + i;
                    lo[a] = _mm256_blendv_ps(lo[a], _mm256_fmadd_ps(_mm256_load_ps(qt[h]), klo, lo[a]), tailLo);
                    hi[a] = _mm256_blendv_ps(hi[a], _mm256_fmadd_ps(_mm256_load_ps(qt[h] + 8), khi, hi[a]), tailHi);
                }
            }
        }
        const __m128 r = _mm_mul_ps(reduce16x4(lo, hi), vscale);
        if (H == 1 && j0 + 4 <= n) {
            _mm_storeu_ps(s[0] + j0, r);
        } else {
            alignas(16) float out[4];
            _mm_store_ps(out, r);
            const int64_t valid = n - j0 < K ? n - j0 : K;
            for (int h = 0; h < H; ++h)
                for (int64_t i = 0; i < valid; ++i) s[h][j0 + i] = out[h * K + i];
        }
    }
}

// Queries in pairs sharing the key rows (4 queries × 1 key per block would
// reload q more often than it saves key loads).
template <bool F16>
void scoresHeads(const float* const* q, int heads, const uint8_t* keys, int64_t n, int64_t dim, float scale,
                 float* const* s) {
    int h = 0;
    for (; h + 2 <= heads; h += 2) scoresT<F16, 2>(q + h, keys, n, dim, scale, s + h);
    if (h < heads) scoresT<F16, 1>(q + h, keys, n, dim, scale, s + h);
}

void scores(const float* const* q, int heads, const uint8_t* keys, bool f16, int64_t n, int64_t dim, float scale,
            float* const* s) {
    f16 ? scoresHeads<true>(q, heads, keys, n, dim, scale, s) : scoresHeads<false>(q, heads, keys, n, dim, scale, s);
}

float maxOf(const float* s, int64_t n) {
    __m256 m = _mm256_set1_ps(-INFINITY);
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(s + j));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, m);
    float r = -INFINITY;
    for (float x : lanes) r = x > r ? x : r;
    for (; j < n; ++j) r = s[j] > r ? s[j] : r;
    return r;
}

// expCanonical on 8 lanes, step for step.
inline __m256 exp8(__m256 x) {
    const __m256 round = _mm256_set1_ps(kExpRound);
    const __m256 t = _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(kExpLog2e)), round);
    const __m256 n = _mm256_sub_ps(t, round);
    __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kExpC1), x);
    r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kExpC2), r);
    __m256 p = _mm256_set1_ps(kExpP0);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP5));
    const __m256 z = _mm256_mul_ps(r, r);
    __m256 y = _mm256_fmadd_ps(p, z, r);
    y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
    const __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(round));
    y = _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(ni, _mm256_set1_epi32(127)), 23)));
    return _mm256_and_ps(y, _mm256_cmp_ps(x, _mm256_set1_ps(kExpMin), _CMP_NLT_UQ));
}

float expSum(float* s, int64_t n, float max) {
    const __m256 vmax = _mm256_set1_ps(max);
    __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
        const __m256 a = exp8(_mm256_sub_ps(_mm256_loadu_ps(s + j), vmax));
        const __m256 b = exp8(_mm256_sub_ps(_mm256_loadu_ps(s + j + 8), vmax));
        _mm256_storeu_ps(s + j, a);
        _mm256_storeu_ps(s + j + 8, b);
        lo = _mm256_add_ps(lo, a);
        hi = _mm256_add_ps(hi, b);
    }
    alignas(32) float lanes[16];
    _mm256_store_ps(lanes, lo);
    _mm256_store_ps(lanes + 8, hi);
    for (; j < n; ++j) {
        s[j] = expCanonical(s[j] - max);
        lanes[j & 15] = lanes[j & 15] + s[j];
    }
    return reduce16(lanes);
}

void normalize(float* w, int64_t n, float inv, bool f16) {
    const __m256 vinv = _mm256_set1_ps(inv);
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        __m256 x = _mm256_mul_ps(_mm256_loadu_ps(w + j), vinv);
        if (f16) x = _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        _mm256_storeu_ps(w + j, x);
    }
    for (; j < n; ++j) w[j] = f16 ? roundToF16(w[j] * inv) : w[j] * inv;
}

// H heads × C 8-wide columns from d0 (H·C <= 8 accumulators): each key's
// values are loaded once for all H heads; keys in order in every chain.
template <bool F16, int H, int C>
void accumulateBlock(const float* const* w, const uint8_t* values, size_t rowBytes, int64_t n, int64_t d0,
                     float* const* o) {
    __m256 acc[H][C];
    for (int h = 0; h < H; ++h)
        for (int c = 0; c < C; ++c) acc[h][c] = _mm256_setzero_ps();
    for (int64_t j = 0; j < n; ++j) {
        const uint8_t* row = values + size_t(j) * rowBytes;
        prefetchRowsAhead(row + d0 * (F16 ? 2 : 4), 8 * C * (F16 ? 2 : 4));
        __m256 v[C];
        for (int c = 0; c < C; ++c) v[c] = load8<F16>(row, d0 + 8 * c);
        for (int h = 0; h < H; ++h) {
            const __m256 wj = _mm256_broadcast_ss(w[h] + j);
            for (int c = 0; c < C; ++c) acc[h][c] = _mm256_fmadd_ps(wj, v[c], acc[h][c]);
        }
    }
    for (int h = 0; h < H; ++h)
        for (int c = 0; c < C; ++c) _mm256_storeu_ps(o[h] + d0 + 8 * c, acc[h][c]);
}

template <bool F16, int H>
void accumulateT(const float* const* w, const uint8_t* values, int64_t n, int64_t dim, float* const* o) {
    constexpr int C = 8 / H;
    const size_t rowBytes = size_t(dim) * (F16 ? 2 : 4);
    const int64_t full = dim / 8 * 8;
    int64_t d0 = 0;
    for (; d0 + 8 * C <= full; d0 += 8 * C) accumulateBlock<F16, H, C>(w, values, rowBytes, n, d0, o);
    for (; d0 < full; d0 += 8) accumulateBlock<F16, H, 1>(w, values, rowBytes, n, d0, o);
    accumulateColumns<F16, H>(w, values, rowBytes, n, full, dim, o);
}

void accumulate(const float* const* w, int heads, const uint8_t* values, bool f16, int64_t n, int64_t dim,
                float* const* o) {
    dispatchHeads(f16, heads, [&]<bool F16, int H>() { accumulateT<F16, H>(w, values, n, dim, o); });
}

const Kernels kAvx2{"avx2", scores, maxOf, expSum, normalize, accumulate};

}  // namespace

const Kernels* avx2Kernels() { return &kAvx2; }

}  // namespace cairn::model::attn
