// Loading: hyperparameters come from the metadata, and unsupported features
// are refused at load time with a message naming them.
#include "cairn/error.h"
#include "cairn/model.h"
#include "cairn/tokenizer.h"
#include "tiny_models.h"

#include <QTemporaryDir>
#include <QTest>

using namespace cairn;
using namespace cairn::test;

class TestTransformerLoad : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    std::string path(const char* name) { return dir_.filePath(name).toStdString(); }

    // Loading must fail with a message containing `needle`.
    void expectRefusal(gguf::Writer& w, const char* name, const std::string& needle) {
        w.write(path(name));
        try {
            Model::load(path(name));
            QFAIL(qPrintable(QString("%1 loaded").arg(name)));
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find(needle) != std::string::npos, e.what());
        }
    }

private slots:
    void readsInfo() {
        TinyModelOptions o;
        o.arch = TinyArch::Qwen3;
        o.layers = 3;
        auto m = Model::load(writeTinyModel(path("q3.gguf"), o));
        QCOMPARE(m->info().architecture, std::string("qwen3"));
        QCOMPARE(m->info().layers, int64_t(3));
        QCOMPARE(m->info().embedding, int64_t(64));
        QCOMPARE(m->info().vocabSize, kTinyVocab);
        QCOMPARE(m->info().trainedContext, int64_t(256));
        QVERIFY(!m->info().recurrent);
        QCOMPARE(m->tokenizer().vocabSize(), int32_t(kTinyVocab));
        auto mem = m->newMemory({100, KvType::F32});
        QCOMPARE(mem->capacity(), int64_t(100));
        // 3 layers × 2 KV heads × 100 positions × (32 + 32) values × 4 bytes
        QCOMPARE(mem->bytes(), size_t(3 * 2 * 100 * 64 * 4));
    }

    void refusesUnknownArchitecture() {
        auto w = tinyModelWriter({});
        w.setString("general.architecture", "gpt-j");
        expectRefusal(w, "gptj.gguf", "unsupported architecture 'gpt-j'");
    }

    void refusesUnknownRopeScaling() {
        auto w = tinyModelWriter({});
        w.setString("llama.rope.scaling.type", "longrope");
        w.setFloat32("llama.rope.scaling.factor", 2.f);
        expectRefusal(w, "longrope.gguf", "unsupported rope scaling type 'longrope'");
    }

    void refusesMissingTensor() {
        TinyModelOptions o;
        o.archName = "qwen2";  // llama tensors: no q/k/v biases
        auto w = tinyModelWriter(o);
        expectRefusal(w, "nobias.gguf", "missing tensor blk.0.attn_q.bias");
    }

    void refusesUnsupportedTensorType() {
        TinyModelOptions o;
        o.type = TensorType::IQ4_NL;
        auto w = tinyModelWriter(o);
        expectRefusal(w, "iq4nl.gguf", "has type IQ4_NL");
    }

    void refusesUnknownTensor() {
        auto w = tinyModelWriter({});
        std::vector<float> v(4, 1.f);
        w.addTensor("blk.0.extra.weight", TensorType::F32, {4}, {reinterpret_cast<const uint8_t*>(v.data()), 16});
        expectRefusal(w, "extra.gguf", "blk.0.extra.weight is not supported");
    }

    void refusesMoE() {
        auto w = tinyModelWriter({});
        w.setUInt32("llama.expert_count", 8);
        expectRefusal(w, "moe.gguf", "mixture-of-experts");
    }

    void refusesBadGeometry() {
        auto w = tinyModelWriter({});
        w.setUInt32("llama.attention.head_count_kv", 3);
        expectRefusal(w, "gqa.gguf", "not a multiple of llama.attention.head_count_kv 3");
    }
};

QTEST_GUILESS_MAIN(TestTransformerLoad)
#include "test_transformer_load.moc"
