// A scripted OpenAI-compatible server for the remote client's failure tests
// (test_remote_backend, test_app_remote): an httplib server on a free loopback
// port, on its own thread; routes are added by each test before start().
#pragma once

#include "background_listen.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace cairn::test {

struct ScriptedServer {
    httplib::Server http;
    std::thread thread;
    int port = 0;
    std::atomic<bool> stopping{false};

    void start() {
        port = http.bind_to_any_port("127.0.0.1");
        thread = listenInBackground(http);
    }
    ~ScriptedServer() {
        stopping = true;
        http.stop();
        if (thread.joinable()) thread.join();
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port) + "/v1"; }
    // Sleeps up to `ms` unless the server is being torn down.
    void hold(int ms) {
        for (int i = 0; i < ms / 10 && !stopping; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
};

// One streamed chat.completion.chunk with a content delta, as an SSE event.
inline std::string sseChunk(const std::string& content) {
    return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + content + "\"},\"finish_reason\":null}]}\n\n";
}

}  // namespace cairn::test
