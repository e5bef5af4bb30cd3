// The calibration's measurement: each candidate kernel path timed on
// synthetic weights of one representative type per family (Q4_0, Q8_0, Q4_K,
// F16), in the two regimes matmul distinguishes.
#include "cairn/kernel_calibration.h"

#include "calibration/cache_eviction.h"
#include "tensor/huge_page_buffer.h"
#include "tensor/matmul.h"
#include "tensor/row_tiles.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>

namespace cairn {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kCols = 2048;  // a 1-3B model's hidden size
constexpr int64_t kDecodeRows = 4096;  // per matrix: 4.5-16 MiB, like a layer's weights
// Every other decode matrix is this many times wider and as many times
// shorter, as a model's down projection (llama-1b's 2048×8192). Float rows
// that wide stay in the file layout (tensor/row_tiles.h), where the paths
// differ most: Zen 4, share of a read loop in its fast minutes, avx512vnni
// 0.59, avx512vnni-l2pf 0.83, avx2 0.78 (2048×8192 F16, 2026-12-07).
constexpr int64_t kWide = 4;
constexpr int64_t kPrefillRows = 256;
constexpr int64_t kPrefillTokens = 64;
// Rounds per family and regime: the choice compares paths round by round
// (chooseKernels), so a median needs a few. With 5, and a warm-up pass
// before the decode rounds, the calibration took 0.5-0.75 s on a Zen 4
// guest whose memory was slow.
constexpr int kRounds = 4;
constexpr size_t kMiB = size_t(1) << 20;
// A machine too busy to finish in this time gets fewer repetitions (at least one).
constexpr auto kSoftDeadline = std::chrono::milliseconds(800);

TensorType representative(KernelFamily f) {
    switch (f) {
    case KernelFamily::Q4: return TensorType::Q4_0;
    case KernelFamily::Q8: return TensorType::Q8_0;
    case KernelFamily::K: return TensorType::Q4_K;
    case KernelFamily::Float: return TensorType::F16;
    }
    return TensorType::Q4_0;
}

// Decode's matrices, as a model's layers: kDecodeRows × kCols of the
// family's representative type and kDecodeRows / kWide × kCols · kWide in
// turn, the wide ones of the K family in Q6_K (a Q4_K_M model keeps its
// down projections and its output there: 28-40 % of its bytes), one after
// another in `bytes` (at least 64 MiB, so several of each).
struct SyntheticMatrix {  // at `offset` in the synthetic weights
    TensorType type;
    int64_t rows, cols;
    size_t offset, bytes;
};

std::vector<SyntheticMatrix> decodeMatrices(KernelFamily f, size_t bytes) {
    std::vector<SyntheticMatrix> out;
    for (size_t used = 0;;) {
        const bool wide = out.size() % 2 == 1;
        const TensorType type = wide && f == KernelFamily::K ? TensorType::Q6_K : representative(f);
        const int64_t rows = wide ? kDecodeRows / kWide : kDecodeRows, cols = wide ? kCols * kWide : kCols;
        const size_t n = rowBytes(type, cols) * size_t(rows);
        if (used + n > bytes) return out;
        out.push_back({type, rows, cols, used, n});
        used += n;
    }
}

// The L3 cache of the first core: sysfs says what one core shares (32 MiB
// on a Zen 3 guest, where sysconf reports the host's 256 MiB).
size_t l3Bytes() {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index3/size");
    size_t n = 0;
    char unit = 0;
    if (in >> n >> unit && n > 0) return unit == 'M' ? n << 20 : unit == 'K' ? n << 10 : n;
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return l3 > 0 ? size_t(l3) : 0;
}

// Weights decode reads. Each timed pass starts with them evicted from the
// caches where the CPU can (CLFLUSHOPT), so 64 MiB are read from memory
// whatever the L3 (32 MiB of 2048-row matrices made the rounds' ratios
// wobble by ±10 % on a Zen 4 guest). Elsewhere twice the L3, so no pass
// finds them in cache, within 64 … 128 MiB (a pass then takes 3-10 ms). The
// eviction is needed:
// an Intel Xeon guest (family 6 model 207) has a 300 MiB L3, so 128 MiB were
// partly read from it (Q4_0 decode 39-47 GB/s against a 34 GB/s plain read
// loop) and the calibration chose for Q4_0 the path that was fastest from the
// L3 (avx2), not from memory (avx512vnni-l2pf: 28.1 against 26.7 GB/s from
// 512 MiB, `cairn-cli bench-kernels`).
size_t decodeBytes() {
    return calibration::canEvictFromCaches() ? 64 * kMiB : std::clamp(2 * l3Bytes(), 64 * kMiB, 128 * kMiB);
}

uint64_t mix(uint64_t z) {  // splitmix64's finalizer: a fixed, stateless hash
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Random bytes in which every aligned 16-bit word is a normal half float in
// ±[0.5, 1): valid F16 weights, and valid blocks of every quantized type
// (any bytes are; their half-float scales sit at even offsets), with no
// infinities, NaNs or subnormals that could time differently.
struct Weights {
    tensor::HugePageBuffer memory;  // the kind a model's owned weights live in
    size_t bytes = 0;

    Weights(size_t n, ExecContext& ctx) : memory(n), bytes(n) {
        if (!memory) throw std::bad_alloc();
        uint64_t* w = reinterpret_cast<uint64_t*>(memory.data());
        ctx.parallelFor(int64_t(n / 8), 1 << 16, [w](int64_t a, int64_t b) {
            for (int64_t i = a; i < b; ++i)
                w[i] = (mix(0x5eed0000 + uint64_t(i)) & 0x83FF83FF83FF83FFull) | 0x3800380038003800ull;
        });
    }
    const uint8_t* data() const { return memory.data(); }
};

std::vector<float> activations(int64_t n) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = float(int64_t(mix(uint64_t(i)) % 2001) - 1000) / 1000.f;
    return x;
}

double secondsOf(const std::function<void()>& f) {
    const auto t0 = Clock::now();
    f();
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

std::vector<std::string> kernelCalibrationCandidates(const std::vector<std::string>& supported) {
    std::vector<std::string> out;
    for (const std::string& p : supported)
        if (p != "scalar") out.push_back(p);
    if (out.empty()) out.push_back("scalar");
    return out;
}

std::vector<KernelTiming> measureKernelTimings(ExecContext& ctx, const std::vector<std::string>& candidates) {
    const auto start = Clock::now();
    const Weights weights(decodeBytes(), ctx);
    const std::vector<float> x = activations(kPrefillTokens * kCols);
    std::vector<float> y(size_t(std::max(kDecodeRows, kPrefillTokens * kPrefillRows)));
    std::vector<KernelTiming> out;
    // Decode on two threads reads as fast as the memory lets whichever
    // path runs when the memory is slow. A Zen 4 guest's flips between 26-36
    // and 49-65 GB/s within seconds: in its slow minutes its paths were within
    // 0-6 % of each other, in its fast ones 10-25 % apart. On one thread the
    // paths stay apart in both (median over rounds, avx512vnni-hwpf's speed
    // over avx512vnni's, Q8_0: 1.27 slow, 1.22-1.26 fast, 2026-12-07).
    ExecContext oneThread(1);

    // Times `pass` on every candidate in rounds in alternating order, each
    // timing every path once. `cold`: the bytes it reads are evicted from the
    // caches before each timed pass (not timed); otherwise each path first
    // gets one untimed pass that brings them into the caches. (Cold passes
    // need no warm-up: the weights' pages were touched when filled. With one,
    // the calibration took 0.58-0.60 s on a Zen 4 guest whose memory was
    // slow, 0.49-0.52 s without: decode 27-31 GB/s on two threads.)
    auto timeAll = [&](KernelFamily f, KernelRegime r, int threads, double bytes, bool cold,
                       const std::function<void(const std::string&)>& pass) {
        std::vector<std::vector<double>> rounds(candidates.size());
        if (!cold)
            for (const std::string& p : candidates) pass(p);
        for (int round = 0; round < kRounds; ++round) {
            if (round > 0 && Clock::now() - start > kSoftDeadline) break;
            for (size_t i = 0; i < candidates.size(); ++i) {
                const size_t c = round % 2 ? candidates.size() - 1 - i : i;
                if (cold) calibration::evictFromCaches(weights.data(), size_t(bytes), ctx);
                rounds[c].push_back(secondsOf([&] { pass(candidates[c]); }));
            }
        }
        for (size_t c = 0; c < candidates.size(); ++c) {
            const double best = *std::min_element(rounds[c].begin(), rounds[c].end());
            out.push_back({f, r, candidates[c], best, bytes, std::move(rounds[c]), threads});
        }
    };

    for (KernelFamily f : kKernelFamilies) {
        const TensorType type = representative(f);
        const size_t rb = rowBytes(type, kCols);
        // Each path reads the layout a model would store the weights in for
        // it (tensor/row_tiles.h). The random bytes are valid blocks either
        // way: the tiles' half-float scales sit at even offsets too. (Where
        // decode and prefill choose paths that differ in layout, prefill runs
        // through an unpacking copy this does not time.)
        auto view = [&](const SyntheticMatrix& m, const std::string& path, int64_t tokens) {
            tensor::MatrixView v{m.type, weights.data() + m.offset, m.rows, m.cols, rowBytes(m.type, m.cols)};
            if (tensor::pathReadsRowTiles(path, m.type, tokens) && tensor::rowTilesFit(m.type, m.cols))
                v.layout = tensor::RowLayout::Tiles16;
            return v;
        };
        const std::vector<SyntheticMatrix> matrices = decodeMatrices(f, weights.bytes);
        // Decode: one token against each matrix in turn, as a model's layers,
        // on ctx's threads, then on one thread over half the matrices.
        auto decode = [&](size_t count, ExecContext& on) {
            const SyntheticMatrix& last = matrices[count - 1];
            timeAll(f, KernelRegime::Decode, on.threads(), double(last.offset + last.bytes), true,
                    [&](const std::string& p) {
                        for (size_t i = 0; i < count; ++i)
                            tensor::matmulOnPath(p, view(matrices[i], p, 1), x.data(), matrices[i].cols, 1, y.data(),
                                                 matrices[i].rows, on);
                    });
        };
        decode(matrices.size(), ctx);
        if (ctx.threads() > 1) decode((matrices.size() + 1) / 2, oneThread);
        // Prefill: a batch of tokens against one matrix that stays in cache.
        timeAll(f, KernelRegime::Prefill, ctx.threads(), double(rb * kPrefillRows), false, [&](const std::string& p) {
            tensor::matmulOnPath(p, view({type, kPrefillRows, kCols, 0, rb * kPrefillRows}, p, kPrefillTokens),
                                 x.data(), kCols, kPrefillTokens, y.data(), kPrefillRows, ctx);
        });
    }
    return out;
}

}  // namespace cairn
