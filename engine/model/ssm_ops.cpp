#include "model/ssm_ops.h"

#include "model/vector_math.h"
#include "tensor/kernels_common.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

namespace cairn::model::ssm {

namespace {

using namespace vec;
constexpr int64_t L = kLanes;
static_assert(ssm::kLanes == vec::kLanes, "a block of channels is one vector");

// One block of channels [c0, c0 + nv) over the whole chunk. `buf` holds
// (K − 1 + T) rows of L lanes: the carried inputs, then the chunk's.
CAIRN_VECTOR_CLONES
void convBlock(const float* x, int64_t ldx, int64_t T, int64_t c0, int64_t nv, int64_t K, const float* w,
               const float* b, float* state, float* out, int64_t ldo, float* buf, bool silu) {
    const int64_t S = K - 1;
    std::memcpy(buf, state, sizeof(float) * size_t(S * L));
    for (int64_t t = 0; t < T; ++t) store(buf + (S + t) * L, loadPartial(x + t * ldx + c0, nv));

    vf wl[kMaxConv];
    for (int64_t k = 0; k < K; ++k) wl[k] = load(w + k * L);
    const vf bl = b ? loadPartial(b + c0, nv) : splat(0.0f);

    for (int64_t t = 0; t < T; ++t) {
        vf acc = bl;
        for (int64_t k = 0; k < K; ++k) acc += wl[k] * load(buf + (t + k) * L);
        storePartial(out + t * ldo + c0, silu ? vsilu(acc) : acc, nv);
    }
    std::memcpy(state, buf + T * L, sizeof(float) * size_t(S * L));
}

// convBlock for one token (decode), reading the carried inputs where they are
// and shifting them by one in place: the same sums in the same order. The
// staging buffer's copies cost more than the arithmetic at one token:
// mamba-370m decode spent 11 µs a layer in the conv (200 cycles a block),
// 7 µs with this. With scanBlockOneToken, measured in one process alternating
// every 16 tokens (Intel Xeon family 6 model 207, 2 threads), time a token:
// Q8_0 +1.3 %, +2.3 %, +3.8 % faster; F16 -1.6 %, +0.4 %, -0.9 % (noise).
CAIRN_VECTOR_CLONES
void convBlockOneToken(const float* x, int64_t c0, int64_t nv, int64_t K, const float* w, const float* b,
                       float* state, float* out, bool silu) {
    const int64_t S = K - 1;
    const vf xv = loadPartial(x + c0, nv);
    vf acc = b ? loadPartial(b + c0, nv) : splat(0.0f);
    for (int64_t k = 0; k < S; ++k) acc += load(w + k * L) * load(state + k * L);
    acc += load(w + S * L) * xv;
    for (int64_t k = 0; k + 1 < S; ++k) store(state + k * L, load(state + (k + 1) * L));
    if (S > 0) store(state + (S - 1) * L, xv);
    storePartial(out + c0, silu ? vsilu(acc) : acc, nv);
}

// The scans take their states' exponentials kExpGroup at a time (vexpEach),
// so that many independent chains are in flight; y still sums the states in
// order n = 0, 1, ... Mamba-370m's one-token scan with its state in cache
// ran at 38 cycles a state, about half the FP ports' rate. Measured in one
// process, alternating every 16 tokens (Intel Xeon family 6 model 207,
// mamba-370m, scan time a token), against one state at a time: groups of 4
// +10.5 % and +9.1 % (2 threads), +11.5 % (1); 8: +18.5 %, +10.4 % (2),
// +13.6 % (1); 16: +20.2 %, +12.4 % (2), +18.3 % (1). Eight keeps the group's
// vectors in the registers of an AVX-512 clone.
constexpr int kExpGroup = 8;

CAIRN_VECTOR_CLONES
void scanBlock(const ScanInputs& in, int64_t c0, int64_t nv, const float* A, float* h, float* y, int64_t ldy) {
    const int64_t N = in.stateSize;
    // a[n], hl[n]: state n of the block's channels side by side (the packed layout).
    vf a[kMaxState], hl[kMaxState];
    for (int64_t n = 0; n < N; ++n) {
        a[n] = load(A + n * L);
        hl[n] = load(h + n * L);
    }
    const vf bias = loadPartial(in.dtBias + c0, nv);
    const vf dl = loadPartial(in.D + c0, nv);

    for (int64_t t = 0; t < in.tokens; ++t) {
        const vf xv = loadPartial(in.x + t * in.ldx + c0, nv);
        const vf delta = vsoftplus(loadPartial(in.dt + t * in.lddt + c0, nv) + bias);
        const vf dx = delta * xv;
        const float* Bt = in.B + t * in.ldbc;
        const float* Ct = in.C + t * in.ldbc;
        vf s = splat(0.0f);
        int64_t n = 0;
        for (; n + kExpGroup <= N; n += kExpGroup) {
            vf dA[kExpGroup];
            for (int j = 0; j < kExpGroup; ++j) dA[j] = delta * a[n + j];
            vexpEach(dA);
            for (int j = 0; j < kExpGroup; ++j) {
                hl[n + j] = dA[j] * hl[n + j] + dx * Bt[n + j];
                s += hl[n + j] * Ct[n + j];
            }
        }
        for (; n < N; ++n) {
            hl[n] = vexp(delta * a[n]) * hl[n] + dx * Bt[n];
            s += hl[n] * Ct[n];
        }
        const vf zv = loadPartial(in.z + t * in.ldz + c0, nv);
        storePartial(y + t * ldy + c0, (s + dl * xv) * vsilu(zv), nv);
    }
    for (int64_t n = 0; n < N; ++n) store(h + n * L, hl[n]);
}

// scanBlock for one token (decode): each state is read, updated and written
// back in place, the same arithmetic in the same order without copying the
// block's A and state to the stack and back first.
CAIRN_VECTOR_CLONES
void scanBlockOneToken(const ScanInputs& in, int64_t c0, int64_t nv, const float* A, float* h, float* y) {
    const int64_t N = in.stateSize;
    const vf xv = loadPartial(in.x + c0, nv);
    const vf delta = vsoftplus(loadPartial(in.dt + c0, nv) + loadPartial(in.dtBias + c0, nv));
    const vf dx = delta * xv;
    const float *B = in.B, *C = in.C;
    vf s = splat(0.0f);
    int64_t n = 0;
    for (; n + kExpGroup <= N; n += kExpGroup) {
        vf dA[kExpGroup];
        for (int j = 0; j < kExpGroup; ++j) dA[j] = delta * load(A + (n + j) * L);
        vexpEach(dA);
        for (int j = 0; j < kExpGroup; ++j) {
            const vf hn = dA[j] * load(h + (n + j) * L) + dx * B[n + j];
            store(h + (n + j) * L, hn);
            s += hn * C[n + j];
        }
    }
    for (; n < N; ++n) {
        const vf hn = vexp(delta * load(A + n * L)) * load(h + n * L) + dx * B[n];
        store(h + n * L, hn);
        s += hn * C[n];
    }
    const vf zv = loadPartial(in.z + c0, nv);
    storePartial(y + c0, (s + loadPartial(in.D + c0, nv) * xv) * vsilu(zv), nv);
}

// Half a block (8 lanes): the state loop of the Mamba-2 scan is written on
// halves, whose loads and stores every target does in whole registers (GCC
// lowers the 16-lane type on AVX2 through partial stack stores that stall
// store forwarding: granite-4.0-h-1b prefill spent 27 % of its time there).
typedef float vh __attribute__((vector_size(L / 2 * sizeof(float))));
constexpr int64_t H = L / 2;
CAIRN_INLINE vh loadHalf(const float* p) {
    vh v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
CAIRN_INLINE void storeHalf(float* p, const vh& v) { std::memcpy(p, &v, sizeof v); }
// State n of a half block: h ← dA·h + dx·B[n], acc += h·C[n].
CAIRN_INLINE void updateState(float* hh, int64_t n, const vh& dA, const vh& dx, const float* B, const float* C,
                              vh& acc) {
    const vh hn = dA * loadHalf(hh + n * L) + dx * B[n];
    storeHalf(hh + n * L, hn);
    acc += hn * C[n];
}

// The Mamba-2 scan (one A per channel, so exp(Δ·A) once per token): the
// state stays in its lane-packed memory (8 KiB for d_state 128, in L1) and
// each state n costs two multiplies and an add per half; y sums the states
// in four interleaved partial sums (n mod 4), then ((s0 + s1) + (s2 + s3)),
// an order that does not depend on the chunk or the thread count.
CAIRN_VECTOR_CLONES
void scanBlockPerChannelDecay(const ScanInputs& in, int64_t c0, int64_t nv, float* h, float* y, int64_t ldy) {
    const int64_t N = in.stateSize;
    const vf a = loadPartial(in.decayA + c0, nv);
    const vf bias = loadPartial(in.dtBias + c0, nv);
    const vf dl = loadPartial(in.D + c0, nv);
    for (int64_t t = 0; t < in.tokens; ++t) {
        const vf xv = loadPartial(in.x + t * in.ldx + c0, nv);
        const vf delta = vsoftplus(loadPartial(in.dt + t * in.lddt + c0, nv) + bias);
        alignas(64) float dA[L], dx[L], sum[L];
        store(dA, vexp(delta * a));
        store(dx, delta * xv);
        const float* Bt = in.B + t * in.ldbc;
        const float* Ct = in.C + t * in.ldbc;
        for (int64_t half = 0; half < 2; ++half) {
            const vh dAh = loadHalf(dA + half * H), dxh = loadHalf(dx + half * H);
            vh s0 = {}, s1 = {}, s2 = {}, s3 = {};
            float* hh = h + half * H;
            int64_t n = 0;
            for (; n + 4 <= N; n += 4) {
                updateState(hh, n, dAh, dxh, Bt, Ct, s0);
                updateState(hh, n + 1, dAh, dxh, Bt, Ct, s1);
                updateState(hh, n + 2, dAh, dxh, Bt, Ct, s2);
                updateState(hh, n + 3, dAh, dxh, Bt, Ct, s3);
            }
            if (n < N) updateState(hh, n++, dAh, dxh, Bt, Ct, s0);
            if (n < N) updateState(hh, n++, dAh, dxh, Bt, Ct, s1);
            if (n < N) updateState(hh, n++, dAh, dxh, Bt, Ct, s2);
            storeHalf(sum + half * H, (s0 + s1) + (s2 + s3));
        }
        const vf zv = loadPartial(in.z + t * in.ldz + c0, nv);
        storePartial(y + t * ldy + c0, (load(sum) + dl * xv) * vsilu(zv), nv);
    }
}

// Blocks per task: enough tasks to balance the threads, but small chunks
// (decode) stay on one thread, where spawning costs more than it saves.
int64_t grainFor(int64_t blocks, int64_t workPerBlock, int threads) {
    if (threads <= 1 || blocks * workPerBlock < (int64_t(1) << 15)) return blocks;
    return std::max<int64_t>(1, blocks / (4 * threads));
}

}  // namespace

int64_t laneBlocks(int64_t channels) { return (channels + L - 1) / L; }

std::vector<float> packLanes(const float* src, int64_t channels, int64_t width) {
    std::vector<float> out(size_t(laneBlocks(channels) * width * L), 0.0f);
    for (int64_t c = 0; c < channels; ++c)
        for (int64_t i = 0; i < width; ++i) out[size_t(((c / L) * width + i) * L + c % L)] = src[c * width + i];
    return out;
}

std::vector<float> unpackLanes(const float* packed, int64_t channels, int64_t width) {
    std::vector<float> out(size_t(channels * width));
    for (int64_t c = 0; c < channels; ++c)
        for (int64_t i = 0; i < width; ++i) out[size_t(c * width + i)] = packed[((c / L) * width + i) * L + c % L];
    return out;
}

float expApprox(float x) { return vexp(splat(x))[0]; }
float siluApprox(float x) { return vsilu(splat(x))[0]; }
float softplusApprox(float x) { return vsoftplus(splat(x))[0]; }

namespace {

void convChunk(const float* x, int64_t ldx, int64_t T, int64_t channels, int64_t K, const float* w, const float* b,
               float* state, float* out, int64_t ldo, bool silu, ExecContext& ctx) {
    if (T <= 0 || channels <= 0) return;
    const int64_t blocks = laneBlocks(channels);
    ctx.parallelFor(blocks, grainFor(blocks, T * K * L, ctx.threads()), [&](int64_t begin, int64_t end) {
        if (T == 1) {
            for (int64_t blk = begin; blk < end; ++blk)
                convBlockOneToken(x, blk * L, std::min(L, channels - blk * L), K, w + blk * K * L, b,
                                  state + blk * (K - 1) * L, out, silu);
            return;
        }
        std::vector<float> buf(size_t((K - 1 + T) * L));
        for (int64_t blk = begin; blk < end; ++blk) {
            const int64_t c0 = blk * L;
            convBlock(x, ldx, T, c0, std::min(L, channels - c0), K, w + blk * K * L, b, state + blk * (K - 1) * L, out,
                      ldo, buf.data(), silu);
        }
    });
}

}  // namespace

void conv1dSiluOneToken(const float* x, int64_t c0, int64_t c1, int64_t channels, int64_t K, const float* w,
                        const float* b, float* state, float* out) {
    for (int64_t blk = c0 / L; blk * L < std::min(c1, channels); ++blk)
        convBlockOneToken(x, blk * L, std::min(L, channels - blk * L), K, w + blk * K * L, b, state + blk * (K - 1) * L,
                          out, true);
}

void conv1dSilu(const float* x, int64_t ldx, int64_t T, int64_t channels, int64_t K, const float* w, const float* b,
                float* state, float* out, int64_t ldo, ExecContext& ctx) {
    convChunk(x, ldx, T, channels, K, w, b, state, out, ldo, true, ctx);
}

void conv1d(const float* x, int64_t ldx, int64_t T, int64_t channels, int64_t K, const float* w, float* state,
            float* out, int64_t ldo, ExecContext& ctx) {
    convChunk(x, ldx, T, channels, K, w, nullptr, state, out, ldo, false, ctx);
}

namespace {

// A one-token scan reads each block's A and state (2 KiB at d_state 16) once,
// from memory (the weights streamed through the caches since the last token),
// and waited for them: the same blocks took 330-360 ns each there against
// 178 warm (mamba-370m Q8_0 decode). Fetched toward L2 two blocks ahead, they
// meet the loads there. AMD EPYC Zen 4 (family 25 model 17), one process
// alternating, 16 tokens a round, median speed-up of the rounds: mamba-370m
// Q8_0 +1.45 % (33 rounds in fast minutes), +1.4 % (7 in slow), +2.2 %, +1.7 %;
// F16 -0.5 %, +0.3 % (its scan is a smaller share). One block ahead: +0.5 %,
// four: 0.0 %.
constexpr int64_t kScanPrefetchBlocks = 2;

void prefetchToL2(const float* p, int64_t floats) {
    tensor::kernels::prefetchLines<tensor::kernels::PrefetchTo::L2>(reinterpret_cast<const uint8_t*>(p),
                                                                    floats * int64_t(sizeof(float)));
}

// Blocks [blk0, blk1) of the scan, on this thread.
void scanBlocks(const ScanInputs& in, float* h, float* y, int64_t ldy, int64_t blk0, int64_t blk1) {
    const int64_t N = in.stateSize;
    const int64_t blocks = laneBlocks(in.channels);
    for (int64_t blk = blk0; blk < blk1; ++blk) {
        const int64_t c0 = blk * L;
        const int64_t nv = std::min(L, in.channels - c0);
        if (in.tokens == 1 && !in.decayA && blk + kScanPrefetchBlocks < blocks) {
            const int64_t ahead = (blk + kScanPrefetchBlocks) * N * L;
            prefetchToL2(h + ahead, N * L);
            prefetchToL2(in.A + ahead, N * L);
        }
        if (in.decayA) scanBlockPerChannelDecay(in, c0, nv, h + blk * N * L, y, ldy);
        else if (in.tokens == 1) scanBlockOneToken(in, c0, nv, in.A + blk * N * L, h + blk * N * L, y);
        else scanBlock(in, c0, nv, in.A + blk * N * L, h + blk * N * L, y, ldy);
    }
}

}  // namespace

void selectiveScan(const ScanInputs& in, float* h, float* y, int64_t ldy, ExecContext& ctx) {
    if (in.tokens <= 0 || in.channels <= 0) return;
    const int64_t blocks = laneBlocks(in.channels);
    ctx.parallelFor(blocks, grainFor(blocks, in.tokens * in.stateSize * L, ctx.threads()),
                    [&](int64_t begin, int64_t end) { scanBlocks(in, h, y, ldy, begin, end); });
}

void selectiveScanOneToken(const ScanInputs& in, float* h, float* y, int64_t c0, int64_t c1) {
    scanBlocks(in, h, y, in.channels, c0 / L, laneBlocks(std::min(c1, in.channels)));
}

}  // namespace cairn::model::ssm
