// Internal interface between matmul() and the per-ISA kernel files.
//
// The canonical arithmetic (identical on every path, so every path gives the
// same bits and the tests can compare paths bit for bit):
//
// Quantized weights, 8-bit activations. A weight block is read as unsigned
// codes u with a per-type offset o: w = d * s_j * (u - o) [- dmin * mn_j].
//   32-element formats (activations in Q8_0 blocks: dx, qx, xs = sum qx):
//     isum = sum u*qx - o*xs                               (exact int32)
//     acc  = fma((float)isum, d*dx, acc)
//     acc  = fma(m, sx, acc)             Q4_1/Q5_1 only, sx = dx * (float)xs
//   K formats (activations in Q8_K blocks: dx, qx, bsum_j = sum of 16 qx):
//     isum = sum_j s_j * (sum_{i in j} u*qx - o*bsum_j)    (exact int32)
//     msum = sum_j mn_j * bsum_j                           (exact int32)
//     acc  = fma((float)isum, d*dx, acc)
//     acc  = fma((float)msum, -(dmin*dx), acc)             formats with mins
//   blocks in order, one f32 accumulator per output. The integer parts are
//   exact, so SIMD code may compute them in any order; the float chain is a
//   per-output sequence, which SIMD code vectorizes across outputs (rows or
//   tokens), never across blocks of one output.
// Float weights (F32/F16/BF16), f32 activations: 16 lanes, element k goes to
//   lane k % 16 with acc[l] = fma(w_k, x_k, acc[l]) in k order, then the fixed
//   tree reduce16() below (8+8, 4+4, 2+2, 1+1).
#pragma once

#include "tensor/blocks.h"
#include "tensor/matmul.h"
#include "tensor/row_tiles.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace cairn::tensor::kernels {

// First scratch slot of the per-call buffers (see scratch() below).
constexpr int kCallSlots = 8;
constexpr int kUnpackedTileSlot = 4;
constexpr int kMaxMatmulNesting = 4;
// Where a team's worker keeps its own copy of a one-token matmul's quantized
// activations (matmul.cpp): only a worker running ranges of another thread's
// call uses it, and a worker runs one call's ranges at a time.
constexpr int kWorkerActivationsSlot = kCallSlots + 2 * kMaxMatmulNesting;

// The tiles of the Tiles16 row layout (tensor/row_tiles.h) for Q4_0 and Q8_0,
// per block column: the 16 rows' d (fp16, row order), then the codes in
// 64-byte chunks, chunk j holding code bytes 4j..4j+3 of row i at 4i. Each
// row has its own int32 lane: a dpbusd against 4 activation bytes broadcast
// to every lane sums the 16 rows side by side, and a block's sums need no
// reduction across lanes.
constexpr size_t kQ4_0TileBlock = 16 * sizeof(BlockQ4_0);  // d, then 4 chunks
constexpr size_t kQ8_0TileBlock = 16 * sizeof(BlockQ8_0);  // d, then 8 chunks
// Word `word` of row `row` among a block column's 64-byte chunks of 16 row lanes.
constexpr size_t tileWordAt(int row, int word) { return 64 * size_t(word) + 4 * size_t(row); }
// Q4_0 and Q8_0: the chunks follow the 16 rows' d (32 bytes).
constexpr size_t tileCodeWordAt(int row, int chunk) { return 32 + tileWordAt(row, chunk); }
// Q8_0's codes are stored as the unsigned codes dpbusd multiplies (q + 128, q ^ 0x80).
constexpr uint8_t kQ8_0TileCodeFlip = 0x80;
// Q4_K's tile is its 16 rows' super-blocks word by word: dword k (bytes
// 4k..4k+3 of the 144-byte block) of row i at 64k + 4i. So word 0 is the
// rows' d | dmin << 16, words 1-3 their 12 scale bytes and words 4-35 their
// codes, each row in its own int32 lane, as in the Q4_0 tile.
constexpr size_t kQ4_KTileBlock = 16 * sizeof(BlockQ4_K);
// Q6_K's 210-byte super-block is 52 whole words and its d: the tile holds
// words 0-51 the same way (ql: words 0-31, qh: 32-47, the 16 int8 scales:
// 48-51), then the 16 rows' d (fp16, row order) at kQ6_KTileD. The words
// are stored in the order the decode tiles read them (q6kTileSlot), so a
// tile is one stream front to back.
constexpr size_t kQ6_KTileBlock = 16 * sizeof(BlockQ6_K);
constexpr int kQ6_KTileWords = int(sizeof(BlockQ6_K) / 4);
constexpr size_t kQ6_KTileD = tileWordAt(0, kQ6_KTileWords);
// Where Q6_K's word `word` is stored among a block column's 52: per half n
// of the block, for each chunk c its ql words 16n + c and 16n + 8 + c and
// its qh word 32 + 8n + c, then the half's scale words 48 + 2n, 49 + 2n.
// The file's order reads three runs of words side by side, which the
// hardware prefetchers do not follow: on an AMD EPYC Zen 4 (family 25 model
// 17) a replica of the tile kernel alternating with a plain 2-thread read
// loop (medians of 1500 and 400 alternations, 2048 and 8192 x 2048, host
// fast) streamed at 0.31-0.32 of the read loop without prefetch and
// 0.71-0.73 with the kernels' prefetch in the file's order; in this order
// 0.99-1.03 without prefetch.
constexpr int q6kTileSlot(int word) {
    return word < 32 ? 26 * (word / 16) + 3 * (word % 8) + (word % 16) / 8
        : word < 48  ? 26 * ((word - 32) / 8) + 3 * ((word - 32) % 8) + 2
                     : 26 * ((word - 48) / 2) + 24 + (word - 48) % 2;
}
constexpr size_t q6kTileWordAt(int row, int word) { return tileWordAt(row, q6kTileSlot(word)); }
constexpr bool q6kTileSlotsAreAPermutation() {
    bool taken[kQ6_KTileWords] = {};
    for (int k = 0; k < kQ6_KTileWords; ++k) {
        const int s = q6kTileSlot(k);
        if (s < 0 || s >= kQ6_KTileWords || taken[s]) return false;
        taken[s] = true;
    }
    return true;
}
static_assert(q6kTileSlotsAreAPermutation());
// The slot of word `word` in a word tile (Q4_K: the file's order; Q6_K:
// q6kTileSlot).
constexpr int wordTileSlot(bool q6, int word) { return q6 ? q6kTileSlot(word) : word; }
// Float weights (F32, F16, BF16) in Tiles16: a tile is 8 pairs of rows, and
// a pair's two rows are interleaved in chunks of 16 elements (one lane
// each), chunk c of the pair's row i (0, 1) at element 32c + 16i from the
// pair's start. So a decode kernel reads two rows as one stream.
constexpr int64_t kFloatTileChunk = 16;
inline bool isFloatWeight(TensorType t) {
    return t == TensorType::F32 || t == TensorType::F16 || t == TensorType::BF16;
}
inline int64_t floatElementBytes(TensorType t) { return t == TensorType::F32 ? 4 : 2; }
// Where a kernel reads row r of a float matrix in either layout: its
// elements k to k + 7 (or k + 15; k a multiple of 8) at start + at(k)
// elements. Rows past a Tiles16 matrix's last whole tile are file rows.
struct FloatRow {
    const uint8_t* start = nullptr;
    bool paired = false;
    int64_t at(int64_t k) const { return paired ? k + (k & ~(kFloatTileChunk - 1)) : k; }
};
inline FloatRow floatRow(const MatrixView& w, int64_t r) {
    if (w.layout != RowLayout::Tiles16 || r >= w.rows / kTileRows * kTileRows) return {w.row(r), false};
    return {w.row(r & ~int64_t(1)) + (r & 1) * kFloatTileChunk * floatElementBytes(w.type), true};
}

// Per-type facts for the integer dot products.
struct QuantInfo {
    int blockSize;  // 32 or 256 (0: float type)
    int offset;  // o above
    bool hasMin;  // Q4_1, Q5_1, Q2_K, Q4_K, Q5_K
};
QuantInfo quantInfo(TensorType type);

// Activations prepared once per matmul call (by matmul.cpp, in the baseline TU).
struct Activations {
    TensorType weightType = TensorType::F32;
    bool rowTiles = false;  // the weight is stored in the Tiles16 layout
    int64_t cols = 0;
    int64_t nTokens = 0;
    // Float weights: the caller's activations.
    const float* x = nullptr;
    int64_t ldx = 0;
    // Quantized weights: 8-bit activations, token-major.
    int blockSize = 0;  // 32 (Q8_0 blocks) or 256 (Q8_K blocks)
    int64_t nBlocks = 0;  // blocks per token
    const int8_t* q = nullptr;  // [t][cols]
    const float* d = nullptr;  // [t][nBlocks]  block scale dx
    const int16_t* bsum = nullptr;  // [t][cols/16] sums of 16 codes
    const int32_t* xoff = nullptr;  // [t][nBlocks] o * xs (32-formats) — offset term
    const float* sx = nullptr;  // [t][nBlocks] dx * (float)xs (32-formats)
    // Optional GEMM layout filled by the path's pack(), in scratch
    // slot packSlot of the calling thread.
    const uint8_t* packed = nullptr;
    int packSlot = kCallSlots + 1;
};

// One weight block decoded for the integer dot (scalar code, shared by paths).
// 32-formats: u[32], d, m. K formats: u[256], s[16], mn[16], d, dmin.
struct Decoded32 {
    uint8_t u[32];
    float d;
    float m;
};
struct DecodedK {
    uint8_t u[256];
    int16_t s[16];
    int16_t mn[16];
    float d;
    float dmin;
};
void decodeBlock32(TensorType type, const uint8_t* block, Decoded32& out);
void decodeBlockK(TensorType type, const uint8_t* block, DecodedK& out);
// `n` elements of a float-format row (F32/F16/BF16) to f32.
void decodeFloatRow(TensorType type, const uint8_t* row, float* out, int64_t n);

// Thread-local scratch memory, 64-byte aligned, valid until the next call with
// the same slot on this thread. Lives in a baseline TU (no ISA-specific STL code).
// Slots 0-3: kernels, 4: a Tiles16 tile unpacked for a path that reads only
// the file layout (matmul.cpp), 7: per-token temporaries — held only by code that never
// waits for other tasks, so no other task can run on the thread meanwhile.
// Slots from kCallSlots on: the per-call activations, held across the
// parallelFor wait (a thread may run another matmul's task while it waits), so
// matmul takes two per nesting level on its thread; then kWorkerActivationsSlot.
uint8_t* scratch(int slot, size_t bytes);

// The fixed reduction of the 16 float lanes.
static inline float reduce16(const float* a) {
    float s8[8], s4[4];
    for (int i = 0; i < 8; ++i) s8[i] = a[i] + a[i + 8];
    for (int i = 0; i < 4; ++i) s4[i] = s8[i] + s8[i + 4];
    float s2a = s4[0] + s4[2], s2b = s4[1] + s4[3];
    return s2a + s2b;
}

// The cache level a decode kernel's software prefetch fills: the locality
// hint of __builtin_prefetch. A prefetch to L1 holds one of the core's few L1
// fill buffers until its line arrives from memory; one to L2 only holds an L2
// miss slot, of which there are more, so more lines are in flight at once.
// Which is faster is the CPU's (on Zen 3 and older both fill L1; Zen 4 and
// later, like Intel, take the hint), so the AVX-512 decode kernels come in
// both and the calibration picks by measurement ("avx512vnni-l2pf", dispatch).
// Intel Xeon (family 6 model 207), `cairn-cli bench-kernels --types T --rows
// 8192 --cols 2048 -p 16 -t 2 -r 7`, 4 interleaved rounds, median GB/s, L1 /
// L2: Q4_0 22.6 / 27.9, Q8_0 28.7 / 33.0, Q4_K 23.5 / 28.9, Q6_K 27.6 / 28.1,
// F16 33.3 / 33.1 (plain 2-thread read loop 33-34).
enum class PrefetchTo { L1 = 3, L2 = 2 };

template <PrefetchTo To = PrefetchTo::L1>
static inline void prefetchLine(const void* p) {
    __builtin_prefetch(p, 0, int(To));
}

// Software prefetch for the matvec (decode), which streams every weight byte
// once per token (prefetcht0 on x86-64, PRFM PLDL1KEEP on aarch64). The
// AVX-512 16-row kernels read a tile of 16 consecutive rows (one
// contiguous range of memory) block by block across the rows; the hardware
// prefetchers alone left the core waiting on memory, so the kernels fetch the
// tile bytes in address order, kPrefetchAhead bytes ahead of where they are in
// the tile: step i of n covers bytes [i * tile / n, (i + 1) * tile / n) of the
// range ahead. Measured Q4_0 4096x2048 from memory, 1 thread, GB/s per
// CPU-second: none 8.5, 4 KiB ahead 10.3, 8 KiB 10.9, 18 KiB 12.4, 36 KiB 11.2,
// 64 KiB 10.6 (prefetcht1 at 8 KiB 10.5, prefetchnta 9.5). 18 KiB is one
// 2048-column Q4_0 tile; the AVX-512 Q8_0 tile prefetches one tile ahead
// instead (matvec16Q8_0, measured there).
constexpr int64_t kPrefetchAhead = 18432;
static_assert(kPrefetchAhead % 64 == 0);

// Prefetches the cache lines that start in [from, from + n) (the line holding
// `from` belongs to the previous step). A prefetch never faults, so reading
// past the end of the matrix is harmless.
// `To` is where the lines go: L1 (prefetcht0) or L2 only (prefetcht1), see
// PrefetchTo.
template <PrefetchTo To = PrefetchTo::L1>
static inline void prefetchLines(const uint8_t* from, int64_t n) {
    const auto start = (reinterpret_cast<uintptr_t>(from) + 63) & ~uintptr_t(63);
    const auto end = reinterpret_cast<uintptr_t>(from) + uintptr_t(n);
    for (uintptr_t l = start; l < end; l += 64) prefetchLine<To>(reinterpret_cast<const void*>(l));
}

// A decode tile reads the token's activations (the 8-bit codes and each
// block's scale and offset, a few KiB) once per tile, block by block, while
// the tile's weights stream through L1. With wide rows that is most of a
// tile between two reads of one activation line, and the hardware-fetched
// tiles (TileFetch::Hardware) then streamed slower: from a tile of more than
// kActivationPrefetchTileBytes, their kernels prefetch the activation lines
// a few blocks ahead (prefetchActivationBlock). AMD EPYC Zen 4 (family 25
// model 17), an engine-linked program alternating each pass over 12-16
// matrices of one shape (avx512vnni-hwpf, 2 threads) with a plain 2-thread
// read loop, share of the read loop in the host's fast minutes, without /
// with: Q4_0 2048x8192 (72 KiB tiles, llama-1b's down projections) 0.804 /
// 0.926, 0.812 / 0.887, 0.834 / 0.913; 1024x16384 0.749 / 0.811, 0.758 /
// 0.835; 4096x4096 0.914 / 0.934, 0.944 / 0.927; 2048x3072 0.968 / 0.940;
// Q8_0 2048x8192 1.003 / 1.016, 8192x2048 (34 KiB tiles) 1.009 / 0.985;
// Q4_K 2048x8192, host slow, 0.947 / 0.984, 1.031 / 1.058. Tried and not
// kept: the same on the software-prefetching paths (avx512vnni Q4_0 +4.6 %,
// Q4_K -2.0 %; -l2pf within 0.5 %) and the AVX2 tiles (Q4_0 -0.8 %, Q4_K
// +1.4 %, Q8_0 -5.5 %).
constexpr int64_t kActivationPrefetchTileBytes = 65536;
inline bool prefetchesActivations(int64_t tileBytes) { return tileBytes > kActivationPrefetchTileBytes; }

// Prefetches into L1 the lines of block b + ahead of an activation array
// (perBlock elements a block) that start in it: a line every 64 bytes of the
// array, each once. 8 blocks of a 32-element format (256 code bytes) or one
// super-block of a K format: 2-5 KiB of the tile's weights ahead.
template <class T>
static inline void prefetchActivationBlock(const T* array, int64_t perBlock, int64_t b, int64_t ahead) {
    prefetchLines(reinterpret_cast<const uint8_t*>(array + (b + ahead) * perBlock), perBlock * int64_t(sizeof(T)));
}

// For a decode tile that reads `tileRows` consecutive rows and prefetches each
// row as its own stream: the offset from a row's start `ahead` bytes along
// that stream, which past the row's end (`rowBytes`) goes on in the same row
// of the next tile, `tileRows` rows on. It wraps once: `ahead` of two rows or
// more lands in a later row of the next tile (see kKRowPrefetch, which was
// measured as it is).
static inline int64_t rowStreamOffset(int64_t ahead, int64_t rowBytes, int64_t tileRows) {
    return ahead < rowBytes ? ahead : ahead + (tileRows - 1) * rowBytes;
}

// The first kPrefetchAhead bytes of rows [r0, r1), which the per-step
// prefetch above (always kPrefetchAhead ahead) never covers: issued at the
// start of a decode task so its first tiles do not wait on memory either.
// A task is an eighth of a matrix's rows on 2 threads, so for llama-1b's k/v
// projections (512 x 2048 Q4_0, 73 KiB a task) that is a quarter of its bytes.
// Measured on an AMD EPYC (Zen 3 class), `cairn-cli bench-kernels --types
// Q4_0 --rows 512 --cols 2048 -p 4 -t 2 -r 9`, 3 interleaved runs: decode
// 8.3-10.7 -> 10.4-11.4 GB/s; Q6_K, Q8_0, F16 unchanged within the noise.
static inline void prefetchRowsStart(const MatrixView& w, int64_t r0, int64_t r1) {
    const int64_t bytes = (r1 - r0) * int64_t(w.rowStride);
    prefetchLines(w.row(r0), bytes < kPrefetchAhead ? bytes : kPrefetchAhead);
}

// fn(rows, n, r) for each tile of R rows of [r0, r1): rows[i] is row r + i,
// the last real row repeated in a partial tile (n real rows). Header-only and
// ISA-neutral: each kernel file instantiates its own copy.
template <int R, class Fn>
static inline void forEachRowTile(const MatrixView& w, int64_t r0, int64_t r1, Fn&& fn) {
    for (int64_t r = r0; r < r1; r += R) {
        const int n = int(r1 - r < R ? r1 - r : R);
        const uint8_t* rows[R];
        for (int i = 0; i < R; ++i) rows[i] = w.row(r + (i < n ? i : n - 1));
        fn(rows, n, r);
    }
}

// fn(type, pair, r) for each pair of rows (r, r + 1) in the whole tiles among
// rows [r0, r1) (r0 a multiple of 16) of a float Tiles16 matrix, `type` a
// std::integral_constant of the weight type (each kernel file instantiates
// its pair kernel per type); returns where the file rows after them start.
template <class Fn>
static inline int64_t forEachFloatTilePair(const MatrixView& w, int64_t r0, int64_t r1, Fn&& fn) {
    const int64_t end = r1 < w.rows / kTileRows * kTileRows ? r1 : w.rows / kTileRows * kTileRows;
    for (int64_t r = r0; r < end; r += 2) switch (w.type) {
        case TensorType::F16: fn(std::integral_constant<TensorType, TensorType::F16>{}, w.row(r), r); break;
        case TensorType::BF16: fn(std::integral_constant<TensorType, TensorType::BF16>{}, w.row(r), r); break;
        default: fn(std::integral_constant<TensorType, TensorType::F32>{}, w.row(r), r); break;
        }
    return end > r0 ? end : r0;
}

// f(lo, hi, t) for the first T pairs (lo, hi) of the arguments, t = 0, 1, ...
// The float lane tiles keep their accumulators as named variables (GCC 12
// keeps an array of them mirrored on the stack) and step through them with
// this. Header-only and ISA-neutral, like forEachRowTile.
template <int T, int I = 0, class F, class V, class... Rest>
[[gnu::always_inline]] static inline void forEachPair(F& f, V& lo, V& hi, Rest&... rest) {
    if constexpr (I < T) {
        f(lo, hi, I);
        if constexpr (sizeof...(Rest) > 0) forEachPair<T, I + 1>(f, rest...);
    }
}

// f(v, i) for the first N of the arguments, i = 0, 1, ...: the same for
// accumulators that are not pairs (the attention kernels' weighted sums).
template <int N, int I = 0, class F, class V, class... Rest>
[[gnu::always_inline]] static inline void forEachNamed(F& f, V& v, Rest&... rest) {
    if constexpr (I < N) {
        f(v, I);
        if constexpr (sizeof...(Rest) > 0) forEachNamed<N, I + 1>(f, rest...);
    }
}

struct PackPlan {
    int64_t groups = 0;
    size_t groupBytes = 0;
};

// One token's 8-bit activations where matmul keeps them (Activations' arrays
// at that token): q[cols]; per block d (dx), xoff (o · xs) and sx (dx · xs),
// xs the sum of the block's codes (both 0 for Q8_K blocks); bsum per 16 codes.
struct TokenQ8 {
    int8_t* q;
    float* d;
    int32_t* xoff;
    float* sx;
    int16_t* bsum;
};

// The helpers below are header-only and `static`, like forEachRowTile: each
// kernel file compiles its own copy with its own instructions, so a copy
// built for AVX-512 can never be the one the linker hands an AVX2 caller.

// Q8_0 block b's values besides its codes, from the sums of its two halves.
static inline void storeBlock32(const TokenQ8& out, int64_t b, int32_t sum0, int32_t sum1, float d, int32_t offset) {
    out.bsum[2 * b] = int16_t(sum0);
    out.bsum[2 * b + 1] = int16_t(sum1);
    out.d[b] = d;
    out.xoff[b] = offset * (sum0 + sum1);
    out.sx[b] = d * float(sum0 + sum1);
}
// Q8_K block b's scale (it has no offset terms).
static inline void storeBlockK(const TokenQ8& out, int64_t b, float d) {
    out.d[b] = d;
    out.xoff[b] = 0;
    out.sx[b] = 0.f;
}
// An all-zero input block: zero codes, sums and scale, as the reference.
static inline void storeZeroBlockK(const TokenQ8& out, int64_t b) {
    std::memset(out.q + 256 * b, 0, 256);
    std::memset(out.bsum + 16 * b, 0, 16 * sizeof(int16_t));
    storeBlockK(out, b, 0.f);
}

// What the Q4_K and Q6_K tiles take of a Q8_K token's 16-element sums
// (`bsum`, 16 a block), for its `nb` blocks. Q4_K: per block, 4 words of
// (sum of sub-block 2p, sum of 2p + 1) as two int16.
static inline void q4kSubBlockPairSums(const int16_t* bsum, int64_t nb, int32_t* out) {
    for (int64_t j = 0; j < 4 * nb; ++j) {
        const int32_t lo = bsum[4 * j] + bsum[4 * j + 1], hi = bsum[4 * j + 2] + bsum[4 * j + 3];
        out[j] = int32_t(uint32_t(uint16_t(lo)) | uint32_t(uint16_t(hi)) << 16);
    }
}
// Q6_K: per block, 32 * bsum_j of its 16 sub-blocks (its codes are stored + 32).
static inline void q6kCodeOffsets(const int16_t* bsum, int64_t nb, int32_t* out) {
    for (int64_t j = 0; j < 16 * nb; ++j) out[j] = 32 * bsum[j];
}

// The reference: what matmul writes for one token of `n` activations when
// the path has no token quantizer of its own, quantizeRowQ8_0 /
// quantizeRowQ8K (blockSize 32 / 256) unpacked into `out`.
void quantizeTokenReference(int blockSize, int32_t offset, const float* x, int64_t n, const TokenQ8& out);

// A kernel path: computes y[t][r] for rows [r0, r1) and every token.
struct KernelSet {
    const char* name;
    // Optional GEMM layout of the activations (null: none): packPlan says how
    // many token groups of groupBytes the call needs (0: this call runs the
    // matvec), pack fills groups [g0, g1) of the buffer — matmul.cpp runs it
    // in parallel and stores the buffer in Activations::packed.
    PackPlan (*packPlan)(const Activations& a);
    void (*pack)(const Activations& a, uint8_t* out, int64_t g0, int64_t g1);
    void (*rows)(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy);
    // Rows per task that keeps this path's tiles whole.
    int64_t rowAlign;
    // Whether rows() reads a RowLayout::Tiles16 matrix of this type for this
    // many tokens itself (null: never). Otherwise matmul unpacks each tile to
    // the file layout in scratch slot kUnpackedTileSlot first.
    bool (*readsRowTiles)(TensorType type, int64_t nTokens) = nullptr;
    // One token's activations written straight into matmul's arrays, the
    // bytes quantizeTokenReference writes (null: matmul calls that).
    void (*quantizeToken32)(const float* x, int64_t n, int32_t offset, const TokenQ8& out) = nullptr;
    void (*quantizeTokenK)(const float* x, int64_t n, const TokenQ8& out) = nullptr;
};

// The base path (CAIRN_KERNELS or the best supported, or forceKernelPath()).
const KernelSet& activeKernels();
// The path matmul runs for this weight type and token count: the applied
// choice (cairn/kernel_choice.h) or the base path.
const KernelSet& activeKernels(TensorType type, int64_t nTokens);
// A path this build and CPU run, by name ("avx512" for "avx512vnni"), or nullptr.
const KernelSet* kernelsNamed(std::string_view name);

const KernelSet& scalarKernels();
const KernelSet* avx2Kernels();  // nullptr when not compiled in
const KernelSet* avx2VnniKernels();  // the same with AVX-VNNI; nullptr when not compiled in
// The two AVX2 paths on the file layout only (no Tiles16): the same kernels,
// a variant for the calibration to weigh against the tiles on each CPU.
const KernelSet* avx2FileLayoutKernels();
const KernelSet* avx2VnniFileLayoutKernels();
const KernelSet* avx512Kernels();  // nullptr when not compiled in
const KernelSet* avx512L2PrefetchKernels();  // the same, decode prefetching to L2 (PrefetchTo)
const KernelSet* avx512HardwarePrefetchKernels();  // the same, no prefetch in the Tiles16 decode kernels
const KernelSet* neonKernels();  // nullptr when not compiled in
const KernelSet* neonDotprodKernels();  // nullptr when not compiled in

// The scalar implementation of rows [r0, r1), used by SIMD paths for types
// they do not specialise.
void scalarRows(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy);

}  // namespace cairn::tensor::kernels
