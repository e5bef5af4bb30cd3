// Runs a bound httplib server's accept loop on a thread of its own and
// returns once the loop runs. httplib's stop() ends the loop only after it
// has started, so a test server torn down sooner waited for it forever
// (test_hub_download hung in ~MockHub, 2 runs in 6 on a busy machine).
#pragma once

#include <httplib.h>

#include <chrono>
#include <thread>

namespace cairn::test {

inline std::thread listenInBackground(httplib::Server& server) {
    std::thread t([&server] { server.listen_after_bind(); });
    for (int i = 0; i < 10000 && !server.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return t;
}

}  // namespace cairn::test
