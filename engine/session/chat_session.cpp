#include "cairn/chat_session.h"

#include "cairn/error.h"
#include "cairn/gguf.h"
#include "cairn/tokenizer.h"

#include <chrono>

namespace cairn {
namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string tokenString(const Tokenizer& tok, int32_t id) {
    return id >= 0 && id < tok.vocabSize() ? std::string(tok.tokenText(id)) : std::string();
}

} // namespace

ChatSession::ChatSession(const Model& model, SessionOptions options)
    : model_(model), session_(model, options) {
    templateSource_ = std::string(model.file().getString("tokenizer.chat_template"));
    const auto& tok = model.tokenizer();
    renderOptions_.bosToken = tokenString(tok, tok.bos());
    renderOptions_.eosToken = tokenString(tok, tok.eos());
}

std::vector<int32_t> ChatSession::promptTokens(const std::vector<ChatMessage>& messages, bool addGenerationPrompt,
                                               ChatRendering* rendering) const {
    auto options = renderOptions_;
    options.addGenerationPrompt = addGenerationPrompt;
    auto r = renderChat(templateSource_, messages, options);
    const auto& tok = model_.tokenizer();
    // Templates usually write the BOS text themselves; add it only when they do not.
    bool addSpecial = tok.addBos() && (options.bosToken.empty() || !r.text.starts_with(options.bosToken));
    auto ids = tok.encode(r.text, addSpecial, /*parseSpecial=*/true);
    if (rendering) *rendering = std::move(r);
    return ids;
}

ReplyResult ChatSession::reply(const std::vector<ChatMessage>& messages, ExecContext& ctx, const ReplyOptions& options) {
    ReplyResult result;
    ChatRendering rendering;
    auto prompt = promptTokens(messages, true, &rendering);
    result.usedFallbackTemplate = rendering.usedFallback;
    result.templateNote = rendering.fallbackReason;
    result.promptTokens = int64_t(prompt.size());

    const auto t0 = std::chrono::steady_clock::now();
    FeedProgress progress;
    progress.cancel = options.cancel;
    progress.onProgress = options.onPrefill;
    try {
        session_.feed(prompt, ctx, progress);
    } catch (const Cancelled&) {
        result.stop = StopReason::Cancelled;
        result.prefillMs = msSince(t0);
        return result;
    }
    session_.checkpoint();  // message boundary: regenerate comes back here
    result.prefillMs = msSince(t0);
    result.reusedTokens = session_.stats().lastReused;
    result.prefilledTokens = session_.stats().lastPrefilled;

    const auto& tok = model_.tokenizer();
    Sampler sampler(options.sampler);
    StreamDecoder decoder(tok);
    auto emit = [&](const std::string& piece) {
        if (piece.empty()) return;
        result.text += piece;
        if (options.onPiece) options.onPiece(piece);
    };
    std::chrono::steady_clock::time_point firstToken;
    result.stop = StopReason::MaxTokens;
    for (int64_t i = 0; i < options.maxTokens; ++i) {
        if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
            result.stop = StopReason::Cancelled;
            break;
        }
        int32_t next = sampler.sample(session_.logits(), session_.tokens());
        if (i == 0) {
            firstToken = std::chrono::steady_clock::now();
            result.firstTokenMs = std::chrono::duration<double, std::milli>(firstToken - t0).count();
        }
        if (options.stopAtEndOfGeneration && tok.isEndOfGeneration(next)) {
            result.stop = StopReason::EndOfGeneration;
            break;
        }
        emit(decoder.push(next));
        result.generatedTokens++;
        if (i + 1 == options.maxTokens) break;  // the last token need not be fed
        if (session_.memory().size() >= session_.contextSize()) {
            result.stop = StopReason::ContextFull;
            break;
        }
        session_.append(next, ctx);
    }
    emit(decoder.flush());
    if (result.generatedTokens > 0 || result.stop == StopReason::EndOfGeneration)
        result.decodeMs = msSince(firstToken);
    return result;
}

} // namespace cairn
