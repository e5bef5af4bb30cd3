#include "engine_worker.h"

#include "embedded_backend.h"
#include "remote_backend.h"

#include "cairn/chat_session.h"
#include "cairn/error.h"
#include "cairn/exec.h"
#include "cairn/gguf.h"
#include "cairn/kernel_calibration.h"
#include "cairn/model.h"
#include "cairn/session.h"
#include "cairn/store/store.h"

#include <QDebug>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QThread>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>

namespace cairn::app {
namespace {

// busyChanged(true) now, busyChanged(false) when the operation ends.
class BusyScope {
public:
    explicit BusyScope(EngineWorker* w) : w_(w) { emit w_->busyChanged(true); }
    ~BusyScope() { emit w_->busyChanged(false); }

private:
    EngineWorker* w_;
};

// Prefill progress for the UI: the first chunk, then at most one update per
// interval, then the end. A prefill of several chunks always shows progress,
// however fast it is, and a prefill in chunks of 1 never floods the UI thread.
class ProgressThrottle {
public:
    explicit ProgressThrottle(int intervalMs) : intervalMs_(intervalMs) { timer_.start(); }
    bool due(int64_t done, int64_t total) {
        if (!first_ && done != total && timer_.elapsed() < intervalMs_) return false;
        first_ = false;
        timer_.restart();
        return true;
    }

private:
    int intervalMs_;
    QElapsedTimer timer_;
    bool first_ = true;
};

double msSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The sampling settings of a turn.
void samplingFrom(const GenerationSettings& s, backend::TurnRequest& t) {
    t.temperature = s.temperature;
    t.topK = s.topK;
    t.topP = s.topP;
    t.minP = s.minP;
    t.repeatPenalty = s.repeatPenalty;
    t.seed = s.seed != 0 ? uint64_t(s.seed) : QRandomGenerator::global()->generate64();
}

// The kernel paths measured on this machine (cairn/kernel_calibration.h),
// from the cache file when it is fresh. A process measures once per thread
// count and writes those timings to any other data folder it is given (tests
// run many in one process).
// Never fails a model load: without a calibration the default paths run.
std::mutex kernelMeasureMutex;
EngineWorker::KernelMeasure kernelMeasureOverride;  // EngineWorker::setKernelMeasure

void calibrateKernels(const QString& cacheFile, ExecContext& ctx) {
    if (kernelPathOverridden()) return;
    KernelCalibrationOptions options;
    options.measure = [](ExecContext& c, const std::vector<std::string>& candidates) {
        static std::map<int, KernelMeasurement> measured;
        const std::lock_guard lock(kernelMeasureMutex);
        if (kernelMeasureOverride) return kernelMeasureOverride(c, candidates);
        auto it = measured.find(c.threads());
        if (it == measured.end()) it = measured.emplace(c.threads(), measureKernels(c, candidates)).first;
        return it->second;
    };
    try {
        const KernelCalibration k = loadOrCalibrateKernels(cacheFile.toStdString(), ctx, options);
        if (!k.cacheNote.empty()) qWarning("%s; measured again", k.cacheNote.c_str());
        if (!k.notCached.empty()) qWarning("%s", k.notCached.c_str());
        applyKernelChoice(k.choice);
        if (!k.fromCache)
            qInfo("kernels calibrated in %.0f ms on %d threads: %s", k.measureMs, ctx.threads(),
                  kernelChoiceSummary().c_str());
    } catch (const std::exception& e) {
        qWarning("kernel calibration failed, default kernel paths: %s", e.what());
    }
}

}  // namespace

EngineWorker::EngineWorker(QString databasePath, QString kernelCachePath, std::shared_ptr<std::atomic<bool>> cancel)
    : databasePath_(std::move(databasePath)), kernelCachePath_(std::move(kernelCachePath)), cancel_(std::move(cancel)) {
    // Its signals cross threads with these (queued connections copy them).
    qRegisterMetaType<ReplyStats>();
    qRegisterMetaType<RestoreKind>();
}

EngineWorker::~EngineWorker() { shutdown(); }

void EngineWorker::setKernelMeasure(KernelMeasure measure) {
    const std::lock_guard lock(kernelMeasureMutex);
    kernelMeasureOverride = std::move(measure);
}

store::Store& EngineWorker::db() {
    // Opened lazily so the connection belongs to the worker thread.
    if (!store_) store_ = std::make_unique<store::Store>(databasePath_.toStdString());
    return *store_;
}

void EngineWorker::shutdown() {
    apiServer_.stop();  // before the model it serves
    remote_.reset();
    session_.reset();
    model_.reset();
    exec_.reset();
    store_.reset();
    sessionConversation_ = -1;
}

void EngineWorker::applySettings(const GenerationSettings& s) {
    // generationSettings() resolved 0 (all cores) already.
    const int threads = std::max(1, s.threads);
    // Background priority: the UI and its render threads take a core the moment
    // they need one during a long prefill (cairn/exec.h).
    if (!exec_ || exec_->threads() != threads)
        exec_ = std::make_unique<ExecContext>(threads, ThreadPriority::Background);
    int64_t ctx = s.contextSize;
    if (model_ && model_->info().trainedContext > 0) ctx = std::min(ctx, model_->info().trainedContext);
    const int64_t chunk = std::min(s.prefillChunk, ctx);
    if (chunk != chunk_ || ctx != contextSize_) {
        // The session's memory was sized for the old values: rebuild it on next use.
        session_.reset();
        sessionConversation_ = -1;
        chunk_ = chunk;
        contextSize_ = ctx;
    }
    db().setSnapshotBudget(uint64_t(s.snapshotBudgetMiB) << 20);
}

void EngineWorker::loadModel(const QString& path, const GenerationSettings& settings) {
    BusyScope busy(this);
    emit modelLoading(path);
    // Test hook: a load that takes this long, so a test can kill the app while
    // it loads (tests/app/test_app_processes.cpp). Never set in normal use.
    if (const int delayMs = qEnvironmentVariableIntValue("CAIRN_TEST_MODEL_LOAD_DELAY_MS"); delayMs > 0)
        QThread::msleep(ulong(std::min(delayMs, 600000)));
    apiServer_.stop();  // it serves model_, which goes now
    remote_.reset();
    session_.reset();
    sessionConversation_ = -1;
    model_.reset();
    try {
        // The kernel choice comes first: a model stores its weights in the
        // layout that the chosen decode kernels read (engine/tensor/row_tiles.h).
        applySettings(settings);
        calibrateKernels(kernelCachePath_, *exec_);
        model_ = Model::load(path.toStdString());
        fingerprint_ = QStringLiteral("%1").arg(modelFingerprint(*model_), 16, 16, QLatin1Char('0')).toStdString();
        modelPath_ = path;
        contextSize_ = 0;  // recomputed for this model
        applySettings(settings);
        const auto& info = model_->info();
        QString name = info.name.empty() ? path.section(QLatin1Char('/'), -1) : QString::fromStdString(info.name);
        // The template is tried before the model counts as loaded: a template
        // that brought the app down must leave the crash marker set (see
        // ChatController::start).
        const std::string templateSource(model_->file().getString("tokenizer.chat_template"));
        auto rendering = renderChat(templateSource, {{"user", "Hello"}}, {});
        if (rendering.usedFallback) emit templateFallback(QString::fromStdString(rendering.fallbackReason));
        markers_ = reasoningMarkersOf(templateSource);
        thinkingSwitch_ = !rendering.usedFallback && templateSource.find("enable_thinking") != std::string::npos;
        emit modelLoaded(path, name, contextSize_, QString::fromStdString(fingerprint_), thinkingSwitch_);
    } catch (const std::exception& e) {
        model_.reset();
        modelPath_.clear();
        emit modelFailed(path, QString::fromUtf8(e.what()));
    }
    restartApiServer();
}

void EngineWorker::selectRemote(const QString& id, const QString& baseUrl, const QString& apiKey,
                                const QString& model) {
    BusyScope busy(this);
    emit modelLoading(id);
    apiServer_.stop();
    session_.reset();
    sessionConversation_ = -1;
    model_.reset();
    modelPath_.clear();
    remote_.reset();
    try {
        backend::RemoteOptions o;
        o.baseUrl = baseUrl.toStdString();
        o.apiKey = apiKey.toStdString();
        o.model = model.toStdString();
        remote_ = std::make_unique<backend::RemoteBackend>(o);
        fingerprint_ = "remote:" + remote_->options().baseUrl + "#" + o.model;
        contextSize_ = 0;
        markers_ = {};
        thinkingSwitch_ = false;
        emit modelLoaded(id, model, 0, QString::fromStdString(fingerprint_), false);
    } catch (const std::exception& e) {
        remote_.reset();
        emit modelFailed(id, QString::fromUtf8(e.what()));
    }
    restartApiServer();
}

void EngineWorker::configureApiServer(const std::optional<LocalServerConfig>& config) {
    apiConfig_ = config;
    restartApiServer();
}

void EngineWorker::restartApiServer() {
    apiServer_.stop();
    if (!apiConfig_) return emit apiServerState(QStringLiteral("off"), {});
    if (!model_)
        return emit apiServerState(QStringLiteral("waiting"),
                                   remote_ ? QStringLiteral("a remote model is picked; the server serves a local one")
                                           : QStringLiteral("no local model is loaded"));
    LocalServerConfig c = *apiConfig_;
    c.modelId = QFileInfo(modelPath_).completeBaseName().toStdString();
    c.threads = std::clamp(c.threads, 1, kMaxThreads);
    c.contextSize = contextSize_;
    c.chunk = chunk_;
    try {
        emit apiServerState(QStringLiteral("running"), QString::fromStdString(apiServer_.start(*model_, c)));
    } catch (const Error& e) {
        // The reason alone: the settings line already says it is the API server.
        QString why = QString::fromStdString(e.reason());
        if (why.startsWith(QLatin1String("cannot listen")) && !why.contains(QLatin1String("in use")))
            why += QStringLiteral(" (is another program using the port?)");
        emit apiServerState(QStringLiteral("failed"), why);
    } catch (const std::exception& e) {
        emit apiServerState(QStringLiteral("failed"), QString::fromUtf8(e.what()));
    }
}

std::vector<ChatMessage> EngineWorker::chatMessages(qint64 conversationId, std::optional<int64_t> leaf,
                                                    const GenerationSettings& settings) {
    std::vector<ChatMessage> out;
    auto conv = db().conversation(conversationId);
    std::string system = conv.systemPrompt.empty() ? settings.systemPrompt.toStdString() : conv.systemPrompt;
    if (!system.empty()) out.push_back({"system", system});
    if (!leaf) return out;
    for (const auto& m : db().pathTo(*leaf)) {
        if (m.role == store::Role::Assistant && !m.complete && m.content.empty() && m.reasoning.empty()) continue;
        // The reply as generated, reasoning included: the model's template decides
        // what of it the next prompt keeps (Qwen3's drops earlier reasoning).
        out.push_back({std::string(store::roleName(m.role)), m.reasoning + m.content});
    }
    return out;
}

void EngineWorker::applyThinking(const GenerationSettings& settings) {
    if (!session_) return;
    session_->setThinking(thinkingSwitch_ ? settings.thinking : std::nullopt);
}

bool EngineWorker::ensureSession(qint64 conversationId, const GenerationSettings& settings) {
    if (remote_) return true;  // the server keeps its own state
    if (!model_) {
        emit errorOccurred(QStringLiteral("No model is loaded: pick one in the model picker."));
        return false;
    }
    applySettings(settings);
    if (session_ && sessionConversation_ == conversationId) return true;
    open(conversationId, settings, false);
    return session_ != nullptr;
}

void EngineWorker::openConversation(qint64 conversationId, const GenerationSettings& settings) {
    if (remote_) return emit conversationReady(conversationId, RestoreKind::Remote, 0, 0, 0);
    if (!model_) return;
    open(conversationId, settings, true);
}

void EngineWorker::open(qint64 conversationId, const GenerationSettings& settings, bool prefillNow) {
    BusyScope busy(this);
    try {
        applySettings(settings);
        if (session_ && sessionConversation_ == conversationId) {
            applyThinking(settings);
            // Already here; the count is the shown branch's (after a branch switch the
            // session still holds the other one until the next reply).
            auto leaf = db().activeLeaf(conversationId);
            const int64_t used =
                leaf ? int64_t(session_->promptTokens(chatMessages(conversationId, leaf, settings), false).size()) : 0;
            emit conversationReady(conversationId, RestoreKind::Live, 0, used, contextSize_);
            return;
        }
        session_.reset();
        SessionOptions options;
        options.memory.contextSize = contextSize_;
        options.chunk = chunk_;
        session_ = std::make_unique<ChatSession>(*model_, options);
        sessionConversation_ = conversationId;
        applyThinking(settings);

        auto leaf = db().activeLeaf(conversationId);
        if (!leaf) {
            emit conversationReady(conversationId, RestoreKind::Empty, 0, 0, contextSize_);
            return;
        }
        std::vector<int64_t> ids;
        for (const auto& m : db().pathTo(*leaf)) ids.push_back(m.id);
        if (auto best = db().bestSnapshot(conversationId, ids, fingerprint_)) {
            const auto t0 = std::chrono::steady_clock::now();
            try {
                session_->session().restore(db().snapshotData(best->id));
                db().touchSnapshot(best->id);
                emit conversationReady(conversationId, RestoreKind::Snapshot, msSince(t0),
                                       int64_t(session_->session().tokens().size()), contextSize_);
                return;
            } catch (const Error& e) {
                // Damaged or foreign: forget it and compute the state again.
                qWarning() << "snapshot" << best->id << "refused:" << e.what();
                db().deleteSnapshot(best->id);
                session_->session().reset();
            }
        }
        auto prompt = session_->promptTokens(chatMessages(conversationId, leaf, settings), false);
        if (!prefillNow || int64_t(prompt.size()) >= contextSize_) {
            emit conversationReady(conversationId, RestoreKind::Empty, 0, 0, contextSize_);
            return;
        }
        const auto t0 = std::chrono::steady_clock::now();
        FeedProgress progress;
        progress.cancel = cancel_.get();
        ProgressThrottle throttle(kStreamIntervalMs);
        progress.onProgress = [&](int64_t done, int64_t total) {
            if (throttle.due(done, total)) emit prefillProgress(done, total);
        };
        try {
            session_->session().feed(prompt, *exec_, progress);
        } catch (const Cancelled&) {}
        emit conversationReady(conversationId, RestoreKind::Prefill, msSince(t0),
                               int64_t(session_->session().tokens().size()), contextSize_);
    } catch (const std::exception& e) {
        session_.reset();
        sessionConversation_ = -1;
        emit errorOccurred(QString::fromUtf8(e.what()));
    }
}

void EngineWorker::send(qint64 conversationId, const QString& text, const GenerationSettings& settings) {
    try {
        auto parent = db().activeLeaf(conversationId);
        // Committed before anything else can fail: the user's words are never lost.
        int64_t userId = db().addMessage(conversationId, parent, store::Role::User, text.toStdString());
        emit messagesChanged(conversationId);
        if (!ensureSession(conversationId, settings)) return;
        if (!generate(conversationId, userId, settings)) {
            db().deleteMessage(userId);
            if (parent) db().setActiveLeaf(conversationId, *parent);
            emit messagesChanged(conversationId);
            emit sendFailed(conversationId, text);
        }
    } catch (const std::exception& e) {
        emit errorOccurred(QString::fromUtf8(e.what()));
    }
}

void EngineWorker::regenerate(qint64 conversationId, qint64 messageId, const GenerationSettings& settings) {
    try {
        auto m = db().message(messageId);
        if (m.role != store::Role::Assistant || !m.parentId) throw Error("regenerate", "not an assistant reply");
        if (!ensureSession(conversationId, settings)) return;
        // Retrying a reply stopped before any text replaces it (an empty sibling would only clutter).
        if (!m.complete && m.content.empty()) db().deleteMessage(messageId);
        generate(conversationId, m.parentId, settings);
    } catch (const std::exception& e) {
        emit errorOccurred(QString::fromUtf8(e.what()));
    }
}

void EngineWorker::continueReply(qint64 conversationId, qint64 messageId, const GenerationSettings& settings) {
    try {
        auto m = db().message(messageId);
        if (m.role != store::Role::Assistant || !m.parentId || m.complete)
            throw Error("continue", "not an interrupted reply");
        if (remote_) {
            emit errorOccurred(
                QStringLiteral("Continue needs a local model (a server starts the reply again): use Retry."));
            return;
        }
        if (!ensureSession(conversationId, settings)) return;
        generate(conversationId, m.parentId, settings, messageId);
    } catch (const std::exception& e) {
        emit errorOccurred(QString::fromUtf8(e.what()));
    }
}

void EngineWorker::editMessage(qint64 conversationId, qint64 messageId, const QString& text,
                               const GenerationSettings& settings) {
    try {
        auto m = db().message(messageId);
        if (m.role != store::Role::User) throw Error("edit", "only user messages can be edited");
        int64_t id = db().addMessage(conversationId, m.parentId, store::Role::User, text.toStdString());
        emit messagesChanged(conversationId);
        if (!ensureSession(conversationId, settings)) return;
        generate(conversationId, id, settings);
    } catch (const std::exception& e) {
        emit errorOccurred(QString::fromUtf8(e.what()));
    }
}

bool EngineWorker::generate(qint64 conversationId, std::optional<int64_t> parentId, const GenerationSettings& settings,
                            std::optional<int64_t> continueId) {
    BusyScope busy(this);
    applyThinking(settings);
    auto messages = chatMessages(conversationId, parentId, settings);
    const int64_t maxTokens = settings.maxTokens;
    const bool dropOldest = settings.dropOldestTurns;

    // Context overflow: the prompt plus some room to answer must fit (a
    // remote server checks its own context and says so).
    const int64_t reserve = std::min<int64_t>(maxTokens, contextSize_ / 4);
    int dropped = 0;
    bool startsInside = false;  // the generation prompt opened a reasoning block (DeepSeek-R1's)
    for (; !remote_;) {
        ChatRendering rendering;
        int64_t n = int64_t(session_->promptTokens(messages, true, &rendering).size());
        startsInside = promptOpensReasoning(rendering.text, markers_);
        if (n + reserve <= contextSize_) break;
        size_t first = (!messages.empty() && messages[0].role == "system") ? 1 : 0;
        if (!dropOldest || messages.size() <= first + 1) {
            // Raising the setting helps only below the model's own limit.
            const int64_t trained = model_->info().trainedContext;
            emit errorOccurred(
                trained > 0 && contextSize_ >= trained
                    ? QStringLiteral(
                          "The conversation (%1 tokens) does not fit the context of %2 tokens, the most "
                          "this model allows. Start a new chat, or let Cairn drop the oldest turns (Settings).")
                          .arg(n)
                          .arg(contextSize_)
                    : QStringLiteral(
                          "The conversation (%1 tokens) does not fit the context of %2 tokens. "
                          "Start a new chat, raise the context size, or let Cairn drop the oldest turns (Settings).")
                          .arg(n)
                          .arg(contextSize_));
            return true;
        }
        messages.erase(messages.begin() + first);
        // Keep the turns paired: a conversation should not open with a reply.
        if (messages.size() > first + 1 && messages[first].role == "assistant")
            messages.erase(messages.begin() + first);
        ++dropped;
    }

    // Continue: the stored partial reply is the start of this one.
    std::string prefix;
    int64_t earlierReasoningMs = 0;
    if (continueId) {
        const auto m = db().message(*continueId);
        prefix = m.reasoning + m.content;
        earlierReasoningMs = m.stats.reasoningMs;
    }
    const int64_t assistantId =
        continueId ? *continueId : db().addMessage(conversationId, parentId, store::Role::Assistant, "", false);
    emit messagesChanged(conversationId);
    emit replyStarted(conversationId, assistantId);

    // The reply so far as generated (after the prefix): split into reasoning and answer as it streams.
    std::string text;
    std::optional<std::chrono::steady_clock::time_point> firstPiece;
    auto reasoningSoFar = [&] { return earlierReasoningMs + (firstPiece ? int64_t(msSince(*firstPiece)) : 0); };
    int64_t reasoningMs = earlierReasoningMs;
    bool reasoningOpen = false;
    struct Parts {
        std::string reasoning, answer;
        bool thinking = false;
    };
    auto parts = [&](const std::string& generated) {
        const std::string raw = prefix + generated;
        const ReplySplit split = splitReasoning(raw, markers_, startsInside);
        Parts p;
        if (split.undecided) return p;  // maybe the start of a marker: nothing to show yet
        p.reasoning = raw.substr(0, split.reasoningBytes);
        p.answer = raw.substr(split.reasoningBytes);
        p.thinking = split.reasoningBytes > 0 && !split.closed;
        // Time from the first piece to the closing marker (a continued reply adds to the stored time).
        if (p.thinking) reasoningOpen = true;
        else if (reasoningOpen) {
            reasoningOpen = false;
            reasoningMs = reasoningSoFar();
        }
        return p;
    };
    auto showText = [&](const Parts& p) {
        const int64_t ms = p.thinking ? reasoningSoFar() : reasoningMs;
        emit replyText(assistantId, QString::fromStdString(p.answer),
                       QString::fromUtf8(reasoningText(p.reasoning, markers_)), p.thinking, ms);
    };
    QElapsedTimer streamTimer, commitTimer;
    streamTimer.start();
    commitTimer.start();
    backend::TurnRequest options;
    options.messages = messages;
    options.assistantPrefix = prefix;
    samplingFrom(settings, options);
    options.maxTokens = maxTokens;
    options.cancel = cancel_.get();
    ProgressThrottle throttle(kStreamIntervalMs);
    int64_t prefilledNow = 0;
    options.onPrefill = [&](int64_t done, int64_t total) {
        prefilledNow = done;
        if (throttle.due(done, total)) emit prefillProgress(done, total);
    };
    // The prompt boundary: after a prefill worth keeping, a snapshot there means
    // a crash or a Stop before the reply ends costs at most the reply (the
    // snapshot at its end replaces it). A remote server keeps its own state.
    std::optional<int64_t> promptSnapshot;
    options.onPromptReady = [&] {
        if (!remote_ && parentId && prefilledNow >= kPromptSnapshotMinTokens)
            promptSnapshot = saveSnapshot(conversationId, *parentId);
    };
    // Test hook: each piece this much later, so a test can kill the app mid-reply
    // (tests/app/test_app_processes.cpp). Never set in normal use.
    const int pieceDelayMs = std::min(qEnvironmentVariableIntValue("CAIRN_TEST_PIECE_DELAY_MS"), 1000);
    // The first piece at once; then at most one update per interval, except
    // from a server: its pieces come at the network's pace, and the worker has
    // no timer to flush a piece held back before a stall.
    const bool everyPiece = remote_ != nullptr;
    options.onPiece = [&](std::string_view piece) {
        if (pieceDelayMs > 0) QThread::msleep(ulong(pieceDelayMs));
        const bool first = text.empty();
        if (!firstPiece) firstPiece = std::chrono::steady_clock::now();
        text += piece;
        const Parts p = parts(text);
        if (first || everyPiece || streamTimer.elapsed() >= kStreamIntervalMs) {
            streamTimer.restart();
            showText(p);
            if (session_) emit contextUsed(conversationId, qint64(session_->session().tokens().size()));
        }
        if (commitTimer.elapsed() >= kPartialCommitMs) {
            commitTimer.restart();
            db().updatePartial(assistantId, p.answer, p.reasoning);
        }
    };

    backend::TurnResult r;
    try {
        if (remote_) r = remote_->reply(options);
        else r = backend::EmbeddedBackend(*session_, *exec_).reply(options);
    } catch (const std::exception& e) {
        if (!continueId) {  // a continued reply keeps its text
            db().deleteMessage(assistantId);
            if (parentId) db().setActiveLeaf(conversationId, *parentId);
        }
        emit messagesChanged(conversationId);
        emit errorOccurred(QString::fromUtf8(e.what()));
        return !remote_;
    }
    const Parts last = parts(r.text);
    const std::string raw = prefix + r.text;
    // Stopped or cut off inside the reasoning: the time so far.
    if (last.thinking) reasoningMs = reasoningSoFar();
    // The last text as the store keeps it (a reply that never left "undecided" is answer text).
    const std::string storedReasoning = last.reasoning;
    const std::string storedAnswer = raw.substr(storedReasoning.size());
    showText({storedReasoning, storedAnswer, false});

    ReplyStats stats;
    stats.promptTokens = r.promptTokens.value_or(0);
    stats.reusedTokens = r.cachedTokens.value_or(0);
    stats.prefilledTokens = r.prefilledTokens;
    stats.generatedTokens = r.completionTokens.value_or(0);
    stats.prefillMs = r.prefillMs;
    stats.decodeMs = r.decodeMs;
    stats.stop = r.finish;
    stats.contextUsed = session_ ? int64_t(session_->session().tokens().size()) : 0;
    stats.remote = remote_ != nullptr;
    stats.contextSize = contextSize_;
    stats.droppedTurns = dropped;
    stats.fallbackTemplate = r.usedFallbackTemplate;
    stats.templateNote = QString::fromStdString(r.templateNote);
    stats.note = dropped > 0 ? QStringLiteral("The oldest %1 turn(s) were left out to fit the context.").arg(dropped)
                             : QString::fromStdString(r.note);

    if (r.finish == backend::Finish::Cancelled && raw.empty()) {
        // Stopped before any text: kept unfinished (complete = 0), so the view
        // offers Retry; a prompt snapshot, if one was saved, stays for it.
        emit messagesChanged(conversationId);
    } else if (r.finish == backend::Finish::Incomplete) {
        // The stream broke off: the text so far stays, not marked complete,
        // so the view shows it as interrupted (the note says why).
        db().updatePartial(assistantId, storedAnswer, storedReasoning);
    } else if (continueId && r.finish == backend::Finish::Cancelled && r.text.empty()) {
        // Continue stopped before any new text: still the interrupted reply it was.
        emit messagesChanged(conversationId);
    } else {
        store::MessageStats ms;
        ms.tokenCount = r.completionTokens.value_or(0);
        ms.prefillTokens = r.prefilledTokens;
        ms.prefillMs = r.prefillMs;
        ms.decodeMs = r.decodeMs;
        ms.reasoningMs = storedReasoning.empty() ? 0 : reasoningMs;
        db().finishMessage(assistantId, storedAnswer, ms, storedReasoning);
        // The reply's snapshot holds the prompt too (regenerate cuts back to it).
        if (!remote_ && saveSnapshot(conversationId, assistantId) && promptSnapshot)
            db().deleteSnapshot(*promptSnapshot);
    }
    emit replyFinished(conversationId, assistantId, stats);
    return true;
}

std::optional<int64_t> EngineWorker::saveSnapshot(qint64 conversationId, qint64 messageId) {
    try {
        auto blob = session_->session().snapshot();
        return db().putSnapshot(blob, conversationId, messageId, fingerprint_,
                                int64_t(session_->session().tokens().size()));
    } catch (const std::exception& e) {
        qWarning() << "snapshot not saved:" << e.what();
        return std::nullopt;
    }
}

}  // namespace cairn::app
