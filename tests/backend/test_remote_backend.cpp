// The remote backend over loopback: end to end against the API server of
// `cairn-cli serve` (the same reply, bit for bit, as the embedded backend on
// the same model), and against a scripted server for each failure: unreachable
// host, TLS error, 401, 404 model, 429/503 with Retry-After, a stream that
// breaks off (partial reply kept and marked), timeouts, a malformed stream,
// an answer over the size limit, and Stop aborting a stalled stream at once.
#include "api_server.h"
#include "embedded_backend.h"
#include "remote_backend.h"

#include "scripted_server.h"
#include "tiny_models.h"

#include "cairn/chat_session.h"
#include "cairn/exec.h"
#include "cairn/model.h"
#include "cairn/utf8.h"

#include <httplib.h>

#include <QTcpServer>
#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <thread>

using namespace cairn;
using namespace cairn::backend;

namespace {

using Clock = std::chrono::steady_clock;

using test::ScriptedServer;

std::string chunk(const std::string& content) { return test::sseChunk(content); }

TurnRequest hello() {
    TurnRequest r;
    r.messages = {{"user", "Hello"}};
    r.maxTokens = 8;
    return r;
}

// The BackendError reply() throws (fails the test when it returns instead).
BackendError failureOf(RemoteBackend& b, const TurnRequest& r) {
    try {
        b.reply(r);
    } catch (const BackendError& e) {
        const std::string what = e.what();
        if (what.find('\n') != std::string::npos) throw std::runtime_error("a message of several lines: " + what);
        return e;
    }
    throw std::runtime_error("reply() succeeded where it should fail");
}

bool contains(const BackendError& e, const std::string& s) {
    return std::string(e.what()).find(s) != std::string::npos;
}

}  // namespace

class TestRemoteBackend : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::unique_ptr<Model> model_;
    server::ServerOptions serverOptions_;
    ScriptedServer scripted_;

    RemoteOptions scriptedOptions(const std::string& path) {
        RemoteOptions o;
        o.baseUrl = "http://127.0.0.1:" + std::to_string(scripted_.port) + path;
        o.model = "scripted";
        o.connectTimeoutMs = 5000;
        o.idleTimeoutMs = 5000;
        return o;
    }

private slots:
    void initTestCase() {
        test::TinyModelOptions t;
        t.type = TensorType::Q8_0;
        model_ = Model::load(test::writeTinyModel((dir_.path() + "/tiny.gguf").toStdString(), t));
        serverOptions_.modelId = "tiny";
        serverOptions_.threads = 1;
        serverOptions_.session.memory.contextSize = 256;

        auto& h = scripted_.http;
        h.Post("/busy/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
            res.status = 503;
            res.set_header("Retry-After", "7");
            res.set_content("{\"error\":{\"message\":\"all slots are busy\",\"type\":\"server_error\"}}",
                            "application/json");
        });
        h.Post("/limited/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
            res.status = 429;
            res.set_header("Retry-After", "3");
            res.set_content("{\"error\":{\"message\":\"rate limit reached\"}}", "application/json");
        });
        h.Post("/keyed/v1/chat/completions", [](const httplib::Request& req, httplib::Response& res) {
            if (req.get_header_value("Authorization") != "Bearer right") {
                res.status = 401;
                res.set_content("{\"error\":{\"message\":\"Incorrect API key provided\"}}", "application/json");
                return;
            }
            res.set_content(
                "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
                "text/event-stream");
        });
        // Three pieces, then the connection drops (no finish reason, no [DONE]).
        h.Post("/broken/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
            res.set_chunked_content_provider("text/event-stream", [](size_t, httplib::DataSink& sink) {
                const std::string s =
                    "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n" + chunk("Hello") + chunk(", wor");
                sink.write(s.data(), s.size());
                return false;  // abort: httplib closes the connection mid-stream
            });
        });
        // One piece, then nothing for 20 s (a stalled server).
        h.Post("/stall/v1/chat/completions", [this](const httplib::Request&, httplib::Response& res) {
            res.set_chunked_content_provider("text/event-stream", [this](size_t offset, httplib::DataSink& sink) {
                if (offset == 0) {
                    const std::string s = chunk("Once");
                    sink.write(s.data(), s.size());
                    return true;
                }
                scripted_.hold(20000);
                return false;
            });
        });
        // No answer at all for 20 s.
        h.Post("/silent/v1/chat/completions", [this](const httplib::Request&, httplib::Response& res) {
            scripted_.hold(20000);
            res.status = 500;
        });
        h.Post("/garbage/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
            res.set_content("data: {\"choices\": [oops\n\n", "text/event-stream");
        });
        h.Post("/huge/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
            std::string s;
            for (int i = 0; i < 2000; ++i) s += chunk("0123456789");
            res.set_content(s, "text/event-stream");
        });
        h.Post("/empty/v1/chat/completions",
               [](const httplib::Request&, httplib::Response& res) { res.set_content("", "text/event-stream"); });
        scripted_.start();
    }

    // Greedy through `cairn-cli serve`'s server equals the embedded backend on
    // the same model and context: text (as the server sends invalid UTF-8:
    // U+FFFD), finish reason, usage; the pieces add up to the text.
    void endToEndEqualsTheEmbeddedEngine() {
        server::ServerOptions so = serverOptions_;
        std::string("127.0.0.1").swap(so.host);
        so.port = 0;
        server::ApiServer api(*model_, so);
        const int port = api.bind();
        std::thread serving([&] { api.run(); });
        struct Stop {
            server::ApiServer& a;
            std::thread& t;
            ~Stop() {
                a.stop();
                t.join();
            }
        } stop{api, serving};

        RemoteOptions o;
        o.baseUrl = "http://127.0.0.1:" + std::to_string(port);  // /v1 added
        RemoteBackend remote(o);
        QCOMPARE(remote.listModels(), std::vector<std::string>{"tiny"});
        QCOMPARE(remote.model(), std::string("tiny"));

        TurnRequest r;
        r.messages = {{"system", "Be brief."}, {"user", "Tell me about stones."}};
        r.maxTokens = 16;
        r.temperature = 0;
        std::string streamed;
        int pieces = 0;
        r.onPiece = [&](std::string_view p) {
            streamed += p;
            ++pieces;
        };
        const TurnResult got = remote.reply(r);
        QVERIFY(pieces >= 2);
        QCOMPARE(streamed, got.text);

        ChatSession session(*model_, serverOptions_.session);
        ExecContext exec(1);
        EmbeddedBackend embedded(session, exec);
        r.onPiece = nullptr;
        const TurnResult want = embedded.reply(r);
        QVERIFY(!want.text.empty());
        QCOMPARE(got.text, text::validUtf8(want.text));
        QCOMPARE(got.finish, want.finish == Finish::ContextFull ? Finish::Length : want.finish);
        QCOMPARE(*got.completionTokens, *want.completionTokens);
        QCOMPARE(*got.promptTokens, *want.promptTokens);

        // The same conversation continued: the server reuses its slot.
        r.messages.push_back({"assistant", got.text});
        r.messages.push_back({"user", "And more?"});
        const TurnResult next = remote.reply(r);
        QVERIFY(*next.cachedTokens > 10);

        RemoteOptions other = o;
        other.model = "no-such-model";
        RemoteBackend wrongModel(other);
        const BackendError e = failureOf(wrongModel, hello());
        QCOMPARE(e.kind(), FailureKind::NotFound);
        QCOMPARE(e.httpStatus(), 404);
    }

    void aWrongKeyIs401() {
        RemoteOptions o = scriptedOptions("/keyed/v1");
        o.apiKey = "wrong";
        RemoteBackend wrong(o);
        const BackendError e = failureOf(wrong, hello());
        QCOMPARE(e.kind(), FailureKind::Unauthorized);
        QVERIFY(contains(e, "Incorrect API key provided"));
        o.apiKey = "right";
        RemoteBackend right(o);
        const TurnResult t = right.reply(hello());
        QCOMPARE(t.text, std::string("ok"));
        QCOMPARE(t.finish, Finish::Stop);
    }

    void busyServersSayWhenToRetry() {
        RemoteBackend busy(scriptedOptions("/busy/v1"));
        BackendError e = failureOf(busy, hello());
        QCOMPARE(e.kind(), FailureKind::Busy);
        QCOMPARE(e.httpStatus(), 503);
        QCOMPARE(e.retryAfterSeconds(), 7);
        QVERIFY(contains(e, "retry after 7 s"));
        QVERIFY(contains(e, "all slots are busy"));
        RemoteBackend limited(scriptedOptions("/limited/v1"));
        e = failureOf(limited, hello());
        QCOMPARE(e.httpStatus(), 429);
        QCOMPARE(e.retryAfterSeconds(), 3);
        QVERIFY(contains(e, "rate limit reached"));
    }

    void anUnreachableHostSaysWhich() {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost));
        const int closedPort = probe.serverPort();
        probe.close();  // nothing listens there now
        RemoteOptions o;
        o.baseUrl = "http://127.0.0.1:" + std::to_string(closedPort) + "/v1";
        o.model = "m";
        RemoteBackend b(o);
        const BackendError e = failureOf(b, hello());
        QCOMPARE(e.kind(), FailureKind::Unreachable);
        QVERIFY2(contains(e, "127.0.0.1:" + std::to_string(closedPort)), e.what());
        QVERIFY2(contains(e, "cannot reach"), e.what());
    }

    // https:// to a plain-HTTP server: the TLS handshake fails.
    void aTlsFailureIsNamed() {
        RemoteOptions o = scriptedOptions("/keyed/v1");
        o.baseUrl = "https://127.0.0.1:" + std::to_string(scripted_.port) + "/v1";
        RemoteBackend b(o);
        const BackendError e = failureOf(b, hello());
        QVERIFY2(e.kind() == FailureKind::Tls, e.what());
        QVERIFY2(contains(e, "TLS error with 127.0.0.1"), e.what());
    }

    void aBrokenStreamKeepsThePartialReply() {
        RemoteBackend b(scriptedOptions("/broken/v1"));
        std::string streamed;
        TurnRequest r = hello();
        r.onPiece = [&](std::string_view p) { streamed += p; };
        const TurnResult t = b.reply(r);
        QCOMPARE(t.text, std::string("Hello, wor"));
        QCOMPARE(streamed, t.text);
        QCOMPARE(t.finish, Finish::Incomplete);
        QVERIFY2(t.note.find("incomplete") != std::string::npos, t.note.c_str());
    }

    void aStalledStreamTimesOutKeepingItsText() {
        RemoteOptions o = scriptedOptions("/stall/v1");
        o.idleTimeoutMs = 300;
        RemoteBackend b(o);
        const auto t0 = Clock::now();
        const TurnResult t = b.reply(hello());
        QVERIFY(Clock::now() - t0 < std::chrono::seconds(15));  // not the server's 20 s
        QCOMPARE(t.text, std::string("Once"));
        QCOMPARE(t.finish, Finish::Incomplete);
        QVERIFY2(t.note.find("no data from 127.0.0.1") != std::string::npos, t.note.c_str());
    }

    void aSilentServerTimesOut() {
        RemoteOptions o = scriptedOptions("/silent/v1");
        o.connectTimeoutMs = 300;
        RemoteBackend b(o);
        const BackendError e = failureOf(b, hello());
        QCOMPARE(e.kind(), FailureKind::Timeout);
        QVERIFY2(contains(e, "no answer from 127.0.0.1"), e.what());
    }

    // Stop while the server holds the stream open: reply() returns at once
    // with what came, not when the server's 20 s are up.
    void stopAbortsAtOnce() {
        RemoteBackend b(scriptedOptions("/stall/v1"));
        std::atomic<bool> cancel{false};
        TurnRequest r = hello();
        r.cancel = &cancel;
        Clock::time_point stoppedAt;
        r.onPiece = [&](std::string_view) {
            stoppedAt = Clock::now();
            cancel = true;
        };
        const TurnResult t = b.reply(r);
        QCOMPARE(t.finish, Finish::Cancelled);
        QCOMPARE(t.text, std::string("Once"));
        QVERIFY(Clock::now() - stoppedAt < std::chrono::seconds(5));  // hang guard; the poll is every 10 ms
    }

    void malformedOversizedAndEmptyStreamsAreErrors() {
        RemoteBackend garbage(scriptedOptions("/garbage/v1"));
        QCOMPARE(failureOf(garbage, hello()).kind(), FailureKind::BadReply);
        RemoteOptions o = scriptedOptions("/huge/v1");
        o.maxReplyBytes = 4096;
        RemoteBackend huge(o);
        // Some pieces may have arrived before the limit: then the reply is kept, marked.
        try {
            const TurnResult t = huge.reply(hello());
            QCOMPARE(t.finish, Finish::Incomplete);
            QVERIFY(t.text.size() < 4096);
            QVERIFY2(t.note.find("larger than 4096 bytes") != std::string::npos, t.note.c_str());
        } catch (const BackendError& e) {
            QVERIFY2(contains(e, "larger than 4096 bytes"), e.what());
        }
        RemoteBackend empty(scriptedOptions("/empty/v1"));
        QCOMPARE(failureOf(empty, hello()).kind(), FailureKind::BadReply);
    }
};

QTEST_GUILESS_MAIN(TestRemoteBackend)
#include "test_remote_backend.moc"
