#include "remote_backend.h"

#include "http_exchange.h"
#include "remote_protocol.h"
#include "sse_parser.h"

#include <QCoreApplication>

namespace cairn::backend {
namespace {

constexpr const char* kWhere = "remote endpoint";

void needApplication() {
    if (!QCoreApplication::instance()) throw Error(kWhere, "the remote backend needs a QCoreApplication");
}

HttpRequest requestFor(const RemoteOptions& o, std::string path, std::string body, const std::atomic<bool>* cancel) {
    HttpRequest r;
    r.url = o.baseUrl + path;
    r.apiKey = o.apiKey;
    r.body = std::move(body);
    r.connectTimeoutMs = o.connectTimeoutMs;
    r.idleTimeoutMs = o.idleTimeoutMs;
    r.maxBytes = o.maxReplyBytes;
    r.cancel = cancel;
    return r;
}

std::string seconds(int ms) { return std::to_string((ms + 999) / 1000) + " s"; }

// Why a transfer that ended without a whole answer ended, as one line.
std::string transferFailure(const HttpExchange& x, const RemoteOptions& o, bool gotHeaders) {
    switch (x.end()) {
    case TransferEnd::TimedOut:
        return gotHeaders ? "no data from " + x.host() + " for " + seconds(o.idleTimeoutMs)
                          : "no answer from " + x.host() + " within " + seconds(o.connectTimeoutMs);
    case TransferEnd::TooLarge: return "the answer is larger than " + std::to_string(o.maxReplyBytes) + " bytes";
    case TransferEnd::Tls: return "TLS error with " + x.host() + ": " + oneLine(x.errorText());
    default: return "the connection to " + x.host() + " ended: " + oneLine(x.errorText());
    }
}

// The error for a transfer that brought no usable answer.
BackendError failureError(const HttpExchange& x, const RemoteOptions& o) {
    const bool gotHeaders = x.status() != 0;
    const std::string why = transferFailure(x, o, gotHeaders);
    switch (x.end()) {
    case TransferEnd::TimedOut: return BackendError(FailureKind::Timeout, kWhere, why);
    case TransferEnd::Tls: return BackendError(FailureKind::Tls, kWhere, why);
    case TransferEnd::TooLarge: return BackendError(FailureKind::BadReply, kWhere, why);
    default:
        if (gotHeaders) return BackendError(FailureKind::BadReply, kWhere, why);
        return BackendError(FailureKind::Unreachable, kWhere,
                            "cannot reach " + x.host() + ": " + oneLine(x.errorText()));
    }
}

// The whole body of a short answer, or the error it stands for.
std::string wholeBody(HttpExchange& x, const RemoteOptions& o) {
    std::string body;
    while (x.next(body)) {}
    if (x.end() != TransferEnd::Complete) throw failureError(x, o);
    if (x.status() >= 400) throw httpError(x.status(), body, x.retryAfterSeconds(), kWhere);
    return body;
}

}  // namespace

RemoteBackend::RemoteBackend(RemoteOptions options) : options_(std::move(options)) {
    options_.baseUrl = normalizeBaseUrl(options_.baseUrl);
}

std::vector<std::string> RemoteBackend::listModels(const std::atomic<bool>* cancel) {
    needApplication();
    HttpExchange x(requestFor(options_, "/models", {}, cancel));
    return parseModelList(wholeBody(x, options_));
}

const std::string& RemoteBackend::model() {
    if (options_.model.empty()) {
        const auto ids = listModels();
        if (ids.empty()) throw BackendError(FailureKind::NotFound, kWhere, "the server lists no models");
        options_.model = ids.front();
    }
    return options_.model;
}

TurnResult RemoteBackend::reply(const TurnRequest& request) {
    needApplication();
    if (!request.assistantPrefix.empty())
        throw BackendError(FailureKind::Refused, "remote", "a server cannot continue a reply from its text");
    const std::string modelName = model();
    HttpRequest hr =
        requestFor(options_, "/chat/completions", chatRequestBody(request, modelName, true), request.cancel);
    hr.eventStream = true;
    HttpExchange x(std::move(hr));
    TurnResult t;
    SseParser sse;
    std::string bytes;
    bool done = false;  // [DONE] came
    std::optional<Finish> finish;
    while (!done) {
        bytes.clear();
        if (!x.next(bytes)) break;  // the transfer has ended
        if (x.status() >= 400) {  // an error answer: read it whole
            while (x.next(bytes)) {}
            break;
        }
        for (const std::string& data : sse.feed(bytes)) {
            if (data == "[DONE]") {
                done = true;
                break;
            }
            const ChunkDelta d = parseChunk(data);
            if (!d.content.empty()) {
                t.text += d.content;
                if (request.onPiece) request.onPiece(d.content);
            }
            if (d.finishReason) finish = finishFromReason(*d.finishReason);
            if (d.promptTokens) t.promptTokens = d.promptTokens;
            if (d.completionTokens) t.completionTokens = d.completionTokens;
            if (d.cachedTokens) t.cachedTokens = d.cachedTokens;
        }
    }
    // Leaving aborts whatever is left of the transfer (~HttpExchange).
    if (done || (finish && x.end() == TransferEnd::Complete)) {
        t.finish = finish.value_or(Finish::Stop);
        return t;
    }
    if (x.end() == TransferEnd::Cancelled && request.cancel && request.cancel->load()) {
        t.finish = Finish::Cancelled;
        return t;
    }
    if (x.status() >= 400) throw httpError(x.status(), bytes, x.retryAfterSeconds(), kWhere);
    if (t.text.empty()) {
        if (x.end() == TransferEnd::Complete)
            throw BackendError(FailureKind::BadReply, kWhere, x.host() + " ended the stream before any reply");
        throw failureError(x, options_);
    }
    // Text came, then the stream broke off: the text is kept and marked.
    t.finish = Finish::Incomplete;
    const std::string why = x.end() == TransferEnd::Complete ? "the stream ended before the reply was finished"
                                                             : transferFailure(x, options_, true);
    t.note = "The reply is incomplete: " + why + ".";
    return t;
}

}  // namespace cairn::backend
