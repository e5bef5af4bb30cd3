#include "cairn/chat_session.h"

#include "cairn/error.h"
#include "cairn/gguf.h"
#include "cairn/tokenizer.h"
#include "cairn/utf8.h"
#include "session/common_prefix.h"
#include "session/prompt_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>

namespace cairn {
namespace {

// Invalid UTF-8 bytes become U+FFFD, as templates (and the app's strings) make them.
using text::validUtf8;

double msSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string tokenString(const Tokenizer& tok, int32_t id) {
    return id >= 0 && id < tok.vocabSize() ? std::string(tok.tokenText(id)) : std::string();
}

// The parts of `spans` from text position `at` on, counted from there.
std::vector<TextSpan> spansFrom(std::span<const TextSpan> spans, size_t at) {
    std::vector<TextSpan> out;
    for (const TextSpan& s : spans)
        if (s.end > at) out.push_back({std::max(s.begin, at) - at, s.end - at});
    return out;
}

}  // namespace

ChatSession::ChatSession(const Model& model, SessionOptions options) : model_(model), session_(model, options) {
    templateSource_ = std::string(model.file().getString("tokenizer.chat_template"));
    const auto& tok = model.tokenizer();
    renderOptions_.bosToken = tokenString(tok, tok.bos());
    renderOptions_.eosToken = tokenString(tok, tok.eos());
}

session::PromptText ChatSession::render(const std::vector<ChatMessage>& messages, bool addGenerationPrompt,
                                        const std::atomic<bool>* cancel, std::string_view assistantPrefix) const {
    auto options = renderOptions_;
    options.addGenerationPrompt = addGenerationPrompt;
    options.cancel = cancel;
    session::PromptText prompt = session::renderPromptText(
        [&](const std::vector<ChatMessage>& m) { return renderChat(templateSource_, m, options); }, messages,
        model_.tokenizer());
    if (!assistantPrefix.empty()) {
        // The reply so far, exactly as it followed the generation prompt; it is message text.
        const std::string text = validUtf8(assistantPrefix);
        const size_t at = prompt.rendering.text.size();
        prompt.rendering.text += text;
        prompt.plain.push_back({at, at + text.size()});
    }
    return prompt;
}

void ChatSession::setThinking(std::optional<bool> enabled) {
    if (!enabled) {
        renderOptions_.extraVariables.reset();
        return;
    }
    renderOptions_.extraVariables =
        std::make_shared<const nlohmann::ordered_json>(nlohmann::ordered_json{{"enable_thinking", *enabled}});
}

// Whether the rendering starts with the BOS text the template wrote (not a message's).
bool ChatSession::startsWithTemplateBos(const session::PromptText& prompt) const {
    const std::string& bos = renderOptions_.bosToken;
    return !bos.empty() && prompt.rendering.text.starts_with(bos) &&
        (prompt.plain.empty() || prompt.plain.front().begin >= bos.size());
}

// Records the control tokens among `ids` (the history's ids from `firstToken` on), the
// tokens of `text` (at `textAt` of the history's text) encoded with `plain`, after a
// BOS the tokenizer added (which stands for no text) when `addedBos`.
void ChatSession::addControls(History& h, std::span<const int32_t> ids, size_t firstToken, std::string_view text,
                              size_t textAt, std::span<const TextSpan> plain, bool addedBos) const {
    const auto& tok = model_.tokenizer();
    const auto specials = tok.parsedSpecials(text, plain);
    size_t next = 0;
    for (size_t i = addedBos ? 1 : 0; i < ids.size(); ++i) {
        if (!tok.isControl(ids[i])) continue;
        while (next < specials.size() && specials[next].id != ids[i]) ++next;  // unknown tokens are no controls
        if (next == specials.size()) return;
        const TextSpan at = specials[next++].text;
        h.controls.push_back({firstToken + i, {textAt + at.begin, textAt + at.end}});
    }
}

// The text ids stand for, control tokens written as their text (as templates write them).
std::string ChatSession::textOf(std::span<const int32_t> ids) const {
    const auto& tok = model_.tokenizer();
    std::string text;
    for (int32_t id : ids) text += tok.isControl(id) ? std::string(tok.tokenText(id)) : tok.tokenBytes(id);
    return text;
}

// The session holds ids this ChatSession did not produce (restored from a
// snapshot, fed directly): recover the text they stand for by decoding. Every
// token boundary is recorded; the clean ones (after a control token or a line
// break, where templates start and end messages, and the end) may be continued
// by new text. Where decoding is not the inverse of tokenizing (SPM's added
// space) the rendering does not continue the decoded text: nothing is reused
// from there on.
ChatSession::History ChatSession::historyFromSession(const session::PromptText& prompt) const {
    const auto& tok = model_.tokenizer();
    History h;
    h.ids = session_.tokens();
    h.marks.reserve(h.ids.size());
    // Token bytes are taken as valid UTF-8, as replies are shown and rendered;
    // no boundary inside an unfinished character.
    std::string pending;
    for (size_t i = 0; i < h.ids.size(); ++i) {
        const int32_t id = h.ids[i];
        const bool last = i + 1 == h.ids.size();
        if (tok.isControl(id)) {
            h.text += validUtf8(pending);
            pending.clear();
            // A BOS the tokenizer added stands for no text.
            const bool addedBos = i == 0 && id == tok.bos() && !startsWithTemplateBos(prompt);
            if (!addedBos) {
                h.controls.push_back({i, {h.text.size(), h.text.size() + tok.tokenText(id).size()}});
                h.text += tok.tokenText(id);
            }
            h.marks.push_back({i + 1, h.text.size(), true});
            continue;
        }
        pending += tok.tokenBytes(id);
        if (!last && text::utf8SafePrefix(pending) != pending.size()) continue;
        h.text += validUtf8(pending);
        pending.clear();
        h.marks.push_back({i + 1, h.text.size(), h.text.ends_with('\n') || last});
    }
    return h;
}

ChatSession::Prompt ChatSession::buildPrompt(const session::PromptText& prompt) const {
    const std::string& rendering = prompt.rendering.text;
    const auto& session = session_.tokens();
    const bool known =
        session.size() <= history_.ids.size() && std::equal(session.begin(), session.end(), history_.ids.begin());
    History h = known ? history_ : historyFromSession(prompt);
    const auto& tok = model_.tokenizer();
    const size_t sameText = session::commonPrefix(h.text, rendering);
    // Held ids are kept only before the first control token that stands where the new
    // rendering has message text (an injected one in a restored session, say).
    size_t keepBefore = h.ids.size();
    for (const Control& c : h.controls) {
        if (c.text.end > sameText) break;
        const auto overlaps = [&](const TextSpan& s) { return s.begin < c.text.end && c.text.begin < s.end; };
        if (std::any_of(prompt.plain.begin(), prompt.plain.end(), overlaps)) {
            keepBefore = c.token;
            break;
        }
    }

    Prompt p;
    size_t kept = 0;  // marks of h still valid for the new prompt
    bool triedInside = false;
    std::vector<int32_t> restIds;  // the new ids: those of the rendering from restAt on
    size_t restAt = 0;
    std::vector<TextSpan> restPlain;
    bool addSpecial = false;  // whole rendering: the tokenizer added a BOS
    // The latest boundary whose text the rendering continues, where the rest tokenizes to exactly its text.
    for (size_t i = h.marks.size(); i-- > 0;) {
        const Mark m = h.marks[i];
        if (m.tokens == 0 || m.text > sameText || m.tokens > keepBefore) continue;
        std::string_view rest = std::string_view(rendering).substr(m.text);
        // Inside a message, continue only from the last boundary before the rendering
        // leaves the history's text (a template trimming the reply's trailing space,
        // say): the few bytes after it are tokenized again.
        const bool inside = !m.clean && !rest.empty();
        if (inside && triedInside) continue;
        triedInside = triedInside || inside;
        restIds.clear();
        restPlain = spansFrom(prompt.plain, m.text);
        if (!rest.empty()) {
            restIds = tok.encode(rest, /*addSpecial=*/false, restPlain);
            if (textOf(restIds) != rest) continue;
        }
        restAt = m.text;
        p.ids.assign(h.ids.begin(), h.ids.begin() + std::ptrdiff_t(m.tokens));
        p.ids.insert(p.ids.end(), restIds.begin(), restIds.end());
        kept = i + 1;
        break;
    }
    if (p.ids.empty()) {
        // No boundary continues: tokenize the whole rendering; the session keeps
        // whatever token prefix it shares. Templates usually write the BOS text
        // themselves; add it only when they do not.
        addSpecial = tok.addBos() && !startsWithTemplateBos(prompt);
        p.ids = tok.encode(rendering, addSpecial, prompt.plain);
        restIds = p.ids;
        restAt = 0;
        restPlain = prompt.plain;
        const size_t sameIds = session::commonPrefix(h.ids, p.ids);
        while (kept < h.marks.size() && h.marks[kept].tokens <= sameIds && h.marks[kept].text <= sameText) ++kept;
    }
    // Boundaries inside the new prompt stay; only the clean ones are worth keeping.
    for (size_t i = 0; i < kept; ++i)
        if (h.marks[i].clean) p.history.marks.push_back(h.marks[i]);
    if (p.history.marks.empty() || p.history.marks.back().tokens != p.ids.size())
        p.history.marks.push_back({p.ids.size(), rendering.size(), true});
    p.history.ids = p.ids;
    p.history.text = rendering;
    // The controls of the kept ids stay; the new ids' are where the tokenizer parsed them.
    const size_t keptIds = p.ids.size() - restIds.size();
    for (const Control& c : h.controls)
        if (c.token < keptIds) p.history.controls.push_back(c);
    addControls(p.history, std::span(p.ids).subspan(keptIds), keptIds, std::string_view(rendering).substr(restAt),
                restAt, restPlain, addSpecial && tok.bos() >= 0);
    return p;
}

std::vector<int32_t> ChatSession::promptTokens(const std::vector<ChatMessage>& messages, bool addGenerationPrompt,
                                               ChatRendering* rendering) const {
    auto r = render(messages, addGenerationPrompt);
    auto ids = buildPrompt(r).ids;
    if (rendering) *rendering = std::move(r.rendering);
    return ids;
}

ReplyResult ChatSession::reply(const std::vector<ChatMessage>& messages, ExecContext& ctx,
                               const ReplyOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    ReplyResult result;
    session::PromptText rendering;
    try {
        rendering =
            render(messages, true, options.cancel, options.assistantPrefix);  // Stop interrupts a slow template too
    } catch (const TemplateCancelled&) {
        result.stop = StopReason::Cancelled;
        result.promptMs = result.prefillMs = msSince(t0);
        return result;
    }
    result.usedFallbackTemplate = rendering.rendering.usedFallback;
    result.templateNote = rendering.rendering.fallbackReason;
    Prompt prompt = buildPrompt(rendering);
    result.promptTokens = int64_t(prompt.ids.size());
    history_ = std::move(prompt.history);  // the ids stand for the text whether or not the feed completes
    result.promptMs = msSince(t0);

    FeedProgress progress;
    progress.cancel = options.cancel;
    progress.onProgress = options.onPrefill;
    try {
        session_.feed(prompt.ids, ctx, progress);
    } catch (const Cancelled&) {
        result.stop = StopReason::Cancelled;
        result.prefillMs = msSince(t0);
        return result;
    }
    session_.checkpoint();  // message boundary: regenerate comes back here
    result.prefillMs = msSince(t0);
    result.reusedTokens = session_.stats().lastReused;
    result.prefilledTokens = session_.stats().lastPrefilled;
    if (options.onPromptReady) options.onPromptReady();

    const auto& tok = model_.tokenizer();
    Sampler sampler(options.sampler);
    StreamDecoder decoder(tok);
    auto emit = [&](const std::string& bytes) {
        if (bytes.empty()) return;
        const std::string piece = validUtf8(bytes);  // whole characters only, never invalid bytes
        result.text += piece;
        if (options.onPiece) options.onPiece(piece);
    };
    std::vector<int32_t> generated;
    int32_t endToken = -1;
    std::chrono::steady_clock::time_point firstToken, lastToken;
    result.stop = StopReason::MaxTokens;
    for (int64_t i = 0; i < options.maxTokens; ++i) {
        if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
            result.stop = StopReason::Cancelled;
            break;
        }
        int32_t next = sampler.sample(session_.logits(), session_.tokens());
        lastToken = std::chrono::steady_clock::now();
        if (i == 0) {
            firstToken = lastToken;
            result.firstTokenMs = std::chrono::duration<double, std::milli>(firstToken - t0).count();
        }
        if (options.stopAtEndOfGeneration && tok.isEndOfGeneration(next)) {
            result.stop = StopReason::EndOfGeneration;
            endToken = next;
            break;
        }
        emit(decoder.push(next));
        generated.push_back(next);
        result.generatedTokens++;
        if (session_.memory().size() >= session_.contextSize()) {
            if (i + 1 < options.maxTokens) result.stop = StopReason::ContextFull;
            break;
        }
        // The last token is fed too (after it was shown): the session then holds the
        // whole reply, and a snapshot of it continues with the next message alone.
        session_.append(next, ctx);
    }
    emit(decoder.flush());
    if (result.generatedTokens > 0 || result.stop == StopReason::EndOfGeneration)
        result.decodeMs = std::chrono::duration<double, std::milli>(lastToken - firstToken).count();
    session_.checkpoint();  // end of the reply: editing the next message comes back here

    // The reply as generated is the history the next turn continues (the
    // end-of-turn token is fed with the next prompt).
    auto mark = [&] {
        if (history_.marks.empty() || history_.marks.back().tokens != history_.ids.size())
            history_.marks.push_back({history_.ids.size(), history_.text.size(), true});
    };
    // The reply's ids stand for the reply as shown (valid UTF-8); boundaries between
    // its tokens except inside an unfinished character. A generated control token
    // shows nothing.
    std::string pending, shown;
    const size_t promptIds = history_.ids.size();
    for (int32_t id : generated) {
        history_.ids.push_back(id);
        pending += tok.tokenBytes(id);
        if (text::utf8SafePrefix(pending) != pending.size()) continue;
        shown += validUtf8(pending);
        pending.clear();
        history_.marks.push_back({history_.ids.size(), history_.text.size() + shown.size(), false});
    }
    shown += validUtf8(pending);
    if (shown != result.text) {  // not expected: keep only the reply's end
        while (!history_.marks.empty() && history_.marks.back().tokens > promptIds) history_.marks.pop_back();
        shown = result.text;
    }
    history_.text += shown;
    mark();
    history_.marks.back().clean = true;  // the reply's end
    if (endToken >= 0) {
        const size_t at = history_.text.size();
        if (tok.isControl(endToken))
            history_.controls.push_back({history_.ids.size(), {at, at + tok.tokenText(endToken).size()}});
        history_.ids.push_back(endToken);
        history_.text += tok.tokenText(endToken);
        mark();
    }
    return result;
}

}  // namespace cairn
