// cairn-cli serve -m MODEL [--host H] [--port P] [--api-key KEY] [--alias NAME] [--ctx N] [-t N]
//   [--slots N] [--queue-wait MS] [--calibrate | --kernel-cache FILE]
// The OpenAI-compatible API server (docs/API.md) on one model, until SIGINT
// or SIGTERM. Prints "listening on http://HOST:PORT" once it accepts requests
// (tests read the port from it with --port 0).
#include "command.h"
#include "kernel_setup.h"

#include "api_server.h"

#include "cairn/error.h"
#include "cairn/model.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <pthread.h>
#include <thread>

namespace cairn::cli {

int runServe(Args& args) {
    const std::string modelPath = args.require("-m", "--model");
    server::ServerOptions o;
    o.host = args.option("", "--host").value_or(o.host);
    o.port = int(args.number("", "--port", o.port));
    o.apiKey = args.option("", "--api-key").value_or("");
    o.modelId = args.option("", "--alias").value_or(std::filesystem::path(modelPath).stem().string());
    o.slotCount = int(args.number("", "--slots", o.slotCount));
    o.threads = int(args.number("-t", "--threads", o.threads));
    o.queueWaitMs = int(args.number("", "--queue-wait", o.queueWaitMs));
    const int64_t ctxOpt = int64_t(args.number("-c", "--ctx", 0));
    const KernelSetup kernels = kernelSetupFrom(args);
    args.positionals();
    if (o.port < 0 || o.port > 65535) throw Error("cairn-cli serve", "--port must be 0 to 65535");
    if (o.threads < 1 || o.threads > 256) throw Error("cairn-cli serve", "-t must be 1 to 256");
    if (o.queueWaitMs < 0) throw Error("cairn-cli serve", "--queue-wait must not be negative");
    setUpKernels(kernels, o.threads);

    auto model = Model::load(modelPath);
    const int64_t trained = model->info().trainedContext > 0 ? model->info().trainedContext : 4096;
    o.session.memory.contextSize = ctxOpt > 0 ? std::min(ctxOpt, trained) : std::min<int64_t>(trained, 4096);

    // Signals go to one waiting thread (blocked everywhere else, also in the
    // server's workers, which inherit the mask), which stops the server.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    server::ApiServer api(*model, o);
    const int port = api.bind();
    std::thread waiter([&] {
        int sig = 0;
        sigwait(&signals, &sig);
        api.stop();
    });
    std::fprintf(stderr, "serving %s (context %lld, %d slot%s)\n", o.modelId.c_str(),
                 (long long)o.session.memory.contextSize, o.slotCount, o.slotCount == 1 ? "" : "s");
    std::printf("listening on http://%s:%d\n", o.host.c_str(), port);
    std::fflush(stdout);
    api.run();
    pthread_kill(waiter.native_handle(), SIGTERM);  // wakes the waiter when stop came otherwise
    waiter.join();
    return 0;
}

}  // namespace cairn::cli
