// A remote OpenAI-compatible server as a backend (vLLM, llama-server, Ollama,
// LM Studio, cairn-cli serve): POST {base}/chat/completions streamed as
// Server-Sent Events, over Qt Network (TLS from Qt's OpenSSL backend, proxies
// and HTTP/2 as Qt does them). Each request runs on a short-lived thread of
// its own with its own event loop, so reply() blocks its caller without
// spinning a nested event loop there (the app's worker must not run other
// queued work mid-reply); the caller's thread parses the stream and calls
// onPiece. Stop is checked every 10 ms and aborts the request.
//
// Needs a QCoreApplication (cairn-cli makes one for --remote).
#pragma once

#include "assistant_backend.h"

#include <cstddef>
#include <string>
#include <vector>

namespace cairn::backend {

struct RemoteOptions {
    std::string baseUrl;  // e.g. http://127.0.0.1:8000/v1 (normalizeBaseUrl)
    std::string apiKey;  // empty: no Authorization header
    std::string model;  // empty: the first id /models lists
    int connectTimeoutMs = 20000;  // until the answer's headers
    int idleTimeoutMs = 120000;  // between two pieces of the answer (a long prefill comes first)
    size_t maxReplyBytes = size_t(64) << 20;  // a longer answer is refused, not buffered
};

class RemoteBackend : public AssistantBackend {
public:
    // Throws Error for a base URL that is not http(s)://host[...].
    explicit RemoteBackend(RemoteOptions options);

    TurnResult reply(const TurnRequest& request) override;
    bool isRemote() const override { return true; }

    // GET {base}/models: the ids the server serves.
    std::vector<std::string> listModels(const std::atomic<bool>* cancel = nullptr);
    // The model replies use: the one given, else the first listed (asked once).
    const std::string& model();
    const RemoteOptions& options() const { return options_; }

private:
    RemoteOptions options_;
};

}  // namespace cairn::backend
