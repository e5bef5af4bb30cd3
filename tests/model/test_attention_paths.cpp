// Attention's canonical arithmetic (engine/model/attention_kernels.h): every
// kernel path this machine runs gives the scalar path's bits on random q/k/v,
// for f32 and f16 caches, head sizes and lengths that are not multiples of
// 16; the result of a query does not depend on the chunk or the threads; and
// the arithmetic stays close to the textbook formula; a sliding window sees
// exactly its last keys.
#include "cairn/exec.h"
#include "memory/kv_cache.h"
#include "model/attention.h"
#include "model/attention_kernels.h"
#include "same_bits.h"
#include "tensor/matmul.h"

#include <QTest>

#include <cmath>
#include <cstring>
#include <random>

using namespace cairn;
using cairn::test::sameBits;
using namespace cairn::model;

namespace {

struct Case {
    int64_t heads, kvHeads, keyDim, valueDim;
    int64_t length;  // positions in the cache
    float spread;  // scale of q and k: large values make most weights underflow to 0
    int64_t window = 0;  // sliding-window attention over the last `window` positions (Gemma 3)
};

const Case kCases[] = {
    {8, 2, 64, 64, 100, 1.0f},  // Llama-3.2-1B-like heads: groups of 4
    {8, 2, 128, 128, 37, 1.0f},  // Qwen-like heads
    {12, 2, 24, 40, 29, 1.0f},  // groups of 6: one block of 4 query heads and one of 2
    {5, 1, 48, 56, 21, 1.0f},  // a group of 5: blocks of 4 and 1
    {3, 1, 13, 21, 50, 1.0f},  // odd sizes: partial 16-lane chunks everywhere
    {2, 2, 80, 72, 33, 1.0f},  // 80 = 5·16, 72 = 9·8
    {2, 1, 7, 5, 17, 1.0f},  // smaller than one chunk
    {2, 1, 16, 16, 16, 1.0f},      {4, 4, 40, 24, 65, 6.0f},  // peaked softmax: weights below exp(-87) are 0
    {4, 1, 32, 32, 70, 1.0f, 32},  // Gemma-3 fixture heads, window 32
    {8, 2, 64, 64, 100, 1.0f, 17},  // a window that is not a multiple of 16
};

struct Data {
    std::vector<float> q, k, v;
};

Data randomData(const Case& c, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd;
    Data d;
    d.q.resize(size_t(c.length * c.heads * c.keyDim));
    d.k.resize(size_t(c.length * c.kvHeads * c.keyDim));
    d.v.resize(size_t(c.length * c.kvHeads * c.valueDim));
    for (auto& x : d.q) x = nd(rng) * c.spread;
    for (auto& x : d.k) x = nd(rng) * c.spread;
    for (auto& x : d.v) x = nd(rng);
    return d;
}

memory::KvCache filledCache(const Case& c, const Data& d, KvType type) {
    memory::KvCache cache(1, c.kvHeads, c.keyDim, c.valueDim, c.length, type);
    for (int64_t p = 0; p < c.length; ++p)
        for (int64_t h = 0; h < c.kvHeads; ++h) {
            cache.writeK(0, h, p, &d.k[size_t((p * c.kvHeads + h) * c.keyDim)]);
            cache.writeV(0, h, p, &d.v[size_t((p * c.kvHeads + h) * c.valueDim)]);
        }
    return cache;
}

AttentionShape shapeOf(const Case& c) {
    return {c.heads, c.kvHeads, c.keyDim, c.valueDim, float(1.0 / std::sqrt(double(c.keyDim))), c.window};
}

// Every position's output, the queries fed in chunks of `chunk` on `threads` threads.
std::vector<float> run(const Case& c, const Data& d, const memory::KvCache& cache, int64_t chunk, int threads) {
    ExecContext ctx(threads);
    const int64_t qd = c.heads * c.keyDim, od = c.heads * c.valueDim;
    std::vector<float> out(size_t(c.length * od));
    for (int64_t p0 = 0; p0 < c.length; p0 += chunk) {
        const int64_t n = std::min(chunk, c.length - p0);
        attention(cache, 0, shapeOf(c), &d.q[size_t(p0 * qd)], qd, n, p0, &out[size_t(p0 * od)], od, ctx);
    }
    return out;
}

// Restores the best path when a test function ends.
struct PathGuard {
    ~PathGuard() { tensor::forceKernelPath(tensor::availableKernelPaths().front()); }
};

}  // namespace

class TestAttentionPaths : public QObject {
    Q_OBJECT
private slots:
    void pathsGiveScalarBits_data() {
        QTest::addColumn<int>("index");
        QTest::addColumn<int>("kv");
        for (int i = 0; i < int(std::size(kCases)); ++i)
            for (int kv = 0; kv < 2; ++kv) {
                const Case& c = kCases[i];
                QTest::addRow("h%lld-kv%lld-k%lld-v%lld-n%lld-w%lld-%s", (long long)c.heads, (long long)c.kvHeads,
                              (long long)c.keyDim, (long long)c.valueDim, (long long)c.length, (long long)c.window,
                              kv ? "f16" : "f32")
                    << i << kv;
            }
    }

    void pathsGiveScalarBits() {
        QFETCH(int, index);
        QFETCH(int, kv);
        PathGuard guard;
        const Case& c = kCases[index];
        const Data d = randomData(c, uint32_t(100 + index));
        const memory::KvCache cache = filledCache(c, d, kv ? KvType::F16 : KvType::F32);

        QVERIFY(tensor::forceKernelPath("scalar"));
        QCOMPARE(QString(attn::activeKernels().name), QString("scalar"));
        const auto reference = run(c, d, cache, c.length, 1);
        for (float x : reference) QVERIFY(std::isfinite(x));
        // Chunks and threads change nothing.
        QVERIFY(sameBits(run(c, d, cache, 1, 1), reference));
        QVERIFY(sameBits(run(c, d, cache, 7, 3), reference));

        const auto paths = tensor::availableKernelPaths();
        for (const std::string& path : paths) {
            QVERIFY(tensor::forceKernelPath(path));
            const std::string kernels = attn::activeKernels().name;
            QVERIFY2(sameBits(run(c, d, cache, c.length, 2), reference),
                     qPrintable(QString("path %1 (attention kernels %2) differs from scalar")
                                    .arg(QString::fromStdString(path), QString::fromStdString(kernels))));
            QVERIFY(sameBits(run(c, d, cache, 5, 1), reference));
        }
        if (paths.size() == 1) qInfo("only the scalar path runs on this machine");
    }

    // A sliding window of W: the query at p gives the bits of an unwindowed
    // query over a cache that holds only positions p − W + 1 … p, on every path.
    void windowSeesOnlyTheLastKeys() {
        PathGuard guard;
        const Case c{4, 1, 32, 32, 60, 1.0f, 20};
        const Data d = randomData(c, 77);
        for (int kv = 0; kv < 2; ++kv) {
            const KvType type = kv ? KvType::F16 : KvType::F32;
            const memory::KvCache cache = filledCache(c, d, type);
            for (const std::string& path : tensor::availableKernelPaths()) {
                QVERIFY(tensor::forceKernelPath(path));
                const auto windowed = run(c, d, cache, 7, 2);
                const int64_t qd = c.heads * c.keyDim, od = c.heads * c.valueDim;
                for (const int64_t p : {int64_t(5), c.window - 1, c.window, int64_t(41), c.length - 1}) {
                    const int64_t first = std::max<int64_t>(0, p - c.window + 1), n = p - first + 1;
                    Case part = c;
                    part.length = n;
                    part.window = 0;
                    Data sub;
                    sub.k.assign(d.k.begin() + first * c.kvHeads * c.keyDim,
                                 d.k.begin() + (p + 1) * c.kvHeads * c.keyDim);
                    sub.v.assign(d.v.begin() + first * c.kvHeads * c.valueDim,
                                 d.v.begin() + (p + 1) * c.kvHeads * c.valueDim);
                    const memory::KvCache only = filledCache(part, sub, type);
                    ExecContext ctx(1);
                    std::vector<float> out(static_cast<size_t>(od));
                    attention(only, 0, shapeOf(part), &d.q[size_t(p * qd)], qd, 1, n - 1, out.data(), od, ctx);
                    QVERIFY2(std::memcmp(out.data(), &windowed[size_t(p * od)], size_t(od) * 4) == 0,
                             qPrintable(QString("%1 position %2").arg(QString::fromStdString(path)).arg(p)));
                }
                // and the window matters: without it the late positions differ
                Case full = c;
                full.window = 0;
                const auto unwindowed = run(full, d, cache, 7, 2);
                QVERIFY(std::memcmp(&unwindowed[size_t(45 * od)], &windowed[size_t(45 * od)], size_t(od) * 4) != 0);
                QVERIFY(std::memcmp(unwindowed.data(), windowed.data(), size_t(c.window * od) * 4) == 0);
            }
        }
    }

    // Each path's kernels are its own: a SIMD path does not hand back the scalar set.
    void everyPathHasItsKernels() {
        PathGuard guard;
        for (const std::string& path : tensor::availableKernelPaths()) {
            QVERIFY(tensor::forceKernelPath(path));
            const std::string name = attn::activeKernels().name;
            QVERIFY2(path.compare(0, name.size(), name) == 0, qPrintable(QString::fromStdString(path + " → " + name)));
        }
    }

    // The softmax's exp is within a few ulp of the exact one where it matters,
    // and 0 far below the max.
    void canonicalExpIsAccurate() {
        double worst = 0;
        for (int i = 0; i <= 200000; ++i) {
            const float x = -87.0f * float(i) / 200000.0f;
            const double exact = std::exp(double(x));
            worst = std::max(worst, std::fabs(double(attn::expCanonical(x)) - exact) / exact);
        }
        qInfo("worst relative error of expCanonical on [-87, 0]: %.3g", worst);
        QVERIFY(worst < 4e-7);
        QCOMPARE(attn::expCanonical(0.0f), 1.0f);
        QCOMPARE(attn::expCanonical(-100.0f), 0.0f);
        QCOMPARE(attn::expCanonical(-INFINITY), 0.0f);
    }

    // Against the formula in double, f32 and f16 caches (f16: the cache's own
    // rounding of k and v, and q and the weights rounded as llama.cpp does).
    void closeToFormula() {
        for (int kv = 0; kv < 2; ++kv) {
            const Case c{4, 2, 24, 40, 45, 1.0f};
            const Data d = randomData(c, 9);
            const memory::KvCache cache = filledCache(c, d, kv ? KvType::F16 : KvType::F32);
            const auto out = run(c, d, cache, 16, 2);
            const double tol = kv ? 3e-3 : 1e-5;
            const double scale = 1.0 / std::sqrt(double(c.keyDim));
            for (int64_t t = 0; t < c.length; ++t)
                for (int64_t h = 0; h < c.heads; ++h) {
                    const int64_t kh = h / (c.heads / c.kvHeads);
                    std::vector<double> w(size_t(t + 1));
                    double mx = -1e300, sum = 0;
                    for (int64_t j = 0; j <= t; ++j) {
                        double s = 0;
                        for (int64_t i = 0; i < c.keyDim; ++i)
                            s += double(d.q[size_t((t * c.heads + h) * c.keyDim + i)]) *
                                d.k[size_t((j * c.kvHeads + kh) * c.keyDim + i)];
                        w[size_t(j)] = s * scale;
                        mx = std::max(mx, w[size_t(j)]);
                    }
                    for (auto& x : w) {
                        x = std::exp(x - mx);
                        sum += x;
                    }
                    for (int64_t i = 0; i < c.valueDim; ++i) {
                        double o = 0;
                        for (int64_t j = 0; j <= t; ++j)
                            o += w[size_t(j)] * d.v[size_t((j * c.kvHeads + kh) * c.valueDim + i)];
                        const float got = out[size_t((t * c.heads + h) * c.valueDim + i)];
                        QVERIFY2(
                            std::fabs(got - o / sum) < tol,
                            qPrintable(QString("t %1 h %2 d %3: %4 vs %5").arg(t).arg(h).arg(i).arg(got).arg(o / sum)));
                    }
                }
        }
    }
};

QTEST_APPLESS_MAIN(TestAttentionPaths)
#include "test_attention_paths.moc"
