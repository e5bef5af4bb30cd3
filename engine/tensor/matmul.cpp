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
#include <span>
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

// One matrix of a call: its output and how its rows are cut into units of
// work (whole tiles of the path and of a Tiles16 layout, and whole multiples
// of the epilogue's rows).
struct CallPart {
    const MatrixView* w = nullptr;
    float* y = nullptr;
    int64_t ldy = 0;
    const RowsDone* then = nullptr;
    bool unpack = false;  // Tiles16 rows on a path that reads the file layout
    int64_t align = 1;  // rows in a unit
    int64_t units = 0;
};

CallPart callPart(const kernels::KernelSet& ks, const MatrixView& w, float* y, int64_t ldy, int64_t nTokens,
                  const RowsDone* then) {
    CallPart p;
    p.w = &w;
    p.y = y;
    p.ldy = ldy;
    p.then = then;
    const bool tiled = w.layout == RowLayout::Tiles16;
    p.unpack = tiled && !(ks.readsRowTiles && ks.readsRowTiles(w.type, nTokens));
    const int64_t pathAlign = tiled ? std::max<int64_t>(ks.rowAlign, kTileRows) : ks.rowAlign;
    p.align = then ? std::lcm(pathAlign, std::max<int64_t>(1, then->rowMultiple)) : pathAlign;
    p.units = (w.rows + p.align - 1) / p.align;
    return p;
}

// Units [u0, u1) of a part, then its epilogue on them.
void runPartUnits(const kernels::KernelSet& ks, const CallPart& p, const Activations& a, int64_t u0, int64_t u1) {
    if (u0 >= u1) return;
    const MatrixView& w = *p.w;
    const int64_t r0 = u0 * p.align, r1 = std::min(w.rows, u1 * p.align);
    if (p.unpack) rowsFromFileLayout(ks, w, r0, r1, a, p.y, p.ldy);
    else ks.rows(w, r0, r1, a, p.y, p.ldy);
    if (p.then) p.then->fn(r0, r1);
}

// Units [u0, u1) of parts numbered one after the other.
void runUnitsOfParts(const kernels::KernelSet& ks, std::span<const CallPart> parts, const Activations& a, int64_t u0,
                     int64_t u1) {
    int64_t first = 0;
    for (const CallPart& p : parts) {
        const int64_t lo = std::max(u0, first), hi = std::min(u1, first + p.units);
        if (lo < hi) runPartUnits(ks, p, a, lo - first, hi - first);
        first += p.units;
    }
}

// The activations of a call (quantized, or packed for the path's GEMM) in
// this thread's scratch slots for nesting level `depth`. Without
// `quantizeHere` a one-token call on the team (oneTokenOnTeam) leaves the
// quantizing to each of its threads; one token is never packed.
Activations callActivations(const kernels::KernelSet& ks, const MatrixView& w, const float* x, int64_t ldx,
                            int64_t nTokens, ExecContext& ctx, int depth, bool quantizeHere) {
    Activations a;
    a.packSlot = kernels::kCallSlots + 2 * (depth - 1) + 1;
    a.weightType = w.type;
    a.rowTiles = w.layout == RowLayout::Tiles16;
    a.cols = w.cols;
    a.nTokens = nTokens;
    a.x = x;
    a.ldx = ldx;
    if (!quantizeHere) return a;
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
    return a;
}

// Nesting on this thread (a matmul called from a range of another context
// loop) takes the next pair of per-call scratch slots.
struct MatmulDepth {
    static int& level() {
        thread_local int depth = 0;
        return depth;
    }
    MatmulDepth() {
        if (level() >= kernels::kMaxMatmulNesting) throw Error("matmul", "nested more than 4 deep on one thread");
        ++level();
    }
    ~MatmulDepth() { --level(); }
    MatmulDepth(const MatmulDepth&) = delete;
    MatmulDepth& operator=(const MatmulDepth&) = delete;
};

// One token, on the thread team: the units of all parts (the same weight
// type, columns and layout, so one set of activations) in OneTokenTasks,
// numbered across the parts in order. The threads prefetch `next` when idle.
void oneTokenOnTeam(const kernels::KernelSet& ks, std::span<const CallPart> parts, const Activations& a, const float* x,
                    int64_t ldx, ExecContext& ctx, const NextLoopReads& next) {
    int64_t units = 0;
    for (const CallPart& p : parts) units += p.units;
    const OneTokenTasks tasks(units, ctx.threads());
    const MatrixView& w = *parts.front().w;
    // Each thread quantizes the token into its own scratch at its first
    // range. A worker then does not read the caller's copy: those lines,
    // just written on the caller's core, were fetched from it one by one
    // in the middle of the worker's weight stream, every call. AMD EPYC
    // Zen 4 (family 25 model 17), one process alternating a plain read
    // loop with 16 llama-1b-shaped Q4_0 layers (avx512vnni-hwpf) either
    // way, share of the read loop in the host's fast minutes, shared /
    // own copy: 0.834 / 0.866, 0.803 / 0.821, 0.845 / 0.887, 0.734 /
    // 0.766, 0.801 / 0.829, 0.715 / 0.725, 0.761 / 0.790.
    // And the caller quantizes after it has published the loop, at the same
    // time as the workers, instead of before while they wait (about 1 us a
    // call at 2048 columns, 3 at 8192). Same machine, one process decoding
    // 16 tokens from an empty context each way in turn, 60-100 rounds,
    // median of the rounds' speed-ups in the host's fast minutes:
    // mamba-370m Q8_0 +1.5 %, llama-1b Q4_0 +0.2 %, +1.1 %.
    static std::atomic<uint64_t> calls{0};
    const uint64_t call = calls.fetch_add(1, std::memory_order_relaxed) + 1;
    const std::thread::id caller = std::this_thread::get_id();
    const bool quantized = quantizesActivations(w.type);
    Activations callerCopy = a;
    bool callerMade = false;
    ctx.parallelFor(
        tasks.count(), 1,
        [&](int64_t i0, int64_t i1) {
            const Activations* act = &a;
            if (quantized && std::this_thread::get_id() == caller) {
                if (!callerMade) {
                    quantizeActivations(w, x, ldx, callerCopy, ctx, ks, a.packSlot - 1);
                    callerMade = true;
                }
                act = &callerCopy;
            } else if (quantized) {
                thread_local uint64_t madeFor = 0;
                thread_local Activations own;
                if (madeFor != call) {
                    own = a;
                    quantizeActivations(w, x, ldx, own, ctx, ks, kernels::kWorkerActivationsSlot);
                    madeFor = call;
                }
                act = &own;
            }
            for (int64_t i = i0; i < i1; ++i) runUnitsOfParts(ks, parts, *act, tasks.begin(i), tasks.begin(i + 1));
        },
        next);
}

// The weights each thread prefetches when idle in a one-token call on the
// team: those the next call read the last time (next_weights.h). Per calling
// thread, the one that runs a session's steps.
NextLoopReads nextWeightsAfter(const MatrixView& w) {
    thread_local NextWeights nextWeights(NextWeights::defaultHeadBytes());
    return nextWeights.after(w);
}

// One call over `parts` (checked already; more than one only when they share
// the type, columns and layout, so one set of activations serves them all),
// their units numbered one after another.
void runCall(const kernels::KernelSet& ks, std::span<const CallPart> parts, const float* x, int64_t ldx,
             int64_t nTokens, ExecContext& ctx) {
    int64_t units = 0;
    for (const CallPart& p : parts) units += p.units;
    if (nTokens == 0 || units == 0) return;
    const MatmulDepth nest;
    const MatrixView& w = *parts.front().w;
    const bool oneTokenWithTeam = nTokens == 1 && ctx.threads() > 1;
    const bool onTeamSplit = oneTokenWithTeam && units >= 8 * ctx.threads();
    const Activations a = callActivations(ks, w, x, ldx, nTokens, ctx, MatmulDepth::level(), !onTeamSplit);

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
    // One token: the threads prefetch the next matmul's weights when idle
    // (one thread has no idle thread to do it); the hint is what followed the
    // last matrix (next_weights.h learns the order of the matrices one by one).
    NextLoopReads next;
    if (oneTokenWithTeam && MatmulDepth::level() == 1)
        for (const CallPart& p : parts) next = nextWeightsAfter(*p.w);
    // Under eight units a thread most of the split's tasks would be empty;
    // the loop below then gives each task one unit.
    if (onTeamSplit) {
        oneTokenOnTeam(ks, parts, a, x, ldx, ctx, next);
        return;
    }
    const int64_t perThread = std::max<int64_t>(1, units / (4 * ctx.threads()));
    ctx.parallelFor(
        units, perThread, [&](int64_t u0, int64_t u1) { runUnitsOfParts(ks, parts, a, u0, u1); }, next);
}

void matmulWith(const kernels::KernelSet& ks, const MatrixView& w, const float* x, int64_t ldx, int64_t nTokens,
                float* y, int64_t ldy, ExecContext& ctx, const RowsDone* then = nullptr) {
    check(w, x, ldx, nTokens, y, ldy);
    const CallPart part = callPart(ks, w, y, ldy, nTokens, then);
    runCall(ks, std::span<const CallPart>(&part, 1), x, ldx, nTokens, ctx);
}

// Whether two matrices can share one call's activations and kernels.
bool sameCall(const kernels::KernelSet& ks, const MatrixView& a, const MatrixView& b) {
    return a.type == b.type && a.cols == b.cols && a.layout == b.layout && &kernels::activeKernels(b.type, 1) == &ks;
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

void matmulSameInput(std::span<const MatmulOutput> outputs, const float* x, int64_t ldx, int64_t nTokens,
                     ExecContext& ctx) {
    if (nTokens != 1 || ctx.threads() == 1) {
        for (const MatmulOutput& o : outputs) matmul(o.w, x, ldx, nTokens, o.y, o.ldy, ctx);
        return;
    }
    for (size_t i = 0; i < outputs.size();) {
        const kernels::KernelSet& ks = kernels::activeKernels(outputs[i].w.type, 1);
        size_t j = i + 1;
        while (j < outputs.size() && sameCall(ks, outputs[i].w, outputs[j].w)) ++j;
        std::vector<CallPart> parts;
        for (; i < j; ++i) {
            check(outputs[i].w, x, ldx, 1, outputs[i].y, outputs[i].ldy);
            parts.push_back(callPart(ks, outputs[i].w, outputs[i].y, outputs[i].ldy, 1, nullptr));
        }
        runCall(ks, parts, x, ldx, 1, ctx);
    }
}

void matmulOnPath(std::string_view path, const MatrixView& w, const float* x, int64_t ldx, int64_t nTokens, float* y,
                  int64_t ldy, ExecContext& ctx) {
    const kernels::KernelSet* ks = kernels::kernelsNamed(path);
    if (!ks) throw Error("matmul", "kernel path \"" + std::string(path.substr(0, 40)) + "\" is not supported here");
    matmulWith(*ks, w, x, ldx, nTokens, y, ldy, ctx);
}

}  // namespace cairn::tensor
