#include "api_server.h"

#include "api_error.h"
#include "api_request.h"
#include "slot_pool.h"
#include "stop_matcher.h"

#include "cairn/chat_session.h"
#include "cairn/error.h"
#include "cairn/exec.h"
#include "cairn/model.h"
#include "cairn/sampler.h"
#include "cairn/tokenizer.h"
#include "cairn/utf8.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <mutex>

namespace cairn::server {

using nlohmann::json;

std::string errorBody(const ApiError& e) {
    json err = {{"message", e.what()}, {"type", e.type}, {"param", nullptr}, {"code", nullptr}};
    if (!e.param.empty()) err["param"] = e.param;
    if (!e.code.empty()) err["code"] = e.code;
    return json{{"error", err}}.dump();
}

bool isLoopbackHost(const std::string& host) {
    return host == "localhost" || host == "::1" || host.starts_with("127.");
}

namespace {

using Lock = std::unique_lock<std::timed_mutex>;

// What a generation produced, for the response and its usage figures.
struct Outcome {
    std::string text;
    std::string finishReason;  // "stop" or "length"; empty when the client went away
    int64_t promptTokens = 0;
    int64_t cachedTokens = 0;
    int64_t completionTokens = 0;
};

json usageJson(const Outcome& o) {
    return {{"prompt_tokens", o.promptTokens},
            {"completion_tokens", o.completionTokens},
            {"total_tokens", o.promptTokens + o.completionTokens},
            {"prompt_tokens_details", {{"cached_tokens", o.cachedTokens}}}};
}

// One response being written: text pieces go through the stop matcher and,
// when streaming, out as Server-Sent Events at once; the client's going away
// (a failed write, or a dead socket found between tokens) sets `cancel`.
class ResponseWriter {
public:
    ResponseWriter(httplib::DataSink& sink, const GenerationParams& params, bool chat, std::string id,
                   std::string model, const std::atomic<bool>& serverStopping)
        : sink_(sink), params_(params), chat_(chat), id_(std::move(id)), model_(std::move(model)),
          created_(std::time(nullptr)), stopMatcher_(params.stop), serverStopping_(serverStopping) {
        if (params_.stream && chat_) sendChunk({{"role", "assistant"}, {"content", ""}}, nullptr);
    }

    std::atomic<bool>& cancel() { return cancel_; }
    bool stoppedBySequence() const { return stopMatcher_.stopped(); }

    // Between tokens and prefill chunks.
    void checkClient() {
        if (serverStopping_.load() || !sink_.is_writable()) cancel_ = true;
    }
    void piece(std::string_view piece) {
        const std::string out = stopMatcher_.push(piece);
        if (stopMatcher_.stopped()) cancel_ = true;  // generated past the stop: end the reply now
        emit(out);
        checkClient();
    }

    void finish(Outcome outcome) {
        emit(stopMatcher_.finish());
        outcome.text = std::move(text_);
        if (params_.stream) {
            if (chat_) sendChunk(json::object(), outcome.finishReason);
            else sendChunk("", outcome.finishReason);
            if (params_.includeUsage) {
                json j = base();
                j["choices"] = json::array();
                j["usage"] = usageJson(outcome);
                send("data: " + j.dump() + "\n\n");
            }
            send("data: [DONE]\n\n");
        } else {
            json j = base();
            json choice = {{"index", 0}, {"finish_reason", outcome.finishReason}};
            if (chat_) choice["message"] = {{"role", "assistant"}, {"content", outcome.text}};
            else choice["text"] = outcome.text, choice["logprobs"] = nullptr;
            j["choices"] = json::array({choice});
            j["usage"] = usageJson(outcome);
            send(j.dump());
        }
        sink_.done();
    }

    // A failure after the status line went out: an error event (or body) of its own.
    void fail(const std::string& message) {
        const std::string body = errorBody(ApiError(500, "server_error", message));
        send(params_.stream ? "data: " + body + "\n\ndata: [DONE]\n\n" : body);
        sink_.done();
    }

private:
    json base() const {
        return {{"id", id_},
                {"object", chat_ ? (params_.stream ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
                {"created", int64_t(created_)},
                {"model", model_}};
    }
    void emit(const std::string& text) {
        if (text.empty()) return;
        text_ += text;
        if (!params_.stream) return;
        if (chat_) sendChunk({{"content", text}}, nullptr);
        else sendChunk(text, nullptr);
    }
    // A chat chunk carries a delta, a completion chunk its text.
    void sendChunk(const json& deltaOrText, const json& finishReason) {
        json j = base();
        json choice = {{"index", 0}, {"finish_reason", finishReason}};
        if (chat_) choice["delta"] = deltaOrText;
        else choice["text"] = deltaOrText, choice["logprobs"] = nullptr;
        j["choices"] = json::array({choice});
        send("data: " + j.dump() + "\n\n");
    }
    void send(const std::string& s) {
        if (cancel_ && !stopMatcher_.stopped()) return;
        if (!sink_.write(s.data(), s.size())) cancel_ = true;
    }

    httplib::DataSink& sink_;
    const GenerationParams& params_;
    bool chat_;
    std::string id_, model_;
    std::time_t created_;
    StopMatcher stopMatcher_;
    const std::atomic<bool>& serverStopping_;
    std::atomic<bool> cancel_{false};
    std::string text_;
};

}  // namespace

struct ApiServer::Impl {
    Impl(const Model& m, ServerOptions o)
        : model(m), options(std::move(o)), pool(m, options.session, options.slotCount),
          ctx(options.threads, options.priority) {}

    const Model& model;
    ServerOptions options;
    SlotPool pool;
    ExecContext ctx;
    std::timed_mutex engine;
    std::atomic<bool> stopping{false};
    std::atomic<uint64_t> requests{0};
    std::atomic<uint64_t> cancelled{0};  // generations ended because the client went away
    httplib::Server http;
    // Debian's httplib is a compiled library, so its listen backlog (5) cannot
    // be raised by a macro: the socket is kept here and listened on again with
    // a deeper queue after binding. With 5, twenty clients connecting at once
    // overflowed it (TcpExtListenOverflows) and 4-9 of 120 streamed requests
    // in test_api_soak had their connection closed with no status after 1.2 s.
    socket_t listenSocket = INVALID_SOCKET;

    void authorize(const httplib::Request& req) const {
        if (options.apiKey.empty()) return;
        if (req.get_header_value("Authorization") != "Bearer " + options.apiKey)
            throw ApiError(401, "authentication_error", "missing or wrong API key (send 'Authorization: Bearer KEY')",
                           {}, "invalid_api_key");
    }
    void checkModel(const std::string& name) const {
        if (!name.empty() && name != options.modelId)
            throw ApiError(404, "invalid_request_error",
                           "the model '" + name + "' does not exist (this server has '" + options.modelId + "')",
                           "model", "model_not_found");
    }
    void checkLogitBias(const SamplerOptions& sampler) const {
        const int64_t vocab = model.tokenizer().vocabSize();
        for (const LogitBias& b : sampler.logitBias)
            if (b.token >= vocab)
                throw badRequest("'logit_bias' names token " + std::to_string(b.token) + "; the vocabulary has " +
                                     std::to_string(vocab),
                                 "logit_bias");
    }
    std::shared_ptr<Lock> acquireEngine() {
        auto lock = std::make_shared<Lock>(engine, std::defer_lock);
        if (!lock->try_lock_for(std::chrono::milliseconds(options.queueWaitMs)))
            throw ApiError(503, "server_error", "the server is busy with other requests; try again shortly");
        return lock;
    }
    void checkFits(size_t promptTokens) const {
        if (int64_t(promptTokens) >= pool.contextSize())
            throw ApiError(400, "invalid_request_error",
                           "the prompt has " + std::to_string(promptTokens) + " tokens; the context holds " +
                               std::to_string(pool.contextSize()) + " (prompt and reply together)",
                           "messages", "context_length_exceeded");
    }
    std::string nextId(const char* prefix) { return prefix + std::to_string(++requests); }

    void chat(const httplib::Request& req, httplib::Response& res) {
        authorize(req);
        auto request = std::make_shared<ChatRequest>(parseChatRequest(req.body));
        checkModel(request->params.model);
        checkLogitBias(request->params.sampler);
        auto lock = acquireEngine();
        ChatSession& session = pool.forChat(request->messages);
        checkFits(session.promptTokens(request->messages, true).size());
        const std::string id = nextId("chatcmpl-");
        res.set_chunked_content_provider(request->params.stream ? "text/event-stream" : "application/json",
                                         [this, lock, request, &session, id](size_t, httplib::DataSink& sink) {
                                             ResponseWriter out(sink, request->params, true, id, options.modelId,
                                                                stopping);
                                             try {
                                                 ReplyOptions ro;
                                                 ro.sampler = request->params.sampler;
                                                 ro.maxTokens = request->params.maxTokens.value_or(pool.contextSize());
                                                 ro.cancel = &out.cancel();
                                                 ro.onPrefill = [&](int64_t, int64_t) { out.checkClient(); };
                                                 ro.onPiece = [&](std::string_view piece) { out.piece(piece); };
                                                 const ReplyResult r = session.reply(request->messages, ctx, ro);
                                                 Outcome o;
                                                 o.promptTokens = r.promptTokens;
                                                 o.cachedTokens = r.reusedTokens;
                                                 o.completionTokens = r.generatedTokens;
                                                 o.finishReason = finishReason(r.stop, out.stoppedBySequence());
                                                 if (o.finishReason.empty()) return clientGone();
                                                 out.finish(std::move(o));
                                             } catch (const std::exception& e) {
                                                 out.fail(e.what());
                                             }
                                             return true;
                                         });
    }

    void completion(const httplib::Request& req, httplib::Response& res) {
        authorize(req);
        auto request = std::make_shared<CompletionRequest>(parseCompletionRequest(req.body));
        checkModel(request->params.model);
        checkLogitBias(request->params.sampler);
        const Tokenizer& tok = model.tokenizer();
        // Plain text: a control token's spelling in the prompt stays text.
        auto ids = std::make_shared<std::vector<int32_t>>(
            tok.encode(request->prompt, /*addSpecial=*/true, /*parseSpecial=*/false));
        if (ids->empty()) throw badRequest("the prompt gives no tokens", "prompt");
        checkFits(ids->size());
        auto lock = acquireEngine();
        Session& session = pool.forTokens(*ids).session();
        const std::string id = nextId("cmpl-");
        res.set_chunked_content_provider(request->params.stream ? "text/event-stream" : "application/json",
                                         [this, lock, request, ids, &session, id](size_t, httplib::DataSink& sink) {
                                             ResponseWriter out(sink, request->params, false, id, options.modelId,
                                                                stopping);
                                             try {
                                                 Outcome o = complete(session, *ids, request->params, out);
                                                 if (o.finishReason.empty()) return clientGone();
                                                 out.finish(std::move(o));
                                             } catch (const std::exception& e) {
                                                 out.fail(e.what());
                                             }
                                             return true;
                                         });
    }

    bool clientGone() {
        ++cancelled;
        return false;  // httplib closes the connection
    }

    static std::string finishReason(StopReason stop, bool bySequence) {
        if (bySequence || stop == StopReason::EndOfGeneration) return "stop";
        if (stop == StopReason::Cancelled) return {};
        return "length";
    }

    // A plain continuation of `ids` on the session (what ChatSession::reply
    // does after its prompt, without the chat's history bookkeeping).
    Outcome complete(Session& session, const std::vector<int32_t>& ids, const GenerationParams& params,
                     ResponseWriter& out) {
        Outcome o;
        o.promptTokens = int64_t(ids.size());
        FeedProgress progress;
        progress.cancel = &out.cancel();
        progress.onProgress = [&](int64_t, int64_t) { out.checkClient(); };
        try {
            session.feed(ids, ctx, progress);
        } catch (const Cancelled&) {
            return o;
        }
        o.cachedTokens = session.stats().lastReused;
        const Tokenizer& tok = model.tokenizer();
        Sampler sampler(params.sampler);
        StreamDecoder decoder(tok);
        StopReason stop = StopReason::MaxTokens;
        const int64_t maxTokens = params.maxTokens.value_or(session.contextSize());
        for (int64_t i = 0; i < maxTokens; ++i) {
            if (out.cancel()) {
                stop = StopReason::Cancelled;
                break;
            }
            const int32_t next = sampler.sample(session.logits(), session.tokens());
            if (tok.isEndOfGeneration(next)) {
                stop = StopReason::EndOfGeneration;
                break;
            }
            ++o.completionTokens;
            out.piece(text::validUtf8(decoder.push(next)));
            if (session.memory().size() >= session.contextSize()) break;
            session.append(next, ctx);
        }
        if (!out.cancel()) out.piece(text::validUtf8(decoder.flush()));
        o.finishReason = finishReason(stop, out.stoppedBySequence());
        return o;
    }

    void routes() {
        http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
            res.set_content(
                json{{"status", "ok"}, {"requests", requests.load()}, {"cancelled", cancelled.load()}}.dump(),
                "application/json");
        });
        auto modelJson = [this] {
            return json{
                {"id", options.modelId},
                {"object", "model"},
                {"created", 0},
                {"owned_by", "cairn"},
                {"meta", {{"architecture", model.info().architecture}, {"context_length", pool.contextSize()}}}};
        };
        http.Get("/v1/models", [this, modelJson](const httplib::Request& req, httplib::Response& res) {
            authorize(req);
            res.set_content(json{{"object", "list"}, {"data", json::array({modelJson()})}}.dump(), "application/json");
        });
        http.Get(R"(/v1/models/(.+))", [this, modelJson](const httplib::Request& req, httplib::Response& res) {
            authorize(req);
            checkModel(req.matches[1]);
            res.set_content(modelJson().dump(), "application/json");
        });
        http.Post("/v1/chat/completions",
                  [this](const httplib::Request& req, httplib::Response& res) { chat(req, res); });
        http.Post("/v1/completions",
                  [this](const httplib::Request& req, httplib::Response& res) { completion(req, res); });

        http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
            ApiError error(500, "server_error", "internal error");
            try {
                std::rethrow_exception(ep);
            } catch (const ApiError& e) {
                error = e;
            } catch (const Error& e) {
                error = ApiError(400, "invalid_request_error", e.what());
            } catch (const std::exception& e) {
                error = ApiError(500, "server_error", e.what());
            }
            res.status = error.status;
            if (error.status == 503) res.set_header("Retry-After", "1");
            res.set_content(errorBody(error), "application/json");
        });
        // Statuses httplib sets itself (no route, a body over the limit).
        http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
            if (!res.body.empty()) return;
            if (res.status == 404)
                res.set_content(errorBody(ApiError(404, "invalid_request_error",
                                                   "no such endpoint: " + req.method + " " + req.path)),
                                "application/json");
            else if (res.status == 413)
                res.set_content(errorBody(ApiError(413, "invalid_request_error", "the request body is too large")),
                                "application/json");
            else
                res.set_content(
                    errorBody(ApiError(res.status, "invalid_request_error", "HTTP " + std::to_string(res.status))),
                    "application/json");
        });
        http.set_payload_max_length(options.maxBodyBytes);
        // SO_REUSEADDR only: httplib's default SO_REUSEPORT let a second server
        // bind a port another one listens on and take half its connections.
        http.set_socket_options([this](socket_t sock) {
            int yes = 1;
            setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
            listenSocket = sock;
        });
    }
};

ApiServer::ApiServer(const Model& model, ServerOptions options) {
    if (options.slotCount < 1 || options.slotCount > 64) throw Error("api server", "--slots must be between 1 and 64");
    if (!isLoopbackHost(options.host) && options.apiKey.empty())
        throw Error("api server",
                    "refusing to serve on " + options.host +
                        " without an API key: anyone on the network could use it (give --api-key)");
    if (options.modelId.empty()) options.modelId = model.info().name.empty() ? "cairn" : model.info().name;
    impl_ = std::make_unique<Impl>(model, std::move(options));
    impl_->routes();
}

ApiServer::~ApiServer() { stop(); }

int ApiServer::bind() {
    const auto& o = impl_->options;
    const int port =
        o.port == 0 ? impl_->http.bind_to_any_port(o.host) : (impl_->http.bind_to_port(o.host, o.port) ? o.port : -1);
    if (port < 0) throw Error("api server", "cannot listen on " + o.host + ":" + std::to_string(o.port));
    constexpr int kListenBacklog = 512;
    if (impl_->listenSocket != INVALID_SOCKET) ::listen(impl_->listenSocket, kListenBacklog);
    return port;
}

void ApiServer::run() { impl_->http.listen_after_bind(); }

void ApiServer::stop() {
    if (!impl_) return;
    impl_->stopping = true;
    impl_->http.stop();
}

}  // namespace cairn::server
