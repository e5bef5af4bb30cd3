// `cairn-cli chat` end to end: one turn on a model file and the same turn
// through `cairn-cli serve` with --remote give the same greedy reply, finish
// reason and usage (--json); errors are one line naming the host; wrong
// argument combinations are refused.
#include "tiny_models.h"

#include <nlohmann/json.hpp>

#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

using nlohmann::json;

namespace {

QString cli() { return qEnvironmentVariable("CAIRN_CLI"); }

struct Run {
    int exitCode = -1;
    QByteArray out, err;
};

Run runCli(const QStringList& args) {
    QProcess p;
    p.start(cli(), args);
    Run r;
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        r.err = "timed out";
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

}  // namespace

class TestCliChat : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString model_, messages_;

private slots:
    void initTestCase() {
        QVERIFY2(QFileInfo::exists(cli()), "CAIRN_CLI names no cairn-cli");
        cairn::test::TinyModelOptions t;
        t.type = cairn::TensorType::Q8_0;
        model_ = QString::fromStdString(cairn::test::writeTinyModel((dir_.path() + "/tiny.gguf").toStdString(), t));
        messages_ = dir_.path() + "/m.json";
        QFile f(messages_);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            "[{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", \"content\": \"Hello there\"}]");
    }

    void remoteEqualsLocal() {
        QProcess serve;
        serve.start(
            cli(),
            {"serve", "-m", model_, "--port", "0", "--alias", "tiny", "--ctx", "256", "-t", "1", "--api-key", "k1"});
        QVERIFY(serve.waitForStarted());
        QString url;
        QByteArray out;
        for (int i = 0; i < 300 && url.isEmpty(); ++i) {
            serve.waitForReadyRead(100);
            out += serve.readAllStandardOutput();
            const auto m = QRegularExpression("listening on (http://\\S+)").match(QString::fromUtf8(out));
            if (m.hasMatch()) url = m.captured(1);
        }
        QVERIFY2(!url.isEmpty(), serve.readAllStandardError().constData());

        const QStringList turn = {"--messages", messages_, "-n", "12", "--temp", "0", "--json"};
        const Run remote = runCli(QStringList{"chat", "--remote", url, "--api-key", "k1"} + turn);
        const Run local = runCli(QStringList{"chat", "-m", model_, "--ctx", "256", "-t", "1"} + turn);
        const Run badKey = runCli(QStringList{"chat", "--remote", url, "--api-key", "nope"} + turn);
        serve.terminate();
        QVERIFY(serve.waitForFinished(10000));
        QCOMPARE(remote.exitCode, 0);
        QCOMPARE(local.exitCode, 0);
        const json r = json::parse(remote.out.toStdString());
        const json l = json::parse(local.out.toStdString());
        QVERIFY(!l["content"].get<std::string>().empty());
        // The server sends invalid UTF-8 as U+FFFD; --json does the same.
        QCOMPARE(r["content"].get<std::string>(), l["content"].get<std::string>());
        QCOMPARE(r["finish_reason"], l["finish_reason"]);
        QCOMPARE(r["usage"]["completion_tokens"], l["usage"]["completion_tokens"]);
        QCOMPARE(r["usage"]["prompt_tokens"], l["usage"]["prompt_tokens"]);
        QCOMPARE(badKey.exitCode, 1);
        QVERIFY2(badKey.err.contains("401") && badKey.err.count('\n') == 1, badKey.err.constData());
    }

    void errorsAreOneLine() {
        const Run unreachable = runCli({"chat", "--remote", "http://127.0.0.1:1/v1", "--remote-model", "m",
                                        "--messages", messages_, "--timeout", "5"});
        QCOMPARE(unreachable.exitCode, 1);
        QVERIFY2(unreachable.err.contains("cannot reach 127.0.0.1:1") && unreachable.err.count('\n') == 1,
                 unreachable.err.constData());
        const Run both = runCli({"chat", "-m", model_, "--remote", "http://x", "--messages", messages_});
        QCOMPARE(both.exitCode, 1);
        QVERIFY(both.err.contains("exactly one of"));
        const Run keyAlone = runCli({"chat", "-m", model_, "--api-key", "k", "--messages", messages_});
        QCOMPARE(keyAlone.exitCode, 1);
        const Run badUrl = runCli({"chat", "--remote", "localhost:8080", "--messages", messages_});
        QCOMPARE(badUrl.exitCode, 1);
        QVERIFY2(badUrl.err.contains("not an http://"), badUrl.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliChat)
#include "test_cli_chat.moc"
