// Conformance with ggml itself: quant-zoo.gguf holds, per type T, source rows
// (T.src), ggml's quantization of them (T.q) and ggml's dequantization of that
// (T.deq). Our dequantizer must reproduce T.deq bit for bit and our reference
// quantizer T.q byte for byte.
#include "shared_data.h"

#include "cairn/gguf.h"
#include "tensor/quant.h"

#include <QTest>

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <vector>

using namespace cairn;

namespace {

std::string zooPath() { return test::sharedPath("fixtures/quant-zoo.gguf"); }

// The rows of an F32 tensor as floats.
std::vector<float> floatRow(const gguf::TensorInfo& t, int64_t r) {
    std::vector<float> v(size_t(t.ne[0]));
    std::memcpy(v.data(), t.row(r), v.size() * sizeof(float));
    return v;
}

}  // namespace

class TestQuantZoo : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        file_ = std::make_unique<gguf::File>(gguf::File::open(zooPath()));
        QCOMPARE(file_->getInt("quant_zoo.rows", 0), 12);
        QCOMPARE(file_->getInt("quant_zoo.cols", 0), 512);
        for (auto t : file_->get("quant_zoo.types").strings()) types_.emplace_back(t);
    }

    // The zoo covers every format we support except the trivial F32.
    void coversEverySupportedType() {
        for (uint32_t id = 1; id < 64; ++id) {
            const auto t = tensorTypeTraits(id);
            if (t && t->supported)
                QVERIFY2(std::find(types_.begin(), types_.end(), std::string(t->name)) != types_.end(), t->name.data());
        }
    }

    void dequantize_data() {
        QTest::addColumn<QString>("type");
        for (const auto& t : types_) QTest::newRow(t.c_str()) << QString::fromStdString(t);
    }

    // to_float(T.q) == T.deq, every bit of every row (NaN-free data, so a
    // bit comparison is the right one and also distinguishes -0 from +0).
    void dequantize() {
        QFETCH(QString, type);
        const std::string name = type.toStdString();
        const auto& q = file_->tensor(name + ".q");
        const auto& deq = file_->tensor(name + ".deq");
        QCOMPARE(std::string(tensorTypeName(q.type)), name);
        QVERIFY(traits(q.type).supported);
        QCOMPARE(q.ne[0], deq.ne[0]);
        QCOMPARE(q.rows(), deq.rows());
        int badRows = 0;
        for (int64_t r = 0; r < q.rows(); ++r) {
            std::vector<float> got(size_t(q.ne[0]));
            tensor::dequantizeRow(q.type, q.row(r), got.data(), q.ne[0]);
            const auto want = floatRow(deq, r);
            for (size_t i = 0; i < got.size(); ++i) {
                if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(want[i])) {
                    qWarning("%s row %lld element %zu: got %.9g want %.9g", name.c_str(), (long long)r, i,
                             double(got[i]), double(want[i]));
                    ++badRows;
                    break;
                }
            }
        }
        QCOMPARE(badRows, 0);
    }

    void quantize_data() { dequantize_data(); }

    // quantize_row_*_ref(T.src) == T.q, byte for byte.
    void quantize() {
        QFETCH(QString, type);
        const std::string name = type.toStdString();
        const auto& src = file_->tensor(name + ".src");
        const auto& q = file_->tensor(name + ".q");
        const size_t bytes = rowBytes(q.type, q.ne[0]);
        int badRows = 0;
        for (int64_t r = 0; r < q.rows(); ++r) {
            std::vector<uint8_t> got(bytes);
            tensor::quantizeRow(q.type, floatRow(src, r).data(), got.data(), q.ne[0]);
            const uint8_t* want = q.row(r);
            for (size_t i = 0; i < bytes; ++i) {
                if (got[i] != want[i]) {
                    qWarning("%s row %lld byte %zu (block %zu): got 0x%02x want 0x%02x", name.c_str(), (long long)r, i,
                             i / traits(q.type).blockBytes, got[i], want[i]);
                    ++badRows;
                    break;
                }
            }
        }
        QCOMPARE(badRows, 0);
    }

private:
    std::unique_ptr<gguf::File> file_;
    std::vector<std::string> types_;  // quant_zoo.types
};

CAIRN_CONFORMANCE_MAIN(TestQuantZoo)
#include "test_quant_zoo.moc"
