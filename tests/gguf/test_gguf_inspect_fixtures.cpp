// `cairn-cli inspect --json` through the built binary on shared fixtures; the
// expected figures come from the fixtures' README (geometry, vocabulary,
// context length), the parameter count from summing the tensor shapes.
#include "cli_runner.h"
#include "shared_data.h"

#include "cairn/gguf.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace cairn;
using namespace cairn::test;

class TestGgufInspectFixtures : public QObject {
    Q_OBJECT

    QJsonObject inspect(const std::string& fixture, const QStringList& extra = {}) {
        auto r = runCli(QStringList{"inspect", "--json", QString::fromStdString(sharedPath(fixture))} + extra);
        if (r.status != 0) qWarning("%s", r.err.constData());
        return QJsonDocument::fromJson(r.out).object();
    }

    static qint64 elementSum(const std::string& fixture) {
        auto f = gguf::File::open(sharedPath(fixture));
        qint64 n = 0;
        for (const auto& t : f.tensors()) n += t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3];
        return n;
    }

private slots:
    void initTestCase() { QVERIFY2(!qgetenv("CAIRN_CLI").isEmpty(), "CAIRN_CLI is not set"); }

    void llamaSpm() {
        auto j = inspect("fixtures/llama-spm-q8_0.gguf");
        QCOMPARE(j["architecture"].toString(), QString("llama"));
        QCOMPARE(j["name"].toString(), QString("cairn-fixture-llama-spm"));
        QCOMPARE(j["parameters"].toInteger(), elementSum("fixtures/llama-spm-q8_0.gguf"));
        QCOMPARE(j["file_size"].toInteger(),
                 QFileInfo(QString::fromStdString(sharedPath("fixtures/llama-spm-q8_0.gguf"))).size());
        QCOMPARE(j["tensor_count"].toInt(), 20);
        QCOMPARE(j["context_length"].toInteger(), 512);
        QCOMPARE(j["tokenizer"].toObject()["model"].toString(), QString("llama"));
        QCOMPARE(j["tokenizer"].toObject()["size"].toInt(), 32000);
        QCOMPARE(j["chat_template"].toBool(), false);
        auto types = j["tensor_types"].toObject();
        QCOMPARE(types["Q8_0"].toObject()["tensors"].toInt(), 15);
        QCOMPARE(types["F32"].toObject()["tensors"].toInt(), 5);
        // 2 layers x 512 tokens x 2 KV heads x (64 + 64) x 2 bytes (f16).
        QCOMPARE(j["ram_estimate"].toObject()["memory_bytes"].toInteger(), 2 * 512 * 2 * 128 * 2);
        // The same weights in F16 and Q8_0 have the same parameter count.
        QCOMPARE(inspect("fixtures/llama-spm-f16.gguf")["parameters"].toInteger(), j["parameters"].toInteger());
    }

    void llamaBpeHasAChatTemplate() {
        auto j = inspect("fixtures/llama-bpe-q8_0.gguf", {"--ctx", "1000"});
        QCOMPARE(j["chat_template"].toBool(), true);
        QCOMPARE(j["tokenizer"].toObject()["size"].toInt(), 128256);
        QCOMPARE(j["tokenizer"].toObject()["pre"].toString(), QString("llama-bpe"));
        // 2 layers x 1000 tokens x 1 KV head x (16 + 16) x 2 bytes.
        QCOMPARE(j["ram_estimate"].toObject()["memory_bytes"].toInteger(), 2 * 1000 * 1 * 32 * 2);
    }

    void qwen3UsesItsKeyLength() {
        // head_dim 32 differs from n_embd / n_head = 16.
        auto j = inspect("fixtures/qwen3-q8_0.gguf", {"--ctx", "10"});
        QCOMPARE(j["architecture"].toString(), QString("qwen3"));
        QCOMPARE(j["ram_estimate"].toObject()["memory_bytes"].toInteger(), 3 * 10 * 2 * 64 * 2);
    }

    void mambaState() {
        auto j = inspect("fixtures/mamba-f16.gguf");
        QCOMPARE(j["architecture"].toString(), QString("mamba"));
        QCOMPARE(j["tokenizer"].toObject()["size"].toInt(), 50280);
        // 2 layers x d_inner 128 x (d_state 16 + d_conv 4 - 1) x 4 bytes, whatever the context.
        QCOMPARE(j["ram_estimate"].toObject()["memory_bytes"].toInteger(), 2 * 128 * 19 * 4);
    }

    void vocabularyOnlyFile() {
        auto j = inspect("vocab/ggml-vocab-qwen2.gguf");
        QCOMPARE(j["parameters"].toInteger(), 0);
        QCOMPARE(j["tensor_count"].toInt(), 0);
        QCOMPARE(j["tokenizer"].toObject()["size"].toInt(), 151936);
    }

    void humanOutputOfAFixture() {
        auto r = runCli({"inspect", QString::fromStdString(sharedPath("fixtures/llama-spm-q4_k_m.gguf"))});
        QCOMPARE(r.status, 0);
        QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.contains("Q4_K x12"), qPrintable(out));
        QVERIFY2(out.contains("Q6_K x3"), qPrintable(out));
        QVERIFY2(out.contains("SentencePiece (llama, pre-tokenizer default), 32,000 tokens"), qPrintable(out));
        qInfo("\n%s", qPrintable(out));
    }
};

CAIRN_CONFORMANCE_MAIN(TestGgufInspectFixtures)
#include "test_gguf_inspect_fixtures.moc"
