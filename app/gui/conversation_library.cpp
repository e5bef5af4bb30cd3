#include "conversation_library.h"

#include "conversation_import.h"
#include "conversation_list_model.h"

#include "cairn/store/exchange.h"
#include "cairn/store/store.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QStandardPaths>

#include <stdexcept>

namespace cairn::app {

QString localPath(const QUrl& url) { return url.isLocalFile() ? url.toLocalFile() : url.toString(); }

ConversationLibrary::ConversationLibrary(store::Store& store, ConversationListModel* list, QString databasePath,
                                         QObject* parent)
    : QObject(parent), store_(store), list_(list), databasePath_(std::move(databasePath)) {}

ConversationLibrary::~ConversationLibrary() { shutdown(); }

void ConversationLibrary::shutdown() {
    if (!importThread_) return;
    cancelImport_.store(true);  // ends at its next batch, leaving nothing half-imported
    importThread_->wait();
    delete importThread_;
    importThread_ = nullptr;
}

bool ConversationLibrary::reportFailure(const std::function<void()>& action) {
    try {
        action();
        return true;
    } catch (const std::exception& e) {
        emit errorOccurred(QString::fromUtf8(e.what()));
        return false;
    }
}

void ConversationLibrary::renameConversation(qint64 id, const QString& title) {
    if (title.trimmed().isEmpty()) return;
    reportFailure([&] { store_.renameConversation(id, title.trimmed().toStdString()); });
    list_->reload();
    emit renamed(id);
}

void ConversationLibrary::setPinned(qint64 id, bool pinned) {
    reportFailure([&] { store_.setPinned(id, pinned); });
    list_->reload();
}

void ConversationLibrary::deleteConversation(qint64 id) {
    if (mayDelete_ && !mayDelete_(id)) return;
    reportFailure([&] {
        if (undoId_ >= 0) store_.purgeConversation(undoId_);  // only the last delete can be undone
        undoTitle_ = QString::fromStdString(store_.conversation(id).title);
        store_.deleteConversation(id);
        undoId_ = id;
        emit undoChanged();
        list_->reload();
        emit deleted(id);
    });
}

void ConversationLibrary::undoDelete() {
    if (undoId_ < 0) return;
    reportFailure([&] { store_.restoreConversation(undoId_); });
    undoId_ = -1;
    undoTitle_.clear();
    emit undoChanged();
    list_->reload();
}

void ConversationLibrary::dismissUndo() {
    if (undoTitle_.isEmpty()) return;
    undoTitle_.clear();
    emit undoChanged();
}

void ConversationLibrary::search(const QString& text) {
    searchResults_.clear();
    if (!text.trimmed().isEmpty()) {
        reportFailure([&] {
            // Hits are marked with a random token no message can contain, so
            // nothing in the text can pass for highlighting once it is escaped.
            const QString token = QString::number(QRandomGenerator::global()->generate64(), 36);
            const QString open = QStringLiteral("\x01o") + token + QLatin1Char('\x02');
            const QString close = QStringLiteral("\x01c") + token + QLatin1Char('\x02');
            for (const auto& hit : store_.search(text.toStdString(), 30, open.toStdString(), close.toStdString())) {
                QVariantMap m;
                m[QStringLiteral("conversationId")] = qint64(hit.conversationId);
                m[QStringLiteral("messageId")] = qint64(hit.messageId);
                m[QStringLiteral("title")] = QString::fromStdString(store_.conversation(hit.conversationId).title);
                m[QStringLiteral("snippet")] = QString::fromStdString(hit.snippet)
                                                   .toHtmlEscaped()
                                                   .replace(open, QStringLiteral("<b><u>"))
                                                   .replace(close, QStringLiteral("</u></b>"));
                searchResults_.push_back(m);
            }
        });
    }
    emit searchResultsChanged();
}

bool ConversationLibrary::exportConversation(qint64 id, const QUrl& file, const QString& format) {
    return exportToPath(id, localPath(file), format);
}

bool ConversationLibrary::hasReasoning(qint64 id) const {
    if (id < 0) return false;
    try {
        for (const auto& m : store_.messages(id))
            if (!m.reasoning.empty()) return true;
    } catch (const std::exception&) {}
    return false;
}

bool ConversationLibrary::exportToPath(qint64 id, const QString& path, const QString& format, bool includeReasoning) {
    if (id < 0) return false;
    try {
        if (path.trimmed().isEmpty()) throw std::runtime_error("no file name given");
        auto data = store_.conversationData(id);
        const store::ExportOptions options{.includeReasoning = includeReasoning};
        std::string text =
            format == QLatin1String("json") ? store::toJson(data, options).dump(2) : store::toMarkdown(data, options);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
            throw std::runtime_error(f.errorString().toStdString());
        if (f.write(text.data(), qint64(text.size())) != qint64(text.size()) || !f.flush())
            throw std::runtime_error(f.errorString().toStdString());
        emit noticeOccurred(tr("Exported to %1").arg(QDir::toNativeSeparators(QFileInfo(path).absoluteFilePath())));
        return true;
    } catch (const std::exception& e) {
        emit errorOccurred(tr("Export failed: %1").arg(QString::fromUtf8(e.what())));
        return false;
    }
}

QString ConversationLibrary::proposedExportPath(qint64 id, const QString& format) const {
    QString title;
    try {
        if (id >= 0) title = QString::fromStdString(store_.conversation(id).title);
    } catch (const std::exception&) {}
    QString name;
    for (const QChar c : title.left(80))
        name += (c.isPrint() && !QStringLiteral("/\\:*?\"<>|").contains(c)) ? c : QLatin1Char('-');
    name = name.trimmed();
    while (name.startsWith(QLatin1Char('.'))) name.remove(0, 1);  // not a hidden file
    if (name.isEmpty()) name = QStringLiteral("conversation");
    QString folder = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    if (folder.isEmpty() || !QFileInfo(folder).isDir()) folder = QDir::homePath();
    return QDir(folder).filePath(name + QLatin1Char('.') +
                                 (format == QLatin1String("json") ? format : QStringLiteral("md")));
}

bool ConversationLibrary::fileExists(const QString& path) const { return QFileInfo::exists(path); }

QString ConversationLibrary::pathInFolder(const QUrl& folder, const QString& path) const {
    return QDir(localPath(folder)).filePath(QFileInfo(path).fileName());
}

bool ConversationLibrary::importConversation(const QUrl& file) {
    if (importThread_) {
        emit errorOccurred(tr("An import is still running."));
        return false;
    }
    const QString path = localPath(file);
    const QString database = databasePath_;
    cancelImport_.store(false);
    importThread_ = QThread::create([this, path, database] {
        ImportOutcome outcome = importConversationFile(database, path, cancelImport_);
        QMetaObject::invokeMethod(
            this, [this, outcome] { finishImport(outcome); }, Qt::QueuedConnection);
    });
    importThread_->setObjectName(QStringLiteral("cairn-import"));
    importThread_->start();
    emit importingChanged();
    return true;
}

void ConversationLibrary::finishImport(const ImportOutcome& outcome) {
    if (!importThread_) return;  // arrived after shutdown
    importThread_->wait();
    delete importThread_;
    importThread_ = nullptr;
    emit importingChanged();
    if (outcome.conversationId < 0) {
        emit errorOccurred(tr("Import failed: %1").arg(outcome.error));
        emit importFinished(-1, {});
        return;
    }
    list_->reload();
    emit importFinished(outcome.conversationId, outcome.title);
    if (outcome.title != outcome.fileTitle)
        emit noticeOccurred(
            tr("Imported as “%1”: a conversation named “%2” already exists.").arg(outcome.title, outcome.fileTitle));
}

}  // namespace cairn::app
