// Conformance of the chat-template interpreter with Hugging Face's rendering
// (../shared/templates): every expected case byte for byte, every expected error
// as an error, and prefix stability of multi-turn renderings.
#include "cairn/chat_template.h"
#include "shared_data.h"

#include <nlohmann/json.hpp>

#include <QTest>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

using namespace cairn;
using json = nlohmann::ordered_json;

namespace {

// strftime_now() in the reference data: 2026-07-26 00:00:00 (a Sunday).
std::tm referenceClock() {
    std::tm t{};
    t.tm_year = 126;
    t.tm_mon = 6;
    t.tm_mday = 26;
    t.tm_wday = 0;
    t.tm_yday = 206;
    return t;
}

struct TemplateData {
    std::string name;
    std::string source;
    json expected;
};

std::vector<TemplateData> loadTemplates() {
    std::vector<TemplateData> out;
    std::string dir = test::sharedPath("templates");
    std::set<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir + "/expected")) files.insert(e.path());
    for (const auto& path : files) {
        TemplateData t;
        t.expected = json::parse(test::readFile(path.string()));
        t.name = t.expected["template"].get<std::string>();
        t.source = test::readFile(dir + "/templates/" + t.name);
        out.push_back(std::move(t));
    }
    return out;
}

json conversation(const std::string& name) {
    return json::parse(test::readFile(test::sharedPath("templates/conversations/" + name + ".json")));
}

ChatRenderOptions optionsFor(const TemplateData& t, bool addGenerationPrompt) {
    ChatRenderOptions o;
    o.addGenerationPrompt = addGenerationPrompt;
    o.bosToken = t.expected["bos_token"].get<std::string>();
    o.eosToken = t.expected["eos_token"].get<std::string>();
    o.clock = referenceClock;
    return o;
}

size_t firstDifference(const std::string& a, const std::string& b) {
    size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    return i;
}

// Templates whose rendering of each message depends only on that message (and, for the
// first one, on the system prompt), so appending a message must keep the earlier text.
const std::set<std::string> kMustBePrefixStable = {
    "Qwen-Qwen2.5-7B-Instruct.jinja",
    "meta-llama-Llama-3.1-8B-Instruct.jinja",
    "meta-llama-Llama-3.2-3B-Instruct.jinja",
};

}  // namespace

class TestChatTemplates : public QObject {
    Q_OBJECT
private slots:
    void everyExpectedCase() {
        auto templates = loadTemplates();
        QVERIFY(!templates.empty());
        int total = 0, passed = 0;
        std::vector<std::string> failures;
        for (const auto& t : templates) {
            int cases = 0, ok = 0;
            std::unique_ptr<ChatTemplate> compiled;
            std::string parseError;
            try {
                compiled = std::make_unique<ChatTemplate>(t.source);
            } catch (const Error& e) {
                parseError = e.what();
            }
            for (const auto& c : t.expected["cases"]) {
                ++cases;
                std::string conv = c["conversation"].get<std::string>();
                bool agp = c["add_generation_prompt"].get<bool>();
                bool expectError = !c["error"].is_null();
                std::string out, error = parseError;
                if (compiled) {
                    try {
                        out = compiled->render(conversation(conv), optionsFor(t, agp));
                    } catch (const Error& e) {
                        error = e.what();
                    }
                }
                std::string label = t.name + " / " + conv + (agp ? " +gen" : "");
                if (expectError) {
                    if (!error.empty()) ++ok;
                    else failures.push_back(label + ": rendered, expected " + c["error"].get<std::string>());
                } else if (!error.empty()) {
                    failures.push_back(label + ": " + error);
                } else {
                    const std::string want = c["output"].get<std::string>();
                    if (out == want) ++ok;
                    else failures.push_back(label + ": differs at byte " + std::to_string(firstDifference(out, want)));
                }
            }
            std::printf("chat template %-52s %3d/%3d\n", t.name.c_str(), ok, cases);
            total += cases;
            passed += ok;
        }
        std::printf("chat templates: %d/%d cases pass\n", passed, total);
        for (const auto& f : failures) std::printf("FAILED %s\n", f.c_str());
        QCOMPARE(passed, total);
    }

    // For every conversation, rendering its first k messages (no generation prompt) must be a
    // prefix of rendering k+1 messages wherever the template renders both.
    void prefixStability() {
        auto templates = loadTemplates();
        std::vector<std::string> convs;
        for (const auto& e : std::filesystem::directory_iterator(test::sharedPath("templates/conversations")))
            convs.push_back(e.path().stem().string());
        std::sort(convs.begin(), convs.end());
        std::vector<std::string> mustFailures;
        int stableTemplates = 0;
        for (const auto& t : templates) {
            ChatTemplate compiled(t.source);
            int checked = 0, held = 0, genChecked = 0, genHeld = 0;
            std::string firstBreak;
            for (const auto& name : convs) {
                json messages = conversation(name);
                std::vector<std::string> rendered(messages.size() + 1), renderedGen(messages.size() + 1);
                std::vector<bool> okPlain(messages.size() + 1, false), okGen(messages.size() + 1, false);
                for (size_t k = 1; k <= messages.size(); ++k) {
                    json head(messages.begin(), messages.begin() + long(k));
                    try {
                        rendered[k] = compiled.render(head, optionsFor(t, false));
                        okPlain[k] = true;
                    } catch (const Error&) {}
                    try {
                        renderedGen[k] = compiled.render(head, optionsFor(t, true));
                        okGen[k] = true;
                    } catch (const Error&) {}
                }
                for (size_t k = 1; k < messages.size(); ++k) {
                    if (okPlain[k] && okPlain[k + 1]) {
                        ++checked;
                        if (rendered[k + 1].compare(0, rendered[k].size(), rendered[k]) == 0) ++held;
                        else if (firstBreak.empty()) firstBreak = name + " at message " + std::to_string(k + 1);
                    }
                    // What generation reuses: the prompt for message k+1 (an assistant reply) then the reply.
                    if (okGen[k] && okPlain[k + 1] && messages[k]["role"] == "assistant") {
                        ++genChecked;
                        if (rendered[k + 1].compare(0, renderedGen[k].size(), renderedGen[k]) == 0) ++genHeld;
                    }
                }
            }
            bool stable = checked > 0 && held == checked;
            stableTemplates += stable;
            if (checked == 0) {
                std::printf("prefix stability %-52s not applicable (the template refuses these conversations)\n",
                            t.name.c_str());
                continue;
            }
            std::printf("prefix stability %-52s %s (%d/%d appends; generation prompt then reply: %d/%d)%s%s\n",
                        t.name.c_str(), stable ? "holds" : "breaks", held, checked, genHeld, genChecked,
                        firstBreak.empty() ? "" : ", first break: ", firstBreak.c_str());
            if (kMustBePrefixStable.count(t.name) && (!stable || genHeld != genChecked)) mustFailures.push_back(t.name);
        }
        std::printf("prefix stability holds for %d of %zu templates\n", stableTemplates, templates.size());
        for (const auto& name : kMustBePrefixStable)
            QVERIFY2(
                std::any_of(templates.begin(), templates.end(), [&](const TemplateData& t) { return t.name == name; }),
                name.c_str());
        for (const auto& f : mustFailures) std::printf("FAILED prefix stability: %s\n", f.c_str());
        QVERIFY(mustFailures.empty());
    }

    // The evaluation budget's default limits against what the real templates use: every
    // rendering must stay far below them (the margins are written in engine/chat/budget.h).
    void budgetMarginsOnRealTemplates() {
        auto templates = loadTemplates();
        ChatRenderStats most;
        std::string mostSteps, mostBytes, mostDepth;
        int renders = 0;
        for (const auto& t : templates) {
            ChatTemplate compiled(t.source);
            for (const auto& c : t.expected["cases"]) {
                std::string conv = c["conversation"].get<std::string>();
                ChatRenderOptions o = optionsFor(t, c["add_generation_prompt"].get<bool>());
                ChatRenderStats stats;
                o.stats = &stats;
                try {
                    compiled.render(conversation(conv), o);
                } catch (const Error&) {}
                ++renders;
                std::string label = t.name + " / " + conv;
                if (stats.steps > most.steps) {
                    most.steps = stats.steps;
                    mostSteps = label;
                }
                if (stats.peakBytes > most.peakBytes) {
                    most.peakBytes = stats.peakBytes;
                    mostBytes = label;
                }
                if (stats.peakDepth > most.peakDepth) {
                    most.peakDepth = stats.peakDepth;
                    mostDepth = label;
                }
            }
        }
        const ChatRenderLimits limits;
        std::printf("budget over %d renderings: at most %llu steps (%s; limit %llu, %.0fx), %llu bytes (%s; limit "
                    "%llu, %.0fx), "
                    "depth %u (%s; limit %u, %.0fx)\n",
                    renders, (unsigned long long)most.steps, mostSteps.c_str(), (unsigned long long)limits.maxSteps,
                    double(limits.maxSteps) / double(most.steps), (unsigned long long)most.peakBytes, mostBytes.c_str(),
                    (unsigned long long)limits.maxBytes, double(limits.maxBytes) / double(most.peakBytes),
                    most.peakDepth, mostDepth.c_str(), limits.maxDepth,
                    double(limits.maxDepth) / double(most.peakDepth));
        QCOMPARE(renders, 528);
        QVERIFY(most.steps > 0 && most.peakBytes > 0 && most.peakDepth > 0);
        QVERIFY(most.steps * 100 < limits.maxSteps);
        QVERIFY(most.peakBytes * 100 < limits.maxBytes);
        QVERIFY(uint64_t(most.peakDepth) * 10 < limits.maxDepth);
    }
};

CAIRN_CONFORMANCE_MAIN(TestChatTemplates)
#include "test_chat_templates.moc"
