// matmul(): argument checks, activation quantization (once per call), and the
// split of output rows between threads. The arithmetic is in kernels_*.cpp.
#include "tensor/matmul.h"

#include "cairn/error.h"
#include "tensor/blocks.h"
#include "tensor/kernels_common.h"
#include "tensor/next_weights.h"
#include "tensor/quant.h"
#include "tensor/row_tiles.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <string>
#include <thread>

namespace cairn::tensor {

using kernels::Activations;
using kernels::QuantInfo;

bool quantizesActivations(TensorType weightType) { return kernels::quantInfo(weightType).blockSize != 0; }

void kernels::quantizeTokenReference(int blockSize, int32_t offset, const float* x, int64_t n, const TokenQ8& out) {
    const int64_t nb = n / blockSize;
    if (blockSize == 32) {
        auto* blk = reinterpret_cast<BlockQ8_0*>(scratch(7, size_t(nb) * sizeof(BlockQ8_0)));
        quantizeRowQ8_0(x, blk, n);
        for (int64_t b = 0; b < nb; ++b) {
            int32_t xs = 0;
            for (int i = 0; i < 32; ++i) {
                out.q[b * 32 + i] = blk[b].qs[i];
                xs += blk[b].qs[i];
            }
            out.d[b] = f16ToF32(blk[b].d);
            out.xoff[b] = offset * xs;
            out.sx[b] = out.d[b] * float(xs);
        }
    } else {
        auto* blk = reinterpret_cast<BlockQ8_K*>(scratch(7, size_t(nb) * sizeof(BlockQ8_K)));
        quantizeRowQ8K(x, blk, n);
        for (int64_t b = 0; b < nb; ++b) {
            for (int i = 0; i < 256; ++i) out.q[b * 256 + i] = blk[b].qs[i];
            out.d[b] = blk[b].d;
            out.xoff[b] = 0;
            out.sx[b] = 0.f;
        }
    }
    for (int64_t j = 0; j < n / 16; ++j) {
        int32_t s = 0;
        for (int i = 0; i < 16; ++i) s += out.q[j * 16 + i];
        out.bsum[j] = int16_t(s);
    }
}

namespace {

void check(const MatrixView& w, const float* x, int64_t ldx, int64_t nTokens, const float* y, int64_t ldy) {
    const std::string where = "matmul";
    if (!kernels::isFloatWeight(w.type) && kernels::quantInfo(w.type).blockSize == 0)
        throw Error(where, "no kernel for weight type " + std::string(tensorTypeName(w.type)));
    const int64_t bs = traits(w.type).blockSize;
    const int64_t align = quantizesActivations(w.type) ? kernels::quantInfo(w.type).blockSize : 1;
    if (w.rows < 0 || w.cols <= 0 || w.cols % std::max(bs, align) != 0)
        throw Error(where,
                    std::to_string(w.cols) + " columns is not a positive multiple of the " +
                        std::string(tensorTypeName(w.type)) + " block size");
    if (!w.data || w.rowStride < rowBytes(w.type, w.cols))
        throw Error(where, "weight view has no data or a row stride shorter than a row");
    if (w.layout == RowLayout::Tiles16 && (!rowTilesFit(w.type, w.cols) || w.rowStride != rowBytes(w.type, w.cols)))
        throw Error(where, "a row-tiled weight whose type or columns have no tiles, or with gaps between rows");
    if (nTokens < 0 || (nTokens > 0 && (!x || !y)) || (nTokens > 1 && ldx < w.cols) || (nTokens > 1 && ldy < w.rows))
        throw Error(where, "activation or output layout does not fit the weight shape");
}

// 8-bit activations, token-major, plus the per-block sums the kernels use,
// in this thread's scratch slot `slot`.
void quantizeActivations(const MatrixView& w, const float* x, int64_t ldx, Activations& a, ExecContext& ctx,
                         const kernels::KernelSet& ks, int slot) {
    const QuantInfo info = kernels::quantInfo(w.type);
    const int64_t n = w.cols, nb = n / info.blockSize, T = a.nTokens;
    a.blockSize = info.blockSize;
    a.nBlocks = nb;
    // One allocation (caller thread's scratch), carved into the arrays.
    const size_t qBytes = size_t(T * n + 63) & ~size_t(63);
    const size_t dBytes = size_t(T * nb * 4 + 63) & ~size_t(63);
    const size_t bsBytes = size_t(T * (n / 16) * 2 + 63) & ~size_t(63);
    uint8_t* base = kernels::scratch(slot, qBytes + 3 * dBytes + bsBytes);
    auto* q = reinterpret_cast<int8_t*>(base);
    auto* d = reinterpret_cast<float*>(base + qBytes);
    auto* xoff = reinterpret_cast<int32_t*>(base + qBytes + dBytes);
    auto* sx = reinterpret_cast<float*>(base + qBytes + 2 * dBytes);
    auto* bsum = reinterpret_cast<int16_t*>(base + qBytes + 3 * dBytes);
    a.q = q;
    a.d = d;
    a.xoff = xoff;
    a.sx = sx;
    a.bsum = bsum;
    const auto token = [&](int64_t t) {
        const kernels::TokenQ8 out{q + t * n, d + t * nb, xoff + t * nb, sx + t * nb, bsum + t * (n / 16)};
        if (info.blockSize == 32 && ks.quantizeToken32) ks.quantizeToken32(x + t * ldx, n, info.offset, out);
        else if (info.blockSize == 256 && ks.quantizeTokenK) ks.quantizeTokenK(x + t * ldx, n, out);
        else kernels::quantizeTokenReference(info.blockSize, info.offset, x + t * ldx, n, out);
    };
    if (T == 1) {  // decode: no loop to set up
        token(0);
        return;
    }
    const int64_t grain = std::max<int64_t>(1, (1 << 16) / n);
    ctx.parallelFor(T, grain, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) token(t);
    });
}

// Rows [r0, r1) (r0 a multiple of 16) of a Tiles16 matrix on a path that
// reads only the file layout: each whole tile unpacked into scratch and
// computed there, the rows past the last whole tile in place. The same bits
// as the path on the file layout, for a copy of 16 rows per tile.
void rowsFromFileLayout(const kernels::KernelSet& ks, const MatrixView& w, int64_t r0, int64_t r1,
                        const kernels::Activations& a, float* y, int64_t ldy) {
    const int64_t wholeTiles = w.rows / kTileRows * kTileRows;
    int64_t r = r0;
    for (; r < std::min(r1, wholeTiles); r += kTileRows) {
        uint8_t* rows = kernels::scratch(kernels::kUnpackedTileSlot, size_t(kTileRows) * w.rowStride);
        unpackRowTile(w.type, w.row(r), w.rowStride, rows);
        MatrixView tile = w;
        tile.data = rows;
        tile.rows = kTileRows;
        tile.layout = RowLayout::File;
        ks.rows(tile, 0, kTileRows, a, y + r, ldy);
    }
    if (r < r1) {
        MatrixView rest = w;
        rest.layout = RowLayout::File;
        ks.rows(rest, r, r1, a, y, ldy);
    }
}

// The tasks of a one-token call, in units of rows. The team gives thread s
// the s-th run of tasks and, once a thread is done with its own run, it
// takes the other runs' tasks from their backs (exec/thread_team.cpp). So
// each thread's share of the rows is cut into seven tasks of an eighth, then
// 1/16, 1/32, ... 1/128 of the share: what is taken from the back is small,
// and the two threads end about 1/128 of a call apart instead of about one
// task. Correctness does not depend on this split, only the balance.
class OneTokenTasks {
public:
    static constexpr int64_t kPerThread = 12;
    OneTokenTasks(int64_t units, int threads) : units_(units), threads_(threads) {}
    int64_t count() const { return kPerThread * threads_; }
    // Units [begin(i), begin(i + 1)) of task i; some are empty on small shares.
    int64_t begin(int64_t i) const {
        if (i >= count()) return units_;
        const int64_t s = i / kPerThread, j = i % kPerThread;
        const int64_t first = units_ * s / threads_, share = units_ * (s + 1) / threads_ - first;
        return j == 0 ? first : first + share * kEnds[j - 1] / 128;
    }

private:
    // Where tasks 0 to 10 of a share end, in 128ths of the share.
    static constexpr int64_t kEnds[kPerThread - 1] = {16, 32, 48, 64, 80, 96, 112, 120, 124, 126, 127};
    int64_t units_;
    int64_t threads_;
};

void matmulWith(const kernels::KernelSet& ks, const MatrixView& w, const float* x, int64_t ldx, int64_t nTokens,
                float* y, int64_t ldy, ExecContext& ctx, const RowsDone* then = nullptr) {
    check(w, x, ldx, nTokens, y, ldy);
    if (nTokens == 0 || w.rows == 0) return;

    // Nesting on this thread (a matmul called from a range of another
    // context loop) takes the next pair of per-call scratch slots.
    thread_local int depth = 0;
    if (depth >= kernels::kMaxMatmulNesting) throw Error("matmul", "nested more than 4 deep on one thread");
    struct Depth {
        int& d;
        explicit Depth(int& v) : d(v) { ++d; }
        ~Depth() { --d; }
    } nest(depth);

    Activations a;
    a.packSlot = kernels::kCallSlots + 2 * (depth - 1) + 1;
    a.weightType = w.type;
    a.rowTiles = w.layout == RowLayout::Tiles16;
    a.cols = w.cols;
    a.nTokens = nTokens;
    a.x = x;
    a.ldx = ldx;
    if (quantizesActivations(w.type)) quantizeActivations(w, x, ldx, a, ctx, ks, a.packSlot - 1);
    if (ks.packPlan) {
        // The GEMM's activation layout, filled in parallel: on one thread it
        // was 1.7 % of a 2048x2048x512 Q4_0 call, twice that with 2 threads.
        const kernels::PackPlan plan = ks.packPlan(a);
        if (plan.groups > 0) {
            uint8_t* buf = kernels::scratch(a.packSlot, size_t(plan.groups) * plan.groupBytes);
            ctx.parallelFor(plan.groups, std::max<int64_t>(1, plan.groups / (2 * ctx.threads())),
                            [&](int64_t g0, int64_t g1) { ks.pack(a, buf, g0, g1); });
            a.packed = buf;
        }
    }

    // Rows are the unit of parallel work (outputs, never a reduction). Tasks
    // are whole tiles of the path (16 rows on AVX-512/AVX2) and of a Tiles16
    // layout, about four per thread so a core shared with another process
    // does not leave the other idle at the end of a call. One token has more
    // and smaller ones (OneTokenTasks), where the last task's wait is a
    // larger part of a short call. Measured in one process alternating every
    // 1000 one-token calls (the host's drift cancels), Intel Xeon family 6
    // model 207, time a call: eight equal tasks a thread against four, llama-1b
    // Q4_0 +1.6 %, +1.0 %, +0.8 %; OneTokenTasks against eight equal, Q4_0
    // +0.5 %, +0.8 %, +1.1 %, Q4_K_M +0.8 %, +0.6 %, Q8_0 +2.1 %, F16 +2.0 %,
    // mamba-370m Q8_0 +0.3 %, +1.2 %, mamba F16 +0.4 % (the same setting
    // against itself: -0.1 %).
    const bool tiled = w.layout == RowLayout::Tiles16;
    const bool unpack = tiled && !(ks.readsRowTiles && ks.readsRowTiles(w.type, nTokens));
    const int64_t pathAlign = tiled ? std::max<int64_t>(ks.rowAlign, kTileRows) : ks.rowAlign;
    const int64_t align = then ? std::lcm(pathAlign, std::max<int64_t>(1, then->rowMultiple)) : pathAlign;
    const int64_t units = (w.rows + align - 1) / align;
    auto runUnitsWith = [&](const Activations& act, int64_t u0, int64_t u1) {
        if (u0 >= u1) return;
        const int64_t r0 = u0 * align, r1 = std::min(w.rows, u1 * align);
        if (unpack) rowsFromFileLayout(ks, w, r0, r1, act, y, ldy);
        else ks.rows(w, r0, r1, act, y, ldy);
        if (then) then->fn(r0, r1);
    };
    auto runUnits = [&](int64_t u0, int64_t u1) { runUnitsWith(a, u0, u1); };
    // One token: the threads prefetch the next matmul's weights when idle
    // (next_weights.h; one thread has no idle thread to do it). Per calling
    // thread, the one that runs a session's steps.
    thread_local NextWeights nextWeights(NextWeights::defaultHeadBytes());
    const bool oneTokenOnTeam = nTokens == 1 && ctx.threads() > 1;
    const NextLoopReads next = oneTokenOnTeam && depth == 1 ? nextWeights.after(w) : NextLoopReads{};
    // Under eight units a thread most of the split's tasks would be empty;
    // the loop below then gives each task one unit.
    if (oneTokenOnTeam && units >= 8 * ctx.threads()) {
        const OneTokenTasks tasks(units, ctx.threads());
        // A worker quantizes the token again, into its own scratch, at its
        // first range, rather than reading the caller's copy: those lines,
        // just written on the caller's core, were fetched from it one by one
        // in the middle of the worker's weight stream, every call. AMD EPYC
        // Zen 4 (family 25 model 17), one process alternating a plain read
        // loop with 16 llama-1b-shaped Q4_0 layers (avx512vnni-hwpf) either
        // way, share of the read loop in the host's fast minutes, shared /
        // own copy: 0.834 / 0.866, 0.803 / 0.821, 0.845 / 0.887, 0.734 /
        // 0.766, 0.801 / 0.829, 0.715 / 0.725, 0.761 / 0.790.
        static std::atomic<uint64_t> calls{0};
        const uint64_t call = calls.fetch_add(1, std::memory_order_relaxed) + 1;
        const std::thread::id caller = std::this_thread::get_id();
        const bool quantized = quantizesActivations(w.type);
        ctx.parallelFor(
            tasks.count(), 1,
            [&](int64_t i0, int64_t i1) {
                const Activations* act = &a;
                if (quantized && std::this_thread::get_id() != caller) {
                    thread_local uint64_t madeFor = 0;
                    thread_local Activations own;
                    if (madeFor != call) {
                        own = a;
                        quantizeActivations(w, x, ldx, own, ctx, ks, kernels::kWorkerActivationsSlot);
                        madeFor = call;
                    }
                    act = &own;
                }
                for (int64_t i = i0; i < i1; ++i) runUnitsWith(*act, tasks.begin(i), tasks.begin(i + 1));
            },
            next);
        return;
    }
    const int64_t perThread = std::max<int64_t>(1, units / (4 * ctx.threads()));
    ctx.parallelFor(units, perThread, runUnits, next);
}

}  // namespace

void matmul(const MatrixView& w, const float* x, int64_t ldx, int64_t nTokens, float* y, int64_t ldy,
            ExecContext& ctx) {
    matmulWith(kernels::activeKernels(w.type, nTokens), w, x, ldx, nTokens, y, ldy, ctx);
}

void matmul(const MatrixView& w, const float* x, int64_t ldx, int64_t nTokens, float* y, int64_t ldy, ExecContext& ctx,
            const RowsDone& then) {
    matmulWith(kernels::activeKernels(w.type, nTokens), w, x, ldx, nTokens, y, ldy, ctx, &then);
}

void matmulOnPath(std::string_view path, const MatrixView& w, const float* x, int64_t ldx, int64_t nTokens, float* y,
                  int64_t ldy, ExecContext& ctx) {
    const kernels::KernelSet* ks = kernels::kernelsNamed(path);
    if (!ks) throw Error("matmul", "kernel path \"" + std::string(path.substr(0, 40)) + "\" is not supported here");
    matmulWith(*ks, w, x, ldx, nTokens, y, ldy, ctx);
}

}  // namespace cairn::tensor
