// A conversation on a Session: renders the messages with the model's chat
// template, feeds their tokens (only what is new is prefilled), checkpoints at
// the message boundary and generates the reply, streaming UTF-8-safe pieces.
// This is what the app's engine worker and `cairn-cli chat-bench` drive.
#pragma once

#include "cairn/chat_template.h"
#include "cairn/sampler.h"
#include "cairn/session.h"

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

struct ReplyOptions {
    SamplerOptions sampler;
    int64_t maxTokens = 512;
    bool stopAtEndOfGeneration = true;   // benchmarks turn this off to generate exactly maxTokens
    const std::atomic<bool>* cancel = nullptr;                    // checked between chunks and tokens
    std::function<void(int64_t done, int64_t total)> onPrefill;   // after each prefill chunk
    std::function<void(std::string_view piece)> onPiece;          // each decoded piece, whole characters only
};

enum class StopReason { EndOfGeneration, MaxTokens, Cancelled, ContextFull };

struct ReplyResult {
    std::string text;
    StopReason stop = StopReason::MaxTokens;
    int64_t promptTokens = 0;     // tokens of the rendered conversation
    int64_t reusedTokens = 0;     // of them, kept from memory
    int64_t prefilledTokens = 0;  // of them, computed now
    int64_t generatedTokens = 0;
    double prefillMs = 0;         // feeding the prompt
    double firstTokenMs = 0;      // prompt fed and first token chosen (time to first token)
    double decodeMs = 0;          // generating after the first token
    bool usedFallbackTemplate = false;
    std::string templateNote;     // why the model's template was not used
};

class ChatSession {
public:
    ChatSession(const Model& model, SessionOptions options = {});

    Session& session() { return session_; }
    const Session& session() const { return session_; }

    // The tokens the conversation renders to (with the generation prompt when asked).
    std::vector<int32_t> promptTokens(const std::vector<ChatMessage>& messages, bool addGenerationPrompt,
                                      ChatRendering* rendering = nullptr) const;

    // Brings the session to the conversation and generates the assistant's reply.
    // Errors (context too small for the prompt, template failure) throw cairn::Error;
    // running out of context while generating ends the reply with ContextFull.
    ReplyResult reply(const std::vector<ChatMessage>& messages, ExecContext& ctx, const ReplyOptions& options);

private:
    const Model& model_;
    Session session_;
    std::string templateSource_;
    ChatRenderOptions renderOptions_;
};

} // namespace cairn
