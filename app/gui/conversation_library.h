// The conversations as a library, apart from the chat: rename, pin, delete
// with one undo, full-text search, export and import. Store-only work on the
// UI thread's store connection (an import runs on a thread and connection of
// its own). ChatController owns it (QML: controller.library) and follows its
// signals: the open conversation renamed or deleted, an import to open,
// errors and notices for the status line.
#pragma once

#include <QObject>
#include <QThread>
#include <QUrl>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include <atomic>
#include <functional>

namespace cairn::store {
class Store;
}

namespace cairn::app {

class ConversationListModel;
struct ImportOutcome;

class ConversationLibrary : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by the ChatController")
    // Search hits: conversationId, messageId, title, snippet (HTML, hits marked).
    Q_PROPERTY(QVariantList searchResults READ searchResults NOTIFY searchResultsChanged)
    // The title of the conversation Undo would bring back (empty: none).
    Q_PROPERTY(QString undoTitle READ undoTitle NOTIFY undoChanged)
    Q_PROPERTY(bool importing READ importing NOTIFY importingChanged)

public:
    // `databasePath`: where an import opens its own connection.
    ConversationLibrary(store::Store& store, ConversationListModel* list, QString databasePath,
                        QObject* parent = nullptr);
    ~ConversationLibrary() override;
    // Ends a running import at its next batch (nothing half-imported). Idempotent.
    void shutdown();
    // Conversations that may not be deleted now (the controller's: the one replying).
    void setDeleteGuard(std::function<bool(qint64)> mayDelete) { mayDelete_ = std::move(mayDelete); }

    QVariantList searchResults() const { return searchResults_; }
    QString undoTitle() const { return undoTitle_; }
    bool importing() const { return importThread_ != nullptr; }

    Q_INVOKABLE void renameConversation(qint64 id, const QString& title);
    Q_INVOKABLE void setPinned(qint64 id, bool pinned);
    // Deleted conversations stay undoable until the next delete (and in the
    // store for a day); only the last one can be undone.
    Q_INVOKABLE void deleteConversation(qint64 id);
    Q_INVOKABLE void undoDelete();
    // The undo offer goes (the deleted conversation stays purgeable as before).
    Q_INVOKABLE void dismissUndo();
    Q_INVOKABLE void search(const QString& text);
    Q_INVOKABLE bool exportConversation(qint64 id, const QUrl& file, const QString& format);
    // Writes conversation `id` to `path`; success is a notice naming the file.
    // A reasoning model's reasoning is left out unless `includeReasoning`.
    Q_INVOKABLE bool exportToPath(qint64 id, const QString& path, const QString& format, bool includeReasoning = false);
    // Conversation `id` has replies with reasoning (the export dialog offers to include it).
    Q_INVOKABLE bool hasReasoning(qint64 id) const;
    // Where an export goes unless the user says otherwise: the documents
    // folder, the title made a safe file name, the format's suffix.
    Q_INVOKABLE QString proposedExportPath(qint64 id, const QString& format) const;
    Q_INVOKABLE bool fileExists(const QString& path) const;
    // `path`'s file name in `folder` (the export dialog's folder button).
    Q_INVOKABLE QString pathInFolder(const QUrl& folder, const QString& path) const;
    // Starts importing an exported JSON file on its own thread (false when
    // one is already running); importFinished reports it.
    Q_INVOKABLE bool importConversation(const QUrl& file);

signals:
    void searchResultsChanged();
    void undoChanged();
    void importingChanged();
    void renamed(qint64 id);
    void deleted(qint64 id);
    // conversationId -1 on failure (errorOccurred said why).
    void importFinished(qint64 conversationId, const QString& title);
    void errorOccurred(const QString& message);
    void noticeOccurred(const QString& message);

private:
    // Runs `action`; an exception becomes errorOccurred. Returns whether it succeeded.
    bool reportFailure(const std::function<void()>& action);
    void finishImport(const ImportOutcome& outcome);

    store::Store& store_;
    ConversationListModel* list_;
    QString databasePath_;
    std::function<bool(qint64)> mayDelete_;
    qint64 undoId_ = -1;
    QString undoTitle_;
    QVariantList searchResults_;
    QThread* importThread_ = nullptr;
    std::atomic<bool> cancelImport_{false};
};

// A dialog's URL as a path (a local file's, else the URL as written).
QString localPath(const QUrl& url);

}  // namespace cairn::app
