// `cairn-cli download` and `cairn-cli search-hub` against the loopback mock
// hub: a file lands in --dir with its checksum checked; every failure (wrong
// checksum, dropped connection, 401, 404) exits 1 with one line on stderr and
// leaves --dir empty; a split set comes whole; the token comes from HF_TOKEN.
#include "mock_hub.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using cairn::test::MockFile;
using cairn::test::MockHub;

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out, err;
};

Run runCli(const QStringList& args, const QString& token = {}) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("HF_TOKEN"));
    if (!token.isEmpty()) env.insert(QStringLiteral("HF_TOKEN"), token);
    p.setProcessEnvironment(env);
    p.start(qEnvironmentVariable("CAIRN_CLI"), args);
    Run r;
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

QByteArray lastLine(const QByteArray& text) {
    const QList<QByteArray> lines = text.trimmed().split('\n');
    return lines.isEmpty() ? QByteArray() : lines.last();
}

}  // namespace

class TestCliDownload : public QObject {
    Q_OBJECT
    MockHub hub_;
    QString url_;

private slots:
    void initTestCase() {
        QVERIFY2(QFileInfo::exists(qEnvironmentVariable("CAIRN_CLI")), "CAIRN_CLI names no cairn-cli");
        MockFile bad{"bad-Q4_0.gguf", cairn::test::fillerBytes(200000, 2)};
        bad.listedSha = std::string(64, '1');
        MockFile dropped{"drop-Q4_0.gguf", cairn::test::fillerBytes(900000, 3)};
        dropped.dropAfter = 300000;
        MockFile gone{"gone-Q4_0.gguf", cairn::test::fillerBytes(1000, 4)};
        gone.missing = true;
        hub_.repos = {
            {"org/Models-GGUF",
             1234,
             56,
             {},
             {{"good-Q4_0.gguf", cairn::test::fillerBytes(500000, 1)},
              bad,
              dropped,
              gone,
              {"big-00001-of-00002.gguf", cairn::test::fillerBytes(70000, 5)},
              {"big-00002-of-00002.gguf", cairn::test::fillerBytes(80000, 6)}}},
            {"org/Gated-GGUF", 7, 1, "tok-123", {{"g-Q8_0.gguf", cairn::test::fillerBytes(1000, 7)}}},
        };
        hub_.start();
        url_ = QString::fromStdString(hub_.url());
    }

    void downloadsAFile() {
        QTemporaryDir dir;
        const Run r = runCli({"download", "--hub", url_, "org/Models-GGUF", "good-Q4_0.gguf", "--dir", dir.path()});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(r.out.trimmed(), dir.filePath(QStringLiteral("good-Q4_0.gguf")).toUtf8());
        QVERIFY(r.err.contains("good-Q4_0.gguf"));  // progress
        QFile f(dir.filePath(QStringLiteral("good-Q4_0.gguf")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray::fromStdString(hub_.repos[0].files[0].content));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
    }

    void failuresLeaveNothing_data() {
        QTest::addColumn<QString>("repo");
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("reason");
        QTest::newRow("checksum") << "org/Models-GGUF"
                                  << "bad-Q4_0.gguf"
                                  << "bad-Q4_0.gguf: checksum mismatch";
        QTest::newRow("dropped") << "org/Models-GGUF"
                                 << "drop-Q4_0.gguf"
                                 << "drop-Q4_0.gguf: ";
        QTest::newRow("404 file") << "org/Models-GGUF"
                                  << "gone-Q4_0.gguf"
                                  << "not found on the hub (404)";
        QTest::newRow("404 repo") << "org/None"
                                  << "x.gguf"
                                  << "org/None: not found on the hub (404)";
        QTest::newRow("not listed") << "org/Models-GGUF"
                                    << "other.gguf"
                                    << "no GGUF file 'other.gguf'";
        QTest::newRow("401") << "org/Gated-GGUF"
                             << "g-Q8_0.gguf"
                             << "(401)";
    }
    void failuresLeaveNothing() {
        QFETCH(QString, repo);
        QFETCH(QString, file);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        const Run r = runCli({"download", "--hub", url_, repo, file, "--dir", dir.path()});
        QCOMPARE(r.exitCode, 1);
        const QByteArray line = lastLine(r.err);
        QVERIFY2(line.startsWith("cairn-cli download: ") && line.contains(reason.toUtf8()), line.constData());
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot), QStringList());
    }

    void tokenFromEnvironment() {
        QTemporaryDir dir;
        const Run r = runCli({"download", "--hub", url_, "org/Gated-GGUF", "g-Q8_0.gguf", "--dir", dir.path()},
                             QStringLiteral("tok-123"));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("g-Q8_0.gguf"))));
    }

    void splitSetComesWhole() {
        QTemporaryDir dir;
        const Run r =
            runCli({"download", "--hub", url_, "org/Models-GGUF", "big-00002-of-00002.gguf", "--dir", dir.path()});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files),
                 (QStringList{"big-00001-of-00002.gguf", "big-00002-of-00002.gguf"}));
        QCOMPARE(r.out.trimmed().split('\n').size(), 2);
    }

    void searchHub() {
        const Run r = runCli({"search-hub", "--hub", url_, "--sort", "updated", "models", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j.size(), size_t(2));
        QCOMPARE(j[0]["id"].get<std::string>(), std::string("org/Models-GGUF"));
        QCOMPARE(j[0]["downloads"].get<int>(), 1234);
        QCOMPARE(j[0]["files"].size(), size_t(6));
        QVERIFY(j[1]["gated"].get<bool>());
        QCOMPARE(hub_.lastSearchQuery(), std::string("search=models&filter=gguf&sort=lastModified&direction=-1"));
        const Run text = runCli({"search-hub", "--hub", url_, "models"});
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.contains("org/Gated-GGUF  (downloads 7, likes 1, gated)"));
        const Run bad = runCli({"search-hub", "--hub", "ftp://x", "models"});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY(lastLine(bad.err).contains("is not an http(s)://host address"));
    }
};

QTEST_GUILESS_MAIN(TestCliDownload)
#include "test_cli_download.moc"
