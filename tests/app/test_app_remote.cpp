// The app as both ends of the OpenAI-compatible API, offscreen, over loopback:
// - the "Local API server" setting serves the model the app has loaded (the
//   reply equals a fresh session's greedy reply on that file), refuses an
//   open non-loopback host without a key and says when the port is taken;
// - "Add remote endpoint…" against a real `cairn-cli serve`: its models are
//   listed as remote, picking one sends the chat there, the reply that lands
//   in the store is the server's greedy reply; a wrong key shows 401 on the
//   endpoint, a server that went away gives one clear line and gives the
//   typed text back; with no keyring the key stays in memory, never on disk;
// - against a scripted server: a stream that breaks off keeps the partial
//   reply marked interrupted, Stop ends a stalled stream at once, 503 with
//   Retry-After is one line and gives the typed text back.
#include "chat_controller.h"
#include "model_catalog.h"
#include "remote_endpoints.h"
#include "secret_store.h"

#include "app_test_support.h"
#include "running_app.h"

#include "scripted_server.h"

#include "embedded_backend.h"

#include "cairn/chat_session.h"
#include "cairn/exec.h"
#include "cairn/model.h"
#include "cairn/store/store.h"
#include "cairn/utf8.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QQuickItem>
#include <QQuickStyle>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtTest>

Q_IMPORT_QML_PLUGIN(CairnPlugin)

using namespace cairn;
using namespace cairn::app;
using cairn::test::RunningApp;
using nlohmann::json;

namespace {

// `cairn-cli serve` on a model, on a free loopback port.
struct ServeProcess {
    QProcess process;
    QString url;
    bool start(const QString& model, const QString& key) {
        process.start(
            qEnvironmentVariable("CAIRN_CLI"),
            {"serve", "-m", model, "--port", "0", "--alias", "tiny", "--ctx", "4096", "-t", "1", "--api-key", key});
        if (!process.waitForStarted()) return false;
        QByteArray out;
        for (int i = 0; i < 300 && url.isEmpty(); ++i) {
            process.waitForReadyRead(100);
            out += process.readAllStandardOutput();
            const auto m = QRegularExpression("listening on (http://\\S+)").match(QString::fromUtf8(out));
            if (m.hasMatch()) url = m.captured(1);
        }
        return !url.isEmpty();
    }
    void stop() {
        if (process.state() == QProcess::NotRunning) return;
        process.terminate();
        if (!process.waitForFinished(10000)) process.kill();
    }
    ~ServeProcess() { stop(); }
};

struct HttpAnswer {
    int status = 0;
    QByteArray body;
};

// One request through Qt's network stack, waiting on this thread's event loop
// (so the app keeps running meanwhile: its server must not need the UI thread).
HttpAnswer post(const QString& url, const QByteArray& body) {
    QNetworkAccessManager network;
    QNetworkRequest request{QUrl(url)};
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    request.setTransferTimeout(60000);
    QNetworkReply* reply = network.post(request, body);
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    loop.exec();
    HttpAnswer a{reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), reply->readAll()};
    delete reply;
    return a;
}

// What a fresh session on `model` replies greedily, as the server sends it (invalid UTF-8 as U+FFFD).
std::string greedyReply(const QString& model, const std::vector<ChatMessage>& messages, int64_t maxTokens) {
    auto m = Model::load(model.toStdString());
    SessionOptions options;
    options.memory.contextSize = 4096;
    ChatSession session(*m, options);
    ExecContext exec(1);
    backend::TurnRequest r;
    r.messages = messages;
    r.temperature = 0;
    r.maxTokens = maxTokens;
    return text::validUtf8(backend::EmbeddedBackend(session, exec).reply(r).text);
}

int freePort() {
    QTcpServer probe;
    probe.listen(QHostAddress::LocalHost, 0);
    return probe.serverPort();
}

const ModelFileInfo* remoteRow(ChatController& c, const QString& model) {
    for (const auto& r : c.models()->entries())
        if (r.remote && r.remoteModel == model && r.error.isEmpty()) return &r;
    return nullptr;
}

const ModelFileInfo* failedEndpointRow(ChatController& c) {
    for (const auto& r : c.models()->entries())
        if (r.remote && !r.error.isEmpty()) return &r;
    return nullptr;
}

QByteArray fileText(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestAppRemote : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString model_;

private slots:
    void initTestCase() {
        QQuickStyle::setStyle(QStringLiteral("Basic"));
        QVERIFY2(QFileInfo::exists(qEnvironmentVariable("CAIRN_CLI")), "CAIRN_CLI names no cairn-cli");
        model_ = test::writeTinyAppModel(dir_.path());
    }

    void localApiServerServesTheLoadedModel() {
        QTemporaryDir data;
        const AppPaths paths = AppPaths::standard(data.filePath(QStringLiteral("data")));
        RunningApp app(paths, model_);
        QVERIFY(app.window);
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
        ApiServerControl* server = app.controller->apiServer();
        QVERIFY(!app.controller->settings()->apiServerEnabled());  // off by default
        QVERIFY(!server->running());

        const int port = freePort();
        app.controller->settings()->setApiServerEnabled(true);
        app.controller->settings()->setApiServerPort(port);
        server->apply();
        QTRY_VERIFY_WITH_TIMEOUT(server->running(), 10000);
        QCOMPARE(server->url(), QStringLiteral("http://127.0.0.1:%1/v1").arg(port));
        QVERIFY(!server->failed());
        QVERIFY2(server->status().contains(server->url()), qPrintable(server->status()));

        const json request = {
            {"messages", {{{"role", "user"}, {"content", "Hello"}}}}, {"temperature", 0}, {"max_tokens", 12}};
        const HttpAnswer a = post(server->url() + "/chat/completions", QByteArray::fromStdString(request.dump()));
        QCOMPARE(a.status, 200);
        const json body = json::parse(a.body.toStdString());
        QCOMPARE(body["model"].get<std::string>(), std::string("tiny-llama"));
        const std::string got = body["choices"][0]["message"]["content"].get<std::string>();
        QVERIFY(!got.empty());
        QCOMPARE(got, greedyReply(model_, {{"user", "Hello"}}, 12));

        // Off again: nothing listens there any more.
        app.controller->settings()->setApiServerEnabled(false);
        server->apply();
        QTRY_VERIFY_WITH_TIMEOUT(!server->running() && server->status() == QStringLiteral("Off"), 10000);
        QCOMPARE(post(server->url().isEmpty() ? QStringLiteral("http://127.0.0.1:%1/v1/chat/completions").arg(port)
                                              : server->url(),
                      "{}")
                     .status,
                 0);
    }

    void localApiServerRefusals() {
        QTemporaryDir data;
        const AppPaths paths = AppPaths::standard(data.filePath(QStringLiteral("data")));
        RunningApp app(paths, model_,
                       [](ChatController& c) { c.keys()->setBackend(std::make_unique<MemorySecretBackend>()); });
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
        ApiServerControl* server = app.controller->apiServer();

        // The port is taken: the settings' one line says so.
        QTcpServer taken;
        QVERIFY(taken.listen(QHostAddress::LocalHost, 0));
        app.controller->settings()->setApiServerEnabled(true);
        app.controller->settings()->setApiServerPort(taken.serverPort());
        server->apply();
        QTRY_VERIFY_WITH_TIMEOUT(server->failed(), 10000);
        QVERIFY(!server->running());
        QVERIFY2(server->status().contains(QStringLiteral("cannot listen on 127.0.0.1:%1").arg(taken.serverPort())),
                 qPrintable(server->status()));

        // Taken by another httplib server (as `cairn-cli serve` or llama-server): both would bind
        // with SO_REUSEPORT and share the port, so this must be refused as well.
        {
            test::ScriptedServer other;
            other.start();
            app.controller->settings()->setApiServerPort(other.port);
            server->apply();
            QTRY_VERIFY_WITH_TIMEOUT(server->failed() && server->status().contains(QString::number(other.port)), 10000);
            QVERIFY2(server->status().contains(QStringLiteral("cannot listen on 127.0.0.1:%1").arg(other.port)),
                     qPrintable(server->status()));
            QVERIFY(!server->running());
        }

        // Open to the network without a key: refused before anything binds.
        app.controller->settings()->setApiServerHost(QStringLiteral("0.0.0.0"));
        app.controller->settings()->setApiServerPort(freePort());
        server->apply();
        QTRY_VERIFY_WITH_TIMEOUT(server->failed() && server->status().contains(QStringLiteral("needs an API key")),
                                 10000);
        QTest::qWait(200);  // the worker's answer ("off") must not replace the refusal
        QVERIFY2(server->failed() && !server->running(), qPrintable(server->status()));

        // With a key it serves there (the key is in the keyring, asked for on every /v1 request).
        server->setKey(QStringLiteral("s3cret"));
        QTRY_VERIFY_WITH_TIMEOUT(server->running(), 10000);
        QVERIFY(server->hasKey());
        QVERIFY(!fileText(paths.settingsFile).contains("s3cret"));
        const json request = {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 2}};
        const int port = app.controller->settings()->apiServerPort();
        QCOMPARE(post(QStringLiteral("http://127.0.0.1:%1/v1/chat/completions").arg(port),
                      QByteArray::fromStdString(request.dump()))
                     .status,
                 401);
    }

    void remoteEndpointEndToEnd() {
        ServeProcess serve;
        QVERIFY2(serve.start(model_, QStringLiteral("k1")), serve.process.readAllStandardError().constData());
        QTemporaryDir data;
        const AppPaths paths = AppPaths::standard(data.filePath(QStringLiteral("data")));
        MemorySecretBackend* keyring = nullptr;
        RunningApp app(paths, model_, [&](ChatController& c) {
            auto backend = std::make_unique<MemorySecretBackend>();
            keyring = backend.get();
            c.keys()->setBackend(std::move(backend));
        });
        QVERIFY(app.window);
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
        app.controller->settings()->setTemperature(0);

        // A wrong key: the endpoint is listed with the server's 401.
        QCOMPARE(app.controller->addRemoteEndpoint(QStringLiteral("localhost:1"), {}).contains(QStringLiteral("http")),
                 true);
        QCOMPARE(app.controller->addRemoteEndpoint(serve.url, QStringLiteral("wrong")), QString());
        QTRY_VERIFY_WITH_TIMEOUT(failedEndpointRow(*app.controller), 10000);
        QVERIFY2(failedEndpointRow(*app.controller)->error.contains(QStringLiteral("401")),
                 qPrintable(failedEndpointRow(*app.controller)->error));

        // The right key, through the picker's dialog: the server's model appears as remote; the
        // key is in the keyring, not the settings file.
        auto* picker = app.find<QObject>("modelPicker");
        auto* dialog = app.find<QObject>("remoteDialog");
        auto* urlField = app.find<QObject>("remoteUrl");
        auto* keyField = app.find<QObject>("remoteKey");
        QVERIFY(picker && dialog && urlField && keyField);
        QVERIFY(QMetaObject::invokeMethod(picker, "open"));
        QVERIFY(QMetaObject::invokeMethod(dialog, "open"));
        QTRY_VERIFY(dialog->property("opened").toBool());
        urlField->setProperty("text", QStringLiteral("not a url"));
        QVERIFY(QMetaObject::invokeMethod(dialog, "submit"));
        QVERIFY2(dialog->property("problem").toString().contains(QStringLiteral("http")),
                 qPrintable(dialog->property("problem").toString()));
        QVERIFY(dialog->property("visible").toBool());  // stays open with the reason
        urlField->setProperty("text", serve.url);
        keyField->setProperty("text", QStringLiteral("k1"));
        QVERIFY(QMetaObject::invokeMethod(dialog, "submit"));
        QCOMPARE(dialog->property("problem").toString(), QString());
        QTRY_VERIFY(!dialog->property("visible").toBool());
        QCOMPARE(keyField->property("text").toString(), QString());  // not left in the field
        QTRY_VERIFY_WITH_TIMEOUT(remoteRow(*app.controller, QStringLiteral("tiny")), 10000);
        QVERIFY(!failedEndpointRow(*app.controller));
        const QString base = remoteRow(*app.controller, QStringLiteral("tiny"))->endpoint;
        QCOMPARE(base, serve.url + QStringLiteral("/v1"));
        QCOMPARE(keyring->entries().value(RemoteEndpoints::account(base)), QStringLiteral("k1"));
        app.controller->settings()->sync();
        QVERIFY(fileText(paths.settingsFile).contains(base.toUtf8()));
        QVERIFY(!fileText(paths.settingsFile).contains("k1"));
        QVERIFY(app.controller->keys()->warning().isEmpty());

        app.controller->selectModel(remoteModelId(base, QStringLiteral("tiny")));
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && app.controller->modelRemote(), 10000);
        QVERIFY2(app.controller->modelNote().contains(QStringLiteral("server")),
                 qPrintable(app.controller->modelNote()));

        auto* input = app.find<QQuickItem>("composerInput");
        QVERIFY(input);
        QSignalSpy finished(app.controller.get(), &ChatController::replyFinished);
        input->setProperty("text", QStringLiteral("Hello"));
        input->forceActiveFocus();
        QTest::keyClick(app.window, Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 30000);
        QCOMPARE(app.controller->errorText(), QString());
        const qint64 conversation = app.controller->currentConversation();
        const auto stored = app.controller->store().pathTo(*app.controller->store().activeLeaf(conversation));
        QCOMPARE(stored.size(), size_t(2));
        QCOMPARE(stored[1].role, store::Role::Assistant);
        QVERIFY(stored[1].complete);
        const std::string want = greedyReply(model_, {{"user", "Hello"}}, 24);
        QVERIFY(!want.empty());
        QCOMPARE(stored[1].content, want);
        QCOMPARE(app.controller->messages()->contentAt(1), QString::fromStdString(want));
        // The state lives on the server: the status line says so, nothing is snapshotted here.
        QVERIFY2(app.controller->resumeNote().contains(QStringLiteral("server")),
                 qPrintable(app.controller->resumeNote()));
        QVERIFY(app.controller->store().snapshots(conversation).empty());

        // The server goes away: one clear line, and the typed text comes back to the composer.
        serve.stop();
        input->setProperty("text", QStringLiteral("Are you still there?"));
        input->forceActiveFocus();
        QTest::keyClick(app.window, Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(!app.controller->generating() && !app.controller->errorText().isEmpty(), 30000);
        QVERIFY2(app.controller->errorText().contains(QStringLiteral("cannot reach 127.0.0.1")),
                 qPrintable(app.controller->errorText()));
        QVERIFY(!app.controller->errorText().contains(QLatin1Char('\n')));
        QTRY_COMPARE(input->property("text").toString(), QStringLiteral("Are you still there?"));
        QCOMPARE(app.controller->store().pathTo(*app.controller->store().activeLeaf(conversation)).size(), size_t(2));
    }

    void remoteFailuresThroughTheApp() {
        test::ScriptedServer scripted;
        std::atomic<int> mode{0};  // 0: breaks off, 1: stalls, 2: busy
        scripted.http.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
            res.set_content(R"({"object":"list","data":[{"id":"scripted","object":"model"}]})", "application/json");
        });
        scripted.http.Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
            if (mode == 2) {
                res.status = 503;
                res.set_header("Retry-After", "7");
                res.set_content(R"({"error":{"message":"all slots are busy","type":"server_error"}})",
                                "application/json");
                return;
            }
            res.set_chunked_content_provider("text/event-stream", [&](size_t offset, httplib::DataSink& sink) {
                if (offset == 0) {
                    const std::string s = test::sseChunk("Half a ") + test::sseChunk("reply");
                    sink.write(s.data(), s.size());
                    return mode == 1;  // breaking off: httplib closes the connection mid-stream
                }
                scripted.hold(20000);
                return false;
            });
        });
        scripted.start();

        QTemporaryDir data;
        const AppPaths paths = AppPaths::standard(data.filePath(QStringLiteral("data")));
        RunningApp app(paths, model_,
                       [](ChatController& c) { c.keys()->setBackend(std::make_unique<MemorySecretBackend>()); });
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
        QCOMPARE(app.controller->addRemoteEndpoint(QString::fromStdString(scripted.url()), {}), QString());
        QTRY_VERIFY_WITH_TIMEOUT(remoteRow(*app.controller, QStringLiteral("scripted")), 10000);
        app.controller->selectModel(remoteRow(*app.controller, QStringLiteral("scripted"))->path);
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && app.controller->modelRemote(), 10000);
        QSignalSpy finished(app.controller.get(), &ChatController::replyFinished);

        // The stream breaks off: the text so far is kept, not complete, and marked.
        app.controller->send(QStringLiteral("Tell me something"));
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 20000);
        const qint64 conversation = app.controller->currentConversation();
        auto path = app.controller->store().pathTo(*app.controller->store().activeLeaf(conversation));
        QCOMPARE(path.size(), size_t(2));
        QCOMPARE(path[1].content, std::string("Half a reply"));
        QVERIFY(!path[1].complete);
        QCOMPARE(finished[0][2].value<ReplyStats>().stop, backend::Finish::Incomplete);
        QVERIFY2(app.controller->noticeText().contains(QStringLiteral("incomplete")),
                 qPrintable(app.controller->noticeText()));
        const QModelIndex reply = app.controller->messages()->index(1);
        QVERIFY(app.controller->messages()
                    ->data(reply, MessageListModel::StatsRole)
                    .toString()
                    .contains(QStringLiteral("interrupted")));

        // A stalled stream: Stop ends it at once (the server would hold 20 s); the text so far stays.
        mode = 1;
        app.controller->send(QStringLiteral("And then?"));
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->messages()->contentAt(3) == QStringLiteral("Half a reply"), 10000);
        QElapsedTimer stopped;
        stopped.start();
        app.controller->stop();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 2, 5000);
        QVERIFY2(stopped.elapsed() < 2000, qPrintable(QString::number(stopped.elapsed())));
        QCOMPARE(finished[1][2].value<ReplyStats>().stop, backend::Finish::Cancelled);
        path = app.controller->store().pathTo(*app.controller->store().activeLeaf(conversation));
        QCOMPARE(path.size(), size_t(4));
        QCOMPARE(path[3].content, std::string("Half a reply"));

        // Busy: one line with the wait, and the message goes back to the composer.
        mode = 2;
        auto* input = app.find<QQuickItem>("composerInput");
        QVERIFY(input);
        input->setProperty("text", QStringLiteral("Once more"));
        input->forceActiveFocus();
        QTest::keyClick(app.window, Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(!app.controller->generating() && !app.controller->errorText().isEmpty(), 10000);
        QVERIFY2(app.controller->errorText().contains(QStringLiteral("busy")) &&
                     app.controller->errorText().contains(QStringLiteral("retry after 7 s")),
                 qPrintable(app.controller->errorText()));
        QTRY_COMPARE(input->property("text").toString(), QStringLiteral("Once more"));
        QCOMPARE(app.controller->store().pathTo(*app.controller->store().activeLeaf(conversation)).size(), size_t(4));
    }

    // No keyring (offscreen machines have none): the key works for this
    // session, a warning says it is not saved, and it is nowhere on disk.
    void withoutAKeyringTheKeyStaysInMemory() {
        // A key no file holds by chance: "k2" once matched bytes of the database's WAL.
        const QString key = QStringLiteral("sk-cairn-test-7f3a91c2e05d");
        ServeProcess serve;
        QVERIFY(serve.start(model_, key));
        QTemporaryDir data;
        const AppPaths paths = AppPaths::standard(data.filePath(QStringLiteral("data")));
        RunningApp app(paths, model_, [](ChatController& c) {
            c.keys()->setBackend(std::make_unique<MemorySecretBackend>(/*available=*/false));
        });
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
        QCOMPARE(app.controller->addRemoteEndpoint(serve.url, key), QString());
        QTRY_VERIFY_WITH_TIMEOUT(remoteRow(*app.controller, QStringLiteral("tiny")), 10000);
        QVERIFY2(app.controller->keys()->warning().contains(QStringLiteral("No keyring")),
                 qPrintable(app.controller->keys()->warning()));
        auto* warning = app.find<QObject>("keyringWarning");
        if (warning) QCOMPARE(warning->property("text").toString(), app.controller->keys()->warning());
        app.controller->settings()->sync();
        QVERIFY(!fileText(paths.settingsFile).contains(key.toUtf8()));
        QDirIterator it(paths.dataDir, QDir::Files, QDirIterator::Subdirectories);
        int files = 0;
        while (it.hasNext()) {  // the database and its WAL too
            const QString f = it.next();
            ++files;
            QVERIFY2(!fileText(f).contains(key.toUtf8()), qPrintable(f));
        }
        QVERIFY(files > 0);
    }
};

QTEST_MAIN(TestAppRemote)
#include "test_app_remote.moc"
