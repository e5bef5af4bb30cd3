// Degenerate hyperparameters are refused at load with the key named: a NaN,
// infinite, zero or negative norm epsilon, a rope base of at most 1, bad rope
// scaling and YaRN factors, non-finite or non-positive rope_freqs divisors,
// and head counts or sizes too large for the size computations. The same
// files with sane values load (so each refusal is the value's doing).
#include "cairn/error.h"
#include "cairn/model.h"
#include "tiny_mamba.h"
#include "tiny_models.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <functional>
#include <limits>

using namespace cairn;
using namespace cairn::test;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

using Edit = std::function<void(gguf::Writer&)>;

Edit setFloat(std::string key, float v) {
    return [=](gguf::Writer& w) { w.setFloat32(key, v); };
}
Edit setDouble(std::string key, double v) {
    return [=](gguf::Writer& w) { w.setFloat64(key, v); };
}
Edit setUInt(std::string key, uint32_t v) {
    return [=](gguf::Writer& w) { w.setUInt32(key, v); };
}
Edit yarnWith(Edit e) {
    return [=](gguf::Writer& w) {
        w.setString("llama.rope.scaling.type", "yarn");
        w.setFloat32("llama.rope.scaling.factor", 4.f);
        w.setUInt32("llama.rope.scaling.original_context_length", 64);
        e(w);
    };
}
Edit ropeFreqs(std::vector<float> f) {
    return [=](gguf::Writer& w) {
        w.addTensor("rope_freqs.weight", TensorType::F32, {int64_t(f.size())},
                    {reinterpret_cast<const uint8_t*>(f.data()), f.size() * 4});
    };
}

}  // namespace

Q_DECLARE_METATYPE(Edit)

class TestModelMetadata : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    int n_ = 0;

    std::string load(gguf::Writer& w) {
        const std::string path = dir_.filePath(QString("m%1.gguf").arg(n_++)).toStdString();
        w.write(path);
        try {
            Model::load(path);
        } catch (const Error& e) {
            return e.what();
        }
        return {};
    }

private slots:
    void saneFilesLoad() {
        auto llama = tinyModelWriter({});
        QCOMPARE(load(llama), std::string());
        auto yarn = tinyModelWriter({});
        yarnWith([](gguf::Writer& w) { w.setFloat32("llama.rope.scaling.yarn_beta_fast", 16.f); })(yarn);
        QCOMPARE(load(yarn), std::string());
        auto freqs = tinyModelWriter({});
        ropeFreqs({1, 1, 1, 1.5f, 2.7f, 8, 8, 8})(freqs);
        QCOMPARE(load(freqs), std::string());
        TinyMambaOptions m;
        auto mamba = tinyMambaWriter(m);
        QCOMPARE(load(mamba), std::string());
    }

    void transformerRefusals_data() {
        QTest::addColumn<Edit>("edit");
        QTest::addColumn<QString>("needle");
        const std::string eps = "llama.attention.layer_norm_rms_epsilon";
        QTest::newRow("eps nan") << setFloat(eps, kNaN) << QString("%1 is nan").arg(eps.c_str());
        QTest::newRow("eps inf") << setFloat(eps, kInf) << QString("%1 is inf").arg(eps.c_str());
        QTest::newRow("eps 0") << setFloat(eps, 0.f) << QString("%1 is 0").arg(eps.c_str());
        QTest::newRow("eps negative") << setFloat(eps, -1e-5f) << QString(eps.c_str());
        QTest::newRow("eps float64 below float") << setDouble(eps, 1e-60) << QString(eps.c_str());
        QTest::newRow("eps float64 above float") << setDouble(eps, 1e300) << QString(eps.c_str());
        const std::string base = "llama.rope.freq_base";
        QTest::newRow("base 1") << setFloat(base, 1.f) << QString("%1 is 1;").arg(base.c_str());
        QTest::newRow("base 0.5") << setFloat(base, 0.5f) << QString(base.c_str());
        QTest::newRow("base nan") << setFloat(base, kNaN) << QString("%1 is nan").arg(base.c_str());
        QTest::newRow("base inf") << setFloat(base, kInf) << QString("%1 is inf").arg(base.c_str());
        const std::string factor = "llama.rope.scaling.factor";
        QTest::newRow("factor nan") << setFloat(factor, kNaN) << QString(factor.c_str());
        QTest::newRow("factor negative") << setFloat(factor, -2.f) << QString(factor.c_str());
        QTest::newRow("factor inf") << setFloat(factor, kInf) << QString(factor.c_str());
        QTest::newRow("scale_linear nan")
            << setFloat("llama.rope.scale_linear", kNaN) << QString("llama.rope.scale_linear");
        QTest::newRow("yarn factor nan") << yarnWith(setFloat(factor, kNaN)) << QString(factor.c_str());
        QTest::newRow("yarn ext nan") << yarnWith(setFloat("llama.rope.scaling.yarn_ext_factor", kNaN))
                                      << QString("llama.rope.scaling.yarn_ext_factor is nan");
        QTest::newRow("yarn attn 0") << yarnWith(setFloat("llama.rope.scaling.attn_factor", 0.f))
                                     << QString("llama.rope.scaling.attn_factor is 0");
        QTest::newRow("yarn attn inf") << yarnWith(setFloat("llama.rope.scaling.attn_factor", kInf))
                                       << QString("llama.rope.scaling.attn_factor is inf");
        QTest::newRow("yarn beta_fast 0") << yarnWith(setFloat("llama.rope.scaling.yarn_beta_fast", 0.f))
                                          << QString("llama.rope.scaling.yarn_beta_fast");
        QTest::newRow("yarn beta_slow nan") << yarnWith(setFloat("llama.rope.scaling.yarn_beta_slow", kNaN))
                                            << QString("llama.rope.scaling.yarn_beta_slow");
        QTest::newRow("yarn original context 0") << yarnWith(setUInt("llama.rope.scaling.original_context_length", 0))
                                                 << QString("llama.rope.scaling.original_context_length");
        QTest::newRow("rope_freqs nan") << ropeFreqs({1, 1, 1, kNaN, 2, 8, 8, 8})
                                        << QString("rope_freqs.weight value 3 is nan");
        QTest::newRow("rope_freqs inf") << ropeFreqs({1, 1, 1, 1, 2, 8, 8, kInf})
                                        << QString("rope_freqs.weight value 7 is inf");
        QTest::newRow("rope_freqs 0") << ropeFreqs({0, 1, 1, 1, 2, 8, 8, 8})
                                      << QString("rope_freqs.weight value 0 is 0");
        QTest::newRow("heads huge") << setUInt("llama.attention.head_count", 0x80000000u)
                                    << QString("llama.attention.head_count is 2147483648");
        QTest::newRow("kv heads above heads")
            << setUInt("llama.attention.head_count_kv", 8) << QString("llama.attention.head_count_kv is 8");
        QTest::newRow("key length huge") << setUInt("llama.attention.key_length", 0xFFFFFFFFu)
                                         << QString("llama.attention.key_length is 4294967295");
        QTest::newRow("feed forward huge")
            << setUInt("llama.feed_forward_length", 0xFFFFFFFFu) << QString("llama.feed_forward_length");
        QTest::newRow("embedding 0") << setUInt("llama.embedding_length", 0) << QString("llama.embedding_length is 0");
        QTest::newRow("layers huge") << setUInt("llama.block_count", 1u << 30) << QString("llama.block_count");
        QTest::newRow("context huge") << Edit([](gguf::Writer& w) {
            w.setUInt64("llama.context_length", uint64_t(1) << 40);
        }) << QString("llama.context_length is 1099511627776");
        QTest::newRow("rope dims odd") << setUInt("llama.rope.dimension_count", 15)
                                       << QString("llama.rope.dimension_count is 15");
        QTest::newRow("rope dims above head")
            << setUInt("llama.rope.dimension_count", 64) << QString("llama.rope.dimension_count is 64");
    }

    void transformerRefusals() {
        QFETCH(Edit, edit);
        QFETCH(QString, needle);
        auto w = tinyModelWriter({});
        edit(w);
        const std::string error = load(w);
        QVERIFY2(!error.empty(), "loaded");
        QVERIFY2(error.find(needle.toStdString()) != std::string::npos, error.c_str());
    }

    void mambaRefusals_data() {
        QTest::addColumn<bool>("mamba2");
        QTest::addColumn<Edit>("edit");
        QTest::addColumn<QString>("needle");
        for (bool m2 : {false, true}) {
            const std::string a = m2 ? "mamba2." : "mamba.";
            const std::string eps = a + "attention.layer_norm_rms_epsilon";
            QTest::addRow("%s eps nan", a.c_str())
                << m2 << setFloat(eps, kNaN) << QString("%1 is nan").arg(eps.c_str());
            QTest::addRow("%s eps 0", a.c_str()) << m2 << setFloat(eps, 0.f) << QString("%1 is 0").arg(eps.c_str());
            QTest::addRow("%s inner huge", a.c_str()) << m2 << setUInt(a + "ssm.inner_size", 0xFFFFFFFFu)
                                                      << QString((a + "ssm.inner_size is 4294967295").c_str());
            QTest::addRow("%s time step rank above inner", a.c_str())
                << m2 << setUInt(a + "ssm.time_step_rank", 100000) << QString((a + "ssm.time_step_rank").c_str());
            QTest::addRow("%s context huge", a.c_str())
                << m2 << Edit([a](gguf::Writer& w) { w.setInt64(a + "context_length", -1); })
                << QString((a + "context_length is -1").c_str());
        }
        QTest::newRow("mamba2 groups above heads")
            << true << setUInt("mamba2.ssm.group_count", 64) << QString("mamba2.ssm.group_count is 64");
    }

    void mambaRefusals() {
        QFETCH(bool, mamba2);
        QFETCH(Edit, edit);
        QFETCH(QString, needle);
        TinyMambaOptions o;
        o.mamba2 = mamba2;
        if (mamba2) o.inner = 128;
        auto w = tinyMambaWriter(o);
        edit(w);
        const std::string error = load(w);
        QVERIFY2(!error.empty(), "loaded");
        QVERIFY2(error.find(needle.toStdString()) != std::string::npos, error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestModelMetadata)
#include "test_model_metadata.moc"
