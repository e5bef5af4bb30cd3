// `cairn-cli tokenize` through the built binary (CAIRN_CLI), on a vocabulary the test writes.
#include "cairn/gguf.h"
#include "written_vocabs.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace cairn;
using namespace cairn::test;

class TestTokenizeCli : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString model_;

    struct Result {
        int status;
        QByteArray out, err;
    };
    Result run(const QStringList& args) {
        QProcess p;
        p.start(QString::fromLocal8Bit(qgetenv("CAIRN_CLI")), QStringList{"tokenize"} + args);
        if (!p.waitForFinished(30000)) return {-1, {}, "timeout"};
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
                p.readAllStandardError()};
    }
    // ids from the `id<TAB>piece` lines
    static QList<int> ids(const QByteArray& out) {
        QList<int> result;
        for (const QByteArray& line : out.split('\n'))
            if (!line.isEmpty()) result.append(line.split('\t').first().toInt());
        return result;
    }

private slots:
    void initTestCase() {
        QVERIFY2(!qgetenv("CAIRN_CLI").isEmpty(), "CAIRN_CLI is not set");
        QVERIFY(dir_.isValid());
        model_ = dir_.filePath("vocab.gguf");
        gguf::Writer w;
        auto bytes = bpeVocab({"a b"});
        auto file = gguf::File::fromMemory(bytes.data(), bytes.size(), "memory");
        for (const auto& v : file.metadata()) w.copyValue(v);
        w.setBool("tokenizer.ggml.add_bos_token", true);  // so that --bos has something to add
        w.write(model_.toStdString());
    }

    void plainTextByDefault() {
        auto r = run({"-m", model_, "<|im_start|>ab\n"});
        QCOMPARE(r.status, 0);
        auto got = ids(r.out);
        QVERIFY(!got.contains(kImStart));
        QVERIFY(!got.contains(kEndOfText));  // no BOS without --bos
        QVERIFY(got.contains(kAb));
        QVERIFY(r.out.contains("\t\\n\n"));  // the newline piece is shown escaped
    }

    void specialAndBos() {
        auto r = run({"-m", model_, "--special", "--bos", "<|im_start|>ab"});
        QCOMPARE(r.status, 0);
        QCOMPARE(ids(r.out), (QList<int>{kEndOfText, kImStart, kAb}));
        QVERIFY(r.out.contains(QByteArray::number(kImStart) + "\t<|im_start|>\n"));
    }

    void json() {
        auto r = run({"-m", model_, "--json", "--special", "<|im_end|>ab c"});
        QCOMPARE(r.status, 0);
        QJsonParseError error;
        auto doc = QJsonDocument::fromJson(r.out, &error);
        QCOMPARE(error.error, QJsonParseError::NoError);
        auto idsArray = doc.object().value("ids").toArray();
        auto pieces = doc.object().value("pieces").toArray();
        QCOMPARE(idsArray.size(), 4);
        QCOMPARE(pieces.size(), 4);
        QCOMPARE(idsArray.at(0).toInt(), kImEnd);
        QCOMPARE(pieces.at(0).toString(), QString("<|im_end|>"));
        QCOMPARE(idsArray.at(1).toInt(), kAb);
        QCOMPARE(pieces.at(2).toString(), QString(" "));
        QCOMPARE(pieces.at(3).toString(), QString("c"));
    }

    void unreadableModelFails() {
        auto r = run({"-m", dir_.filePath("missing.gguf"), "text"});
        QCOMPARE(r.status, 1);
        QVERIFY(!r.err.isEmpty());
        QCOMPARE(r.err.count('\n'), 1);
        auto noText = run({"-m", model_});
        QCOMPARE(noText.status, 1);
    }
};

QTEST_GUILESS_MAIN(TestTokenizeCli)
#include "test_tokenize_cli.moc"
