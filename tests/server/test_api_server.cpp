// The OpenAI-compatible API server over loopback: every endpoint, streamed
// and not, each error status, stop sequences, slot reuse (cached tokens and
// bit-identical replies to a fresh session's) and a disconnect that cancels.
// A tiny random transformer (byte vocabulary, ChatML fallback template).
#include "api_server.h"

#include "tiny_models.h"

#include "cairn/chat_session.h"
#include "cairn/exec.h"
#include "cairn/model.h"
#include "cairn/tokenizer.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <thread>

using namespace cairn;
using nlohmann::json;

namespace {

// A server on a free loopback port, running on its own thread.
struct RunningServer {
    std::unique_ptr<server::ApiServer> api;
    std::thread thread;
    int port = 0;

    RunningServer(const Model& model, server::ServerOptions o) {
        o.host = "127.0.0.1";
        o.port = 0;
        api = std::make_unique<server::ApiServer>(model, o);
        port = api->bind();
        thread = std::thread([this] { api->run(); });
    }
    ~RunningServer() {
        api->stop();
        thread.join();
    }
    httplib::Client client() const {
        httplib::Client c("127.0.0.1", port);
        c.set_read_timeout(60, 0);
        return c;
    }
};

json chatBody(const std::vector<std::pair<std::string, std::string>>& messages, int maxTokens) {
    json m = json::array();
    for (const auto& [role, content] : messages) m.push_back({{"role", role}, {"content", content}});
    return {{"messages", m}, {"max_tokens", maxTokens}, {"temperature", 0}};
}

// The data lines of a Server-Sent Events body.
std::vector<std::string> eventData(const std::string& body) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos < body.size()) {
        size_t end = body.find("\n\n", pos);
        if (end == std::string::npos) end = body.size();
        const std::string event = body.substr(pos, end - pos);
        if (event.starts_with("data: ")) out.push_back(event.substr(6));
        pos = end + 2;
    }
    return out;
}

// The content a streamed chat body carries, and its finish reason.
std::pair<std::string, std::string> streamedContent(const std::string& body) {
    std::string content, finish;
    for (const auto& data : eventData(body)) {
        if (data == "[DONE]") break;
        const json j = json::parse(data);
        if (j["choices"].empty()) continue;
        const json& c = j["choices"][0];
        if (c.contains("delta") && c["delta"].contains("content")) content += c["delta"]["content"].get<std::string>();
        if (c.contains("text")) content += c["text"].get<std::string>();
        if (!c["finish_reason"].is_null()) finish = c["finish_reason"];
    }
    return {content, finish};
}

}  // namespace

class TestApiServer : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::unique_ptr<Model> model_;
    server::ServerOptions options_;
    std::unique_ptr<RunningServer> server_;

    // The body of a request answered with `expectStatus` (anything else fails the test).
    std::string post(const std::string& path, const json& body, int expectStatus = 200) {
        auto r = server_->client().Post(path.c_str(), body.dump(), "application/json");
        if (!r) throw std::runtime_error("no response from " + path);
        if (r->status != expectStatus)
            throw std::runtime_error(path + ": status " + std::to_string(r->status) + ": " + r->body);
        return r->body;
    }
    void expectError(const httplib::Result& r, int status, const std::string& param = {},
                     const std::string& code = {}) {
        QVERIFY(r);
        QCOMPARE(r->status, status);
        const json j = json::parse(r->body);
        QVERIFY2(j["error"]["message"].is_string() && !j["error"]["message"].get<std::string>().empty(),
                 r->body.c_str());
        QVERIFY(j["error"]["type"].is_string());
        if (!param.empty()) QCOMPARE(j["error"]["param"].get<std::string>(), param);
        if (!code.empty()) QCOMPARE(j["error"]["code"].get<std::string>(), code);
    }

private slots:
    void initTestCase() {
        test::TinyModelOptions t;
        t.type = TensorType::Q8_0;
        t.context = 1 << 16;  // room for a reply long enough to be cut off by a disconnect
        model_ = Model::load(test::writeTinyModel((dir_.path() + "/tiny.gguf").toStdString(), t));
        options_.modelId = "tiny";
        options_.slotCount = 2;
        options_.threads = 1;
        options_.session.memory.contextSize = 256;
        options_.maxBodyBytes = 64 << 10;
        server_ = std::make_unique<RunningServer>(*model_, options_);
    }

    void healthAndModels() {
        auto c = server_->client();
        auto h = c.Get("/health");
        QVERIFY(h);
        QCOMPARE(h->status, 200);
        QCOMPARE(json::parse(h->body)["status"].get<std::string>(), std::string("ok"));
        auto m = c.Get("/v1/models");
        QVERIFY(m);
        QCOMPARE(m->status, 200);
        const json list = json::parse(m->body);
        QCOMPARE(list["object"].get<std::string>(), std::string("list"));
        QCOMPARE(list["data"].size(), size_t(1));
        QCOMPARE(list["data"][0]["id"].get<std::string>(), std::string("tiny"));
        auto one = c.Get("/v1/models/tiny");
        QVERIFY(one);
        QCOMPARE(one->status, 200);
        expectError(c.Get("/v1/models/other"), 404, "model", "model_not_found");
        expectError(c.Get("/v1/nothing-here"), 404);
    }

    void chatCompletionAndItsUsage() {
        const json r = json::parse(post("/v1/chat/completions", chatBody({{"user", "Hello"}}, 8)));
        QCOMPARE(r["object"].get<std::string>(), std::string("chat.completion"));
        QCOMPARE(r["model"].get<std::string>(), std::string("tiny"));
        QCOMPARE(r["choices"][0]["message"]["role"].get<std::string>(), std::string("assistant"));
        QVERIFY(r["choices"][0]["message"]["content"].is_string());
        const std::string finish = r["choices"][0]["finish_reason"];
        QVERIFY(finish == "length" || finish == "stop");
        const int64_t completion = r["usage"]["completion_tokens"];
        QVERIFY(finish == "stop" || completion == 8);
        QVERIFY(r["usage"]["prompt_tokens"].get<int64_t>() > 5);
        QCOMPARE(r["usage"]["total_tokens"].get<int64_t>(), r["usage"]["prompt_tokens"].get<int64_t>() + completion);
        QVERIFY(r["usage"]["prompt_tokens_details"]["cached_tokens"].is_number_integer());
    }

    void streamedChatEqualsTheWholeOne() {
        json body = chatBody({{"user", "Stream me"}}, 24);
        const json whole = json::parse(post("/v1/chat/completions", body));
        body["stream"] = true;
        body["stream_options"] = {{"include_usage", true}};
        const std::string sse = post("/v1/chat/completions", body);
        const auto events = eventData(sse);
        QVERIFY(events.size() >= 3);
        QCOMPARE(events.back(), std::string("[DONE]"));
        QCOMPARE(json::parse(events[0])["choices"][0]["delta"]["role"].get<std::string>(), std::string("assistant"));
        QCOMPARE(json::parse(events[0])["object"].get<std::string>(), std::string("chat.completion.chunk"));
        const json usage = json::parse(events[events.size() - 2]);
        QVERIFY(usage["choices"].empty());
        QCOMPARE(usage["usage"]["completion_tokens"], whole["usage"]["completion_tokens"]);
        const auto [content, finish] = streamedContent(sse);
        QCOMPARE(content, whole["choices"][0]["message"]["content"].get<std::string>());
        QCOMPARE(finish, whole["choices"][0]["finish_reason"].get<std::string>());
    }

    // A stop sequence taken from the reply itself: the answer ends before it,
    // streamed or not, and no chunk carries any of it.
    void stopSequenceEndsTheReply() {
        json body = chatBody({{"user", "Say something long"}}, 40);
        const std::string full = json::parse(post("/v1/chat/completions", body))["choices"][0]["message"]["content"];
        // Two whole ASCII characters from the middle (the tiny model writes many bytes that are no UTF-8).
        size_t at = std::string::npos;
        for (size_t i = full.size() / 3; i + 1 < full.size(); ++i)
            if (uint8_t(full[i]) < 0x80 && uint8_t(full[i + 1]) < 0x80 && full[i] != '\0') {
                at = i;
                break;
            }
        if (at == std::string::npos) QSKIP("the tiny model's reply has no two ASCII characters in a row");
        const std::string stop = full.substr(at, 2);
        const std::string expected = full.substr(0, full.find(stop));
        body["stop"] = json::array({"\xF0\x9F\x98\x80never", stop});
        const json r = json::parse(post("/v1/chat/completions", body));
        QCOMPARE(r["choices"][0]["message"]["content"].get<std::string>(), expected);
        QCOMPARE(r["choices"][0]["finish_reason"].get<std::string>(), std::string("stop"));
        body["stream"] = true;
        const std::string sse = post("/v1/chat/completions", body);
        const auto [content, finish] = streamedContent(sse);
        QCOMPARE(content, expected);
        QCOMPARE(finish, std::string("stop"));
    }

    // The second request continues the first conversation: it reuses the
    // slot's tokens and answers exactly as a fresh session would.
    void slotReuseIsReportedAndBitIdentical() {
        const std::vector<std::pair<std::string, std::string>> first = {{"system", "Be brief."},
                                                                        {"user", "First question"}};
        const json a = json::parse(post("/v1/chat/completions", chatBody(first, 12)));
        auto second = first;
        second.push_back({"assistant", a["choices"][0]["message"]["content"]});
        second.push_back({"user", "Second question"});
        const json b = json::parse(post("/v1/chat/completions", chatBody(second, 12)));

        // The same two turns on a new session of our own.
        SessionOptions so = options_.session;
        ExecContext ctx(1);
        ReplyOptions ro;
        ro.sampler.temperature = 0;
        ro.maxTokens = 12;
        auto messages = [](const std::vector<std::pair<std::string, std::string>>& m) {
            std::vector<ChatMessage> out;
            for (const auto& [role, content] : m) out.push_back({role, content});
            return out;
        };
        ChatSession continued(*model_, so);
        continued.reply(messages(first), ctx, ro);
        const auto held = continued.session().tokens();
        const auto prompt = continued.promptTokens(messages(second), true);
        const size_t shared =
            size_t(std::mismatch(held.begin(), held.begin() + std::ptrdiff_t(std::min(held.size(), prompt.size())),
                                 prompt.begin())
                       .first -
                   held.begin());
        QVERIFY(shared > 10);
        QCOMPARE(b["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(), int64_t(shared));
        QCOMPARE(b["usage"]["prompt_tokens"].get<int64_t>(), int64_t(prompt.size()));
        // Continuing on the slot answers exactly as the same turns on a new session.
        const ReplyResult expected = continued.reply(messages(second), ctx, ro);
        QCOMPARE(expected.reusedTokens, int64_t(shared));
        QCOMPARE(b["choices"][0]["message"]["content"].get<std::string>(), expected.text);
        QCOMPARE(b["usage"]["completion_tokens"].get<int64_t>(), expected.generatedTokens);
    }

    void completionsArePlainText() {
        json body = {{"prompt", "<|im_start|>system"}, {"max_tokens", 6}, {"temperature", 0}};
        const json r = json::parse(post("/v1/completions", body));
        QCOMPARE(r["object"].get<std::string>(), std::string("text_completion"));
        QVERIFY(r["choices"][0]["text"].is_string());
        // Plain text: the byte vocabulary's ids, none of them <|im_start|>.
        const auto ids = model_->tokenizer().encode("<|im_start|>system", true, false);
        QVERIFY(std::find(ids.begin(), ids.end(), test::kTinyImStart) == ids.end());
        QCOMPARE(r["usage"]["prompt_tokens"].get<int64_t>(), int64_t(ids.size()));
        QVERIFY(ids.size() >= std::string("<|im_start|>system").size());
        body["stream"] = true;
        const std::string sse = post("/v1/completions", body);
        QCOMPARE(eventData(sse).back(), std::string("[DONE]"));
        QCOMPARE(streamedContent(sse).first, r["choices"][0]["text"].get<std::string>());
    }

    void logitBiasSteersTheReply() {
        json body = {{"prompt", "abc"}, {"max_tokens", 3}, {"temperature", 0}};
        const std::string plain = json::parse(post("/v1/completions", body))["choices"][0]["text"];
        // +100 on one byte forces it at every step.
        body["logit_bias"] = {{std::to_string(int('q')), 100}};
        QCOMPARE(json::parse(post("/v1/completions", body))["choices"][0]["text"].get<std::string>(),
                 std::string("qqq"));
        // -100 on every token but 'z' bans them all (at temperature 1 too).
        json ban = json::object();
        for (int id = 0; id < int(test::kTinyVocab); ++id)
            if (id != 'z') ban[std::to_string(id)] = -100;
        body["logit_bias"] = ban;
        body["temperature"] = 1.0;
        QCOMPARE(json::parse(post("/v1/completions", body))["choices"][0]["text"].get<std::string>(),
                 std::string("zzz"));
        QVERIFY(plain != "qqq" && plain != "zzz");
    }

    void badRequestsAreRefusedWithTheirStatus() {
        auto c = server_->client();
        expectError(c.Post("/v1/chat/completions", "{not json", "application/json"), 400);
        expectError(c.Post("/v1/chat/completions", "[]", "application/json"), 400);
        expectError(c.Post("/v1/chat/completions", "{\"messages\": []}", "application/json"), 400, "messages");
        auto with = [](json body, const char* key, json value) {
            body[key] = value;
            return body.dump();
        };
        const json ok = chatBody({{"user", "hi"}}, 4);
        expectError(c.Post("/v1/chat/completions", with(ok, "temperature", 7), "application/json"), 400, "temperature");
        expectError(c.Post("/v1/chat/completions", with(ok, "temperature", "hot"), "application/json"), 400,
                    "temperature");
        expectError(c.Post("/v1/chat/completions", with(ok, "n", 2), "application/json"), 400, "n");
        expectError(c.Post("/v1/chat/completions", with(ok, "max_tokens", 0), "application/json"), 400, "max_tokens");
        expectError(c.Post("/v1/chat/completions", with(ok, "stop", json::array({"a", "b", "c", "d", "e"})),
                           "application/json"),
                    400, "stop");
        expectError(c.Post("/v1/chat/completions", with(ok, "stop", ""), "application/json"), 400, "stop");
        expectError(c.Post("/v1/chat/completions", with(ok, "model", "gpt-4"), "application/json"), 404, "model",
                    "model_not_found");
        expectError(c.Post("/v1/chat/completions", with(ok, "logit_bias", json{{"x1", 5}}), "application/json"), 400,
                    "logit_bias");
        expectError(c.Post("/v1/chat/completions", with(ok, "logit_bias", json{{"1", 101}}), "application/json"), 400,
                    "logit_bias");
        expectError(c.Post("/v1/chat/completions", with(ok, "logit_bias", json::array({1})), "application/json"), 400,
                    "logit_bias");
        expectError(c.Post("/v1/chat/completions", with(ok, "logit_bias", json{{std::to_string(test::kTinyVocab), 1}}),
                           "application/json"),
                    400, "logit_bias");
        json badRole = ok;
        badRole["messages"][0]["role"] = "wizard";
        expectError(c.Post("/v1/chat/completions", badRole.dump(), "application/json"), 400, "messages[0].role");
        expectError(c.Post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"\xC3\x28\"}]}",
                           "application/json"),
                    400);
        // Over the context (256 positions here): the numbers are in the message.
        auto tooLong =
            c.Post("/v1/chat/completions", chatBody({{"user", std::string(400, 'x')}}, 4).dump(), "application/json");
        expectError(tooLong, 400, "messages", "context_length_exceeded");
        QVERIFY(tooLong->body.find("256") != std::string::npos);
        // Over the body limit (64 KiB here).
        expectError(c.Post("/v1/chat/completions", chatBody({{"user", std::string(100000, 'y')}}, 4).dump(),
                           "application/json"),
                    413);
    }

    void aKeyIsAskedWhenSet() {
        server::ServerOptions o = options_;
        o.apiKey = "sesame";
        RunningServer keyed(*model_, o);
        auto c = keyed.client();
        expectError(c.Get("/v1/models"), 401, {}, "invalid_api_key");
        expectError(c.Post("/v1/chat/completions", chatBody({{"user", "hi"}}, 2).dump(), "application/json"), 401);
        c.set_bearer_token_auth("wrong");
        expectError(c.Get("/v1/models"), 401);
        c.set_bearer_token_auth("sesame");
        auto r = c.Post("/v1/chat/completions", chatBody({{"user", "hi"}}, 2).dump(), "application/json");
        QVERIFY(r);
        QCOMPARE(r->status, 200);
    }

    void anOpenHostNeedsAKey() {
        // Strings swapped in: assigning these literals trips a GCC 12 -Wrestrict false positive.
        server::ServerOptions o = options_;
        std::string("0.0.0.0").swap(o.host);
        QVERIFY_THROWS_EXCEPTION(Error, server::ApiServer(*model_, o));
        std::string("key").swap(o.apiKey);
        server::ApiServer allowed(*model_, o);  // constructs; not bound
    }

    // A streamed reply of up to 60,000 tokens whose client leaves after the
    // first chunk: the server stops generating (counted by /health) and
    // answers the next request.
    void aPortInUseIsRefused() {
        server::ServerOptions o = options_;
        o.port = server_->port;
        server::ApiServer second(*model_, o);
        QVERIFY_THROWS_EXCEPTION(Error, second.bind());
    }

    void aClientThatLeavesCancelsItsGeneration() {
        server::ServerOptions o = options_;
        o.session.memory.contextSize = 1 << 16;
        RunningServer longRunning(*model_, o);
        auto c = longRunning.client();
        json body = chatBody({{"user", "Talk forever"}}, 60000);
        body["stream"] = true;
        body["temperature"] = 1.0;
        // Neither end-of-generation token may end the reply before the disconnect is seen (the tiny
        // vocabulary of 260 would sample one within a few hundred tokens on a loaded machine).
        body["logit_bias"] = {{std::to_string(test::kTinyEndOfText), -100}, {std::to_string(test::kTinyImEnd), -100}};
        int chunks = 0;
        httplib::Request req;
        req.method = "POST";
        req.path = "/v1/chat/completions";
        req.body = body.dump();
        req.set_header("Content-Type", "application/json");
        req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++chunks < 2; };
        c.send(req);  // ends with an error: the receiver stopped it
        QVERIFY(chunks >= 1);
        json health;
        for (int i = 0; i < 200; ++i) {
            auto h = longRunning.client().Get("/health");
            QVERIFY(h);
            health = json::parse(h->body);
            if (health["cancelled"].get<int>() == 1) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        QCOMPARE(health["cancelled"].get<int>(), 1);
        auto next =
            longRunning.client().Post("/v1/chat/completions", chatBody({{"user", "hi"}}, 2).dump(), "application/json");
        QVERIFY(next);
        QCOMPARE(next->status, 200);
    }
};

QTEST_GUILESS_MAIN(TestApiServer)
#include "test_api_server.moc"
