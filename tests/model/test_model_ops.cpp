// The shared ops against their textbook formulas (computed here in double).
#include "cairn/error.h"
#include "cairn/exec.h"
#include "cairn/gguf.h"
#include "memory/kv_cache.h"
#include "model/attention.h"
#include "model/ops.h"
#include "model/rope.h"
#include "model/owned_weights.h"
#include "random_weights.h"
#include "tensor/row_tiles.h"

#include <QTest>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <utility>
#include <vector>

using namespace cairn;
using namespace cairn::model;

namespace {
// A GGUF file built in memory from named matrices (type and shape from each
// matrix's view): its bytes, and the File that reads them.
struct InMemoryGguf {
    std::vector<uint8_t> bytes;
    gguf::File file;
    explicit InMemoryGguf(std::initializer_list<std::pair<const char*, const test::Weights&>> matrices)
        : bytes(write(matrices)), file(gguf::File::fromMemory(bytes.data(), bytes.size(), "in memory")) {}

private:
    static std::vector<uint8_t> write(std::initializer_list<std::pair<const char*, const test::Weights&>> matrices) {
        gguf::Writer writer;
        for (const auto& [name, w] : matrices) writer.addTensor(name, w.view.type, {w.view.cols, w.view.rows}, w.bytes);
        return writer.toBytes();
    }
};
}  // namespace

class TestModelOps : public QObject {
    Q_OBJECT
private slots:
    void rmsNormMatchesFormula() {
        const float x[4] = {1, -2, 3, 4}, w[4] = {1, 0.5f, 2, -1};
        float y[4];
        rmsNorm(x, w, y, 4, 1e-5f);
        const double r = std::sqrt((1 + 4 + 9 + 16) / 4.0 + 1e-5);
        for (int i = 0; i < 4; ++i) QVERIFY(std::abs(y[i] - x[i] / r * w[i]) < 1e-6);
    }

    void swigluIsSiluTimesUp() {
        const float g[3] = {-2, 0, 3}, u[3] = {1, 5, -0.5f};
        float o[3];
        swiglu(g, u, o, 3);
        for (int i = 0; i < 3; ++i) QVERIFY(std::abs(o[i] - g[i] / (1 + std::exp(-g[i])) * u[i]) < 1e-6);
    }

    // 37 = two whole vectors and a partial one; gates over [-40, 40] reach
    // both tails of the sigmoid. In place gives the same bits.
    void swigluOnWholeVectorsAndTail() {
        const int n = 37;
        std::mt19937 rng(17);
        std::uniform_real_distribution<float> gd(-40.f, 40.f), ud(-3.f, 3.f);
        std::vector<float> g(n), u(n), o(n);
        for (int i = 0; i < n; ++i) g[i] = gd(rng), u[i] = ud(rng);
        g[0] = 0.f, g[1] = -2.f, g[2] = 3.f;
        swiglu(g.data(), u.data(), o.data(), n);
        for (int i = 0; i < n; ++i) {
            const double want = double(g[i]) / (1 + std::exp(-double(g[i]))) * u[i];
            QVERIFY2(std::abs(o[i] - want) <= 1e-6 * (1 + std::abs(want)), qPrintable(QString::number(i)));
        }
        std::vector<float> inPlace = g;
        swiglu(inPlace.data(), u.data(), inPlace.data(), n);
        QVERIFY(std::memcmp(inPlace.data(), o.data(), sizeof(float) * n) == 0);
    }

    // qwen2 fixture's YaRN numbers (reference README): per-pair multipliers
    // [1, 0.625, 0.25 …] and cos/sin scaled by 1 + 0.1·ln 4.
    void yarnAnglesMatchReadme() {
        RopeConfig c;
        c.dims = 16;
        c.neox = true;
        c.base = 1e6;
        c.scaling = RopeScaling::Yarn;
        c.factor = 4;
        c.originalContext = 128;
        Rope rope(c);
        const double mult[8] = {1, 0.625, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25};
        const double mscale = 1 + 0.1 * std::log(4.0);
        float cs[8], sn[8];
        for (int64_t p : {0, 1, 7, 100, 300}) {
            rope.angles(p, cs, sn);
            for (int i = 0; i < 8; ++i) {
                const double th = double(p) * std::pow(1e6, -2.0 * i / 16) * mult[i];
                QVERIFY(std::abs(cs[i] - std::cos(th) * mscale) < 1e-5);
                QVERIFY(std::abs(sn[i] - std::sin(th) * mscale) < 1e-5);
            }
        }
    }

    void freqFactorsDivideTheFrequency() {
        RopeConfig c;
        c.dims = 8;
        c.base = 500000;
        c.freqFactors = {1, 2, 4, 8};
        Rope rope(c);
        float cs[4], sn[4];
        rope.angles(37, cs, sn);
        for (int i = 0; i < 4; ++i) {
            const double th = 37.0 * std::pow(500000.0, -2.0 * i / 8) / c.freqFactors[size_t(i)];
            QVERIFY(std::abs(cs[i] - std::cos(th)) < 1e-6 && std::abs(sn[i] - std::sin(th)) < 1e-6);
        }
    }

    void pairingNormalVersusNeox() {
        for (bool neox : {false, true}) {
            RopeConfig c;
            c.dims = 4;
            c.neox = neox;
            Rope rope(c);
            float x[4] = {1, 2, 3, 4};
            const float cs[2] = {0, 1}, sn[2] = {1, 0};  // pair 0 turns by 90°, pair 1 stays
            rope.apply(x, 1, 4, cs, sn);
            if (!neox) {  // pairs (0,1), (2,3)
                QCOMPARE(x[0], -2.f);
                QCOMPARE(x[1], 1.f);
                QCOMPARE(x[2], 3.f);
                QCOMPARE(x[3], 4.f);
            } else {  // pairs (0,2), (1,3)
                QCOMPARE(x[0], -3.f);
                QCOMPARE(x[2], 1.f);
                QCOMPARE(x[1], 2.f);
                QCOMPARE(x[3], 4.f);
            }
        }
    }

    // GQA: query head h reads KV head h / (heads / kvHeads); causal softmax.
    void attentionMatchesFormula() {
        const int64_t heads = 4, kvHeads = 2, d = 8, n = 5;
        memory::KvCache cache(1, kvHeads, d, d, 16, KvType::F32);
        std::mt19937 rng(5);
        std::normal_distribution<float> nd;
        std::vector<float> k(size_t(n * kvHeads * d)), v(k.size()), q(size_t(n * heads * d));
        for (auto& x : k) x = nd(rng);
        for (auto& x : v) x = nd(rng);
        for (auto& x : q) x = nd(rng);
        for (int64_t p = 0; p < n; ++p)
            for (int64_t h = 0; h < kvHeads; ++h) {
                cache.writeK(0, h, p, &k[size_t((p * kvHeads + h) * d)]);
                cache.writeV(0, h, p, &v[size_t((p * kvHeads + h) * d)]);
            }
        std::vector<float> out(size_t(n * heads * d));
        ExecContext ctx(2);
        const float scale = 1 / std::sqrt(float(d));
        attention(cache, 0, {heads, kvHeads, d, d, scale}, q.data(), heads * d, n, 0, out.data(), heads * d, ctx);
        for (int64_t t = 0; t < n; ++t)
            for (int64_t h = 0; h < heads; ++h) {
                const int64_t kh = h / 2;
                std::vector<double> w(size_t(t + 1));
                double mx = -1e300, sum = 0;
                for (int64_t j = 0; j <= t; ++j) {
                    double s = 0;
                    for (int64_t i = 0; i < d; ++i)
                        s += double(q[size_t((t * heads + h) * d + i)]) * k[size_t((j * kvHeads + kh) * d + i)];
                    w[size_t(j)] = s * scale;
                    mx = std::max(mx, w[size_t(j)]);
                }
                for (auto& x : w) {
                    x = std::exp(x - mx);
                    sum += x;
                }
                for (int64_t i = 0; i < d; ++i) {
                    double o = 0;
                    for (int64_t j = 0; j <= t; ++j) o += w[size_t(j)] * v[size_t((j * kvHeads + kh) * d + i)];
                    QVERIFY(std::abs(out[size_t((t * heads + h) * d + i)] - o / sum) < 1e-5);
                }
            }
    }

    // A fused weight in 16-row tiles splits only between tiles (rowSlice);
    // a slice that would cut a tile is an error, not wrong rows.
    void rowSliceKeepsTilesWhole() {
        tensor::MatrixView w{TensorType::Q4_0, reinterpret_cast<const uint8_t*>(this), 48, 64, 36};
        QCOMPARE(rowSlice(w, 5, 20).rows, int64_t(20));  // file layout: any rows
        w.layout = tensor::RowLayout::Tiles16;
        const tensor::MatrixView s = rowSlice(w, 16, 32);
        QCOMPARE(s.data, w.row(16));
        QCOMPARE(int(s.layout), int(tensor::RowLayout::Tiles16));
        QCOMPARE(rowSlice(w, 32, 16).rows, int64_t(16));
        w.rows = 45;  // the last 13 rows are past the last whole tile: a slice may end there
        QCOMPARE(rowSlice(w, 16, 29).rows, int64_t(29));
        QVERIFY_THROWS_EXCEPTION(Error, rowSlice(w, 8, 16));
        QVERIFY_THROWS_EXCEPTION(Error, rowSlice(w, 0, 20));
    }

    // Weights are copied within their budget (the rest stays mapped): with
    // the file's bytes, into the model's memory; a File over caller memory
    // keeps its bytes (nothing is released).
    void ownedWeightsStayWithinTheirBudget() {
        const test::Weights a = test::makeWeights(TensorType::F16, 32, 64, 1),
                            b = test::makeWeights(TensorType::F16, 32, 64, 2);
        const InMemoryGguf inMemory({{"a", a}, {"b", b}});
        const gguf::File& file = inMemory.file;
        OwnedWeights owned(a.bytes.size() + 100);  // room for one matrix
        const tensor::MatrixView oa = owned.own(file, matrixView(file.tensor("a")), false);
        const tensor::MatrixView ob = owned.own(file, matrixView(file.tensor("b")), false);
        QVERIFY(oa.data != file.tensor("a").data);
        QCOMPARE(int(oa.layout), int(tensor::RowLayout::File));
        QCOMPARE(oa.rowStride, matrixView(file.tensor("a")).rowStride);
        QVERIFY(std::memcmp(oa.data, a.bytes.data(), a.bytes.size()) == 0);
        QCOMPARE(ob.data, file.tensor("b").data);
        QCOMPARE(owned.bytes(), a.bytes.size());
        QCOMPARE(owned.tiledBytes(), size_t(0));
        QVERIFY(std::memcmp(file.tensor("a").data, a.bytes.data(), a.bytes.size()) == 0);

        OwnedWeights none(0);
        QCOMPARE(none.own(file, matrixView(file.tensor("a"))).data, file.tensor("a").data);
        QCOMPARE(none.bytes(), size_t(0));
        QVERIFY(OwnedWeights::defaultBudget() > 0);
        qputenv("CAIRN_OWNED_WEIGHTS", "off");
        QCOMPARE(OwnedWeights::defaultBudget(), size_t(0));
        qunsetenv("CAIRN_OWNED_WEIGHTS");
    }

    // A matrix of several MiB is copied in parallel chunks: every byte arrives.
    void largeOwnedWeightsAreCopiedWhole() {
        const test::Weights big = test::makeWeights(TensorType::F16, 1100, 2048, 3);  // 4.3 MiB, 5 chunks
        const InMemoryGguf inMemory({{"big", big}});
        const gguf::File& file = inMemory.file;
        OwnedWeights owned;
        const tensor::MatrixView w = owned.own(file, matrixView(file.tensor("big")), false);
        QVERIFY(w.data != file.tensor("big").data);
        QVERIFY(std::memcmp(w.data, big.bytes.data(), big.bytes.size()) == 0);
        owned.finishLoading();
    }

    // Owned matrices lie one after another, page-aligned, in a mapping that
    // starts on a huge-page boundary: a matrix in a mapping of its own shared
    // its 2 MiB ranges with its neighbours' and was mostly in 4 KiB pages.
    // Each copy stays whole beside the others.
    void ownedWeightsShareHugePageArenas() {
        const test::Weights a = test::makeWeights(TensorType::F16, 40, 64, 1),  // 5 KiB: not a whole page
            b = test::makeWeights(TensorType::F16, 32, 64, 2);
        const InMemoryGguf inMemory({{"a", a}, {"b", b}});
        const gguf::File& file = inMemory.file;
        OwnedWeights owned;
        const tensor::MatrixView oa = owned.own(file, matrixView(file.tensor("a")), false);
        const tensor::MatrixView ob = owned.own(file, matrixView(file.tensor("b")), false);
        const auto at = [](const void* p) { return reinterpret_cast<uintptr_t>(p); };
        QCOMPARE(at(oa.data) % tensor::HugePageBuffer::kHugePageBytes, uintptr_t(0));
        QCOMPARE(at(ob.data), at(oa.data) + 8192);
        QVERIFY(std::memcmp(oa.data, a.bytes.data(), a.bytes.size()) == 0);
        QVERIFY(std::memcmp(ob.data, b.bytes.data(), b.bytes.size()) == 0);
        QCOMPARE(owned.bytes(), a.bytes.size() + b.bytes.size());
    }

    // Where this CPU's decode kernels read 16-row tiles the copy is tiled,
    // unless the caller says the matrix will be split inside a tile.
    void ownedWeightsAreTiledWhereDecodeReadsTiles() {
        if (!tensor::rowTilesWanted(TensorType::Q4_0)) QSKIP("this CPU's decode kernels do not read 16-row tiles");
        const test::Weights a = test::makeWeights(TensorType::Q4_0, 32, 64, 1);
        const InMemoryGguf inMemory({{"a", a}});
        const gguf::File& file = inMemory.file;
        OwnedWeights owned;
        const tensor::MatrixView tiled = owned.own(file, matrixView(file.tensor("a")));
        const tensor::MatrixView rows = owned.own(file, matrixView(file.tensor("a")), false);
        QCOMPARE(int(tiled.layout), int(tensor::RowLayout::Tiles16));
        QCOMPARE(int(rows.layout), int(tensor::RowLayout::File));
        QVERIFY(std::memcmp(rows.data, a.bytes.data(), a.bytes.size()) == 0);
        QCOMPARE(owned.bytes(), 2 * a.bytes.size());
        QCOMPARE(owned.tiledBytes(), a.bytes.size());

        // Float rows are tiled in chunks of 16 columns: 40 columns stay rows.
        const test::Weights f = test::makeWeights(TensorType::F16, 32, 48, 2),
                            ragged = test::makeWeights(TensorType::F16, 32, 40, 3);
        const InMemoryGguf floats({{"f", f}, {"ragged", ragged}});
        OwnedWeights ownedFloats;
        const tensor::MatrixView tf = ownedFloats.own(floats.file, matrixView(floats.file.tensor("f")));
        const tensor::MatrixView tr = ownedFloats.own(floats.file, matrixView(floats.file.tensor("ragged")));
        QCOMPARE(int(tf.layout),
                 int(tensor::rowTilesWanted(TensorType::F16) ? tensor::RowLayout::Tiles16 : tensor::RowLayout::File));
        QCOMPARE(int(tr.layout), int(tensor::RowLayout::File));
        QVERIFY(std::memcmp(tr.data, ragged.bytes.data(), ragged.bytes.size()) == 0);
    }
};

QTEST_APPLESS_MAIN(TestModelOps)
#include "test_model_ops.moc"
