// A conversation on a Session: renders the messages with the model's chat
// template, feeds their tokens (only what is new is prefilled), checkpoints at
// the message boundary and generates the reply, streaming UTF-8-safe pieces.
// This is what the app's engine worker and `cairn-cli chat-bench` drive.
//
// The next turn's tokens are built from the ids the model already holds: the
// history ids (earlier prompts and the generated replies, as generated) are
// kept with the exact text they stand for, and when the new rendering
// continues that text at a message boundary only the new suffix is tokenized.
// Re-tokenizing the whole text instead would give the replies other ids than
// the generated ones, and every turn would prefill the last reply again (on
// recurrent memory: go back to an older checkpoint or re-read everything).
//
// Message content never becomes control tokens: only the template's own text
// is parsed for special tokens (the rule and how content is found:
// engine/session/prompt_text.h). Held ids are kept only where their control
// tokens stand at such places of the new rendering.
#pragma once

#include "cairn/chat_template.h"
#include "cairn/sampler.h"
#include "cairn/session.h"
#include "cairn/tokenizer.h"

#include <atomic>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

namespace session {
struct PromptText;
}  // namespace session

struct ReplyOptions {
    SamplerOptions sampler;
    int64_t maxTokens = 512;
    bool stopAtEndOfGeneration = true;  // benchmarks turn this off to generate exactly maxTokens
    const std::atomic<bool>* cancel = nullptr;  // read before each layer of a pass and between tokens
    std::function<void(int64_t done, int64_t total)> onPrefill;  // as FeedProgress::onProgress: after each layer
    std::function<void(std::string_view piece)> onPiece;  // each decoded piece, whole characters only
    // The prompt is fed (and checkpointed), the first token not yet chosen: a
    // snapshot taken here holds the whole prompt (the app saves one so a crash
    // mid-reply costs at most the reply).
    std::function<void()> onPromptReady;
    // Continue: the start of the assistant's reply (a reply cut off before its
    // end). It follows the generation prompt as message text (never control
    // tokens), and the reply goes on from there; ReplyResult::text is what
    // comes after it. Only what the session does not hold yet is prefilled.
    std::string assistantPrefix;
};

enum class StopReason { EndOfGeneration, MaxTokens, Cancelled, ContextFull };

struct ReplyResult {
    std::string text;
    StopReason stop = StopReason::MaxTokens;
    int64_t promptTokens = 0;  // tokens of the prompt fed (history ids + the new text's tokens)
    int64_t reusedTokens = 0;  // of them, kept from memory
    int64_t prefilledTokens = 0;  // of them, computed now
    int64_t generatedTokens = 0;
    double promptMs = 0;  // rendering the template and tokenizing the new text
    double prefillMs = 0;  // rendering, tokenizing and feeding the prompt
    double firstTokenMs = 0;  // from the call to the first token chosen (time to first token)
    double decodeMs = 0;  // generating after the first token
    bool usedFallbackTemplate = false;
    std::string templateNote;  // why the model's template was not used
};

class ChatSession {
public:
    ChatSession(const Model& model, SessionOptions options = {});

    Session& session() { return session_; }
    const Session& session() const { return session_; }

    // The tokens reply() would feed for this conversation (with the generation
    // prompt when asked): the history ids where the rendering continues them,
    // then the tokens of the new text; the whole rendering tokenized when it
    // does not continue the history (a fresh session, an edited message).
    std::vector<int32_t> promptTokens(const std::vector<ChatMessage>& messages, bool addGenerationPrompt,
                                      ChatRendering* rendering = nullptr) const;

    // The template variable `enable_thinking` for every later rendering (templates
    // that read it, as Qwen3's, then open or skip the reasoning); unset: not defined.
    void setThinking(std::optional<bool> enabled);

    // Brings the session to the conversation and generates the assistant's reply.
    // Errors (context too small for the prompt, template failure) throw cairn::Error;
    // running out of context while generating ends the reply with ContextFull.
    ReplyResult reply(const std::vector<ChatMessage>& messages, ExecContext& ctx, const ReplyOptions& options);

private:
    // A boundary in the history: the first `tokens` ids stand for the first `text` bytes.
    // Only clean ones (message boundaries) may be continued by tokenizing new text;
    // any one may end a rendering (regenerate).
    struct Mark {
        size_t tokens;
        size_t text;
        bool clean = true;
    };
    // The ids the conversation holds and the text they stand for, with the boundaries
    // where a new rendering may continue them.
    // A control token of the history and the text it stands for.
    struct Control {
        size_t token;
        TextSpan text;
    };
    struct History {
        std::vector<int32_t> ids;
        std::string text;
        std::vector<Mark> marks;
        std::vector<Control> controls;  // in order, those with text only
    };
    struct Prompt {
        std::vector<int32_t> ids;
        History history;  // the history once these ids are fed
    };
    session::PromptText render(const std::vector<ChatMessage>& messages, bool addGenerationPrompt,
                               const std::atomic<bool>* cancel = nullptr, std::string_view assistantPrefix = {}) const;
    Prompt buildPrompt(const session::PromptText& prompt) const;
    History historyFromSession(const session::PromptText& prompt) const;
    std::string textOf(std::span<const int32_t> ids) const;
    void addControls(History& h, std::span<const int32_t> ids, size_t firstToken, std::string_view text, size_t textAt,
                     std::span<const TextSpan> plain, bool addedBos) const;
    bool startsWithTemplateBos(const session::PromptText& prompt) const;

    const Model& model_;
    Session session_;
    std::string templateSource_;
    ChatRenderOptions renderOptions_;
    History history_;  // valid while the session's tokens are a prefix of history_.ids
};

}  // namespace cairn
