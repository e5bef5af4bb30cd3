// The UI side of the app: owns the settings, the UI thread's store connection
// (the lists, and the ConversationLibrary's renames, search, export and
// import), the list models and the engine worker's thread. QML calls its invokables; it forwards engine work to the
// worker with queued calls and turns the worker's signals into properties.
#pragma once

#include "api_server_control.h"
#include "app_paths.h"
#include "app_settings.h"
#include "conversation_library.h"
#include "conversation_list_model.h"
#include "conversation_settings_model.h"
#include "message_list_model.h"
#include "model_list_model.h"
#include "secret_store.h"

#include "cairn/store/records.h"

#include <QObject>
#include <QThread>
#include <QUrl>
#include <QtQml/qqmlregistration.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>

namespace cairn::store {
class Store;
}

namespace cairn::app {

class EngineWorker;
class RemoteEndpoints;

class ChatController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("created by main()")
    Q_PROPERTY(cairn::app::AppSettings* settings READ settings CONSTANT)
    Q_PROPERTY(cairn::app::ConversationListModel* conversations READ conversations CONSTANT)
    Q_PROPERTY(cairn::app::MessageListModel* messages READ messages CONSTANT)
    Q_PROPERTY(cairn::app::ModelListModel* models READ models CONSTANT)
    // The open conversation's sampling overrides (pending ones before its first message).
    Q_PROPERTY(cairn::app::ConversationSettingsModel* conversationSettings READ conversationSettings CONSTANT)
    Q_PROPERTY(qint64 currentConversation READ currentConversation NOTIFY currentConversationChanged)
    Q_PROPERTY(QString currentTitle READ currentTitle NOTIFY currentConversationChanged)
    Q_PROPERTY(QString conversationSystemPrompt READ conversationSystemPrompt WRITE setConversationSystemPrompt NOTIFY
                   currentConversationChanged)
    Q_PROPERTY(QString modelPath READ modelPath NOTIFY modelChanged)
    Q_PROPERTY(QString modelName READ modelName NOTIFY modelChanged)
    Q_PROPERTY(QString modelNote READ modelNote NOTIFY modelChanged)
    Q_PROPERTY(bool modelReady READ modelReady NOTIFY modelChanged)
    Q_PROPERTY(bool modelLoading READ modelLoading NOTIFY modelChanged)
    // The picked model runs on a remote server (its state lives there: no snapshots).
    Q_PROPERTY(bool modelRemote READ modelRemote NOTIFY modelChanged)
    // The model's chat template reads `enable_thinking`: the open chat's "Thinking" switch applies.
    Q_PROPERTY(bool thinkingAvailable READ thinkingAvailable NOTIFY modelChanged)
    // The open chat's "Thinking" switch (on unless turned off; kept with the chat).
    Q_PROPERTY(bool thinking READ thinking WRITE setThinking NOTIFY currentConversationChanged)
    Q_PROPERTY(cairn::app::KeyVault* keys READ keys CONSTANT)
    Q_PROPERTY(cairn::app::ApiServerControl* apiServer READ apiServer CONSTANT)
    Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
    Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
    Q_PROPERTY(double progress READ progress NOTIFY progressChanged)
    Q_PROPERTY(QString progressText READ progressText NOTIFY progressChanged)
    Q_PROPERTY(QString speedText READ speedText NOTIFY statusChanged)
    Q_PROPERTY(qint64 contextUsed READ contextUsed NOTIFY statusChanged)
    Q_PROPERTY(qint64 contextSize READ contextSize NOTIFY statusChanged)
    Q_PROPERTY(QString resumeNote READ resumeNote NOTIFY statusChanged)
    Q_PROPERTY(QString errorText READ errorText NOTIFY errorTextChanged)
    // About the last reply (turns dropped to fit, context full); not an error.
    Q_PROPERTY(QString noticeText READ noticeText NOTIFY noticeTextChanged)
    // Rename, pin, delete and undo, search, export and import.
    Q_PROPERTY(cairn::app::ConversationLibrary* library READ library CONSTANT)
    Q_PROPERTY(QString dataLocation READ dataLocation CONSTANT)
    // The model file that was loading when Cairn last stopped without quitting
    // (a crash during load); start() did not load it again. Empty otherwise.
    Q_PROPERTY(QString interruptedModel READ interruptedModel NOTIFY modelChanged)

public:
    explicit ChatController(const AppPaths& paths, QObject* parent = nullptr);
    ~ChatController() override;

    // Scans the model folders and loads the last used (or the bundled) model.
    Q_INVOKABLE void start();
    // Stops any reply, lets the worker finish and quits its thread. Idempotent.
    void shutdown();

    AppSettings* settings() const { return settings_; }
    ConversationListModel* conversations() const { return conversations_; }
    MessageListModel* messages() const { return messages_; }
    ModelListModel* models() const { return models_; }
    ConversationSettingsModel* conversationSettings() const { return conversationSettings_; }
    KeyVault* keys() const { return keys_; }
    ApiServerControl* apiServer() const { return apiServer_; }
    RemoteEndpoints* remoteEndpoints() const { return remotes_; }
    ConversationLibrary* library() const { return library_; }
    EngineWorker* worker() const { return worker_; }
    store::Store& store() { return *store_; }
    const AppPaths& paths() const { return paths_; }

    qint64 currentConversation() const { return current_; }
    QString currentTitle() const;
    QString conversationSystemPrompt() const;
    void setConversationSystemPrompt(const QString& prompt);
    QString modelPath() const { return modelPath_; }
    QString modelName() const { return modelName_; }
    QString modelNote() const { return modelNote_; }
    bool modelReady() const { return modelReady_; }
    bool modelLoading() const { return modelLoading_; }
    bool modelRemote() const { return modelRemote_; }
    bool thinkingAvailable() const { return thinkingAvailable_; }
    bool thinking() const;
    void setThinking(bool on);
    bool generating() const { return generating_; }
    bool busy() const { return busy_; }
    double progress() const { return progress_; }
    QString progressText() const { return progressText_; }
    QString speedText() const { return speedText_; }
    qint64 contextUsed() const { return contextUsed_; }
    qint64 contextSize() const { return contextSize_; }
    QString resumeNote() const { return resumeNote_; }
    QString errorText() const { return errorText_; }
    QString noticeText() const { return noticeText_; }
    QString dataLocation() const { return paths_.dataDir; }
    QString interruptedModel() const { return interruptedModel_; }

    Q_INVOKABLE void newChat();
    Q_INVOKABLE void openConversation(qint64 id);
    // A search hit: opens its conversation on a branch that shows the message
    // (switching branch when the hit is on another one) and asks the view to
    // bring it into sight (messageFocusRequested).
    Q_INVOKABLE void openSearchResult(qint64 conversationId, qint64 messageId);
    Q_INVOKABLE void send(const QString& text);
    Q_INVOKABLE void stop();
    Q_INVOKABLE void regenerate(qint64 messageId);
    // An interrupted reply goes on from its stored text (a local model only).
    Q_INVOKABLE void continueReply(qint64 messageId);
    Q_INVOKABLE void editMessage(qint64 messageId, const QString& text);
    Q_INVOKABLE void switchBranch(qint64 messageId, int delta);
    Q_INVOKABLE void selectModel(const QString& path);
    Q_INVOKABLE void addModelFolder(const QUrl& folder);
    Q_INVOKABLE void openModelFile(const QUrl& file);
    Q_INVOKABLE void refreshModels();
    // "Add remote endpoint…": returns why it cannot be added ("" when it was;
    // its models then appear in the picker).
    Q_INVOKABLE QString addRemoteEndpoint(const QString& url, const QString& apiKey);
    Q_INVOKABLE void removeRemoteEndpoint(const QString& url);
    // Ctrl+Q: main() quits the application (quitRequested), which shuts the worker down.
    Q_INVOKABLE void quit() { emit quitRequested(); }
    Q_INVOKABLE void copyText(const QString& text);
    // Opens a link from a reply in the desktop's handler, only when
    // isOpenableLink (http, https, mailto); returns whether it did.
    Q_INVOKABLE bool openLink(const QString& url);
    // What openLink calls (tests replace QDesktopServices::openUrl).
    void setLinkOpener(std::function<bool(const QUrl&)> opener) { linkOpener_ = std::move(opener); }
    Q_INVOKABLE void clearError();

signals:
    void currentConversationChanged();
    void modelChanged();
    void generatingChanged();
    void busyChanged();
    void progressChanged();
    void statusChanged();
    void errorTextChanged();
    void noticeTextChanged();
    // A reply is done (also when stopped).
    void replyFinished(qint64 conversationId, qint64 messageId, const cairn::app::ReplyStats& stats);
    // The engine is at the open conversation.
    void conversationReady(qint64 conversationId, cairn::app::RestoreKind how, double ms);
    // The chat view should scroll to this message (it is in the message list).
    void messageFocusRequested(qint64 messageId);
    // The view should open the model picker (start() found no model it may load).
    void modelPickerRequested();
    // A remote reply failed before any text: the message goes back to the composer.
    void draftReturned(const QString& text);
    void quitRequested();

public:
    // What the next reply of the open conversation uses: the app settings
    // merged with the conversation's stored overrides.
    GenerationSettings generationSettings() const;

private:
    void setError(const QString& text);
    // Conversation `id` from the store; nothing when it is unknown or the store fails.
    std::optional<store::Conversation> storedConversation(qint64 id) const;
    // Runs `action`; an exception becomes the error line. Returns whether it succeeded.
    bool reportFailure(const std::function<void()>& action);
    // Send, regenerate, continue, edit: the reply starts with this
    // conversation's settings, Stop re-armed, `work` run on the worker's thread.
    void
    startGeneration(std::function<void(EngineWorker&, qint64 conversation, const GenerationSettings& settings)> work);
    void setNotice(const QString& text);
    void setProgress(double value, const QString& text);
    void setGenerating(bool on);
    void connectWorker();
    // The worker's model signals: loading, loaded, failed, template fallback.
    void connectModelSignals();
    // The worker's reply signals: text, progress, figures, the conversation ready.
    void connectReplySignals();
    void setLoadingMarker(const QString& path);
    // The library's signals: the open conversation renamed or deleted, an import opened.
    void connectLibrary();
    void selectRemoteModel(const QString& id, const QString& baseUrl, const QString& model);

    AppPaths paths_;
    AppSettings* settings_;
    std::unique_ptr<store::Store> store_;
    ConversationListModel* conversations_;
    MessageListModel* messages_;
    ModelListModel* models_;
    ConversationSettingsModel* conversationSettings_;
    ConversationLibrary* library_ = nullptr;
    KeyVault* keys_;
    RemoteEndpoints* remotes_;
    ApiServerControl* apiServer_ = nullptr;
    QThread thread_;
    EngineWorker* worker_ = nullptr;
    std::shared_ptr<std::atomic<bool>> cancel_;

    qint64 current_ = -1;
    QString pendingSystemPrompt_;  // set before a new chat's first message
    bool pendingThinking_ = true;  // likewise, the Thinking switch
    bool thinkingAvailable_ = false;
    QString modelPath_, modelName_, modelNote_, modelFingerprint_, interruptedModel_;
    QString templateNote_;  // why the model's chat template is not used (empty: it is)
    bool modelReady_ = false, modelLoading_ = false, modelRemote_ = false, generating_ = false, busy_ = false;
    double progress_ = -1;
    QString progressText_, speedText_, resumeNote_, errorText_, noticeText_;
    qint64 contextUsed_ = 0, contextSize_ = 0;
    // Branch switching: the leaf last shown through each message (this session).
    std::unordered_map<qint64, qint64> branchLeaf_;
    std::function<bool(const QUrl&)> linkOpener_;
};

}  // namespace cairn::app
