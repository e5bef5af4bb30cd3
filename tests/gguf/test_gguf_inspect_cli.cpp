// `cairn-cli inspect` through the built binary, on a model file the test
// writes (so every expected figure follows from what was written) and on
// corrupt, truncated and missing files.
#include "cli_runner.h"
#include "gguf_bytes.h"
#include "shared_data.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>

using namespace cairn;
using namespace cairn::test;

namespace {

void writeBytes(const QString& path, const Bytes& b) {
    std::ofstream out(path.toStdString(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

QJsonObject parseJson(const QByteArray& out) {
    QJsonParseError err{};
    auto doc = QJsonDocument::fromJson(out, &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject()) return {};
    return doc.object();
}

}  // namespace

class TestGgufInspectCli : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString model_;
    Bytes bytes_;
    // What the model holds.
    static constexpr int64_t kLayers = 3, kEmbd = 64, kHeads = 4, kKvHeads = 2, kVocab = 10;
    static constexpr int64_t kParams = 64 * kVocab + 64 + 64 * 64 + 32 * 2;

    void expectOneLineFailure(const QStringList& args, const std::string& mustContain) {
        auto r = runCli(args);
        QCOMPARE(r.status, 1);
        QVERIFY(r.out.isEmpty());
        QByteArray err = r.err.trimmed();
        QVERIFY2(!err.isEmpty() && !err.contains('\n'), r.err.constData());
        QVERIFY2(err.contains(QByteArray::fromStdString(mustContain)), r.err.constData());
    }

private slots:
    void initTestCase() {
        QVERIFY2(!qgetenv("CAIRN_CLI").isEmpty(), "CAIRN_CLI is not set");
        QVERIFY(dir_.isValid());
        gguf::Writer w;
        w.setString("general.architecture", "llama");
        w.setString("general.name", "tiny-inspect");
        w.setUInt32("llama.context_length", 2048);
        w.setUInt32("llama.block_count", kLayers);
        w.setUInt32("llama.embedding_length", kEmbd);
        w.setUInt32("llama.attention.head_count", kHeads);
        w.setUInt32("llama.attention.head_count_kv", kKvHeads);
        w.setString("tokenizer.ggml.model", "gpt2");
        w.setString("tokenizer.ggml.pre", "llama-bpe");
        std::vector<std::string> tokens;
        for (int i = 0; i < kVocab; ++i) tokens.push_back(std::string(1, 't').append(std::to_string(i)));
        w.setStrings("tokenizer.ggml.tokens", tokens);
        w.setString("tokenizer.chat_template", "{{ messages }}");
        w.addTensor("token_embd.weight", TensorType::Q8_0, {64, kVocab}, Bytes(34 * 2 * kVocab, 1));
        w.addTensor("output_norm.weight", TensorType::F32, {64}, Bytes(64 * 4, 2));
        w.addTensor("blk.0.attn_q.weight", TensorType::F16, {64, 64}, Bytes(64 * 64 * 2, 3));
        w.addTensor("blk.0.attn_q.bias", TensorType::F32, {32, 2}, Bytes(64 * 4, 4));
        model_ = dir_.filePath("tiny.gguf");
        bytes_ = w.toBytes();
        writeBytes(model_, bytes_);
    }

    void jsonHasTheRequiredKeys() {
        auto r = runCli({"inspect", model_, "--json", "--ctx", "100"});
        QCOMPARE(r.status, 0);
        QVERIFY2(r.out.trimmed().count('\n') == 0, "one JSON object on one line");
        auto j = parseJson(r.out);
        QVERIFY2(!j.isEmpty(), r.out.constData());
        QCOMPARE(j["architecture"].toString(), QString("llama"));
        QCOMPARE(j["name"].toString(), QString("tiny-inspect"));
        QCOMPARE(j["parameters"].toInteger(), kParams);
        QCOMPARE(j["file_size"].toInteger(), qint64(bytes_.size()));
        QCOMPARE(j["file_size"].toInteger(), QFileInfo(model_).size());
        QCOMPARE(j["tensor_count"].toInt(), 4);
        QCOMPARE(j["context_length"].toInteger(), 2048);
        QCOMPARE(j["chat_template"].toBool(), true);
        auto tok = j["tokenizer"].toObject();
        QCOMPARE(tok["model"].toString(), QString("gpt2"));
        QCOMPARE(tok["pre"].toString(), QString("llama-bpe"));
        QCOMPARE(tok["size"].toInt(), int(kVocab));
        auto types = j["tensor_types"].toObject();
        QCOMPARE(types["F32"].toObject()["tensors"].toInt(), 2);
        QCOMPARE(types["F32"].toObject()["elements"].toInteger(), 64 + 64);
        QCOMPARE(types["Q8_0"].toObject()["elements"].toInteger(), 64 * kVocab);
        QCOMPARE(types["F16"].toObject()["bytes"].toInteger(), 64 * 64 * 2);
        // f16 K and V for 100 tokens: layers x ctx x kv heads x (head dim K + V) x 2 bytes.
        auto ram = j["ram_estimate"].toObject();
        qint64 kv = kLayers * 100 * kKvHeads * (kEmbd / kHeads * 2) * 2;
        QCOMPARE(ram["context"].toInteger(), 100);
        QCOMPARE(ram["memory_bytes"].toInteger(), kv);
        QCOMPARE(ram["total_bytes"].toInteger(), qint64(bytes_.size()) + kv);
        QVERIFY(!j.contains("tensors"));
    }

    void jsonTensorTable() {
        auto r = runCli({"inspect", "--tensors", "--json", model_});
        QCOMPARE(r.status, 0);
        auto tensors = parseJson(r.out)["tensors"].toArray();
        QCOMPARE(tensors.size(), 4);
        auto t = tensors[2].toObject();
        QCOMPARE(t["name"].toString(), QString("blk.0.attn_q.weight"));
        QCOMPARE(t["type"].toString(), QString("F16"));
        QCOMPARE(t["shape"].toArray().size(), 2);
        QCOMPARE(t["bytes"].toInteger(), 64 * 64 * 2);
        // Default context: the trained one (2048, under the 4096 cap).
        QCOMPARE(parseJson(r.out)["ram_estimate"].toObject()["context"].toInteger(), 2048);
    }

    void humanOutput() {
        auto r = runCli({"inspect", model_});
        QCOMPARE(r.status, 0);
        QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.startsWith("tiny.gguf: GGUF v3, 4 tensors, 11 metadata keys\n"), qPrintable(out));
        auto line = [&](const QString& label) {
            for (const QString& l : out.split('\n'))
                if (l.trimmed().startsWith(label)) return l.trimmed().mid(label.size()).trimmed();
            return QString();
        };
        QCOMPARE(line("architecture"), QString("llama"));
        QCOMPARE(line("name"), QString("tiny-inspect"));
        QCOMPARE(line("parameters"), QString("4.86 K (4,864)"));
        QVERIFY2(line("tensor types").startsWith("F16 x1 (84.2 %), Q8_0 x1 (13.2 %), F32 x2 (2.6 %)"), qPrintable(out));
        QCOMPARE(line("context length"), QString("2,048 (trained)"));
        QCOMPARE(line("tokenizer"), QString("byte-level BPE (gpt2, pre-tokenizer llama-bpe), 10 tokens"));
        QCOMPARE(line("chat template"), QString("yes"));
        QString size = QString::number(bytes_.size());
        for (int i = size.size() - 3; i > 0; i -= 3) size.insert(i, ',');
        QVERIFY2(line("file size").endsWith("(" + size + " bytes)"), qPrintable(out));
        QVERIFY2(line("RAM estimate").contains("at 2,048 tokens"), qPrintable(out));
        QVERIFY2(line("RAM estimate").contains("KV cache (f16)"), qPrintable(out));
        QVERIFY(!out.contains("blk.0.attn_q.weight"));
    }

    void humanTensorTable() {
        auto r = runCli({"inspect", model_, "--tensors"});
        QCOMPARE(r.status, 0);
        QString out = QString::fromUtf8(r.out);
        for (const char* name : {"token_embd.weight", "output_norm.weight", "blk.0.attn_q.weight", "blk.0.attn_q.bias"})
            QVERIFY2(out.contains(name), name);
        QVERIFY(out.contains("[64, 10]"));
        QVERIFY(out.contains("[32, 2]"));
    }

    void corruptFilesFailWithOneLine() {
        Bytes bad = bytes_;
        bad[0] = 'X';
        QString path = dir_.filePath("bad-magic.gguf");
        writeBytes(path, bad);
        expectOneLineFailure({"inspect", path}, "not a GGUF file");
        expectOneLineFailure({"inspect", path, "--json"}, path.toStdString());

        Bytes cut(bytes_.begin(), bytes_.begin() + 200);
        path = dir_.filePath("cut.gguf");
        writeBytes(path, cut);
        expectOneLineFailure({"inspect", path}, "truncated or corrupt file");

        Bytes dup = bytes_;
        auto f = gguf::File::fromMemory(dup.data(), dup.size(), "m");
        auto t = tensorFields(f, "blk.0.attn_q.bias");
        store<uint32_t>(dup, t.type, 99);
        path = dir_.filePath("bad-type.gguf");
        writeBytes(path, dup);
        expectOneLineFailure({"inspect", path}, "tensor 'blk.0.attn_q.bias': unknown tensor type 99");

        expectOneLineFailure({"inspect", dir_.filePath("absent.gguf")}, "cannot open");
        expectOneLineFailure({"inspect", model_, "--ctx", "-5"}, "--ctx");
        expectOneLineFailure({"inspect"}, "expected one model file");
    }

    void modelStringsNeverReachTheTerminalRaw() {
        // Escape sequences (OSC retitling the window, CSI clearing the screen, the
        // 8-bit CSI U+009B), a bell, a right-to-left override and invalid UTF-8 in the
        // strings inspect shows: written visibly, never as the bytes themselves.
        const std::string name = "evil\x1b]0;pwned\x07\x1b[2J\xC2\x9B"
                                 "31m\xE2\x80\xAEtxt.exe\xFF\\end";
        gguf::Writer w;
        w.setString("general.architecture", "llama\x1b[1m");
        w.setString("general.name", name);
        w.setString("tokenizer.ggml.model", "gpt2\x1b[8m");
        w.setString("tokenizer.ggml.pre", "pre\r\nfake: line");
        w.setStrings("tokenizer.ggml.tokens", {"a", "b"});
        w.addTensor("bad\x1b[5mname", TensorType::F32, {4}, Bytes(16, 0));
        const QString path = dir_.filePath("escapes.gguf");
        writeBytes(path, w.toBytes());
        for (const QStringList& args :
             {QStringList{"inspect", path, "--tensors"}, QStringList{"inspect", path, "--json", "--tensors"}}) {
            auto r = runCli(args);
            QCOMPARE(r.status, 0);
            for (const char* raw : {"\x1b", "\x07", "\r", "\xC2\x9B", "\xE2\x80\xAE", "\xFF"})
                QVERIFY2(!r.out.contains(raw), qPrintable(args.join(' ')));
            if (args.contains("--json")) {
                // JSON escapes them; the value read back is the file's string.
                auto j = parseJson(r.out);
                QCOMPARE(j.value("name").toString(), QString::fromUtf8(QByteArray::fromStdString(name)));
                QCOMPARE(j.value("tokenizer").toObject().value("pre").toString(), QString("pre\r\nfake: line"));
            } else {
                QVERIFY2(r.out.contains("evil\\x1B]0;pwned\\x07\\x1B[2J\\u{009B}31m\\u{202E}txt.exe\\xFF\\\\end"),
                         r.out.constData());
                QVERIFY(r.out.contains("llama\\x1B[1m"));
                QVERIFY(r.out.contains("pre\\x0D\\x0Afake: line"));
                QVERIFY(r.out.contains("bad\\x1B[5mname"));
                QVERIFY(!r.out.contains("\nfake: line"));
            }
        }
        // An error quoting a string of the file is escaped too.
        gguf::Writer bad;
        bad.setString("general.architecture", "x\x1b]0;t\x07");
        const QString badPath = dir_.filePath("bad-arch.gguf");
        writeBytes(badPath, bad.toBytes());
        const QString messages = dir_.filePath("none.json");
        writeBytes(messages, Bytes{'[', ']'});
        auto r = runCli({"template", "-m", badPath, "--messages", messages, "--ids"});
        QCOMPARE(r.status, 1);
        QVERIFY2(r.err.contains("unsupported architecture 'x\\x1B]0;t\\x07'"), r.err.constData());
        QVERIFY2(!r.err.contains("\x1b") && !r.err.contains("\x07"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestGgufInspectCli)
#include "test_gguf_inspect_cli.moc"
