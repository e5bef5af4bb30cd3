// The app's "Local API server" (Settings): cairn::server::ApiServer over the
// model the engine worker has loaded, on threads of its own (cpp-httplib's
// listener and pool), so a request never waits for the UI and the UI never
// waits for a request. The worker owns it and stops it before the model goes.
//
// Sharing the model with chats: the server has its own slot (a ChatSession
// with its own memory) and its own ExecContext on the same read-only Model,
// so API requests and the app's chats run side by side, each with its own
// state; neither evicts or rewinds the other's memory. See docs/ARCHITECTURE.md.
#pragma once

#include <memory>
#include <string>
#include <thread>

namespace cairn {
class Model;
namespace server {
class ApiServer;
}
}  // namespace cairn

namespace cairn::app {

struct LocalServerConfig {
    std::string host = "127.0.0.1";
    int port = 8080;  // 0: any free port
    std::string apiKey;  // empty: none (refused off loopback)
    std::string modelId;  // what /v1/models lists
    int threads = 1;
    int64_t contextSize = 4096;
    int64_t chunk = 64;
};

class LocalApiServer {
public:
    LocalApiServer();
    ~LocalApiServer();
    LocalApiServer(const LocalApiServer&) = delete;
    LocalApiServer& operator=(const LocalApiServer&) = delete;

    // Binds and serves; returns the URL clients use (http://host:port/v1).
    // Throws cairn::Error (an open non-loopback host, a port in use).
    std::string start(const Model& model, const LocalServerConfig& config);
    // Stops serving (a request in progress is cancelled) and joins the thread.
    void stop();
    bool running() const { return server_ != nullptr; }

private:
    std::unique_ptr<server::ApiServer> server_;
    std::thread thread_;
};

}  // namespace cairn::app
