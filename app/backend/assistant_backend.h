// One assistant turn, wherever the model runs: the embedded engine
// (EmbeddedBackend, a ChatSession in this process) or an OpenAI-compatible
// server (RemoteBackend: vLLM, llama-server, Ollama, LM Studio, another
// cairn-cli serve). The app's engine worker and `cairn-cli chat` both reply
// through this interface, so they share the same code path.
//
// reply() blocks the calling thread until the turn ends; onPiece is called on
// that same thread with whole UTF-8 characters as they arrive. Errors before
// any reply text (unreachable host, TLS, 401, 404, 429/503, a timeout, a
// prompt over the context) throw BackendError; a reply that breaks off once
// text has arrived is returned with finish Incomplete and the text so far.
#pragma once

#include "cairn/chat_template.h"
#include "cairn/error.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::backend {

struct TurnRequest {
    std::vector<ChatMessage> messages;
    // Unset: the backend's default (the engine's SamplerOptions; the server's own).
    std::optional<float> temperature, topP, minP, repeatPenalty;
    std::optional<int32_t> topK;
    std::optional<uint64_t> seed;
    int64_t maxTokens = 512;
    const std::atomic<bool>* cancel = nullptr;  // Stop: ends the turn at once
    std::function<void(std::string_view piece)> onPiece;  // streamed text, whole characters
    std::function<void(int64_t done, int64_t total)> onPrefill;  // embedded only: prompt progress
    std::function<void()> onPromptReady;  // embedded only: prompt fed, no token yet
    // Embedded only: Continue, the start of the reply (ReplyOptions::assistantPrefix);
    // the result's text is what follows it.
    std::string assistantPrefix;
};

enum class Finish {
    Stop,  // end of generation or a stop sequence
    Length,  // max tokens
    ContextFull,  // embedded: the context filled while generating
    Cancelled,  // Stop pressed
    Incomplete,  // remote: the stream broke off or timed out after some text (note says why)
};

struct TurnResult {
    std::string text;
    Finish finish = Finish::Stop;
    std::string note;  // one line for the status line when the turn ended abnormally
    // Usage as the backend reports it (a remote server may not: then unset).
    std::optional<int64_t> promptTokens, completionTokens, cachedTokens;
    // Embedded engine figures (zero for a remote turn).
    int64_t prefilledTokens = 0;
    double prefillMs = 0, firstTokenMs = 0, decodeMs = 0;
    bool usedFallbackTemplate = false;
    std::string templateNote;
};

// What went wrong, so a caller can react (retry later, ask for a key) beyond the message.
enum class FailureKind { Unreachable, Tls, Unauthorized, NotFound, Busy, Timeout, BadReply, Refused, Engine };

class BackendError : public Error {
public:
    BackendError(FailureKind kind, std::string where, std::string what, int status = 0, int retryAfterSeconds = -1)
        : Error(std::move(where), std::move(what)), kind_(kind), status_(status), retryAfter_(retryAfterSeconds) {}
    FailureKind kind() const noexcept { return kind_; }
    int httpStatus() const noexcept { return status_; }  // 0: no HTTP answer
    int retryAfterSeconds() const noexcept { return retryAfter_; }  // -1: not given

private:
    FailureKind kind_;
    int status_;
    int retryAfter_;
};

class AssistantBackend {
public:
    virtual ~AssistantBackend() = default;
    virtual TurnResult reply(const TurnRequest& request) = 0;
    // "engine" or "remote": remote state lives on the server (no snapshots).
    virtual bool isRemote() const = 0;
};

// OpenAI's finish_reason names ("stop", "length": also a full context), and "cancelled", "incomplete".
const char* finishName(Finish f);

}  // namespace cairn::backend
