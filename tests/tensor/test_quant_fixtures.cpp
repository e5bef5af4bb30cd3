// The shared llama-spm fixture exists as an F16 original and as Q8_0, Q4_0
// and Q4_K_M copies made from it by llama-quantize. Dequantizing every weight
// of every copy must reproduce the original within the error its format
// allows; and since llama-quantize (without an importance matrix) runs ggml's
// reference quantizers, quantizing the original with ours must give the
// copies' bytes exactly.
#include "quant_error_model.h"
#include "shared_data.h"

#include "cairn/gguf.h"
#include "tensor/quant.h"

#include <QTest>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace cairn;

namespace {

const char* const kCopies[] = {"llama-spm-q8_0.gguf", "llama-spm-q4_0.gguf", "llama-spm-q4_k_m.gguf"};

std::string fixture(const std::string& name) { return test::sharedPath("fixtures/" + name); }

std::vector<float> dequantizeAll(const gguf::TensorInfo& t) {
    std::vector<float> out(size_t(t.elements()));
    for (int64_t r = 0; r < t.rows(); ++r) tensor::dequantizeRow(t.type, t.row(r), out.data() + r * t.ne[0], t.ne[0]);
    return out;
}

// Relative RMS error a format must stay under on these weights, from theory.
// The fixture's weights are Gaussian, N(0, σ) per tensor. For a uniform
// quantizer the RMS error is step/√12; with the step set by the group's
// largest magnitude (symmetric formats, step = 2·max|x|/(L−1)) or its range
// (formats with an offset, step = range/(L−1)), and a group of g Gaussian
// values having E[max|x|] ≈ 2.5σ (g = 32), 2.2σ (g = 16) and E[range] ≈ 4.1σ
// (g = 32), the expected relative RMS is about
//   Q8_0 2.5·2/254/√12 = 0.57 %,  Q4_0 2.5·2/15/√12 ≈ 9.6 % (ggml's step is 2.5/8: 9.0 %),
//   Q4_K 4.1/15/√12 = 7.9 %,      Q6_K 2.2·2/63/√12 = 2.0 %.
// The bounds leave room for the spread of the group maxima and for the
// rounded scales (f16 and 6-bit sub-scales) but not for a wrong decoder,
// which would be off by tens of percent or more.
double relativeRmsBound(TensorType type) {
    switch (type) {
    case TensorType::Q8_0: return 0.01;
    case TensorType::Q4_0: return 0.12;
    case TensorType::Q4_K: return 0.10;
    case TensorType::Q6_K: return 0.03;
    default: return 0;
    }
}

struct Totals {
    double squaredError = 0, signal = 0, nominal = 0;
    int64_t elements = 0;
    int tensors = 0;
};

}  // namespace

class TestQuantFixtures : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { original_ = std::make_unique<gguf::File>(gguf::File::open(fixture("llama-spm-f16.gguf"))); }

    void dequantizedMatchesOriginal_data() {
        QTest::addColumn<QString>("copy");
        for (const char* c : kCopies) QTest::newRow(c) << QString(c);
    }

    void dequantizedMatchesOriginal() {
        QFETCH(QString, copy);
        const auto file = gguf::File::open(fixture(copy.toStdString()));
        std::map<TensorType, Totals> perType;
        for (const auto& t : file.tensors()) {
            const auto& orig = original_->tensor(t.name);
            QCOMPARE(t.ne, orig.ne);
            if (t.type == TensorType::F32) {  // norms stay F32: must be identical
                QCOMPARE(orig.type, TensorType::F32);
                QVERIFY(std::memcmp(t.data, orig.data, t.nbytes) == 0);
                continue;
            }
            QCOMPARE(orig.type, TensorType::F16);
            const auto src = dequantizeAll(orig);
            const auto deq = dequantizeAll(t);
            double se = 0, signal = 0;
            for (size_t i = 0; i < src.size(); ++i) {
                const double e = double(deq[i]) - double(src[i]);
                se += e * e;
                signal += double(src[i]) * double(src[i]);
            }
            const auto geometry = test::quantGeometry(t.type);
            QVERIFY2(geometry.has_value(), std::string(tensorTypeName(t.type)).c_str());
            double nominal = 0;
            for (int64_t r = 0; r < orig.rows(); ++r)
                nominal += test::nominalSquaredError(*geometry, src.data() + r * t.ne[0], t.ne[0]);
            // Per tensor: within 1.25 x the uniform-quantizer model (see test_quant_roundtrip).
            QVERIFY2(se > 0 && se <= 1.25 * 1.25 * nominal,
                     qPrintable(QString("%1: rms %2, model %3")
                                    .arg(QString::fromUtf8(t.name.data(), int(t.name.size())))
                                    .arg(std::sqrt(se / double(src.size())))
                                    .arg(std::sqrt(nominal / double(src.size())))));
            auto& tot = perType[t.type];
            tot.squaredError += se;
            tot.signal += signal;
            tot.nominal += nominal;
            tot.elements += int64_t(src.size());
            ++tot.tensors;
        }
        QVERIFY(!perType.empty());
        for (const auto& [type, tot] : perType) {
            const double rms = std::sqrt(tot.squaredError / double(tot.elements));
            const double rel = std::sqrt(tot.squaredError / tot.signal);
            qInfo("%-22s %-5s %2d tensors %9lld values: RMS error %.6f, relative RMS %.4f %%, model RMS %.6f",
                  copy.toUtf8().constData(), std::string(tensorTypeName(type)).c_str(), tot.tensors,
                  (long long)tot.elements, rms, 100 * rel, std::sqrt(tot.nominal / double(tot.elements)));
            const double bound = relativeRmsBound(type);
            QVERIFY2(bound > 0, "no bound for this format");
            QVERIFY2(rel < bound, qPrintable(QString("relative RMS %1 >= %2").arg(rel).arg(bound)));
        }
    }

    void requantizingReproducesCopy_data() { dequantizedMatchesOriginal_data(); }

    void requantizingReproducesCopy() {
        QFETCH(QString, copy);
        const auto file = gguf::File::open(fixture(copy.toStdString()));
        int compared = 0;
        for (const auto& t : file.tensors()) {
            if (t.type == TensorType::F32) continue;
            const auto src = dequantizeAll(original_->tensor(t.name));
            const size_t bytes = rowBytes(t.type, t.ne[0]);
            std::vector<uint8_t> row(bytes);
            for (int64_t r = 0; r < t.rows(); ++r) {
                tensor::quantizeRow(t.type, src.data() + r * t.ne[0], row.data(), t.ne[0]);
                if (std::memcmp(row.data(), t.row(r), bytes) != 0)
                    QFAIL(qPrintable(QString("%1 %2 row %3 differs")
                                         .arg(copy, QString::fromUtf8(t.name.data(), int(t.name.size())))
                                         .arg(r)));
            }
            ++compared;
        }
        QVERIFY(compared > 0);
    }

private:
    std::unique_ptr<gguf::File> original_;
};

CAIRN_CONFORMANCE_MAIN(TestQuantFixtures)
#include "test_quant_fixtures.moc"
