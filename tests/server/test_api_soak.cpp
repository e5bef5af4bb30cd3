// A bounded 20-client soak of the API server over loopback: every client
// sends a fixed mix (streamed and whole chats, models and health, a malformed
// body, a streamed chat it leaves after the first chunk) for a fixed number
// of rounds, against a short queue wait so some requests are refused. Every
// request must be answered with a status (200, the expected 400, or 503 with
// Retry-After), the server must still answer afterwards, and its resident
// memory must not keep growing from round to round. Prints the figures.
#include "api_server.h"

#include "tiny_models.h"

#include "cairn/model.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <mutex>
#include <thread>

using namespace cairn;
using nlohmann::json;

namespace {

constexpr int kClients = 20;
constexpr int kRounds = 6;
constexpr int kPerRound = 5;  // one of each kind

int64_t residentKiB() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
    return -1;
}

struct Tally {
    std::mutex m;
    std::map<std::string, int> counts;  // "kind status"
    std::vector<std::string> failures;
    void count(const std::string& k) {
        std::lock_guard l(m);
        ++counts[k];
    }
    void fail(const std::string& f) {
        std::lock_guard l(m);
        if (failures.size() < 20) failures.push_back(f);
    }
};

std::string chat(int client, int round, bool stream) {
    json body = {
        {"messages",
         {{{"role", "user"}, {"content", "client " + std::to_string(client) + " round " + std::to_string(round)}}}},
        {"max_tokens", 16},
        {"temperature", 0.7},
        {"seed", client * 100 + round},
        {"stream", stream}};
    return body.dump();
}

void oneClient(int port, int client, int round, Tally& t) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(60, 0);
    auto answered = [&](const char* kind, const httplib::Result& r, std::initializer_list<int> allowed) {
        if (!r) return t.fail(std::string(kind) + ": no answer (" + httplib::to_string(r.error()) + ")");
        if (std::find(allowed.begin(), allowed.end(), r->status) == allowed.end())
            return t.fail(std::string(kind) + ": status " + std::to_string(r->status) + " " + r->body.substr(0, 200));
        if (r->status == 503 && !r->has_header("Retry-After")) t.fail(std::string(kind) + ": 503 without Retry-After");
        if (r->status >= 400 && !json::parse(r->body, nullptr, false).contains("error"))
            t.fail(std::string(kind) + ": an error status without OpenAI's error body");
        t.count(std::string(kind) + " " + std::to_string(r->status));
    };
    // Streamed, read to the end (what came is kept to name a failure).
    {
        httplib::Request req;
        req.method = "POST";
        req.path = "/v1/chat/completions";
        req.body = chat(client, round, true);
        req.set_header("Content-Type", "application/json");
        std::string got;
        int status = 0;
        req.response_handler = [&](const httplib::Response& r) {
            status = r.status;
            return true;
        };
        req.content_receiver = [&](const char* d, size_t n, uint64_t, uint64_t) {
            got.append(d, n);
            return true;
        };
        QElapsedTimer took;
        took.start();
        auto s = c.send(req);
        if (!s) {
            t.fail("stream: no answer (" + httplib::to_string(s.error()) + ") in " + std::to_string(took.elapsed()) +
                   " ms, status " + std::to_string(status) + " after " + std::to_string(got.size()) + " bytes: ..." +
                   got.substr(got.size() > 300 ? got.size() - 300 : 0));
        } else {
            s->body = got;
            answered("stream", s, {200, 503});
            if (s->status == 200 && got.find("data: [DONE]") == std::string::npos) t.fail("stream: no [DONE]");
        }
    }
    // Whole.
    auto w = c.Post("/v1/chat/completions", chat(client, round, false), "application/json");
    answered("chat", w, {200, 503});
    if (w && w->status == 200 && !json::parse(w->body, nullptr, false).contains("choices")) t.fail("chat: no choices");
    answered("models", c.Get("/v1/models"), {200});
    answered("health", c.Get("/health"), {200});
    answered("malformed", c.Post("/v1/chat/completions", "{\"messages\": [", "application/json"), {400});
    // Streamed, left after the first piece.
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.body = chat(client, round, true);
    req.set_header("Content-Type", "application/json");
    int pieces = 0;
    req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++pieces < 2; };
    httplib::Client leaver("127.0.0.1", port);
    leaver.set_read_timeout(60, 0);
    auto l = leaver.send(req);
    t.count(pieces > 0 ? "leave after a piece" : "leave refused or unanswered");
    (void)l;
}

}  // namespace

class TestApiSoak : public QObject {
    Q_OBJECT
private slots:
    void twentyClients() {
        QTemporaryDir dir;
        test::TinyModelOptions tm;
        tm.type = TensorType::Q8_0;
        auto model = Model::load(test::writeTinyModel((dir.path() + "/tiny.gguf").toStdString(), tm));
        server::ServerOptions o;
        o.modelId = "tiny";
        o.slotCount = 4;
        o.threads = 1;
        o.session.memory.contextSize = 256;
        o.queueWaitMs = 20;  // short: under 20 clients some requests are refused with 503
        o.port = 0;
        server::ApiServer api(*model, o);
        const int port = api.bind();
        std::thread serving([&] { api.run(); });

        Tally tally;
        std::vector<int64_t> rss;
        QElapsedTimer clock;
        clock.start();
        for (int round = 0; round < kRounds; ++round) {
            std::vector<std::thread> clients;
            for (int c = 0; c < kClients; ++c) clients.emplace_back(oneClient, port, c, round, std::ref(tally));
            for (auto& t : clients) t.join();
            rss.push_back(residentKiB());
        }
        const qint64 ms = clock.elapsed();

        httplib::Client after("127.0.0.1", port);
        auto health = after.Get("/health");
        api.stop();
        serving.join();

        int answered = 0;
        QString figures;
        for (const auto& [k, n] : tally.counts) {
            figures += QStringLiteral("%1: %2; ").arg(QString::fromStdString(k)).arg(n);
            if (k.rfind("leave", 0) != 0) answered += n;
        }
        QString rssText;
        for (auto k : rss) rssText += QString::number(k / 1024.0, 'f', 1) + QStringLiteral(" ");
        qInfo("soak: %d clients x %d rounds in %lld ms; %s", kClients, kRounds, (long long)ms, qPrintable(figures));
        qInfo("soak: RSS MiB after each round: %s; server: %s", qPrintable(rssText),
              health ? health->body.c_str() : "no answer");
        for (const auto& f : tally.failures) qWarning("%s", f.c_str());
        QVERIFY(tally.failures.empty());
        QVERIFY(health && health->status == 200);
        QCOMPARE(answered, kClients * kRounds * kPerRound);
        QVERIFY(tally.counts["stream 200"] + tally.counts["chat 200"] > 0);
        // Bounded memory: after the first round (arenas, slots and pools warmed up)
        // the rest of the rounds add less than 32 MiB.
#if defined(__SANITIZE_ADDRESS__)
        // ASan's quarantine keeps freed blocks resident (+10 MiB a round here):
        // RSS says nothing; LeakSanitizer checks for leaks at exit instead.
        qInfo("soak: the RSS bound is not checked under AddressSanitizer");
#else
        QVERIFY2(rss.back() - rss.front() < 32 * 1024, qPrintable(rssText));
#endif
    }
};

QTEST_GUILESS_MAIN(TestApiSoak)
#include "test_api_soak.moc"
