// What the UI side and the engine worker tell each other about a reply, as
// types: the settings it runs with, what it cost, and how a conversation was
// brought back. A misspelt field does not compile (these were string-keyed
// QVariantMaps once).
#pragma once

#include "assistant_backend.h"
#include "generation_limits.h"

#include <QMetaType>
#include <QString>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace cairn::app {

// A conversation's overrides of the table's settings (ConversationSettingsModel::overridesFrom).
using GenerationOverrides = std::vector<std::pair<const GenerationLimit*, double>>;

// What a reply runs with: the app settings merged with the open
// conversation's overrides (AppSettings::generationSettings), every number
// within its range of generation_limits.h.
struct GenerationSettings {
    int threads = 1;  // resolved: "all cores" (0) is the core count here
    int64_t contextSize = int64_t(limits::contextSize.defaultValue);
    int64_t prefillChunk = int64_t(limits::prefillChunk.defaultValue);
    float temperature = float(limits::temperature.defaultValue);
    int32_t topK = int32_t(limits::topK.defaultValue);
    float topP = float(limits::topP.defaultValue);
    float minP = float(limits::minP.defaultValue);
    float repeatPenalty = float(limits::repeatPenalty.defaultValue);
    int64_t seed = int64_t(limits::seed.defaultValue);  // 0: a new seed per reply
    int64_t maxTokens = int64_t(limits::maxTokens.defaultValue);
    int64_t snapshotBudgetMiB = int64_t(limits::snapshotBudgetMiB.defaultValue);
    QString systemPrompt;  // for a conversation without its own
    bool dropOldestTurns = false;
    // The chat's "Thinking" switch; nothing when the model's template does not read it.
    std::optional<bool> thinking;

    // The setting `limit` names, as a number (a float one rounded to six decimals, as typed).
    double value(const GenerationLimit& limit) const;
    // Sets it, clamped to its range (a non-finite value: its default).
    void set(const GenerationLimit& limit, double value);
    void apply(const GenerationOverrides& overrides);
};

// What a reply cost and where it left the conversation (EngineWorker::replyFinished).
struct ReplyStats {
    int64_t promptTokens = 0;
    int64_t reusedTokens = 0;  // of the prompt, already in the session
    int64_t prefilledTokens = 0;  // read for this reply
    int64_t generatedTokens = 0;
    double prefillMs = 0;
    double decodeMs = 0;
    backend::Finish stop = backend::Finish::Stop;
    int64_t contextUsed = 0;  // tokens the session holds afterwards
    int64_t contextSize = 0;
    bool remote = false;  // a server replied (its state lives there)
    int droppedTurns = 0;
    bool fallbackTemplate = false;  // rendered as ChatML: the model's template is missing or unusable
    QString templateNote;  // why, when it is
    QString note;  // for the user: turns dropped, the server's word on an odd end
};

// How the engine came to a conversation (EngineWorker::conversationReady).
enum class RestoreKind {
    Snapshot,  // its snapshot restored
    Prefill,  // read again from the text
    Empty,  // nothing to read
    Live,  // the session held it already
    Remote,  // a server holds it
};

}  // namespace cairn::app

Q_DECLARE_METATYPE(cairn::app::ReplyStats)
Q_DECLARE_METATYPE(cairn::app::RestoreKind)
