// quantize -> dequantize on random data: every format's error stays within
// what its geometry allows (quant_error_model.h), the plain formats within
// their rounding bound element by element; plus the reference dot product,
// the Q8_K activation quantizer and the refusal of bad input.
#include "quant_error_model.h"

#include "cairn/error.h"
#include "tensor/quant.h"

#include <QTest>

#include <cmath>
#include <random>
#include <vector>

using namespace cairn;
using namespace cairn::tensor;

namespace {

constexpr int64_t kCols = 4096;  // a multiple of every block size
constexpr int kRows = 16;

enum class Dist { Gaussian, Uniform };

std::vector<float> randomRows(Dist dist, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> v(size_t(kCols * kRows));
    for (auto& x : v) x = dist == Dist::Gaussian ? normal(rng) : uniform(rng);
    return v;
}

std::vector<float> roundTrip(TensorType type, const std::vector<float>& src) {
    std::vector<float> out(src.size());
    std::vector<uint8_t> row(rowBytes(type, kCols));
    for (int r = 0; r < kRows; ++r) {
        quantizeRow(type, src.data() + r * kCols, row.data(), kCols);
        dequantizeRow(type, row.data(), out.data() + r * kCols, kCols);
    }
    return out;
}

const TensorType kQuantTypes[] = {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1,
                                  TensorType::Q8_0, TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K,
                                  TensorType::Q5_K, TensorType::Q6_K};

}  // namespace

class TestQuantRoundTrip : public QObject {
    Q_OBJECT
private slots:
    void quantizedFormats_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("dist");
        for (TensorType t : kQuantTypes) {
            const std::string name(tensorTypeName(t));
            QTest::newRow((name + " gaussian").c_str()) << int(t) << int(Dist::Gaussian);
            QTest::newRow((name + " uniform").c_str()) << int(t) << int(Dist::Uniform);
        }
    }

    // Measured RMS error <= 1.25 x the uniform-quantizer model of the format.
    // The 25 % covers what the model leaves out: the scales themselves are
    // stored rounded (f16, and 6-bit or 4-bit sub-scales in the K formats),
    // which stretches the grid a little, and the K quantizers trade plain
    // squared error for a weighted one. The error must also be nonzero (the
    // data is not on the grid), so a format that stored nothing cannot pass.
    void quantizedFormats() {
        QFETCH(int, type);
        QFETCH(int, dist);
        const auto t = TensorType(type);
        const auto src = randomRows(Dist(dist), 1234u + unsigned(type));
        const auto out = roundTrip(t, src);
        double se = 0, signal = 0;
        for (size_t i = 0; i < src.size(); ++i) {
            const double e = double(out[i]) - double(src[i]);
            se += e * e;
            signal += double(src[i]) * double(src[i]);
        }
        const auto g = *test::quantGeometry(t);
        const double nominal = test::nominalSquaredError(g, src.data(), int64_t(src.size()));
        const double rms = std::sqrt(se / double(src.size()));
        const double bound = 1.25 * std::sqrt(nominal / double(src.size()));
        qInfo("%-5s %-8s rms %.5f  relative %.4f  model %.5f  ratio %.3f", std::string(tensorTypeName(t)).c_str(),
              dist == int(Dist::Gaussian) ? "gaussian" : "uniform", rms, std::sqrt(se / signal), bound / 1.25,
              rms / (bound / 1.25));
        QVERIFY(rms > 0);
        QVERIFY2(rms <= bound, qPrintable(QString("rms %1 > bound %2").arg(rms).arg(bound)));
    }

    // F16 and BF16 round to nearest: |error| <= half an ulp, i.e. 2^-11 resp.
    // 2^-8 relative in the normal range (2^-25 absolute below f16's normals).
    void plainFormatsElementwise() {
        auto src = randomRows(Dist::Gaussian, 99);
        for (size_t i = 0; i < src.size(); i += 7) src[i] *= std::ldexp(1.0f, int(i % 40) - 30);  // many binades
        const auto f32 = roundTrip(TensorType::F32, src);
        const auto f16 = roundTrip(TensorType::F16, src);
        const auto bf16 = roundTrip(TensorType::BF16, src);
        for (size_t i = 0; i < src.size(); ++i) {
            const double x = src[i];
            QCOMPARE(f32[i], src[i]);
            if (std::fabs(x) < 65504)
                QVERIFY(std::fabs(f16[i] - x) <= std::max(std::ldexp(std::fabs(x), -11), std::ldexp(1.0, -25)));
            QVERIFY(std::fabs(bf16[i] - x) <= std::ldexp(std::fabs(x), -8));
        }
    }

    // The oracle sums in double and rounds once: a float accumulator in the
    // same order would lose the 1 entirely.
    void dotReferenceSumsInDouble() {
        const float w[4] = {1e8f, 1.0f, -1e8f, 0.5f};
        const float x[4] = {1.0f, 1.0f, 1.0f, 1.0f};
        QCOMPARE(dotReference(TensorType::F32, w, x, 4), 1.5f);
    }

    // For a quantized row it equals the double sum over the dequantized row.
    void dotReferenceMatchesDequantized() {
        const auto src = randomRows(Dist::Gaussian, 5);
        const auto xs = randomRows(Dist::Uniform, 6);
        for (TensorType t : kQuantTypes) {
            std::vector<uint8_t> row(rowBytes(t, kCols));
            quantizeRow(t, src.data(), row.data(), kCols);
            std::vector<float> deq(kCols);
            dequantizeRow(t, row.data(), deq.data(), kCols);
            double sum = 0;
            for (int64_t i = 0; i < kCols; ++i) sum += double(deq[size_t(i)]) * double(xs[size_t(i)]);
            QCOMPARE(dotReference(t, row.data(), xs.data(), kCols), float(sum));
        }
    }

    // Q8_K (activations): levels within ±127 (the largest magnitude at
    // exactly ∓127), error within half a step, bsums the sums of 16 levels.
    void q8K() {
        auto src = randomRows(Dist::Gaussian, 8);
        std::fill(src.begin() + 256, src.begin() + 512, 0.0f);  // an all-zero block
        const int64_t n = 1024;
        std::vector<BlockQ8_K> blocks(n / 256);
        quantizeRowQ8K(src.data(), blocks.data(), n);
        for (int b = 0; b < int(blocks.size()); ++b) {
            const auto& q = blocks[size_t(b)];
            const float* x = src.data() + 256 * b;
            if (b == 1) {
                QCOMPARE(q.d, 0.0f);
                for (int i = 0; i < 256; ++i) QCOMPARE(int(q.qs[i]), 0);
                for (int g = 0; g < 16; ++g) QCOMPARE(int(q.bsums[g]), 0);
                continue;
            }
            int extreme = 0;
            for (int i = 0; i < 256; ++i) {
                QVERIFY(q.qs[i] >= -127 && q.qs[i] <= 127);
                extreme = std::max(extreme, std::abs(int(q.qs[i])));
                QVERIFY(std::fabs(q.d * q.qs[i] - x[i]) <= 0.5001f * std::fabs(q.d));
            }
            QCOMPARE(extreme, 127);
            for (int g = 0; g < 16; ++g) {
                int sum = 0;
                for (int l = 0; l < 16; ++l) sum += q.qs[16 * g + l];
                QCOMPARE(int(q.bsums[g]), sum);
            }
        }
    }

    void refusesBadInput() {
        std::vector<float> x(64, 1.0f);
        std::vector<uint8_t> buf(1024);
        QVERIFY_THROWS_EXCEPTION(Error, dequantizeRow(TensorType::Q4_K, buf.data(), x.data(), 64));  // not 256
        QVERIFY_THROWS_EXCEPTION(Error, quantizeRow(TensorType::Q8_0, x.data(), buf.data(), 48));  // not 32
        QVERIFY_THROWS_EXCEPTION(Error, dequantizeRow(TensorType::IQ4_NL, buf.data(), x.data(), 32));
        QVERIFY_THROWS_EXCEPTION(Error, quantizeRow(TensorType::Q8_1, x.data(), buf.data(), 32));
        QVERIFY_THROWS_EXCEPTION(Error, dotReference(TensorType::I8, buf.data(), x.data(), 32));
    }

    // The supported flag is exactly the set this code implements.
    void supportedSetMatches() {
        for (uint32_t id = 0; id < 64; ++id) {
            const auto t = tensorTypeTraits(id);
            if (!t) continue;
            std::vector<uint8_t> row(t->blockBytes * 2, 0);
            std::vector<float> out(t->blockSize * 2);
            bool works = true;
            try {
                dequantizeRow(TensorType(id), row.data(), out.data(), t->blockSize * 2);
            } catch (const Error&) {
                works = false;
            }
            QVERIFY2(works == t->supported, t->name.data());
        }
    }
};

QTEST_APPLESS_MAIN(TestQuantRoundTrip)
#include "test_quant_roundtrip.moc"
