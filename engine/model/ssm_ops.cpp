#include "model/ssm_ops.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

// The block kernels are compiled for several x86-64 levels and picked at run
// time (GCC function multi-versioning). The choice is fixed per machine, so
// every path of one process runs the same instructions.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define CAIRN_SSM_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CAIRN_SSM_CLONES
#endif

// Without this, GCC keeps the selects of the vector math below as branches
// (an FP compare "might trap"), and the lane loops do not vectorize. Nothing
// here reads FP exception flags.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

namespace cairn::model::ssm {

namespace {

constexpr int64_t L = kLanes;

// Written with plain float/int operations and selects between values already
// computed (no branches, no speculated FP work), so loops over lanes vectorize.
inline float minf(float a, float b) { return a < b ? a : b; }
inline float maxf(float a, float b) { return a > b ? a : b; }

inline float expInline(float x) {
    x = minf(maxf(x, -87.3f), 88.7f);
    // k = round(x / ln 2) by the 1.5·2^23 trick (exact for |x / ln 2| < 2^22).
    const float magic = 12582912.f;
    const float k = (x * 1.44269504088896341f + magic) - magic;
    // Cody–Waite reduction: r = x − k·ln 2 in two parts.
    float r = x - k * 0.693359375f;
    r = r - k * -2.12194440e-4f;
    const float r2 = r * r;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const float er = p * r2 + r + 1.0f;
    const int32_t e = int32_t(k) + 127;  // in [1, 255) after the clamp
    return er * std::bit_cast<float>(uint32_t(e) << 23);
}

// ln(u) for u ≥ 1 (finite), cephes-style: u = m·2^e with m in [√½, √2).
inline float logInline(float u) {
    const uint32_t bits = std::bit_cast<uint32_t>(u);
    float e = float(int32_t(bits >> 23) - 126);
    float m = std::bit_cast<float>((bits & 0x007fffffu) | 0x3f000000u);  // [0.5, 1)
    const bool small = m < 0.707106781186547524f;
    const float eLow = e - 1.0f, fLow = m + m - 1.0f, fHigh = m - 1.0f;
    e = small ? eLow : e;
    const float f = small ? fLow : fHigh;
    const float z = f * f;
    float p = 7.0376836292e-2f;
    p = p * f - 1.1514610310e-1f;
    p = p * f + 1.1676998740e-1f;
    p = p * f - 1.2420140846e-1f;
    p = p * f + 1.4249322787e-1f;
    p = p * f - 1.6668057665e-1f;
    p = p * f + 2.0000714765e-1f;
    p = p * f - 2.4999993993e-1f;
    p = p * f + 3.3333331174e-1f;
    float y = p * f * z;
    y = y + e * -2.12194440e-4f;
    y = y - 0.5f * z;
    return (f + y) + e * 0.693359375f;
}

inline float siluInline(float x) { return x / (1.0f + expInline(-x)); }

// softplus(v) = v > 20 ? v : ln(1 + e^v), evaluated as max(v, 0) + log1p(e^−|v|)
// with log1p(w) = ln(u)·w/(u − 1), u = 1 + w (accurate for small w).
inline float softplusInline(float v) {
    const float w = expInline(v > 0.0f ? -v : v);
    const float u = 1.0f + w;
    const float d = u - 1.0f;
    const float dSafe = d == 0.0f ? 1.0f : d;
    const float ratio = logInline(u) * (w / dSafe);
    const float l1p = d == 0.0f ? w : ratio;
    const float sp = maxf(v, 0.0f) + l1p;
    return v > 20.0f ? v : sp;
}

// Copies n ≤ L lanes and zeros the rest.
inline void loadLanes(float* dst, const float* src, int64_t n) {
    if (n == L) {
        std::memcpy(dst, src, sizeof(float) * L);
        return;
    }
    std::memcpy(dst, src, sizeof(float) * size_t(n));
    std::fill(dst + n, dst + L, 0.0f);
}

inline void storeLanes(float* dst, const float* src, int64_t n) { std::memcpy(dst, src, sizeof(float) * size_t(n)); }

// One block of channels [c0, c0 + nv) over the whole chunk. `buf` holds
// (K − 1 + T) rows of L lanes: the carried inputs, then the chunk's.
CAIRN_SSM_CLONES
void convBlock(const float* x, int64_t ldx, int64_t T, int64_t c0, int64_t nv, int64_t K, const float* w,
               const float* b, float* state, float* out, int64_t ldo, float* buf) {
    const int64_t S = K - 1;
    for (int64_t r = 0; r < S; ++r)
        for (int64_t j = 0; j < L; ++j) buf[r * L + j] = j < nv ? state[(c0 + j) * S + r] : 0.0f;
    for (int64_t t = 0; t < T; ++t) loadLanes(buf + (S + t) * L, x + t * ldx + c0, nv);

    float wl[kMaxConv][L];
    float bl[L];
    for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < L; ++j) wl[k][j] = j < nv ? w[(c0 + j) * K + k] : 0.0f;
    loadLanes(bl, b + c0, nv);

    for (int64_t t = 0; t < T; ++t) {
        float acc[L];
        for (int64_t j = 0; j < L; ++j) acc[j] = bl[j];
        for (int64_t k = 0; k < K; ++k) {
            const float* xr = buf + (t + k) * L;
            for (int64_t j = 0; j < L; ++j) acc[j] += wl[k][j] * xr[j];
        }
        for (int64_t j = 0; j < L; ++j) acc[j] = siluInline(acc[j]);
        storeLanes(out + t * ldo + c0, acc, nv);
    }
    for (int64_t r = 0; r < S; ++r)
        for (int64_t j = 0; j < nv; ++j) state[(c0 + j) * S + r] = buf[(T + r) * L + j];
}

CAIRN_SSM_CLONES
void scanBlock(const ScanInputs& in, int64_t c0, int64_t nv, float* h, float* y, int64_t ldy) {
    const int64_t N = in.stateSize;
    alignas(64) float a[kMaxState * L];
    alignas(64) float hl[kMaxState * L];
    // a[n][j] = A[c0+j][n], hl[n][j] = h[c0+j][n]: states of one n side by side.
    for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < L; ++j) {
            a[n * L + j] = j < nv ? in.A[(c0 + j) * N + n] : 0.0f;
            hl[n * L + j] = j < nv ? h[(c0 + j) * N + n] : 0.0f;
        }
    float bias[L], dl[L];
    loadLanes(bias, in.dtBias + c0, nv);
    loadLanes(dl, in.D + c0, nv);

    for (int64_t t = 0; t < in.tokens; ++t) {
        float xv[L], dv[L], zv[L], delta[L], dx[L], s[L];
        loadLanes(xv, in.x + t * in.ldx + c0, nv);
        loadLanes(dv, in.dt + t * in.lddt + c0, nv);
        loadLanes(zv, in.z + t * in.ldz + c0, nv);
        for (int64_t j = 0; j < L; ++j) {
            delta[j] = softplusInline(dv[j] + bias[j]);
            dx[j] = delta[j] * xv[j];
            s[j] = 0.0f;
        }
        const float* Bt = in.B + t * in.ldbc;
        const float* Ct = in.C + t * in.ldbc;
        for (int64_t n = 0; n < N; ++n) {
            const float bn = Bt[n], cn = Ct[n];
            float* hn = hl + n * L;
            const float* an = a + n * L;
            for (int64_t j = 0; j < L; ++j) {
                const float dA = expInline(delta[j] * an[j]);
                hn[j] = dA * hn[j] + dx[j] * bn;
                s[j] += hn[j] * cn;
            }
        }
        float out[L];
        for (int64_t j = 0; j < L; ++j) out[j] = (s[j] + dl[j] * xv[j]) * siluInline(zv[j]);
        storeLanes(y + t * ldy + c0, out, nv);
    }
    for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < nv; ++j) h[(c0 + j) * N + n] = hl[n * L + j];
}

// Blocks per task: enough tasks to balance the threads, but small chunks
// (decode) stay on one thread, where spawning costs more than it saves.
int64_t grainFor(int64_t blocks, int64_t workPerBlock, int threads) {
    if (threads <= 1 || blocks * workPerBlock < (int64_t(1) << 15)) return blocks;
    return std::max<int64_t>(1, blocks / (4 * threads));
}

} // namespace

float expApprox(float x) { return expInline(x); }
float siluApprox(float x) { return siluInline(x); }
float softplusApprox(float x) { return softplusInline(x); }

void conv1dSilu(const float* x, int64_t ldx, int64_t T, int64_t channels, int64_t K, const float* w,
                const float* b, float* state, float* out, int64_t ldo, ExecContext& ctx) {
    if (T <= 0 || channels <= 0) return;
    const int64_t blocks = (channels + L - 1) / L;
    ctx.parallelFor(blocks, grainFor(blocks, T * K * L, ctx.threads()), [&](int64_t begin, int64_t end) {
        std::vector<float> buf(size_t((K - 1 + T) * L));
        for (int64_t blk = begin; blk < end; ++blk) {
            const int64_t c0 = blk * L;
            convBlock(x, ldx, T, c0, std::min(L, channels - c0), K, w, b, state, out, ldo, buf.data());
        }
    });
}

void selectiveScan(const ScanInputs& in, float* h, float* y, int64_t ldy, ExecContext& ctx) {
    if (in.tokens <= 0 || in.channels <= 0) return;
    const int64_t blocks = (in.channels + L - 1) / L;
    ctx.parallelFor(blocks, grainFor(blocks, in.tokens * in.stateSize * L, ctx.threads()),
                    [&](int64_t begin, int64_t end) {
                        for (int64_t blk = begin; blk < end; ++blk) {
                            const int64_t c0 = blk * L;
                            scanBlock(in, c0, std::min(L, in.channels - c0), h, y, ldy);
                        }
                    });
}

} // namespace cairn::model::ssm
