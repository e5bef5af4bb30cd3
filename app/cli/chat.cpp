// cairn-cli chat (-m MODEL.gguf | --remote URL [--api-key KEY] [--remote-model NAME]) --messages M.json
//   [-n N] [--temp T] [--top-k K] [--top-p P] [--min-p P] [--seed S] [-t N] [--ctx N] [--timeout S] [--json]
// One assistant turn through the same backend code the app uses
// (app/backend): the embedded engine on a model file, or an OpenAI-compatible
// server. Streams the reply to stdout, or with --json prints
// {"content", "finish_reason", "usage"} at the end. Ctrl+C stops the reply.
// Exit status: 0, 1 on an error, 3 when a remote reply broke off (its text is
// still printed, the reason on stderr), 130 when stopped.
#include "command.h"
#include "terminal_text.h"

#include "embedded_backend.h"
#include "remote_backend.h"

#include "cairn/chat_session.h"
#include "cairn/exec.h"
#include "cairn/model.h"
#include "cairn/utf8.h"

#include <QCoreApplication>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace cairn::cli {
namespace {

std::atomic<bool> stopRequested{false};
extern "C" void onInterrupt(int) { stopRequested = true; }

std::vector<ChatMessage> readMessages(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path, "cannot open file");
    std::ostringstream ss;
    ss << in.rdbuf();
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(ss.str(), nullptr, false);
    if (j.is_discarded()) throw Error(path, "invalid JSON");
    auto messages = chatMessagesFromJson(j);
    if (messages.empty()) throw Error(path, "no messages");
    return messages;
}

// Reply text for a terminal: escape sequences and other controls shown, not obeyed; lines kept.
std::string forTerminal(std::string_view text) {
    std::string out;
    size_t start = 0;
    for (;;) {
        const size_t nl = text.find('\n', start);
        out += terminalSafe(text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
        if (nl == std::string_view::npos) return out;
        out += '\n';
        start = nl + 1;
    }
}

template <class T>
std::optional<T> optionalNumber(Args& args, const std::string& s, const std::string& l) {
    auto v = args.option(s, l);
    if (!v) return std::nullopt;
    try {
        size_t used = 0;
        const double d = std::stod(*v, &used);
        if (used != v->size()) throw std::invalid_argument("trailing");
        return T(d);
    } catch (const std::exception&) {
        throw Error("cairn-cli chat", l + " needs a number, not '" + *v + "'");
    }
}

}  // namespace

int runChat(Args& args) {
    const auto modelPath = args.option("-m", "--model");
    const auto remote = args.option("", "--remote");
    const auto apiKey = args.option("", "--api-key");
    const auto remoteModel = args.option("", "--remote-model");
    const std::string messagesPath = args.require("--messages");
    const bool json = args.flag("--json");
    backend::TurnRequest request;
    request.maxTokens = int64_t(args.number("-n", "--n-predict", 512));
    request.temperature = optionalNumber<float>(args, "", "--temp");
    request.topK = optionalNumber<int32_t>(args, "", "--top-k");
    request.topP = optionalNumber<float>(args, "", "--top-p");
    request.minP = optionalNumber<float>(args, "", "--min-p");
    request.seed = optionalNumber<uint64_t>(args, "", "--seed");
    const int threads = int(args.number("-t", "--threads", 2));
    const int64_t ctxOpt = int64_t(args.number("-c", "--ctx", 0));
    const double timeoutS = args.number("", "--timeout", 120);
    args.positionals();
    if (bool(modelPath) == bool(remote))
        throw Error("cairn-cli chat", "give exactly one of -m MODEL.gguf or --remote URL");
    if ((apiKey || remoteModel) && !remote)
        throw Error("cairn-cli chat", "--api-key and --remote-model go with --remote");
    if (request.maxTokens < 1) throw Error("cairn-cli chat", "-n must be at least 1");
    if (threads < 1 || threads > 256) throw Error("cairn-cli chat", "-t must be 1 to 256");
    if (!(timeoutS > 0 && timeoutS <= 86400))
        throw Error("cairn-cli chat", "--timeout must be more than 0 and at most 86400 seconds");
    request.messages = readMessages(messagesPath);

    std::signal(SIGINT, onInterrupt);
    request.cancel = &stopRequested;
    const bool tty = isatty(STDOUT_FILENO);
    if (!json) {
        request.onPiece = [tty](std::string_view piece) {
            const std::string shown = tty ? forTerminal(piece) : std::string(piece);
            std::fwrite(shown.data(), 1, shown.size(), stdout);
            std::fflush(stdout);
        };
    }

    backend::TurnResult r;
    if (remote) {
        int argc = 1;
        char name[] = "cairn-cli";
        char* argv[] = {name, nullptr};
        QCoreApplication app(argc, argv);  // Qt Network's event loops need one
        backend::RemoteOptions o;
        o.baseUrl = *remote;
        o.apiKey = apiKey.value_or("");
        o.model = remoteModel.value_or("");
        o.connectTimeoutMs = o.idleTimeoutMs = int(timeoutS * 1000);
        backend::RemoteBackend b(o);
        r = b.reply(request);
    } else {
        auto model = Model::load(*modelPath);
        SessionOptions so;
        const int64_t trained = model->info().trainedContext > 0 ? model->info().trainedContext : 4096;
        so.memory.contextSize = ctxOpt > 0 ? std::min(ctxOpt, trained) : std::min<int64_t>(trained, 4096);
        ChatSession session(*model, so);
        ExecContext exec(threads);
        backend::EmbeddedBackend b(session, exec);
        r = b.reply(request);
    }

    if (json) {
        nlohmann::json usage = nlohmann::json::object();
        if (r.promptTokens) usage["prompt_tokens"] = *r.promptTokens;
        if (r.completionTokens) usage["completion_tokens"] = *r.completionTokens;
        if (r.promptTokens && r.completionTokens) usage["total_tokens"] = *r.promptTokens + *r.completionTokens;
        if (r.cachedTokens) usage["prompt_tokens_details"] = {{"cached_tokens", *r.cachedTokens}};
        // Bytes that are no UTF-8 (the engine's unfinished character) as U+FFFD, as the server sends them.
        const nlohmann::json out = {
            {"content", text::validUtf8(r.text)}, {"finish_reason", backend::finishName(r.finish)}, {"usage", usage}};
        std::printf("%s\n", out.dump().c_str());
    } else {
        std::printf("\n");
    }
    if (!r.note.empty()) std::fprintf(stderr, "%s\n", terminalSafe(r.note).c_str());
    if (std::fflush(stdout) != 0) return 1;
    if (r.finish == backend::Finish::Incomplete) return 3;
    if (r.finish == backend::Finish::Cancelled) return 130;
    return 0;
}

}  // namespace cairn::cli
