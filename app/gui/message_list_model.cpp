#include "message_list_model.h"

#include "markdown_segments.h"

#include "cairn/store/store.h"

namespace cairn::app {

MessageListModel::MessageListModel(QObject* parent) : QAbstractListModel(parent) {}

void MessageListModel::load(qint64 conversationId) {
    std::vector<Row> rows;
    // An unknown id (a stale --conversation, a purged chat) shows nothing.
    if (store_ && conversationId >= 0) try {
        if (auto leaf = store_->activeLeaf(conversationId)) {
            for (const auto& m : store_->pathTo(*leaf)) {
                auto sib = store_->siblings(m.id);
                QString stats;
                // Decode speed as in the status line: the tokens after the first over decodeMs.
                if (m.role == store::Role::Assistant && m.complete && m.stats.tokenCount > 1 && m.stats.decodeMs > 0)
                    stats = tr("%1 tokens · %2 tok/s").arg(m.stats.tokenCount)
                                .arg((m.stats.tokenCount - 1) * 1000.0 / m.stats.decodeMs, 0, 'f', 1);
                else if (m.role == store::Role::Assistant && m.complete && m.stats.tokenCount > 0)
                    stats = tr("%1 tokens").arg(m.stats.tokenCount);
                rows.push_back({m.id, QString::fromStdString(std::string(store::roleName(m.role))),
                                QString::fromStdString(m.content), m.complete, int(sib.index), int(sib.ids.size()), stats});
            }
        }
    } catch (const std::exception&) {
        rows.clear();
    }
    // Keep the streaming flag of a row that is still being written.
    for (auto& r : rows)
        for (const auto& old : rows_)
            if (old.id == r.id && old.streaming) { r.streaming = true; if (r.content.isEmpty()) r.content = old.content; }
    const int oldCount = count();
    beginResetModel();
    conversationId_ = conversationId;
    rows_ = std::move(rows);
    endResetModel();
    if (oldCount != count()) emit countChanged();
}

void MessageListModel::setStreamingText(qint64 messageId, const QString& text) {
    int row = rowOf(messageId);
    if (row < 0) return;
    rows_[size_t(row)].content = text;
    emit dataChanged(index(row), index(row), {ContentRole, SegmentsRole});
}

void MessageListModel::setStreaming(qint64 messageId, bool streaming) {
    int row = rowOf(messageId);
    if (row < 0) return;
    rows_[size_t(row)].streaming = streaming;
    emit dataChanged(index(row), index(row), {StreamingRole});
}

int MessageListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Row& r = rows_[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
    case ContentRole: return r.content;
    case IdRole: return r.id;
    case RoleRole: return r.role;
    case SegmentsRole: return markdownSegments(r.content);
    case CompleteRole: return r.complete;
    case SiblingIndexRole: return r.siblingIndex;
    case SiblingCountRole: return r.siblingCount;
    case StatsRole: return r.stats;
    case StreamingRole: return r.streaming;
    }
    return {};
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
    return {{IdRole, "messageId"}, {RoleRole, "role"}, {ContentRole, "content"}, {SegmentsRole, "segments"},
            {CompleteRole, "complete"}, {SiblingIndexRole, "siblingIndex"}, {SiblingCountRole, "siblingCount"},
            {StatsRole, "stats"}, {StreamingRole, "streaming"}};
}

int MessageListModel::rowOf(qint64 messageId) const {
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].id == messageId) return int(i);
    return -1;
}

QString MessageListModel::contentAt(int row) const {
    return row >= 0 && row < count() ? rows_[size_t(row)].content : QString();
}

} // namespace cairn::app
