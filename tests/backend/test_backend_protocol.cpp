// The remote backend's protocol pieces without a network: Server-Sent Events
// split at every byte, request bodies, chunks, model lists, error answers,
// Retry-After, base URLs and the one-line cut of server text.
#include "remote_protocol.h"
#include "sse_parser.h"

#include <nlohmann/json.hpp>

#include <QtTest>

using namespace cairn;
using namespace cairn::backend;
using nlohmann::json;

class TestBackendProtocol : public QObject {
    Q_OBJECT
private slots:
    void sseEventsAreTheSameHoweverTheBytesAreSplit() {
        const std::string stream = ": a comment\r\n"
                                   "data: {\"a\":1}\r\n\r\n"
                                   "event: message\n"
                                   "data: first line\n"
                                   "data:second line\n"
                                   "id: 7\n\n"
                                   "data: [DONE]\n\n"
                                   "data: unfinished";
        const std::vector<std::string> expected = {"{\"a\":1}", "first line\nsecond line", "[DONE]"};
        for (size_t cut = 0; cut <= stream.size(); ++cut) {
            SseParser p;
            auto events = p.feed(std::string_view(stream).substr(0, cut));
            for (auto& e : p.feed(std::string_view(stream).substr(cut))) events.push_back(e);
            QCOMPARE(events, expected);
        }
        SseParser bytewise;
        std::vector<std::string> events;
        for (char c : stream)
            for (auto& e : bytewise.feed(std::string_view(&c, 1))) events.push_back(e);
        QCOMPARE(events, expected);
    }

    void anEventOverTheLimitIsAnError() {
        SseParser p(1024);
        p.feed("data: " + std::string(1000, 'x'));
        try {
            p.feed(std::string(100, 'y'));
            QFAIL("no error for an event over the limit");
        } catch (const BackendError& e) {
            QCOMPARE(e.kind(), FailureKind::BadReply);
        }
        SseParser lines(1024);  // many short data lines add up too
        QVERIFY_THROWS_EXCEPTION(BackendError, for (int i = 0; i < 200; ++i) lines.feed("data: 0123456789\n"));
    }

    void requestBodySendsOnlyWhatIsSet() {
        TurnRequest r;
        r.messages = {{"system", "Be brief."}, {"user", "Hi <|im_start|>"}};
        r.maxTokens = 7;
        json body = json::parse(chatRequestBody(r, "m", true));
        QCOMPARE(body["model"].get<std::string>(), std::string("m"));
        QCOMPARE(body["messages"].size(), size_t(2));
        QCOMPARE(body["messages"][1]["content"].get<std::string>(), std::string("Hi <|im_start|>"));
        QCOMPARE(body["stream"].get<bool>(), true);
        QCOMPARE(body["stream_options"]["include_usage"].get<bool>(), true);
        QCOMPARE(body["max_tokens"].get<int>(), 7);
        for (const char* k : {"temperature", "top_p", "top_k", "min_p", "seed", "repetition_penalty"})
            QVERIFY2(!body.contains(k), k);
        r.temperature = 0.5f;
        r.topK = 3;
        r.seed = 42;
        body = json::parse(chatRequestBody(r, "m", false));
        QCOMPARE(body["temperature"].get<double>(), 0.5);
        QCOMPARE(body["top_k"].get<int>(), 3);
        QCOMPARE(body["seed"].get<uint64_t>(), uint64_t(42));
        QVERIFY(!body.contains("stream_options"));
    }

    void chunksAndCompletions() {
        ChunkDelta d =
            parseChunk("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hé\"},\"finish_reason\":null}]}");
        QCOMPARE(d.content, std::string("Hé"));
        QVERIFY(!d.finishReason);
        d = parseChunk("{\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}");
        QCOMPARE(*d.finishReason, std::string("length"));
        d = parseChunk("{\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3,\"prompt_tokens_"
                       "details\":{\"cached_tokens\":4}}}");
        QCOMPARE(*d.promptTokens, int64_t(9));
        QCOMPARE(*d.completionTokens, int64_t(3));
        QCOMPARE(*d.cachedTokens, int64_t(4));
        d = parseChunk(
            "{\"choices\":[{\"delta\":{\"content\":null,\"role\":\"assistant\"}}],\"usage\":{\"prompt_tokens\":-1}}");
        QVERIFY(d.content.empty());
        QVERIFY(!d.promptTokens);  // a negative count is no count
        QVERIFY_THROWS_EXCEPTION(BackendError, parseChunk("{not json"));
        QVERIFY_THROWS_EXCEPTION(BackendError, parseChunk("[1,2]"));
        try {
            parseChunk("{\"error\":{\"message\":\"model crashed\\nbadly\"}}");
            QFAIL("an error event was taken as a chunk");
        } catch (const BackendError& e) {
            QVERIFY(std::string(e.what()).find("model crashed badly") != std::string::npos);
        }
        const TurnResult t =
            parseCompletion("{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"Yes.\"},\"finish_"
                            "reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}");
        QCOMPARE(t.text, std::string("Yes."));
        QCOMPARE(t.finish, Finish::Stop);
        QCOMPARE(*t.completionTokens, int64_t(2));
        QVERIFY_THROWS_EXCEPTION(BackendError, parseCompletion("{\"choices\":[]}"));
    }

    void modelLists() {
        const auto ids = parseModelList(
            "{\"object\":\"list\",\"data\":[{\"id\":\"a\"},{\"id\":\"\"},{\"x\":1},7,{\"id\":\"b\\u001b[2J\"}]}");
        QCOMPARE(ids, (std::vector<std::string>{"a", "b [2J"}));
        QVERIFY_THROWS_EXCEPTION(BackendError, parseModelList("{\"models\":[]}"));
        QVERIFY_THROWS_EXCEPTION(BackendError, parseModelList("<html>"));
    }

    void errorAnswersNameStatusKindAndTheServersWords() {
        BackendError e =
            httpError(401, "{\"error\":{\"message\":\"Invalid API key\",\"type\":\"invalid_request_error\"}}", -1, "w");
        QCOMPARE(e.kind(), FailureKind::Unauthorized);
        QCOMPARE(e.httpStatus(), 401);
        QVERIFY(std::string(e.what()).find("Invalid API key") != std::string::npos);
        QVERIFY(std::string(e.what()).find("401") != std::string::npos);
        e = httpError(404, "{\"error\":{\"message\":\"The model `x` does not exist.\"}}", -1, "w");
        QCOMPARE(e.kind(), FailureKind::NotFound);
        e = httpError(503, "", 12, "w");
        QCOMPARE(e.kind(), FailureKind::Busy);
        QCOMPARE(e.retryAfterSeconds(), 12);
        QVERIFY(std::string(e.what()).find("retry after 12 s") != std::string::npos);
        e = httpError(429, "{\"error\":\"slow down\"}", -1, "w");
        QCOMPARE(e.kind(), FailureKind::Busy);
        QVERIFY(std::string(e.what()).find("slow down") != std::string::npos);
        e = httpError(500, "<html>\n\xff\xfe oops</html>", -1, "w");
        QCOMPARE(e.kind(), FailureKind::Refused);
        const std::string what = e.what();
        QVERIFY(what.find('\n') == std::string::npos);
        QVERIFY(what.find("?? oops") != std::string::npos);
        QCOMPARE(parseRetryAfter(" 30 "), 30);
        QCOMPARE(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), -1);
        QCOMPARE(parseRetryAfter("-5"), -1);
        QCOMPARE(parseRetryAfter(""), -1);
    }

    void oneLineCutsWholeCharacters() {
        QCOMPARE(oneLine("a\nb\tc"), std::string("a b c"));
        // "é" is two bytes: a cut inside it drops it whole.
        QCOMPARE(oneLine("abcé", 4), std::string("abc..."));
        QCOMPARE(oneLine("abcé", 5), std::string("abcé"));
        QCOMPARE(oneLine("ab\xF0\x9F\x98\x80z", 5), std::string("ab..."));
    }

    void baseUrls() {
        QCOMPARE(normalizeBaseUrl("http://127.0.0.1:8000"), std::string("http://127.0.0.1:8000/v1"));
        QCOMPARE(normalizeBaseUrl("http://host:8000/"), std::string("http://host:8000/v1"));
        QCOMPARE(normalizeBaseUrl("https://api.example.com/v1/"), std::string("https://api.example.com/v1"));
        QCOMPARE(normalizeBaseUrl("http://h:11434/v1"), std::string("http://h:11434/v1"));
        QCOMPARE(normalizeBaseUrl("http://h/openai/v1"), std::string("http://h/openai/v1"));
        for (const char* bad : {"", "127.0.0.1:8000", "ftp://h/v1", "http://", "http:///v1", "file:///etc/passwd"})
            QVERIFY_THROWS_EXCEPTION(Error, normalizeBaseUrl(bad));
    }
};

QTEST_GUILESS_MAIN(TestBackendProtocol)
#include "test_backend_protocol.moc"
