// An OpenAI-compatible HTTP API over one loaded model (docs/API.md):
// GET /health, GET /v1/models, POST /v1/chat/completions, POST /v1/completions,
// streamed (Server-Sent Events) or not. Built on cpp-httplib: Debian's
// libcpp-httplib-dev is a plain C++ library with no Qt, so `cairn-cli serve`
// and the engine stay Qt-free, and it already has the thread pool, keep-alive,
// chunked responses and body limits a server needs.
//
// Requests are answered one at a time (the engine uses every core for one
// request); others wait up to `queueWaitMs` for it and then get 503 with
// Retry-After. A client that goes away cancels its generation at the next token.
#pragma once

#include "cairn/exec.h"
#include "cairn/session.h"

#include <cstddef>
#include <memory>
#include <string>

namespace cairn::server {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8080;  // 0: any free port (bind() says which)
    std::string apiKey;  // empty: no key asked; required off loopback
    std::string modelId;  // the name /v1/models lists and requests may give
    int slotCount = 1;  // live sessions kept for prefix reuse (each holds its memory)
    int threads = 2;
    ThreadPriority priority = ThreadPriority::Normal;  // the app's server: Background, like its chats
    SessionOptions session;
    size_t maxBodyBytes = size_t(16) << 20;  // larger bodies: 413
    int queueWaitMs = 30000;  // how long a request waits for the engine before 503
};

bool isLoopbackHost(const std::string& host);

class ApiServer {
public:
    // Throws cairn::Error for options that cannot be served (an open
    // non-loopback host without an API key, no slots).
    ApiServer(const Model& model, ServerOptions options);
    ~ApiServer();
    ApiServer(const ApiServer&) = delete;
    ApiServer& operator=(const ApiServer&) = delete;

    // Binds the socket; returns the port. Throws cairn::Error when it cannot.
    int bind();
    // Serves until stop() (from another thread or a signal handler's thread).
    void run();
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace cairn::server
