// Reasoning replies (engine/include/cairn/reasoning.h) and the parts of a chat
// turn that serve them: the reasoning split (unterminated, a marker mid-reply, a
// reply that is only reasoning, a prompt that opened the block), `enable_thinking`
// as a template variable (Qwen3's template, ../shared/templates), Continue
// (ReplyOptions::assistantPrefix prefills only what the session does not hold)
// and the next turn's prompt where the template strips earlier reasoning: the
// tokens up to the first changed one are kept, the rest is prefilled, and the
// result is bit for bit what a fresh session computes. Model: the qwen3 fixture.
#include "cairn/chat_session.h"
#include "cairn/exec.h"
#include "cairn/reasoning.h"
#include "cairn/session.h"
#include "cairn/tokenizer.h"
#include "fixture_copy.h"
#include "same_bits.h"
#include "shared_data.h"

#include <QTemporaryDir>
#include <QTest>

#include <cstring>

using namespace cairn;
using namespace cairn::test;

namespace {

ReplyOptions greedy(int64_t maxTokens) {
    ReplyOptions o;
    o.sampler.temperature = 0;
    o.maxTokens = maxTokens;
    return o;
}

std::string splitAnswer(std::string_view reply, bool startsInside = false) {
    return std::string(reply.substr(splitReasoning(reply, {}, startsInside).reasoningBytes));
}
std::string splitThought(std::string_view reply, bool startsInside = false) {
    return std::string(reasoningText(reply.substr(0, splitReasoning(reply, {}, startsInside).reasoningBytes), {}));
}

size_t firstDifference(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    return i;
}

}  // namespace

class TestChatReasoning : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    ExecContext ctx_{2};
    std::unique_ptr<Model> qwen3_;  // Qwen3-0.6B's template
    std::unique_ptr<Model> chatml_;  // no template: the ChatML fallback, which keeps reasoning

private slots:
    void initTestCase() {
        const std::string fixture = sharedPath("fixtures/qwen3-q8_0.gguf");
        const std::string qwen = (dir_.path() + "/qwen3.gguf").toStdString();
        writeFixtureWithTemplate(fixture, readFile(sharedPath("templates/templates/Qwen-Qwen3-0.6B.jinja")), qwen);
        qwen3_ = Model::load(qwen);
        chatml_ = Model::load(fixture);
    }

    void splitFindsReasoningOnlyAtTheStart() {
        const std::string reply = "<think>\nFirst 2, then 3.\n</think>\n\nIt is 5.";
        const ReplySplit s = splitReasoning(reply, {}, false);
        QVERIFY(s.closed);
        QCOMPARE(s.reasoningBytes, reply.find("\n\nIt"));
        QCOMPARE(splitThought(reply), std::string("First 2, then 3."));
        QCOMPARE(splitAnswer(reply), std::string("\n\nIt is 5."));
        // The two parts are the reply, byte for byte.
        QCOMPARE(reply.substr(0, s.reasoningBytes) + splitAnswer(reply), reply);
        // Leading whitespace before the marker belongs to the reasoning segment.
        QCOMPARE(splitThought("\n <think>x</think>y"), std::string("x"));
        QCOMPARE(splitAnswer("\n <think>x</think>y"), std::string("y"));
        // A marker mid-reply is answer text.
        const std::string mid = "Use <think> tags like <think>this</think>.";
        QCOMPARE(splitReasoning(mid, {}, false).reasoningBytes, size_t(0));
        QCOMPARE(splitAnswer(mid), mid);
        QVERIFY(!splitReasoning(mid, {}, false).undecided);
    }

    void unterminatedAndOnlyReasoning() {
        // Stopped (or still streaming) inside the reasoning: all of it is reasoning.
        const std::string open = "<think>\nStill thinking about";
        const ReplySplit s = splitReasoning(open, {}, false);
        QCOMPARE(s.reasoningBytes, open.size());
        QVERIFY(!s.closed);
        QCOMPARE(splitThought(open), std::string("Still thinking about"));
        QCOMPARE(splitAnswer(open), std::string());
        // Only reasoning, closed: the answer is empty.
        const std::string only = "<think>all of it</think>";
        QVERIFY(splitReasoning(only, {}, false).closed);
        QCOMPARE(splitThought(only), std::string("all of it"));
        QCOMPARE(splitAnswer(only), std::string());
        // A beginning of the marker may still become reasoning; other text may not.
        QVERIFY(splitReasoning("  <thi", {}, false).undecided);
        QVERIFY(splitReasoning("", {}, false).undecided);
        QVERIFY(!splitReasoning("<tho", {}, false).undecided);
    }

    void promptThatOpensTheBlock() {
        // DeepSeek-R1 distills' generation prompt ends with "<think>\n": the reply starts inside.
        QVERIFY(promptOpensReasoning("<｜Assistant｜><think>\n", {}));
        QVERIFY(!promptOpensReasoning("<|im_start|>assistant\n<think>\n\n</think>\n\n", {}));
        QVERIFY(!promptOpensReasoning("<|im_start|>assistant\n", {}));
        QCOMPARE(splitThought("plan\n</think>\n\nanswer", true), std::string("plan"));
        QCOMPARE(splitAnswer("plan\n</think>\n\nanswer", true), std::string("\n\nanswer"));
        QCOMPARE(splitAnswer("no closing marker", true), std::string());
        // Seed-OSS names its own markers.
        const ReasoningMarkers seed = reasoningMarkersOf("{{ '<seed:think>' }}");
        QCOMPARE(seed.close, std::string("</seed:think>"));
        QCOMPARE(std::string(reasoningText("<seed:think>a</seed:think>", seed)), std::string("a"));
        QCOMPARE(reasoningMarkersOf("{{ messages }}").open, std::string("<think>"));
    }

    void enableThinkingReachesTheTemplate() {
        ChatSession chat(*qwen3_);
        const std::vector<ChatMessage> messages = {{"user", "What is 2 + 3?"}};
        ChatRendering r;
        chat.promptTokens(messages, true, &r);
        QVERIFY(r.text.ends_with("<|im_start|>assistant\n"));
        QVERIFY(!r.usedFallback);
        chat.setThinking(false);
        const auto off = chat.promptTokens(messages, true, &r);
        QVERIFY2(r.text.ends_with("<|im_start|>assistant\n<think>\n\n</think>\n\n"), r.text.c_str());
        chat.setThinking(true);
        const auto on = chat.promptTokens(messages, true, &r);
        QVERIFY(r.text.ends_with("<|im_start|>assistant\n"));
        QVERIFY(off.size() > on.size());
        // The prompt differs exactly by the template's empty reasoning block.
        QVERIFY(std::equal(on.begin(), on.end(), off.begin()));
        chat.setThinking(std::nullopt);
        chat.promptTokens(messages, true, &r);
        QVERIFY(r.text.ends_with("<|im_start|>assistant\n"));
    }

    // Continue after a crash: the session restored from the prompt-boundary
    // snapshot prefills exactly the partial reply's tokens.
    void continuePrefillsOnlyThePartialReply() {
        for (const Model* m : {qwen3_.get(), chatml_.get()}) {
            const std::vector<ChatMessage> messages = {{"user", "Tell me about the tea."}};
            std::vector<uint8_t> promptSnapshot;
            int64_t promptTokens = 0;
            {
                ChatSession first(*m);
                auto o = greedy(3);
                o.onPromptReady = [&] {
                    promptSnapshot = first.session().snapshot();
                    promptTokens = int64_t(first.session().tokens().size());
                };
                first.reply(messages, ctx_, o);
            }
            QVERIFY(!promptSnapshot.empty());
            const std::string partial = "<think>\nThe user asks about tea";
            ChatSession resumed(*m);
            resumed.session().restore(promptSnapshot);
            auto o = greedy(4);
            o.assistantPrefix = partial;
            const ReplyResult r = resumed.reply(messages, ctx_, o);
            const auto& tok = m->tokenizer();
            const int64_t partialTokens =
                int64_t(tok.encode(partial, false, std::vector<TextSpan>{{0, partial.size()}}).size());
            QCOMPARE(r.reusedTokens, promptTokens);
            QCOMPARE(r.prefilledTokens, partialTokens);
            QCOMPARE(r.promptTokens, promptTokens + partialTokens);
            // The reply's text is what follows the prefix, never the prefix again.
            QVERIFY(!r.text.starts_with(partial));
            // Continuing the same session again: it holds everything, nothing is prefilled.
            auto again = greedy(2);
            again.assistantPrefix = partial + r.text;
            const ReplyResult r2 = resumed.reply(messages, ctx_, again);
            if (r.stop != StopReason::EndOfGeneration) QCOMPARE(r2.prefilledTokens, int64_t(0));
        }
    }

    // The next turn after a reasoning reply: Qwen3's template drops the earlier
    // reasoning, so the prompt changes where the reply began; the session keeps
    // the tokens before the first changed one and prefills the rest. ChatML keeps
    // the reasoning: the whole reply is reused.
    void nextTurnKeepsWhatTheTemplateKeeps() {
        for (const Model* m : {qwen3_.get(), chatml_.get()}) {
            const bool strips = m == qwen3_.get();
            ChatSession chat(*m);
            std::vector<ChatMessage> messages = {{"user", "What is 2 + 3?"}};
            auto o = greedy(3);
            o.assistantPrefix = "<think>\nFirst 2, then 3 more.\n</think>\n\nIt is 5";
            const ReplyResult first = chat.reply(messages, ctx_, o);
            const auto held = chat.session().tokens();
            const std::string stored = o.assistantPrefix + first.text;  // reasoning and answer, joined again
            messages.push_back({"assistant", stored});
            messages.push_back({"user", "And 3 + 4?"});
            ChatRendering rendering;
            const auto prompt2 = chat.promptTokens(messages, true, &rendering);
            QCOMPARE(rendering.text.find("First 2") == std::string::npos, strips);
            const size_t changed = firstDifference(held, prompt2);
            const ReplyResult second = chat.reply(messages, ctx_, greedy(0));  // the prompt only
            QCOMPARE(second.reusedTokens, int64_t(changed));
            QCOMPARE(second.prefilledTokens, int64_t(prompt2.size() - changed));
            if (strips) {
                // Up to the assistant's header is unchanged, and all of the first prompt is kept.
                QVERIFY(changed >= size_t(first.promptTokens - first.prefilledTokens));
                QVERIFY(changed < held.size());
            } else {
                QCOMPARE(changed, held.size());  // every held token, the reasoning included
            }
            // What the reused prompt computes is what a fresh session computes on it.
            QCOMPARE(chat.session().tokens(), prompt2);
            Session fresh(*m);
            fresh.feed(prompt2, ctx_);
            QVERIFY(sameBits(chat.session().logits(), fresh.logits()));
            // Without earlier reasoning the prompt is the rendering tokenized whole.
            if (strips) QCOMPARE(ChatSession(*m).promptTokens(messages, true), prompt2);
        }
    }
};

CAIRN_CONFORMANCE_MAIN(TestChatReasoning)
#include "test_chat_reasoning.moc"
