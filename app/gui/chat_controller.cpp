#include "chat_controller.h"

#include "app_settings.h"
#include "conversation_library.h"
#include "conversation_list_model.h"
#include "engine_worker.h"
#include "message_list_model.h"
#include "model_list_model.h"
#include "remote_endpoints.h"
#include "safe_markdown.h"

#include "cairn/store/store.h"

#include <QClipboard>
#include <QDateTime>
#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QPointer>

namespace cairn::app {
namespace {

QString titleFrom(const QString& text) {
    // The first line that is not a code fence.
    QString t;
    for (const auto& line : text.split(QLatin1Char('\n'))) {
        if (line.trimmed().isEmpty() || line.trimmed().startsWith(QLatin1String("```"))) continue;
        t = line.simplified();
        break;
    }
    if (t.size() > 48) t = t.left(45).trimmed() + QStringLiteral("…");
    return t.isEmpty() ? QObject::tr("New chat") : t;
}

}  // namespace

ChatController::ChatController(const AppPaths& paths, QObject* parent)
    : QObject(parent), paths_(paths), settings_(new AppSettings(paths.settingsFile, this)),
      conversations_(new ConversationListModel(this)), messages_(new MessageListModel(this)),
      models_(new ModelListModel(this)), conversationSettings_(new ConversationSettingsModel(this)),
      keys_(new KeyVault(makeKeychainBackend(), this)), remotes_(new RemoteEndpoints(settings_, keys_, this)),
      cancel_(std::make_shared<std::atomic<bool>>(false)) {
    connect(remotes_, &RemoteEndpoints::rowsChanged, this, [this] { models_->setRemoteRows(remotes_->rows()); });
    paths_.create();
    store_ = std::make_unique<store::Store>(paths_.databasePath().toStdString());
    // Deleted conversations stay undoable for a day, then go for good.
    store_->purgeDeletedBefore(store_->now() - 24LL * 3600 * 1000);
    conversations_->setStore(store_.get());
    messages_->setStore(store_.get());
    conversationSettings_->setStore(store_.get());
    conversationSettings_->setDefaults(settings_);
    connect(conversationSettings_, &ConversationSettingsModel::errorOccurred, this, &ChatController::setError);
    conversations_->reload();
    library_ = new ConversationLibrary(*store_, conversations_, paths_.databasePath(), this);
    connectLibrary();

    worker_ = new EngineWorker(paths_.databasePath(), paths_.kernelCalibrationPath(), cancel_);
    worker_->moveToThread(&thread_);
    thread_.setObjectName(QStringLiteral("cairn-engine"));
    connectWorker();
    apiServer_ = new ApiServerControl(settings_, keys_, worker_, this);
    thread_.start();
}

ChatController::~ChatController() { shutdown(); }

void ChatController::shutdown() {
    library_->shutdown();
    if (!worker_) return;
    cancel_->store(true);  // a reply in progress ends at the next token and is committed
    QMetaObject::invokeMethod(
        worker_, [w = worker_] { w->shutdown(); }, Qt::QueuedConnection);
    thread_.quit();
    thread_.wait();
    delete worker_;
    worker_ = nullptr;
    setLoadingMarker({});  // a load still running when quitting did not crash the app
}

void ChatController::setLoadingMarker(const QString& path) {
    if (settings_->loadingModel() == path) return;
    settings_->setLoadingModel(path);
    settings_->sync();  // on disk before the load starts: the point is to survive a crash
}

void ChatController::connectWorker() {
    connectModelSignals();
    connectReplySignals();
    connect(worker_, &EngineWorker::errorOccurred, this, [this](const QString& message) {
        setError(message);
        setGenerating(false);
        setProgress(-1, {});
    });
    connect(worker_, &EngineWorker::sendFailed, this, [this](qint64 conv, const QString& text) {
        if (conv == current_) emit draftReturned(text);
    });
    connect(worker_, &EngineWorker::busyChanged, this, [this](bool b) {
        if (busy_ == b) return;
        busy_ = b;
        emit busyChanged();
    });
}

void ChatController::connectModelSignals() {
    connect(worker_, &EngineWorker::modelLoading, this, [this](const QString& path) {
        modelLoading_ = true;
        modelReady_ = false;
        modelPath_ = path;
        QString base, remoteModel;
        modelRemote_ = parseRemoteModelId(path, &base, &remoteModel);
        modelName_ = modelRemote_ ? remoteModel : QFileInfo(path).completeBaseName();
        modelNote_.clear();
        templateNote_.clear();
        emit modelChanged();
        setProgress(
            0, modelRemote_ ? tr("Connecting to %1…").arg(base) : tr("Loading %1…").arg(QFileInfo(path).fileName()));
    });
    connect(
        worker_, &EngineWorker::modelLoaded, this,
        [this](const QString& path, const QString& name, qint64 ctx, const QString& fingerprint, bool thinkingSwitch) {
            modelLoading_ = false;
            thinkingAvailable_ = thinkingSwitch;
            modelReady_ = true;
            modelPath_ = path;
            modelName_ = name;
            modelFingerprint_ = fingerprint;
            contextSize_ = ctx;
            contextUsed_ = 0;
            const auto* info = models_->find(path);
            modelNote_ = info && info->placeholder
                ? tr("Placeholder model with random weights: it produces random text.")
                : info && info->demo
                ? tr("Demo model: it knows only small sums, spelling, days and months, unit conversions and "
                     "how to use Cairn; anything else it makes up. Open the model picker to use a real model.")
                : QString();
            modelNote_ = (modelNote_ + QLatin1Char(' ') + templateNote_).trimmed();
            QString base, remoteModel;
            modelRemote_ = parseRemoteModelId(path, &base, &remoteModel);
            if (modelRemote_)
                modelNote_ = tr("Remote model on %1: conversations are kept here, the model and its state on the "
                                "server (snapshots do not apply).")
                                 .arg(base);
            settings_->setLastModel(path);
            setLoadingMarker({});
            interruptedModel_.clear();
            emit modelChanged();
            emit statusChanged();
            setProgress(-1, {});
            if (current_ >= 0) openConversation(current_);
        });
    connect(worker_, &EngineWorker::modelFailed, this, [this](const QString& path, const QString& message) {
        modelLoading_ = false;
        modelReady_ = false;
        setLoadingMarker({});
        modelNote_ = tr("Could not load %1: %2").arg(QFileInfo(path).fileName(), message);
        models_->setLoadError(path, message);
        emit modelChanged();
        setProgress(-1, {});
        setError(modelNote_);
    });
    connect(worker_, &EngineWorker::templateFallback, this, [this](const QString& reason) {
        // A property of the model, not of one reply: shown with the model's note
        // (modelLoaded follows). The engine's reason names the failure ("the
        // model's chat template failed (...); using ChatML instead").
        QString why = reason.trimmed().left(400);
        if (!why.isEmpty()) why[0] = why[0].toUpper();
        templateNote_ = why.contains(QLatin1String("ChatML"))
            ? why + QLatin1Char('.')
            : tr("It has no usable chat template, so Cairn uses ChatML.");
    });
}

void ChatController::connectReplySignals() {
    connect(worker_, &EngineWorker::messagesChanged, this, [this](qint64 conv) {
        if (conv == current_) messages_->load(conv);
        conversations_->reload();
    });
    connect(worker_, &EngineWorker::contextUsed, this, [this](qint64 conv, qint64 tokens) {
        if (conv != current_ || tokens == contextUsed_) return;
        contextUsed_ = tokens;
        emit statusChanged();
    });
    connect(worker_, &EngineWorker::replyStarted, this,
            [this](qint64, qint64 id) { messages_->setStreaming(id, true); });
    connect(worker_, &EngineWorker::replyText, this,
            [this](qint64 id, const QString& text, const QString& reasoning, bool thinking, qint64 reasoningMs) {
                if (progress_ >= 0) setProgress(-1, {});
                messages_->setStreamingText(id, text, reasoning, thinking, reasoningMs);
            });
    connect(worker_, &EngineWorker::prefillProgress, this, [this](qint64 done, qint64 total) {
        if (done >= total) setProgress(-1, {});
        else
            setProgress(double(done) / double(total),
                        tr("Reading the conversation: %1 / %2 tokens").arg(done).arg(total));
    });
    connect(worker_, &EngineWorker::replyFinished, this, [this](qint64 conv, qint64 id, const ReplyStats& s) {
        messages_->setStreaming(id, false);
        if (conv == current_) messages_->load(conv);
        QStringList parts;
        if (s.prefilledTokens > 0 && s.prefillMs > 0)
            parts << tr("prefill %1 tok/s").arg(double(s.prefilledTokens) * 1000.0 / s.prefillMs, 0, 'f', 1);
        if (s.generatedTokens > 1 && s.decodeMs > 0)
            parts << tr("decode %1 tok/s").arg(double(s.generatedTokens - 1) * 1000.0 / s.decodeMs, 0, 'f', 1);
        speedText_ = parts.join(QStringLiteral(" · "));
        contextUsed_ = s.contextUsed;
        contextSize_ = s.contextSize;
        if (s.remote) resumeNote_ = tr("Remote: the state lives on the server (no snapshots)");
        else resumeNote_.clear();
        emit statusChanged();
        setNotice(s.note);
        setProgress(-1, {});
        setGenerating(false);
        emit replyFinished(conv, id, s);
    });
    connect(worker_, &EngineWorker::conversationReady, this,
            [this](qint64 conv, RestoreKind how, double ms, qint64 tokens, qint64 ctx) {
                if (conv != current_) return;
                contextUsed_ = tokens;
                contextSize_ = ctx;
                switch (how) {
                case RestoreKind::Remote:
                    resumeNote_ = tr("Remote: the state lives on the server (no snapshots)");
                    break;
                case RestoreKind::Snapshot:
                    resumeNote_ = tr("Resumed from snapshot in %1 ms").arg(ms, 0, 'f', 0);
                    break;
                case RestoreKind::Prefill: resumeNote_ = tr("Read the conversation in %1 ms").arg(ms, 0, 'f', 0); break;
                case RestoreKind::Empty:
                case RestoreKind::Live: resumeNote_.clear(); break;
                }
                emit statusChanged();
                setProgress(-1, {});
                emit conversationReady(conv, how, ms);
            });
}

void ChatController::connectLibrary() {
    library_->setDeleteGuard([this](qint64 id) { return !(generating_ && id == current_); });
    connect(library_, &ConversationLibrary::renamed, this, [this](qint64 id) {
        if (id == current_) emit currentConversationChanged();
    });
    connect(library_, &ConversationLibrary::deleted, this, [this](qint64 id) {
        if (id == current_) newChat();
    });
    connect(library_, &ConversationLibrary::importFinished, this, [this](qint64 id, const QString&) {
        if (id >= 0 && worker_) openConversation(id);
    });
    connect(library_, &ConversationLibrary::errorOccurred, this, &ChatController::setError);
    connect(library_, &ConversationLibrary::noticeOccurred, this, &ChatController::setNotice);
}

void ChatController::start() {
    refreshModels();
    apiServer_->apply();
    // Opens where the last session ended (a deleted or purged one: a new chat).
    if (const qint64 last = settings_->lastConversation(); last >= 0 && current_ < 0) {
        const auto stored = storedConversation(last);
        if (stored && !stored->deletedMs) openConversation(last);
        else settings_->setLastConversation(-1);
    }
    // The last start died while loading this file: loading it again would
    // likely die again (a crash loop), so the user chooses.
    if (const QString interrupted = settings_->loadingModel(); !interrupted.isEmpty()) {
        interruptedModel_ = interrupted;
        setLoadingMarker({});
        if (settings_->lastModel() == interrupted) settings_->setLastModel({});
        settings_->sync();
        setError(tr("Cairn stopped while loading %1 last time, so it did not load it again. Pick a model to continue.")
                     .arg(QDir::toNativeSeparators(interrupted)));
        emit modelChanged();
        emit modelPickerRequested();
        return;
    }
    QString model = settings_->lastModel();
    QString base, remoteModel;
    if (parseRemoteModelId(model, &base, &remoteModel) && remotes_->urls().contains(base))
        return selectRemoteModel(model, base, remoteModel);
    if (model.isEmpty() || !QFileInfo::exists(model)) model = models_->defaultModel();
    if (!model.isEmpty()) selectModel(model);
    else setError(tr("No model found. Use the model picker to add a folder or open a GGUF file."));
}

GenerationSettings ChatController::generationSettings() const {
    GenerationOverrides overrides;
    if (current_ >= 0) {
        try {
            overrides = ConversationSettingsModel::overridesFrom(store_->settings(current_));
        } catch (const std::exception&) {}
    }
    GenerationSettings s = settings_->generationSettings(overrides);
    if (thinkingAvailable_) s.thinking = thinking();
    return s;
}

bool ChatController::thinking() const {
    if (current_ < 0) return pendingThinking_;
    try {
        const auto s = store_->settings(current_);
        const auto it = s.find("thinking");
        return it == s.end() || !it->is_boolean() || it->get<bool>();  // a hand-edited value: the default
    } catch (const std::exception&) {
        return true;
    }
}

void ChatController::setThinking(bool on) {
    if (current_ < 0) {
        pendingThinking_ = on;
    } else {
        reportFailure([&] {
            auto s = store_->settings(current_);
            s["thinking"] = on;
            store_->setSettings(current_, s);
        });
    }
    emit currentConversationChanged();
}

std::optional<store::Conversation> ChatController::storedConversation(qint64 id) const {
    try {
        return store_->conversation(id);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

bool ChatController::reportFailure(const std::function<void()>& action) {
    try {
        action();
        return true;
    } catch (const std::exception& e) {
        setError(QString::fromUtf8(e.what()));
        return false;
    }
}

void ChatController::startGeneration(std::function<void(EngineWorker&, qint64, const GenerationSettings&)> work) {
    clearError();
    setGenerating(true);
    const GenerationSettings s = generationSettings();
    const qint64 conv = current_;
    cancel_->store(false);
    QMetaObject::invokeMethod(
        worker_, [w = worker_, conv, s, work = std::move(work)] { work(*w, conv, s); }, Qt::QueuedConnection);
}

void ChatController::setError(const QString& text) {
    if (errorText_ == text) return;
    errorText_ = text;
    emit errorTextChanged();
}

void ChatController::clearError() { setError({}); }

void ChatController::setNotice(const QString& text) {
    if (noticeText_ == text) return;
    noticeText_ = text;
    emit noticeTextChanged();
}

void ChatController::setProgress(double value, const QString& text) {
    progress_ = value;
    progressText_ = text;
    emit progressChanged();
}

void ChatController::setGenerating(bool on) {
    if (generating_ == on) return;
    generating_ = on;
    emit generatingChanged();
}

QString ChatController::currentTitle() const {
    if (current_ < 0) return tr("New chat");
    const auto stored = storedConversation(current_);
    return stored ? QString::fromStdString(stored->title) : QString();
}

QString ChatController::conversationSystemPrompt() const {
    if (current_ < 0) return pendingSystemPrompt_;
    const auto stored = storedConversation(current_);
    return stored ? QString::fromStdString(stored->systemPrompt) : QString();
}

void ChatController::setConversationSystemPrompt(const QString& prompt) {
    if (current_ < 0) {
        pendingSystemPrompt_ = prompt;
        emit currentConversationChanged();
        return;
    }
    reportFailure([&] { store_->setSystemPrompt(current_, prompt.toStdString()); });
    emit currentConversationChanged();
}

void ChatController::newChat() {
    current_ = -1;
    settings_->setLastConversation(-1);
    pendingSystemPrompt_.clear();
    pendingThinking_ = true;
    messages_->load(-1);
    conversationSettings_->load(-1);
    resumeNote_.clear();
    speedText_.clear();
    contextUsed_ = 0;
    emit statusChanged();
    emit currentConversationChanged();
}

void ChatController::openConversation(qint64 id) {
    // A stale id (a deleted conversation, `--conversation` with a wrong number)
    // leaves the open conversation as it is.
    const auto stored = storedConversation(id);
    if (!stored || stored->deletedMs) {
        setError(tr("There is no conversation %1 (it may have been deleted).").arg(id));
        return;
    }
    current_ = id;
    settings_->setLastConversation(id);
    messages_->load(id);
    conversationSettings_->load(id);
    // The figures and notes of another conversation do not describe this one.
    resumeNote_.clear();
    speedText_.clear();
    if (noticeText_.startsWith(tr("Exported to"))) setNotice({});
    emit statusChanged();
    emit currentConversationChanged();
    if (!modelReady_) return;
    auto s = generationSettings();
    cancel_->store(false);
    QMetaObject::invokeMethod(
        worker_, [w = worker_, id, s] { w->openConversation(id, s); }, Qt::QueuedConnection);
}

void ChatController::openSearchResult(qint64 conversationId, qint64 messageId) {
    if (generating_ && conversationId == current_) return;  // the branch must not change under a reply
    const bool onShownBranch = reportFailure([&] {
        bool shown = false;
        if (auto leaf = store_->activeLeaf(conversationId))
            for (const auto& m : store_->pathTo(*leaf)) shown = shown || m.id == messageId;
        if (!shown) store_->setActiveLeaf(conversationId, store_->newestLeafUnder(messageId));
    });
    if (!onShownBranch) return;
    openConversation(conversationId);
    if (messages_->rowOf(messageId) >= 0) emit messageFocusRequested(messageId);
}

void ChatController::send(const QString& text) {
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty() || generating_) return;
    clearError();
    setNotice({});
    if (current_ < 0) {
        const bool created = reportFailure([&] {
            current_ = store_->createConversation(titleFrom(trimmed).toStdString(), modelPath_.toStdString(),
                                                  modelFingerprint_.toStdString(), pendingSystemPrompt_.toStdString());
        });
        if (!created) return;
        pendingSystemPrompt_.clear();
        settings_->setLastConversation(current_);
        conversationSettings_->attach(current_);  // overrides chosen before the first message
        if (!pendingThinking_) setThinking(false);
        pendingThinking_ = true;
        conversations_->reload();
        messages_->load(current_);
        emit currentConversationChanged();
    }
    startGeneration([trimmed](EngineWorker& w, qint64 conv, const GenerationSettings& s) { w.send(conv, trimmed, s); });
}

void ChatController::stop() { cancel_->store(true); }

void ChatController::regenerate(qint64 messageId) {
    if (generating_ || current_ < 0) return;
    startGeneration(
        [messageId](EngineWorker& w, qint64 conv, const GenerationSettings& s) { w.regenerate(conv, messageId, s); });
}

void ChatController::continueReply(qint64 messageId) {
    if (generating_ || current_ < 0) return;
    startGeneration([messageId](EngineWorker& w, qint64 conv, const GenerationSettings& s) {
        w.continueReply(conv, messageId, s);
    });
}

void ChatController::editMessage(qint64 messageId, const QString& text) {
    if (generating_ || current_ < 0 || text.trimmed().isEmpty()) return;
    startGeneration([messageId, t = text.trimmed()](EngineWorker& w, qint64 conv, const GenerationSettings& s) {
        w.editMessage(conv, messageId, t, s);
    });
}

void ChatController::switchBranch(qint64 messageId, int delta) {
    if (generating_ || current_ < 0) return;
    try {
        auto sib = store_->siblings(messageId);
        qint64 target = qint64(sib.index) + delta;
        if (target < 0 || target >= qint64(sib.ids.size())) return;
        // Every message of the branch shown remembers it, so coming back to any
        // of them returns to the choices made below it (not the newest siblings).
        if (auto leaf = store_->activeLeaf(current_))
            for (const auto& m : store_->pathTo(*leaf)) branchLeaf_[m.id] = *leaf;
        const int64_t to = sib.ids[size_t(target)];
        int64_t leaf = store_->newestLeafUnder(to);
        if (auto it = branchLeaf_.find(to); it != branchLeaf_.end()) {
            try {
                for (const auto& m : store_->pathTo(it->second))
                    if (m.id == to && m.conversationId == current_) leaf = it->second;
            } catch (const std::exception&) {
                branchLeaf_.erase(it);  // deleted meanwhile
            }
        }
        store_->setActiveLeaf(current_, leaf);
        messages_->load(current_);
    } catch (const std::exception& e) {
        setError(QString::fromUtf8(e.what()));
        return;
    }
    if (!modelReady_) return;
    // The worker counts the branch now shown (the context counter).
    auto s = generationSettings();
    const qint64 conv = current_;
    QMetaObject::invokeMethod(
        worker_, [w = worker_, conv, s] { w->openConversation(conv, s); }, Qt::QueuedConnection);
}

void ChatController::refreshModels() {
    QStringList folders = settings_->modelFolders();
    folders.prepend(paths_.modelsDir());
    models_->scan(folders, settings_->extraModelFiles(), bundledModelDirs());
    remotes_->refresh();
}

void ChatController::selectModel(const QString& path) {
    if (generating_) return;
    const auto* info = models_->find(path);
    if (info && !info->error.isEmpty()) {
        if (info->remote) setError(tr("%1 cannot be used: %2").arg(info->name, info->error));
        else
            setError(
                tr("%1 cannot be used: %2. Pick another model, or get a fresh copy of the file (it may be damaged, "
                   "incomplete or of an architecture Cairn does not run).")
                    .arg(info->fileName, info->error));
        return;
    }
    if (info && info->remote) return selectRemoteModel(path, info->endpoint, info->remoteModel);
    auto s = generationSettings();
    cancel_->store(false);
    setLoadingMarker(path);
    QMetaObject::invokeMethod(
        worker_, [w = worker_, path, s] { w->loadModel(path, s); }, Qt::QueuedConnection);
}

void ChatController::selectRemoteModel(const QString& id, const QString& baseUrl, const QString& model) {
    cancel_->store(false);
    setLoadingMarker({});  // the crash marker is for model files
    QPointer<ChatController> self(this);
    remotes_->keyFor(baseUrl, [self, id, baseUrl, model](const QString& key) {
        if (!self || !self->worker_) return;
        QMetaObject::invokeMethod(
            self->worker_, [w = self->worker_, id, baseUrl, key, model] { w->selectRemote(id, baseUrl, key, model); },
            Qt::QueuedConnection);
    });
}

QString ChatController::addRemoteEndpoint(const QString& url, const QString& apiKey) {
    return remotes_->add(url, apiKey);
}

void ChatController::removeRemoteEndpoint(const QString& url) { remotes_->remove(url); }

void ChatController::addModelFolder(const QUrl& folder) {
    QString path = localPath(folder);
    QStringList folders = settings_->modelFolders();
    if (!path.isEmpty() && !folders.contains(path)) folders << path;
    settings_->setModelFolders(folders);
    refreshModels();
}

void ChatController::openModelFile(const QUrl& file) {
    QString path = localPath(file);
    QStringList files = settings_->extraModelFiles();
    if (!path.isEmpty() && !files.contains(path)) files << path;
    settings_->setExtraModelFiles(files);
    refreshModels();
    selectModel(QFileInfo(path).absoluteFilePath());
}

void ChatController::copyText(const QString& text) {
    if (auto* cb = QGuiApplication::clipboard()) cb->setText(text);
}

bool ChatController::openLink(const QString& url) {
    if (!isOpenableLink(url)) {
        setError(tr("Cairn opens only http, https and mailto links, not %1").arg(url.left(200)));
        return false;
    }
    const QUrl target(url, QUrl::StrictMode);
    return linkOpener_ ? linkOpener_(target) : QDesktopServices::openUrl(target);
}

}  // namespace cairn::app
