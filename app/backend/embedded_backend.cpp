#include "embedded_backend.h"

#include "cairn/chat_session.h"

namespace cairn::backend {

const char* finishName(Finish f) {
    switch (f) {
    case Finish::Stop: return "stop";
    case Finish::Length: return "length";
    case Finish::ContextFull: return "length";  // as OpenAI names it
    case Finish::Cancelled: return "cancelled";
    case Finish::Incomplete: return "incomplete";
    }
    return "stop";
}

TurnResult EmbeddedBackend::reply(const TurnRequest& request) {
    ReplyOptions o;
    if (request.temperature) o.sampler.temperature = *request.temperature;
    if (request.topP) o.sampler.topP = *request.topP;
    if (request.minP) o.sampler.minP = *request.minP;
    if (request.repeatPenalty) o.sampler.repeatPenalty = *request.repeatPenalty;
    if (request.topK) o.sampler.topK = *request.topK;
    if (request.seed) o.sampler.seed = *request.seed;
    o.maxTokens = request.maxTokens;
    o.cancel = request.cancel;
    o.onPiece = request.onPiece;
    o.onPrefill = request.onPrefill;
    o.onPromptReady = request.onPromptReady;
    o.assistantPrefix = request.assistantPrefix;

    const ReplyResult r = session_.reply(request.messages, exec_, o);
    TurnResult t;
    t.text = r.text;
    switch (r.stop) {
    case StopReason::EndOfGeneration: t.finish = Finish::Stop; break;
    case StopReason::MaxTokens: t.finish = Finish::Length; break;
    case StopReason::Cancelled: t.finish = Finish::Cancelled; break;
    case StopReason::ContextFull:
        t.finish = Finish::ContextFull;
        t.note = "The context is full: the reply was cut short.";
        break;
    }
    t.promptTokens = r.promptTokens;
    t.completionTokens = r.generatedTokens;
    t.cachedTokens = r.reusedTokens;
    t.prefilledTokens = r.prefilledTokens;
    t.prefillMs = r.prefillMs;
    t.firstTokenMs = r.firstTokenMs;
    t.decodeMs = r.decodeMs;
    t.usedFallbackTemplate = r.usedFallbackTemplate;
    t.templateNote = r.templateNote;
    return t;
}

}  // namespace cairn::backend
