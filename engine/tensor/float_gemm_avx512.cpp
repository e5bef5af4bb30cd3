// Prefill with float weights (F32/F16/BF16, K a multiple of 16) on AVX-512:
// the outer-product GEMM of the AVX2 path (kernels_avx2.cpp, floatGemm) with
// 16 rows per vector. The canonical chain of output (r, t) in lane l runs
// over k = l, l+16, l+32, ...; one zmm holds that chain for 16 rows, so a
// step is an outer product of 32 rows (2 vector loads) by 12 tokens (12
// broadcasts) into 24 accumulators, and the reduce16 tree becomes vector adds
// across lanes (bit for bit the same sums, 16 rows per add). Layouts, each
// 16 lanes of `steps` = len / 16 steps:
//   activations (packed once per call by packFloatTokens, shared by the
//     threads): per group of 12 tokens, per chunk of kChunk columns
//     [l][k/16][12 tokens], missing tokens zero;
//   weights (per 32-row tile and chunk, converted by the calling thread):
//     [l][k/16][32 rows], lanes lanePitch() floats apart, missing rows zero;
//   accumulators per (row tile, token group): [l][12 tokens][2 halves],
//     kept across chunks (storing a vector is exact, so the order is
//     canonical).
// Loops: block of kBlockRows rows > chunk > token group > row tile > lane.
// Built with the AVX-512 flags; see kernels_avx512.cpp for the linkage rule.
#include "tensor/float_gemm_avx512.h"

#include "tensor/avx512_float_loads.h"

#include <immintrin.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12's own _mm512_undefined_* (kernels_avx512.cpp)
#endif

#include <algorithm>

namespace cairn::tensor::kernels::avx512 {
namespace {

constexpr int kTileRows = 32, kTileTok = 12;
constexpr int kLaneVecs = 2 * kTileTok;  // accumulators of one lane of a tile
constexpr int kTileVecs = 16 * kLaneVecs;
// Columns per chunk and rows per block. A K longer than one chunk keeps
// every token group's accumulators in memory between chunks (16 lanes x 32
// rows x 12 tokens a tile: 2 MiB for 64 rows x 512 tokens), which evicted
// the packed weights from L2 at every chunk; 8192 columns take llama-1b's
// ffn_down (K = 8192) in one, and 32 rows keep its packed panel at 1 MiB.
// AMD EPYC Zen 4 (family 25 model 17), `cairn-cli bench-kernels --types F16
// --rows R --cols C -p 512 -t T -r 5 --decode-mib 0`, GFLOP/s, chunk 2048 and
// 64 rows / 8192 and 32: 2048x8192 -t 1 92.5-98.6 / 105.7-105.8, -t 2
// 178.0-180.6 / 200.2-207.1; 8192x2048 -t 1 103.8-106.8 / 107.9-108.0, -t 2
// 205.5-208.4 / 210.7-211.6; 8192 and 64 rows (a 2 MiB panel, from L3)
// 2048x8192 -t 1 108.4-108.9 but 8192x2048 -t 2 193.4-199.2. llama-1b F16
// pp512 (`bench -p 512 -n 0 -t 2 -r 2`, interleaved) 98.8 / 101.2, 96.6 /
// 102.0, 98.0 / 101.5 t/s.
constexpr int64_t kChunk = 8192, kBlockRows = 32;
// Floats between the starts of two lanes of a packed weight tile: the lane's
// steps plus 128 bytes, so the 16 stores of one packing step do not fall in
// one L1 set (unpadded, lanes are 16 KiB apart at 2048 columns). Measured AMD
// EPYC Zen 5, `cairn-cli bench-kernels --types F16 --rows 4096 --cols 2048
// -p 128 -t 1 -r 15 --decode-mib 0`, 3 interleaved rounds, GFLOP/s: no pad
// 164-172, 64 bytes 171-180, 128 bytes 168-182.
constexpr int64_t lanePitch(int64_t steps) { return steps * kTileRows + 32; }
// 16x16 transpose: v[i] row i in, v[j] column j out.
inline void transpose16(__m512* v) {
    __m512 t[16], u[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(v[i], v[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(v[i], v[i + 1]);
    }
    // u[4g + m], 128-bit lane j: rows 4g..4g+3 at column 4j + m.
    for (int i = 0; i < 16; i += 4) {
        u[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int m = 0; m < 4; ++m) {
        const __m512 p01 = _mm512_shuffle_f32x4(u[m], u[4 + m], _MM_SHUFFLE(1, 0, 1, 0));
        const __m512 q01 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], _MM_SHUFFLE(1, 0, 1, 0));
        const __m512 p23 = _mm512_shuffle_f32x4(u[m], u[4 + m], _MM_SHUFFLE(3, 2, 3, 2));
        const __m512 q23 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], _MM_SHUFFLE(3, 2, 3, 2));
        v[m] = _mm512_shuffle_f32x4(p01, q01, _MM_SHUFFLE(2, 0, 2, 0));
        v[4 + m] = _mm512_shuffle_f32x4(p01, q01, _MM_SHUFFLE(3, 1, 3, 1));
        v[8 + m] = _mm512_shuffle_f32x4(p23, q23, _MM_SHUFFLE(2, 0, 2, 0));
        v[12 + m] = _mm512_shuffle_f32x4(p23, q23, _MM_SHUFFLE(3, 1, 3, 1));
    }
}

// Rows [r, r + n) (n <= 32), columns [kc, kc + len), as f32 in the weight
// layout above. (A software prefetch 1 KiB ahead in each of the 16 rows, or
// of the next block during the compute, measured no different: llama-1b F16
// pp512 within the ±8 % noise of the machine, and `bench-kernels --types F16
// --rows 65536 --cols 2048 -p 128 -t 2` 322.6 -> 323.7 GFLOP/s.)
//
// Each half (16 rows) is packed by a copy specialised for the row type and
// for whether all 16 rows exist, so the loop has no per-row test and no type
// switch (as the AVX2 packFloatHalf). AMD EPYC Zen 5, 3 interleaved rounds,
// `bench-kernels --types F16 --rows 16384 --cols 2048 -p 128 -t 2 -r 5
// --decode-mib 0`: 366-371 -> 380-386 GFLOP/s; in llama-1b F16 pp512 (one
// packing per 512 tokens) within the noise, 163-171 -> 164-172 t/s.
template <TensorType Type, bool Full>
void packHalf(const FloatRow* rows, int64_t kc, int64_t steps, int h, float* out) {
    for (int64_t s = 0; s < steps; ++s) {
        const int64_t k = kc + 16 * s;
        __m512 v[16];
        for (int i = 0; i < 16; ++i)
            v[i] = Full || rows[i].start ? loadFloats(Type, rows[i].start, rows[i].at(k)) : _mm512_setzero_ps();
        transpose16(v);
        for (int j = 0; j < 16; ++j) _mm512_store_ps(out + j * lanePitch(steps) + s * kTileRows + 16 * h, v[j]);
    }
}

template <TensorType Type>
void packHalfOf(const FloatRow* rows, bool full, int64_t kc, int64_t steps, int h, float* out) {
    if (full) packHalf<Type, true>(rows, kc, steps, h, out);
    else packHalf<Type, false>(rows, kc, steps, h, out);
}

void packWeights(const MatrixView& w, int64_t r, int n, int64_t kc, int64_t len, float* out) {
    const int64_t steps = len / 16;
    for (int h = 0; h < 2; ++h) {
        FloatRow rows[16];
        for (int i = 0; i < 16; ++i) rows[i] = 16 * h + i < n ? floatRow(w, r + 16 * h + i) : FloatRow{};
        const bool full = n >= 16 * h + 16;
        switch (w.type) {
        case TensorType::F16: packHalfOf<TensorType::F16>(rows, full, kc, steps, h, out); break;
        case TensorType::BF16: packHalfOf<TensorType::BF16>(rows, full, kc, steps, h, out); break;
        default: packHalfOf<TensorType::F32>(rows, full, kc, steps, h, out); break;
        }
    }
}

// 32 rows x T tokens, one lane, `steps` steps of the chain. Fresh: the
// chains start at zero (the first K chunk) instead of from acc. Named
// registers, not arrays: with arrays GCC 12 kept a copy of the accumulators
// on the stack, zeroed (`rep stos`) or copied in and out around every call,
// and floatGemm zeroed the accumulators in memory (memset, 2.4 % of a
// llama-1b F16 prefill). Measured AMD EPYC Zen 5 (register-only FMA peak 230
// GFLOP/s a core), 3 interleaved rounds, `cairn-cli bench-kernels --types F16
// --rows 4096 --cols 2048 -p 512 -t 1 -r 5 --decode-mib 0`: 190-191 -> 204-206
// GFLOP/s; llama-1b F16 pp512 (`bench -p 512 -n 0 -t 2 -r 2`) 149 / 150 / 154
// -> 158 / 166 / 168 t/s. Two steps per iteration (as the AVX2 tile) and 14
// tokens a tile measured no different (202-205, 201-207).
template <int T, bool Fresh>
void laneTile(const float* wp, const float* xp, int64_t steps, __m512* acc) {
    const __m512 z = _mm512_setzero_ps();
    auto start = [&](int i) { return Fresh || i >= 2 * T ? z : acc[i]; };
    __m512 a0 = start(0), b0 = start(1);
    __m512 a1 = start(2), b1 = start(3);
    __m512 a2 = start(4), b2 = start(5);
    __m512 a3 = start(6), b3 = start(7);
    __m512 a4 = start(8), b4 = start(9);
    __m512 a5 = start(10), b5 = start(11);
    __m512 a6 = start(12), b6 = start(13);
    __m512 a7 = start(14), b7 = start(15);
    __m512 a8 = start(16), b8 = start(17);
    __m512 a9 = start(18), b9 = start(19);
    __m512 a10 = start(20), b10 = start(21);
    __m512 a11 = start(22), b11 = start(23);
    for (int64_t s = 0; s < steps; ++s, wp += kTileRows, xp += kTileTok) {
        const __m512 w0 = _mm512_load_ps(wp), w1 = _mm512_load_ps(wp + 16);
        auto fma2 = [&](__m512& lo, __m512& hi, int t) {
            const __m512 x = _mm512_set1_ps(xp[t]);
            lo = _mm512_fmadd_ps(w0, x, lo);
            hi = _mm512_fmadd_ps(w1, x, hi);
        };
        forEachPair<T>(fma2, a0, b0, a1, b1, a2, b2, a3, b3, a4, b4, a5, b5, a6, b6, a7, b7, a8, b8, a9, b9, a10, b10,
                       a11, b11);
    }
    auto store2 = [&](__m512& lo, __m512& hi, int t) {
        acc[2 * t] = lo;
        acc[2 * t + 1] = hi;
    };
    forEachPair<T>(store2, a0, b0, a1, b1, a2, b2, a3, b3, a4, b4, a5, b5, a6, b6, a7, b7, a8, b8, a9, b9, a10, b10,
                   a11, b11);
}

using LaneTileFn = void (*)(const float*, const float*, int64_t, __m512*);
template <bool Fresh>
LaneTileFn laneTileFor(int t) {
    switch (t) {
    case 12: return laneTile<12, Fresh>;
    case 11: return laneTile<11, Fresh>;
    case 10: return laneTile<10, Fresh>;
    case 9: return laneTile<9, Fresh>;
    case 8: return laneTile<8, Fresh>;
    case 7: return laneTile<7, Fresh>;
    case 6: return laneTile<6, Fresh>;
    case 5: return laneTile<5, Fresh>;
    case 4: return laneTile<4, Fresh>;
    case 3: return laneTile<3, Fresh>;
    case 2: return laneTile<2, Fresh>;
    default: return laneTile<1, Fresh>;
    }
}

// A tile's 16 lanes reduced by the reduce16 tree, 16 rows per add; rows
// [r, r + n) of tokens [tok, tok + nt) stored.
void reduceTile(const __m512* acc, int nt, int64_t tok, int64_t r, int n, float* y, int64_t ldy) {
    for (int t = 0; t < nt; ++t)
        for (int h = 0; h < 2 && 16 * h < n; ++h) {
            const int o = 2 * t + h;
            __m512 s8[8], s4[4];
            for (int i = 0; i < 8; ++i) s8[i] = _mm512_add_ps(acc[i * kLaneVecs + o], acc[(i + 8) * kLaneVecs + o]);
            for (int i = 0; i < 4; ++i) s4[i] = _mm512_add_ps(s8[i], s8[i + 4]);
            const __m512 sum = _mm512_add_ps(_mm512_add_ps(s4[0], s4[2]), _mm512_add_ps(s4[1], s4[3]));
            const int m = std::min(16, n - 16 * h);
            _mm512_mask_storeu_ps(y + (tok + t) * ldy + r + 16 * h, __mmask16((1u << m) - 1), sum);
        }
}

}  // namespace

PackPlan floatPackPlan(const Activations& a, int64_t minTokens) {
    if (a.nTokens < minTokens || a.cols % 16 != 0) return {};
    return {(a.nTokens + kTileTok - 1) / kTileTok, size_t(kTileTok * a.cols) * 4};
}

void packFloatTokens(const Activations& a, uint8_t* p, int64_t g0, int64_t g1) {
    const int64_t K = a.cols;
    for (int64_t g = g0; g < g1; ++g) {
        const float* x[kTileTok];
        for (int t = 0; t < kTileTok; ++t) {
            const int64_t tok = g * kTileTok + t;
            x[t] = tok < a.nTokens ? a.x + tok * a.ldx : nullptr;
        }
        for (int64_t kc = 0; kc < K; kc += kChunk) {
            const int64_t steps = std::min(kChunk, K - kc) / 16;
            float* dst = reinterpret_cast<float*>(p) + (g * K + kc) * kTileTok;
            for (int64_t s = 0; s < steps; ++s) {
                __m512 v[16];
                for (int t = 0; t < 16; ++t)
                    v[t] = t < kTileTok && x[t] ? _mm512_loadu_ps(x[t] + kc + 16 * s) : _mm512_setzero_ps();
                transpose16(v);
                for (int l = 0; l < 16; ++l)
                    _mm512_mask_storeu_ps(dst + (l * steps + s) * kTileTok, __mmask16((1u << kTileTok) - 1), v[l]);
            }
        }
    }
}

void floatGemm(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const int64_t K = a.cols;
    const int64_t groups = (a.nTokens + kTileTok - 1) / kTileTok;
    const int64_t chunk = std::min(K, kChunk), chunks = (K + chunk - 1) / chunk;
    constexpr int64_t blockTiles = kBlockRows / kTileRows;
    // One chunk: a tile is reduced as soon as it is done, so one slot per row
    // tile; otherwise every token group's accumulators live across chunks.
    const int64_t accGroups = chunks == 1 ? 1 : groups;
    auto* wp = reinterpret_cast<float*>(scratch(1, size_t(blockTiles * 16 * lanePitch(chunk / 16)) * 4));
    auto* acc = reinterpret_cast<__m512*>(scratch(2, size_t(blockTiles * accGroups * kTileVecs) * 64));
    const auto* xp = reinterpret_cast<const float*>(a.packed);
    for (int64_t rb = r0; rb < r1; rb += kBlockRows) {
        const int64_t rbEnd = std::min(r1, rb + kBlockRows);
        const int nrt = int((rbEnd - rb + kTileRows - 1) / kTileRows);
        for (int64_t kc = 0; kc < K; kc += chunk) {
            const int64_t len = std::min(chunk, K - kc), steps = len / 16;
            for (int rt = 0; rt < nrt; ++rt) {
                const int64_t r = rb + rt * kTileRows;
                packWeights(w, r, int(std::min<int64_t>(kTileRows, rbEnd - r)), kc, len,
                            wp + rt * 16 * lanePitch(steps));
            }
            for (int64_t g = 0; g < groups; ++g) {
                const int nt = int(std::min<int64_t>(kTileTok, a.nTokens - g * kTileTok));
                const LaneTileFn fn = kc == 0 ? laneTileFor<true>(nt) : laneTileFor<false>(nt);
                const float* xg = xp + (g * K + kc) * kTileTok;
                for (int rt = 0; rt < nrt; ++rt) {
                    __m512* tacc = acc + (rt * accGroups + (chunks == 1 ? 0 : g)) * kTileVecs;
                    const float* wt = wp + rt * 16 * lanePitch(steps);
                    for (int l = 0; l < 16; ++l)
                        fn(wt + l * lanePitch(steps), xg + l * steps * kTileTok, steps, tacc + l * kLaneVecs);
                    if (kc + len == K) {
                        const int64_t r = rb + rt * kTileRows;
                        reduceTile(tacc, nt, g * kTileTok, r, int(std::min<int64_t>(kTileRows, rbEnd - r)), y, ldy);
                    }
                }
            }
        }
    }
}

}  // namespace cairn::tensor::kernels::avx512
