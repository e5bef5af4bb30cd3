// cairn-cli chat-bench -m MODEL [--turns 10] [--reply 128] [--temp 0] [--seed 0] [-t 2] [--ctx 4096] [--json]
//
// Replies are greedy unless --temp is given (then sampled with --seed, the same
// conversation on every run). A random-weight model's greedy reply can be one
// whitespace token repeated, which a template that trims content (Llama 3's)
// drops from the next prompt, so the chat would not grow; sampling keeps the
// replies in the conversation.
// A scripted conversation growing by ~200 tokens a turn. Per turn: time to
// first token with session reuse vs. a fresh session re-reading the whole
// chat. Then a simulated restart: the session is snapshotted to a file, a new
// session restores it and answers the next message, vs. a full re-prefill;
// and another restores it and regenerates the last reply.
#include "command.h"

#include "cairn/chat_session.h"
#include "cairn/error.h"
#include "cairn/exec.h"
#include "cairn/model.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace cairn::cli {
namespace {

const char* const kUserMessages[] = {
    "I am planning a week-long walking trip through the hills of the Lake District in early autumn. "
    "Could you suggest how to split the distance between the days, what to pack for changing weather, "
    "and how to keep the load on my back light enough that the long climbs stay enjoyable?",
    "Thanks. My friend wants to join for the last three days only. Where along the route would be a good "
    "place for her to meet us, given that she arrives by train, and how should we adjust the daily "
    "distances so that she is not exhausted on her first day with us?",
    "We would also like to stay in small guest houses instead of camping. What should we look for when we "
    "book them, how early do we need to reserve in that season, and what is a sensible budget per night "
    "for two people sharing a room, including breakfast?",
    "One more thing: I want to take photographs of the lakes at sunrise. Which spots face east, how early "
    "would I have to leave the guest house, and is it safe to walk the first stretch in the dark with a "
    "head torch if the path is well marked?",
    "If it rains heavily for two days in a row, what are good alternatives in the valleys? We like old "
    "churches, small museums, tea rooms and anything to do with local history or the poets who lived "
    "there, and we would rather not spend the whole day in a car.",
    "Could you write a short checklist we can print and keep in the map pocket: the things to verify each "
    "evening for the next day, the emergency numbers, and what to do if one of us twists an ankle far "
    "from the nearest road?",
    "My friend is vegetarian and I cannot eat gluten. How easy is it to find suitable food in village pubs "
    "and shops there, and what should we carry as emergency snacks that survive a week in a rucksack "
    "without getting crushed or going stale?",
    "We are thinking about extending the trip by two days to visit the coast on the way home. Which "
    "coastal walks are within easy reach by public transport, and are there tidal dangers we should know "
    "about before walking along the beaches and estuaries?",
    "How do we leave no trace on such a trip? I mean the practical details: what to do with food waste, "
    "how to behave around sheep and cattle, gates and dogs, and how to avoid eroding the paths on the "
    "busiest summits when the ground is soft after rain.",
    "Finally, could you summarise the whole plan day by day in a compact table: start and end points, "
    "distance, height gain, where we sleep, and one highlight for each day, so that we can share it with "
    "our families before we leave?",
    "Thank you. Looking back at everything we discussed, what are the three decisions we still have to "
    "make this week, and in which order should we make them so that the bookings do not run out?",
};
constexpr int kMessages = int(std::size(kUserMessages));

double msSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int runChatBench(Args& args) {
    const std::string modelPath = args.require("-m", "--model");
    const int turns = int(args.number("", "--turns", 10));
    const int64_t replyTokens = int64_t(args.number("", "--reply", 128));
    const int threads = int(args.number("-t", "--threads", 2));
    const int64_t ctxSize = int64_t(args.number("-c", "--ctx", 4096));
    const int64_t chunk = int64_t(args.number("", "--chunk", double(kDefaultPrefillChunk)));
    const float temperature = float(args.number("", "--temp", 0));
    const uint64_t seed = uint64_t(args.number("", "--seed", 0));
    const bool json = args.flag("--json");
    if (temperature < 0) throw Error("cairn-cli chat-bench", "--temp must not be negative");
    if (!args.positionals().empty()) throw Error("cairn-cli chat-bench", "unexpected arguments");
    if (turns < 1 || turns >= kMessages)
        throw Error("cairn-cli chat-bench", "--turns must be 1.." + std::to_string(kMessages - 1));

    auto model = Model::load(modelPath);
    ExecContext ctx(threads);
    SessionOptions so;
    so.memory.contextSize = ctxSize;
    so.chunk = chunk;
    ReplyOptions reply;
    reply.sampler.temperature = temperature;
    reply.sampler.seed = seed;
    reply.maxTokens = replyTokens;
    reply.stopAtEndOfGeneration = false;
    ReplyOptions firstTokenOnly = reply;
    firstTokenOnly.maxTokens = 1;

    std::vector<ChatMessage> messages = {{"system", "You are a helpful travel assistant."}};
    std::vector<ChatMessage> lastPrompt;  // the conversation the last reply answered
    ChatSession chat(*model, so);
    nlohmann::json out;
    out["model"] = modelPath;
    out["threads"] = threads;
    out["temperature"] = temperature;
    out["seed"] = seed;
    out["turns"] = nlohmann::json::array();
    for (int turn = 0; turn < turns; ++turn) {
        messages.push_back({"user", kUserMessages[turn]});
        auto r = chat.reply(messages, ctx, reply);
        lastPrompt = messages;
        ChatSession fresh(*model, so);
        auto full = fresh.reply(messages, ctx, firstTokenOnly);
        messages.push_back({"assistant", r.text});
        nlohmann::json t = {{"turn", turn + 1},
                            {"prompt_tokens", r.promptTokens},
                            {"reused_tokens", r.reusedTokens},
                            {"prefilled_tokens", r.prefilledTokens},
                            {"prompt_ms", r.promptMs},
                            {"ttft_reuse_ms", r.firstTokenMs},
                            {"ttft_full_ms", full.firstTokenMs},
                            {"ratio", r.firstTokenMs / full.firstTokenMs},
                            {"generated_tokens", r.generatedTokens},
                            {"decode_tps", r.decodeMs > 0 ? 1000.0 * double(r.generatedTokens - 1) / r.decodeMs : 0.0}};
        out["turns"].push_back(t);
        if (!json)
            std::printf("turn %2d: %5lld prompt tokens, %5lld prefilled, TTFT %8.1f ms reuse (%.1f ms template + "
                        "tokens) vs %8.1f ms full (%.1f %%)\n",
                        turn + 1, (long long)r.promptTokens, (long long)r.prefilledTokens, r.firstTokenMs, r.promptMs,
                        full.firstTokenMs, 100.0 * r.firstTokenMs / full.firstTokenMs);
    }

    // Simulated restart: snapshot to disk, restore in a new session, answer the next message.
    auto path = std::filesystem::temp_directory_path() / ("cairn-chat-bench-" + std::to_string(::getpid()) + ".snap");
    auto t0 = std::chrono::steady_clock::now();
    auto blob = chat.session().snapshot(Session::KvStorage::F16);
    {
        std::ofstream f(path, std::ios::binary);
        f.write(reinterpret_cast<const char*>(blob.data()), std::streamsize(blob.size()));
    }
    double saveMs = msSince(t0);
    messages.push_back({"user", kUserMessages[turns]});

    // Read from the file each time, as the app reads it from its store; restore keeps the bytes.
    auto readSnapshot = [&path] {
        std::vector<uint8_t> bytes(std::filesystem::file_size(path));
        std::ifstream f(path, std::ios::binary);
        f.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size()));
        return bytes;
    };
    t0 = std::chrono::steady_clock::now();
    ChatSession restored(*model, so);
    restored.session().restore(readSnapshot());
    double restoreMs = msSince(t0);
    auto afterRestore = restored.reply(messages, ctx, firstTokenOnly);
    double ttftRestore = restoreMs + afterRestore.firstTokenMs;  // not the step that feeds the token
    // Regenerate the last reply after a restart (recurrent memory: from the checkpoint stored in the snapshot).
    t0 = std::chrono::steady_clock::now();
    ChatSession regen(*model, so);
    regen.session().restore(readSnapshot());
    double regenRestoreMs = msSince(t0);
    auto regenerated = regen.reply(lastPrompt, ctx, firstTokenOnly);
    double ttftRegenerate = regenRestoreMs + regenerated.firstTokenMs;
    std::filesystem::remove(path);
    ChatSession fresh(*model, so);
    auto full = fresh.reply(messages, ctx, firstTokenOnly);
    out["restore"] = {{"snapshot_bytes", blob.size()},
                      {"save_ms", saveMs},
                      {"restore_ms", restoreMs},
                      {"prompt_tokens", afterRestore.promptTokens},
                      {"reused_tokens", afterRestore.reusedTokens},
                      {"prefilled_tokens", afterRestore.prefilledTokens},
                      {"ttft_restore_ms", ttftRestore},
                      {"ttft_full_ms", full.firstTokenMs},
                      {"ratio", ttftRestore / full.firstTokenMs},
                      {"regenerate_prefilled_tokens", regenerated.prefilledTokens},
                      {"ttft_regenerate_ms", ttftRegenerate}};
    if (json) {
        std::printf("%s\n", out.dump().c_str());
    } else {
        std::printf("restart: snapshot %.2f MiB (saved in %.1f ms), restored in %.1f ms; TTFT %.1f ms restored vs "
                    "%.1f ms full (%.1f %%), %lld of %lld prompt tokens prefilled\n",
                    double(blob.size()) / (1 << 20), saveMs, restoreMs, ttftRestore, full.firstTokenMs,
                    100.0 * ttftRestore / full.firstTokenMs, (long long)afterRestore.prefilledTokens,
                    (long long)afterRestore.promptTokens);
        std::printf("regenerate after restart: TTFT %.1f ms (restore included), %lld of %lld prompt tokens prefilled\n",
                    ttftRegenerate, (long long)regenerated.prefilledTokens, (long long)regenerated.promptTokens);
    }
    return 0;
}

}  // namespace cairn::cli
