// The engine side of the app: lives in its own QThread and owns the loaded
// model, the active conversation's ChatSession, the ExecContext and its own
// store connection. The UI talks to it only through queued signals; Stop is
// the shared cancel flag, which the engine checks between prefill chunks and
// between tokens. The UI side clears the flag when it queues new work, so a
// Stop pressed before the worker gets to a request is not lost.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include "generation_settings.h"
#include "local_api_server.h"

#include "cairn/kernel_calibration.h"
#include "cairn/reasoning.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace cairn {
class Model;
class ChatSession;
class ExecContext;
struct ChatMessage;
namespace store {
class Store;
}
namespace backend {
class RemoteBackend;
}
}  // namespace cairn

namespace cairn::app {

class EngineWorker : public QObject {
    Q_OBJECT
public:
    // `kernelCachePath`: the kernel calibration's cache file (AppPaths).
    EngineWorker(QString databasePath, QString kernelCachePath, std::shared_ptr<std::atomic<bool>> cancel);
    ~EngineWorker() override;

    // Streamed text reaches the UI at most this often.
    static constexpr int kStreamIntervalMs = 16;
    // The partial reply is committed to the database this often.
    static constexpr int kPartialCommitMs = 2000;
    // More engine threads than this are never started (the settings panel's limit).
    static constexpr int kMaxThreads = int(limits::threads.max);
    // A prompt that took at least this many tokens of prefill is snapshotted
    // before the reply starts (a short follow-up is cheaper to read again than
    // the whole context is to write).
    static constexpr int64_t kPromptSnapshotMinTokens = 64;

    // The kernel calibration's measurement for every worker of this process
    // (tests inject timings and how busy the machine was); empty: measured,
    // once per thread count.
    using KernelMeasure = std::function<KernelMeasurement(ExecContext&, const std::vector<std::string>&)>;
    static void setKernelMeasure(KernelMeasure measure);

public slots:
    void loadModel(const QString& path, const GenerationSettings& settings);
    // Replies go to an OpenAI-compatible server instead (no local model, no
    // snapshots: the state lives on the server). `id` names it like a path.
    void selectRemote(const QString& id, const QString& baseUrl, const QString& apiKey, const QString& model);
    // The "Local API server" setting (nothing: off; its host, port, key and
    // threads). It serves the loaded local model, and follows it when another
    // is loaded (the model's name, context and chunk are the worker's).
    void configureApiServer(const std::optional<LocalServerConfig>& config);
    // Brings the engine to the conversation's active branch: restores its
    // snapshot when one matches the model, else prefills with progress.
    void openConversation(qint64 conversationId, const GenerationSettings& settings);
    // Adds a user message under the active leaf and replies to it.
    void send(qint64 conversationId, const QString& text, const GenerationSettings& settings);
    // A new sibling of the assistant message `messageId`.
    void regenerate(qint64 conversationId, qint64 messageId, const GenerationSettings& settings);
    // Continue: the interrupted reply `messageId` goes on after its stored text
    // (the same message; only what the session does not hold is prefilled).
    void continueReply(qint64 conversationId, qint64 messageId, const GenerationSettings& settings);
    // A new sibling of the user message `messageId` with `text` (a branch), then a reply.
    void editMessage(qint64 conversationId, qint64 messageId, const QString& text, const GenerationSettings& settings);
    // Drops the model and the store connection (before the thread quits).
    void shutdown();

signals:
    void modelLoading(const QString& path);
    // thinkingSwitch: the model's chat template reads `enable_thinking` (a per-chat "Thinking" switch applies).
    void modelLoaded(const QString& path, const QString& name, qint64 contextSize, const QString& fingerprint,
                     bool thinkingSwitch);
    void modelFailed(const QString& path, const QString& message);
    // The model's chat template is missing or unusable: replies are rendered as ChatML.
    void templateFallback(const QString& reason);
    void messagesChanged(qint64 conversationId);
    void replyStarted(qint64 conversationId, qint64 messageId);
    void prefillProgress(qint64 done, qint64 total);
    // The answer so far, and a reasoning model's reasoning (its text without the
    // markers; `thinking` while it still streams, reasoningMs once it ended).
    void replyText(qint64 messageId, const QString& text, const QString& reasoning, bool thinking, qint64 reasoningMs);
    // While a reply streams: the tokens its conversation holds now.
    void contextUsed(qint64 conversationId, qint64 tokens);
    void replyFinished(qint64 conversationId, qint64 messageId, const cairn::app::ReplyStats& stats);
    // ms: the restore time (Snapshot) or the prefill time (Prefill), else 0.
    void conversationReady(qint64 conversationId, cairn::app::RestoreKind how, double ms, qint64 tokens,
                           qint64 contextSize);
    void errorOccurred(const QString& message);
    void busyChanged(bool busy);
    // A remote reply failed before any text: the user message `text` was taken
    // back out of the conversation, for the composer (nothing typed is lost).
    void sendFailed(qint64 conversationId, const QString& text);
    // state: "off", "waiting" (no local model), "running" (detail: the URL), "failed" (detail: why).
    void apiServerState(const QString& state, const QString& detail);

private:
    store::Store& db();
    void applySettings(const GenerationSettings& settings);
    bool ensureSession(qint64 conversationId, const GenerationSettings& settings);
    // openConversation's work; without prefillNow the next reply prefills (one progress run, one set of figures).
    void open(qint64 conversationId, const GenerationSettings& settings, bool prefillNow);
    std::vector<ChatMessage> chatMessages(qint64 conversationId, std::optional<int64_t> leaf,
                                          const GenerationSettings& settings);
    // False when a remote reply failed before any text (the error was emitted).
    // `continueId`: the interrupted reply to continue instead of adding a new one.
    bool generate(qint64 conversationId, std::optional<int64_t> parentId, const GenerationSettings& settings,
                  std::optional<int64_t> continueId = std::nullopt);
    // The per-chat "Thinking" switch as the template variable.
    void applyThinking(const GenerationSettings& settings);
    void restartApiServer();
    // The snapshot's id, or nothing when it was not stored (over the budget, an error).
    std::optional<int64_t> saveSnapshot(qint64 conversationId, qint64 messageId);

    QString databasePath_;
    QString kernelCachePath_;
    std::shared_ptr<std::atomic<bool>> cancel_;
    std::unique_ptr<store::Store> store_;
    std::unique_ptr<Model> model_;
    QString modelPath_;
    std::string fingerprint_;
    std::unique_ptr<ExecContext> exec_;
    std::unique_ptr<ChatSession> session_;
    ReasoningMarkers markers_;  // the model's template's
    bool thinkingSwitch_ = false;  // its template reads enable_thinking
    qint64 sessionConversation_ = -1;
    int64_t contextSize_ = 0;
    int64_t chunk_ = 64;
    std::unique_ptr<backend::RemoteBackend> remote_;  // set: replies go to a server, model_ is empty
    LocalApiServer apiServer_;
    std::optional<LocalServerConfig> apiConfig_;  // nothing: off
};

}  // namespace cairn::app
