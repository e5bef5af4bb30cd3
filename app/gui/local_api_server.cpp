#include "local_api_server.h"

#include "api_server.h"

#include "cairn/error.h"
#include "cairn/model.h"

#include <httplib.h>

namespace cairn::app {

LocalApiServer::LocalApiServer() = default;
LocalApiServer::~LocalApiServer() { stop(); }

std::string LocalApiServer::start(const Model& model, const LocalServerConfig& config) {
    stop();
    server::ServerOptions o;
    o.host = config.host;
    o.port = config.port;
    o.apiKey = config.apiKey;
    o.modelId = config.modelId;
    o.slotCount = 1;
    o.threads = config.threads;
    o.priority = ThreadPriority::Background;  // as the chats' engine (one priority per process, cairn/exec.h)
    o.session.memory.contextSize = config.contextSize;
    o.session.chunk = config.chunk;
    auto api = std::make_unique<server::ApiServer>(model, o);  // refuses an open host without a key first
    const int port = api->bind();
    server_ = std::move(api);
    thread_ = std::thread([s = server_.get()] { s->run(); });
    // Until its accept loop runs, httplib's stop() would not end run(): wait
    // for the first answer (one /health over the socket, asking no key).
    const std::string probeHost = config.host == "0.0.0.0" ? "127.0.0.1" : config.host == "::" ? "::1" : config.host;
    httplib::Client probe(probeHost, port);
    probe.set_connection_timeout(5);
    probe.set_read_timeout(5);
    if (!probe.Get("/health")) {
        stop();
        throw Error("local API server", "it does not answer on " + probeHost + ":" + std::to_string(port));
    }
    const bool v6 = config.host.find(':') != std::string::npos;
    return "http://" + (v6 ? "[" + config.host + "]" : config.host) + ":" + std::to_string(port) + "/v1";
}

void LocalApiServer::stop() {
    if (!server_) return;
    server_->stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();
}

}  // namespace cairn::app
