// A ChatSession builds each turn's prompt from the ids the model already holds
// (the generated reply as generated, then the tokens of the new text only), so
// every turn prefills exactly the new tokens, also after a snapshot restore;
// and what it computes is bit for bit what a fresh session fed the same ids
// computes. Tiny transformer and Mamba models (ChatML fallback template).
#include "session_models.h"

#include "cairn/chat_session.h"
#include "cairn/exec.h"
#include "cairn/session.h"
#include "cairn/tokenizer.h"
#include "same_bits.h"

#include <QTest>

#include <cstring>

using namespace cairn;
using namespace cairn::test;

namespace {

ReplyOptions greedy(int64_t maxTokens) {
    ReplyOptions o;
    o.sampler.temperature = 0;
    o.maxTokens = maxTokens;
    return o;  // stops at an end-of-generation token, as in the app
}

std::vector<float> freshLogits(const Model& model, const std::vector<int32_t>& tokens, ExecContext& ctx) {
    Session fresh(model);
    fresh.feed(tokens, ctx);
    return {fresh.logits().begin(), fresh.logits().end()};
}

bool startsWith(const std::vector<int32_t>& a, const std::vector<int32_t>& prefix) {
    return a.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), a.begin());
}

const char* const kUser[] = {"Hi there, how are you?", "Tell me about the tea.", "And the cakes?"};

std::vector<int32_t> tail(const std::vector<int32_t>& v, size_t from) {
    return {v.begin() + std::ptrdiff_t(from), v.end()};
}

// Two turns with replies of up to 6 tokens, then the snapshot: where the
// restore tests start. `messages` ends with the second question.
struct TwoTurns {
    std::vector<ChatMessage> messages;
    std::vector<int32_t> prompt1, prompt2;  // the prompts of turns 1 and 2
    ReplyResult reply1;
    std::vector<uint8_t> snapshot;
};

TwoTurns twoTurns(const Model& m, ExecContext& ctx) {
    TwoTurns t;
    ChatSession chat(m);
    t.messages = {{"user", kUser[0]}};
    t.prompt1 = chat.promptTokens(t.messages, true);
    t.reply1 = chat.reply(t.messages, ctx, greedy(6));
    t.messages.push_back({"assistant", t.reply1.text});
    t.messages.push_back({"user", kUser[1]});
    t.prompt2 = chat.promptTokens(t.messages, true);
    chat.reply(t.messages, ctx, greedy(6));
    t.snapshot = chat.session().snapshot();
    return t;
}

}  // namespace

class TestChatSession : public QObject {
    Q_OBJECT
    SessionModels models;
    ExecContext ctx{2};

private slots:
    void eachTurnPrefillsExactlyItsNewTokens() {
        for (const Model* m : models.all()) {
            const auto& tok = m->tokenizer();
            ChatSession chat(*m);
            std::vector<ChatMessage> messages = {{"system", "Be brief."}};
            std::string seen;  // the text the session's history stands for: renderings and replies
            for (int turn = 0; turn < 3; ++turn) {
                messages.push_back({"user", kUser[turn]});
                const auto held = chat.session().tokens();
                ChatRendering rendering;
                const auto prompt = chat.promptTokens(messages, true, &rendering);
                auto r = chat.reply(messages, ctx, greedy(5));
                QCOMPARE(r.promptTokens, int64_t(prompt.size()));
                if (turn > 0) {
                    // The rendering continues the history's text (ChatML is prefix-stable) ...
                    QVERIFY(rendering.text.starts_with(seen));
                    // ... so the prompt is the held ids (the previous prompt and the reply as
                    // generated), then the tokens of the new text only: exactly those are prefilled.
                    const auto fresh = tok.encode(rendering.text.substr(seen.size()), false, true);
                    QCOMPARE(prompt.size(), held.size() + fresh.size());
                    QVERIFY(startsWith(prompt, held));
                    QCOMPARE(tail(prompt, held.size()), fresh);
                    QCOMPARE(r.reusedTokens, int64_t(held.size()));
                    QCOMPARE(r.prefilledTokens, int64_t(fresh.size()));
                } else {
                    QCOMPARE(r.prefilledTokens, int64_t(prompt.size()));
                }
                seen = rendering.text + r.text;
                messages.push_back({"assistant", r.text});
            }
        }
    }

    void turnBuiltFromIdsEqualsAFreshSessionFedThem() {
        for (const Model* m : models.all()) {
            ChatSession chat(*m);
            std::vector<ChatMessage> messages = {{"user", kUser[0]}};
            auto r1 = chat.reply(messages, ctx, greedy(6));
            messages.push_back({"assistant", r1.text});
            messages.push_back({"user", kUser[1]});
            auto prompt = chat.promptTokens(messages, true);
            auto r2 = chat.reply(messages, ctx, greedy(3));
            // The session holds the prompt and the reply's ids, and computed what a fresh session computes from them.
            QCOMPARE(chat.session().tokens().size(), prompt.size() + size_t(r2.generatedTokens));
            QVERIFY(startsWith(chat.session().tokens(), prompt));
            QVERIFY2(sameBits(chat.session().logits(), freshLogits(*m, chat.session().tokens(), ctx)),
                     m->info().architecture.c_str());
        }
    }

    void afterRestoreTheNextTurnPrefillsOnlyTheNewTokens() {
        for (const Model* m : models.all()) {
            ChatSession original(*m);
            std::vector<ChatMessage> messages = {{"system", "Be brief."}, {"user", kUser[0]}};
            auto r1 = original.reply(messages, ctx, greedy(6));
            messages.push_back({"assistant", r1.text});
            auto blob = original.session().snapshot();
            const auto held = original.session().tokens();
            messages.push_back({"user", kUser[1]});

            ChatSession restored(*m);
            restored.session().restore(blob);
            // The restored session recovers the text its ids stand for, so it continues them as the original would.
            auto prompt = restored.promptTokens(messages, true);
            QCOMPARE(prompt, original.promptTokens(messages, true));
            QVERIFY(startsWith(prompt, held));
            auto r = restored.reply(messages, ctx, greedy(1));
            QCOMPARE(r.reusedTokens, int64_t(held.size()));
            QCOMPARE(r.prefilledTokens, int64_t(prompt.size() - held.size()));
            original.reply(messages, ctx, greedy(1));
            QVERIFY2(sameBits(restored.session().logits(), original.session().logits()),
                     m->info().architecture.c_str());
        }
    }

    void regenerateAfterRestoreUsesTheStoredBoundary() {
        for (const Model* m : models.all()) {
            const TwoTurns t = twoTurns(*m, ctx);
            ChatSession restored(*m);
            restored.session().restore(t.snapshot);
            // Regenerate the second reply: back to the second prompt.
            QCOMPARE(restored.promptTokens(t.messages, true), t.prompt2);
            auto r = restored.reply(t.messages, ctx, greedy(1));
            if (m->info().recurrent) {
                // The snapshot holds the checkpoint at the prompt's end: nothing is prefilled.
                QCOMPARE(r.prefilledTokens, 0);
                QCOMPARE(restored.session().stats().checkpointRestores, 1);
            } else {
                QCOMPARE(r.prefilledTokens, 1);  // attention is cut back; the last token gives the logits
            }
            QVERIFY2(sameBits(restored.session().logits(), freshLogits(*m, restored.session().tokens(), ctx)),
                     m->info().architecture.c_str());
        }
    }

    void editingTheLastMessageAfterRestoreStartsAtThePreviousReply() {
        const Model& m = *models.mamba;
        TwoTurns t = twoTurns(m, ctx);
        QVERIFY(t.reply1.generatedTokens > 0);
        ChatSession restored(m);
        restored.session().restore(t.snapshot);
        t.messages.back().content = kUser[2];  // edit the second question
        auto prompt = restored.promptTokens(t.messages, true);
        auto r = restored.reply(t.messages, ctx, greedy(1));
        // The first reply's end checkpoint is in the snapshot: only the edited message is prefilled.
        const int64_t replyEnd = int64_t(t.prompt1.size() + t.reply1.generatedTokens);
        QCOMPARE(r.reusedTokens, replyEnd);
        QCOMPARE(r.prefilledTokens, int64_t(prompt.size()) - replyEnd);
        QVERIFY(sameBits(restored.session().logits(), freshLogits(m, restored.session().tokens(), ctx)));
    }

    void regenerateAfterRestoreWithoutControlTokensInTheTemplate() {
        // A template writing no control tokens and a generation prompt not ending a
        // line (as ChatML on a vocabulary without <|im_start|>): the restored ids
        // still end exactly where the prompt did, so regenerate continues from there.
        TinyMambaOptions options;
        options.type = TensorType::F16;
        auto w = tinyMambaWriter(options);
        w.setString("tokenizer.chat_template",
                    "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
                    "{% if add_generation_prompt %}assistant:{% endif %}");
        const std::string path = (models.dir.path() + "/mamba-plain.gguf").toStdString();
        w.write(path);
        auto m = Model::load(path);
        const TwoTurns t = twoTurns(*m, ctx);
        QVERIFY(!t.reply1.usedFallbackTemplate);
        ChatSession restored(*m);
        restored.session().restore(t.snapshot);
        QCOMPARE(restored.promptTokens(t.messages, true), t.prompt2);
        auto r = restored.reply(t.messages, ctx, greedy(1));
        QCOMPARE(r.prefilledTokens, 0);
        QCOMPARE(restored.session().stats().checkpointRestores, 1);
        QVERIFY(sameBits(restored.session().logits(), freshLogits(*m, restored.session().tokens(), ctx)));
    }

    // Stop (the reply's cancel flag) also interrupts the template's render: a
    // template that would run until its step budget is left at once, without
    // falling back to ChatML and without feeding anything.
    void cancelInterruptsASlowTemplate() {
        TinyModelOptions options;
        auto w = tinyModelWriter(options);
        w.setString("tokenizer.chat_template",
                    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
                    "{% for m in messages %}{{ m.content }}{% endfor %}");
        const std::string path = (models.dir.path() + "/llama-slow-template.gguf").toStdString();
        w.write(path);
        auto m = Model::load(path);
        ChatSession chat(*m);
        std::atomic<bool> cancel{true};
        ReplyOptions ro = greedy(4);
        ro.cancel = &cancel;
        const auto r = chat.reply({{"user", kUser[0]}}, ctx, ro);
        QCOMPARE(int(r.stop), int(StopReason::Cancelled));
        QVERIFY2(!r.usedFallbackTemplate, r.templateNote.c_str());
        QCOMPARE(r.promptTokens, int64_t(0));
        QVERIFY(chat.session().tokens().empty());
    }

    void aTemplateCuttingTheReplysEndReusesTheRestOfIt() {
        // Templates trim replies (Llama 3: `content | trim`): the rendering leaves the
        // reply's text before its end and goes on with a control token. The reply's ids
        // up to there are kept; only the new message is prefilled.
        TinyModelOptions options;
        options.type = TensorType::Q8_0;
        options.seed = 6;  // a model whose greedy replies are ASCII: Jinja slices characters, not bytes
        auto w = tinyModelWriter(options);
        w.setString("tokenizer.chat_template",
                    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
                    "{% if m.role == 'assistant' %}{{ m.content[:-2] }}{% else %}{{ m.content }}{% endif %}"
                    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}");
        const std::string path = (models.dir.path() + "/llama-cut.gguf").toStdString();
        w.write(path);
        auto m = Model::load(path);
        const auto& tok = m->tokenizer();
        ChatSession chat(*m);
        std::vector<ChatMessage> messages = {{"user", kUser[0]}};
        ChatRendering first;
        chat.promptTokens(messages, true, &first);
        auto r1 = chat.reply(messages, ctx, greedy(6));
        QVERIFY(!r1.usedFallbackTemplate);
        const auto held = chat.session().tokens();
        // The tiny vocabulary's tokens are single bytes: two characters cut are two tokens.
        QVERIFY(r1.generatedTokens >= 3 && r1.text.size() == size_t(r1.generatedTokens));
        for (unsigned char c : r1.text) QVERIFY(c < 128);
        messages.push_back({"assistant", r1.text});
        messages.push_back({"user", kUser[1]});
        ChatRendering rendering;
        auto prompt = chat.promptTokens(messages, true, &rendering);
        const std::vector<int32_t> kept(held.begin(), held.end() - 2);
        QVERIFY(startsWith(prompt, kept));
        const std::string seen = first.text + r1.text.substr(0, r1.text.size() - 2);
        QVERIFY(rendering.text.starts_with(seen));
        QCOMPARE(tail(prompt, kept.size()), tok.encode(rendering.text.substr(seen.size()), false, true));
        auto r2 = chat.reply(messages, ctx, greedy(1));
        QCOMPARE(r2.reusedTokens, int64_t(kept.size()));
        QCOMPARE(r2.prefilledTokens, int64_t(prompt.size() - kept.size()));
        QVERIFY(sameBits(chat.session().logits(), freshLogits(*m, chat.session().tokens(), ctx)));
    }

    void invalidBytesInARepliedTextAreShownAndRenderedAsReplacementCharacters() {
        // The tiny model's replies hold bytes that are no UTF-8; a template that
        // trims (decodes) the content renders them as U+FFFD, as the reply shows
        // them: the reply's ids are kept, live and after a restore.
        TinyModelOptions options;
        options.type = TensorType::Q8_0;
        options.seed = 2;  // a reply with invalid bytes, but no white space at its ends for trim to take
        auto w = tinyModelWriter(options);
        w.setString("tokenizer.chat_template",
                    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content | trim }}<|im_end|>\n{% endfor %}"
                    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}");
        const std::string path = (models.dir.path() + "/llama-trim.gguf").toStdString();
        w.write(path);
        auto m = Model::load(path);
        ChatSession chat(*m);
        std::vector<ChatMessage> messages = {{"user", kUser[0]}};
        auto r1 = chat.reply(messages, ctx, greedy(6));
        QVERIFY(!r1.usedFallbackTemplate);
        const auto held = chat.session().tokens();
        QVERIFY(m->tokenizer().decode(std::vector<int32_t>(held.end() - r1.generatedTokens, held.end())) != r1.text);
        QVERIFY(r1.text.find("\xEF\xBF\xBD") != std::string::npos);
        messages.push_back({"assistant", r1.text});
        messages.push_back({"user", kUser[1]});
        auto blob = chat.session().snapshot();
        auto prompt = chat.promptTokens(messages, true);
        QVERIFY(startsWith(prompt, held));
        ChatSession restored(*m);
        restored.session().restore(blob);
        QCOMPARE(restored.promptTokens(messages, true), prompt);
        auto r = restored.reply(messages, ctx, greedy(1));
        QCOMPARE(r.reusedTokens, int64_t(held.size()));
        QCOMPARE(r.prefilledTokens, int64_t(prompt.size() - held.size()));
    }

    void aRenderingThatDoesNotContinueTheHistoryIsTokenizedWhole() {
        for (const Model* m : models.all()) {
            ChatSession chat(*m);
            std::vector<ChatMessage> messages = {{"user", kUser[0]}};
            chat.reply(messages, ctx, greedy(4));
            // Another conversation: nothing of the old text, the whole rendering is tokenized.
            std::vector<ChatMessage> other = {{"system", "Something else."}, {"user", kUser[1]}};
            ChatRendering rendering;
            auto prompt = chat.promptTokens(other, true, &rendering);
            QCOMPARE(prompt, m->tokenizer().encode(rendering.text, m->tokenizer().addBos(), true));
            chat.reply(other, ctx, greedy(1));
            QVERIFY(startsWith(chat.session().tokens(), prompt));
            QVERIFY(sameBits(chat.session().logits(), freshLogits(*m, chat.session().tokens(), ctx)));
        }
    }
};

QTEST_APPLESS_MAIN(TestChatSession)
#include "test_chat_session.moc"
