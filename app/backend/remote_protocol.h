// The OpenAI chat-completions protocol as the remote backend speaks it,
// without the transport: request bodies, streamed chunks, model lists and
// error answers. Everything from the server is untrusted: malformed JSON is
// a BadReply error, server messages are cut to one short printable line.
#pragma once

#include "assistant_backend.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::backend {

// "http://host:8000" → "http://host:8000/v1"; a URL with a path is kept
// (without a trailing slash). Throws Error for anything but http(s)://host.
std::string normalizeBaseUrl(std::string_view url);

// The JSON body of POST {base}/chat/completions. Only the sampling values the
// request sets are sent (top_k, min_p and repetition_penalty are extensions
// llama-server, vLLM and cairn-cli serve take; OpenAI itself does not).
std::string chatRequestBody(const TurnRequest& request, const std::string& model, bool stream);

// One streamed chunk's content delta, finish reason and usage (usage chunks
// have no choices). An {"error": ...} event throws BackendError.
struct ChunkDelta {
    std::string content;
    std::optional<std::string> finishReason;
    std::optional<int64_t> promptTokens, completionTokens, cachedTokens;
};
ChunkDelta parseChunk(std::string_view data);

// A non-streamed chat.completion body.
TurnResult parseCompletion(std::string_view body);

// The ids of GET {base}/models.
std::vector<std::string> parseModelList(std::string_view body);

// Seconds of a Retry-After header (delta-seconds form; -1 for none or a date).
int parseRetryAfter(std::string_view header);

// The error for an HTTP answer >= 400: the kind and a one-line message with
// the server's own words (error.message of OpenAI's shape, else the body's start).
BackendError httpError(int status, std::string_view body, int retryAfterSeconds, const std::string& where);

// Server text made one short printable line: controls become spaces, at most
// `max` bytes, whole characters (asciiOnly: every non-ASCII byte becomes '?',
// for text that need not be UTF-8).
std::string oneLine(std::string_view text, size_t max = 300, bool asciiOnly = false);

Finish finishFromReason(std::string_view reason);

}  // namespace cairn::backend
