// AVX-512 attention kernels: the canonical arithmetic of attention_kernels.h,
// 16 keys' dot products reduced together with the same tree.
#include "model/attention_kernels.h"

#include <immintrin.h>

// GCC 12 reports the deliberate self-initialisation inside its own
// _mm512_undefined_* helpers (used by many AVX-512 intrinsics) at every
// inlining site; the warning is about its header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace cairn::model::attn {
namespace {

inline __mmask16 maskOf(int64_t k) { return k >= 16 ? __mmask16(0xffff) : __mmask16((1u << k) - 1); }

template <bool F16>
inline __m512 load16(const uint8_t* row, int64_t d, __mmask16 m) {
    if constexpr (F16) return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, reinterpret_cast<const uint16_t*>(row) + d));
    else return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(row) + d);
}

// Lane i of the result: reduce16(a[i]) with the tree of attention_kernels.h
// (8+8, 4+4, 2+2, 1+1), for 16 vectors at once.
inline __m512 reduce16x16(const __m512* a) {
    __m512 b[8], c[4], e[2];
    for (int p = 0; p < 8; ++p)  // b[p] = [s8(a[2p]) | s8(a[2p+1])]
        b[p] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], 0x44),
                             _mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], 0xEE));
    for (int p = 0; p < 4; ++p)  // quarter q of c[p] = s4(a[4p+q])
        c[p] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * p], b[2 * p + 1], 0x88),
                             _mm512_shuffle_f32x4(b[2 * p], b[2 * p + 1], 0xDD));
    for (int p = 0; p < 2; ++p) {  // quarter q of e[p] = s2a, s2b of a[8p+q], then of a[8p+4+q]
        const __m512d x = _mm512_castps_pd(c[2 * p]), y = _mm512_castps_pd(c[2 * p + 1]);
        e[p] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)), _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
    }
    // Lane 4q + r holds the sum of a[4r + q].
    const __m512 r = _mm512_add_ps(_mm512_shuffle_ps(e[0], e[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                   _mm512_shuffle_ps(e[0], e[1], _MM_SHUFFLE(3, 1, 3, 1)));
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    return _mm512_permutexvar_ps(order, r);
}

// H queries (1, 2 or 4) × 16/H keys per block: accumulator h·(16/H) + i is
// query h with key j0 + i, so one reduce16x16 serves the block and each key
// row is loaded (and converted) once for the H queries.
template <bool F16, int H>
void scoresT(const float* const* q, const uint8_t* keys, int64_t n, int64_t dim, float scale, float* const* s) {
    constexpr int K = 16 / H;
    const size_t rowBytes = size_t(dim) * (F16 ? 2 : 4);
    const __m512 vscale = _mm512_set1_ps(scale);
    alignas(64) float out[16];
    for (int64_t j0 = 0; j0 < n; j0 += K) {
        const uint8_t* rows[K];
        for (int i = 0; i < K; ++i) rows[i] = keys + size_t(j0 + i < n ? j0 + i : n - 1) * rowBytes;
        prefetchRowsAhead(keys + size_t(j0) * rowBytes, K * int64_t(rowBytes));
        __m512 acc[16];
        for (auto& a : acc) a = _mm512_setzero_ps();
        for (int64_t d0 = 0; d0 < dim; d0 += 16) {
            const __mmask16 m = maskOf(dim - d0);
            __m512 qv[H];
            for (int h = 0; h < H; ++h) qv[h] = _mm512_maskz_loadu_ps(m, q[h] + d0);
            for (int i = 0; i < K; ++i) {
                const __m512 kv = load16<F16>(rows[i], d0, m);
                for (int h = 0; h < H; ++h) acc[h * K + i] = _mm512_mask3_fmadd_ps(qv[h], kv, acc[h * K + i], m);
            }
        }
        const __m512 r = _mm512_mul_ps(reduce16x16(acc), vscale);
        if constexpr (H == 1) {
            _mm512_mask_storeu_ps(s[0] + j0, maskOf(n - j0), r);
        } else {
            _mm512_store_ps(out, r);
            const int64_t valid = n - j0 < K ? n - j0 : K;
            for (int h = 0; h < H; ++h)
                for (int64_t i = 0; i < valid; ++i) s[h][j0 + i] = out[h * K + i];
        }
    }
}

template <bool F16>
void scoresHeads(const float* const* q, int heads, const uint8_t* keys, int64_t n, int64_t dim, float scale,
                 float* const* s) {
    static_assert(kMaxHeads == 4);
    switch (heads) {
    case 1: scoresT<F16, 1>(q, keys, n, dim, scale, s); break;
    case 2: scoresT<F16, 2>(q, keys, n, dim, scale, s); break;
    case 3:
        scoresT<F16, 2>(q, keys, n, dim, scale, s);
        scoresT<F16, 1>(q + 2, keys, n, dim, scale, s + 2);
        break;
    default: scoresT<F16, 4>(q, keys, n, dim, scale, s); break;
    }
}

void scores(const float* const* q, int heads, const uint8_t* keys, bool f16, int64_t n, int64_t dim, float scale,
            float* const* s) {
    f16 ? scoresHeads<true>(q, heads, keys, n, dim, scale, s) : scoresHeads<false>(q, heads, keys, n, dim, scale, s);
}

float maxOf(const float* s, int64_t n) {
    __m512 m = _mm512_set1_ps(-INFINITY);
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(s + j));
    float r = _mm512_reduce_max_ps(m);
    for (; j < n; ++j) r = s[j] > r ? s[j] : r;
    return r;
}

// expCanonical on 16 lanes, step for step.
inline __m512 exp16(__m512 x) {
    const __m512 round = _mm512_set1_ps(kExpRound);
    const __m512 t = _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(kExpLog2e)), round);
    const __m512 n = _mm512_sub_ps(t, round);
    __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-kExpC1), x);
    r = _mm512_fmadd_ps(n, _mm512_set1_ps(-kExpC2), r);
    __m512 p = _mm512_set1_ps(kExpP0);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP5));
    const __m512 z = _mm512_mul_ps(r, r);
    __m512 y = _mm512_fmadd_ps(p, z, r);
    y = _mm512_add_ps(y, _mm512_set1_ps(1.0f));
    const __m512i ni = _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_castps_si512(round));
    y = _mm512_mul_ps(y, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(ni, _mm512_set1_epi32(127)), 23)));
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(kExpMin), _CMP_NLT_UQ), y);
}

float expSum(float* s, int64_t n, float max) {
    const __m512 vmax = _mm512_set1_ps(max);
    __m512 acc = _mm512_setzero_ps();
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
        const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(s + j), vmax));
        _mm512_storeu_ps(s + j, e);
        acc = _mm512_add_ps(acc, e);
    }
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, acc);
    for (; j < n; ++j) {
        s[j] = expCanonical(s[j] - max);
        lanes[j & 15] = lanes[j & 15] + s[j];
    }
    return reduce16(lanes);
}

void normalize(float* w, int64_t n, float inv, bool f16) {
    const __m512 vinv = _mm512_set1_ps(inv);
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
        __m512 x = _mm512_mul_ps(_mm512_loadu_ps(w + j), vinv);
        if (f16) x = _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        _mm512_storeu_ps(w + j, x);
    }
    for (; j < n; ++j) w[j] = f16 ? roundToF16(w[j] * inv) : w[j] * inv;
}

// H heads × C 16-wide columns from d0: each key's values are loaded (and
// converted) once for all H heads; each (head, column) is its own chain, keys
// in order. The accumulators are named variables (tensor::kernels::
// forEachNamed): with an array, GCC 12 kept a copy of all 16 in memory,
// stored again at every key, 43 cycles a key for 4 heads of 64 columns
// instead of 18 (AMD EPYC Zen 4).
template <bool F16, int H, int C>
void accumulateBlock(const float* const* w, const uint8_t* values, size_t rowBytes, int64_t n, int64_t d0, int64_t len,
                     float* const* o) {
    static_assert(H * C <= 16);
    __mmask16 m[C];
    for (int c = 0; c < C; ++c) m[c] = maskOf(len - 16 * c);
    const __m512 z = _mm512_setzero_ps();
    __m512 a0 = z, a1 = z, a2 = z, a3 = z, a4 = z, a5 = z, a6 = z, a7 = z;
    __m512 a8 = z, a9 = z, a10 = z, a11 = z, a12 = z, a13 = z, a14 = z, a15 = z;
    for (int64_t j = 0; j < n; ++j) {
        const uint8_t* row = values + size_t(j) * rowBytes;
        prefetchRowsAhead(row + d0 * (F16 ? 2 : 4), len * (F16 ? 2 : 4));
        __m512 v[C], wj[H];
        for (int c = 0; c < C; ++c) v[c] = load16<F16>(row, d0 + 16 * c, m[c]);
        for (int h = 0; h < H; ++h) wj[h] = _mm512_set1_ps(w[h][j]);
        auto fma = [&](__m512& a, int i) { a = _mm512_fmadd_ps(wj[i / C], v[i % C], a); };
        tensor::kernels::forEachNamed<H * C>(fma, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15);
    }
    auto store = [&](__m512& a, int i) { _mm512_mask_storeu_ps(o[i / C] + d0 + 16 * (i % C), m[i % C], a); };
    tensor::kernels::forEachNamed<H * C>(store, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15);
}

template <bool F16, int H>
void accumulateT(const float* const* w, const uint8_t* values, int64_t n, int64_t dim, float* const* o) {
    const size_t rowBytes = size_t(dim) * (F16 ? 2 : 4);
    for (int64_t d0 = 0; d0 < dim; d0 += 64) {
        const int64_t len = dim - d0 < 64 ? dim - d0 : 64;
        switch ((len + 15) / 16) {
        case 1: accumulateBlock<F16, H, 1>(w, values, rowBytes, n, d0, len, o); break;
        case 2: accumulateBlock<F16, H, 2>(w, values, rowBytes, n, d0, len, o); break;
        case 3: accumulateBlock<F16, H, 3>(w, values, rowBytes, n, d0, len, o); break;
        default: accumulateBlock<F16, H, 4>(w, values, rowBytes, n, d0, len, o); break;
        }
    }
}

void accumulate(const float* const* w, int heads, const uint8_t* values, bool f16, int64_t n, int64_t dim,
                float* const* o) {
    dispatchHeads(f16, heads, [&]<bool F16, int H>() { accumulateT<F16, H>(w, values, n, dim, o); });
}

const Kernels kAvx512{"avx512", scores, maxOf, expSum, normalize, accumulate};

}  // namespace

const Kernels* avx512Kernels() { return &kAvx512; }

}  // namespace cairn::model::attn
