#include "message_list_model.h"

#include "markdown_segments.h"

#include "cairn/reasoning.h"
#include "cairn/store/store.h"

#include <algorithm>

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
                    if (m.role == store::Role::Assistant && m.complete && m.stats.tokenCount > 1 &&
                        m.stats.decodeMs > 0)
                        stats = tr("%1 tokens · %2 tok/s")
                                    .arg(m.stats.tokenCount)
                                    .arg((m.stats.tokenCount - 1) * 1000.0 / m.stats.decodeMs, 0, 'f', 1);
                    else if (m.role == store::Role::Assistant && m.complete && m.stats.tokenCount > 0)
                        stats = tr("%1 tokens").arg(m.stats.tokenCount);
                    // A reply whose stream broke off (or that a crash cut short) keeps its text, marked.
                    else if (m.role == store::Role::Assistant && !m.complete && !m.content.empty())
                        stats = tr("interrupted: the reply is incomplete");
                    Row row;
                    row.id = m.id;
                    row.role = QString::fromStdString(std::string(store::roleName(m.role)));
                    row.content = QString::fromStdString(m.content);
                    row.complete = m.complete;
                    row.siblingIndex = int(sib.index);
                    row.siblingCount = int(sib.ids.size());
                    row.stats = stats;
                    // The stored segment keeps its markers; they say which they are.
                    row.reasoning = QString::fromUtf8(reasoningText(m.reasoning, reasoningMarkersOf(m.reasoning)));
                    row.reasoningMs = m.stats.reasoningMs;
                    // Content after reasoning starts with the template's blank line.
                    if (!row.reasoning.isEmpty()) row.content = row.content.trimmed();
                    rows.push_back(std::move(row));
                }
            }
        } catch (const std::exception&) {
            rows.clear();
        }
    // Keep the streaming flag of a row that is still being written.
    for (auto& r : rows)
        for (const auto& old : rows_)
            if (old.id == r.id && old.streaming) {
                r.streaming = true;
                if (r.content.isEmpty()) r.content = old.content;
                if (r.reasoning.isEmpty()) r.reasoning = old.reasoning;
                r.thinking = old.thinking;
                r.reasoningMs = old.reasoningMs;
            }
    // Rows whose text did not change keep their rendering.
    for (auto& r : rows)
        for (const auto& old : rows_)
            if (old.id == r.id && old.content == r.content && old.segmentsReady) {
                r.segments = old.segments;
                r.segmentsReady = true;
            }
    const int oldCount = count();
    if (conversationId != conversationId_) {
        beginResetModel();
        conversationId_ = conversationId;
        rows_ = std::move(rows);
        endResetModel();
    } else {
        update(std::move(rows));
    }
    if (oldCount != count()) emit countChanged();
}

void MessageListModel::update(std::vector<Row> rows) {
    // The rows both branches share stay (a view keeps its place: a reset
    // would send it to the top); those that differ are removed and inserted.
    size_t common = 0;
    while (common < rows.size() && common < rows_.size() && rows[common].id == rows_[common].id) ++common;
    for (size_t i = 0; i < common; ++i) {
        Row& old = rows_[i];
        Row& row = rows[i];
        if (old.content == row.content && old.complete == row.complete && old.siblingIndex == row.siblingIndex &&
            old.siblingCount == row.siblingCount && old.stats == row.stats && old.streaming == row.streaming &&
            old.reasoning == row.reasoning && old.thinking == row.thinking && old.reasoningMs == row.reasoningMs)
            continue;
        old = std::move(row);
        emit dataChanged(index(int(i)), index(int(i)));
    }
    if (rows_.size() > common) {
        beginRemoveRows({}, int(common), int(rows_.size()) - 1);
        rows_.erase(rows_.begin() + std::ptrdiff_t(common), rows_.end());
        endRemoveRows();
    }
    if (rows.size() > common) {
        beginInsertRows({}, int(common), int(rows.size()) - 1);
        for (size_t i = common; i < rows.size(); ++i) rows_.push_back(std::move(rows[i]));
        endInsertRows();
    }
}

void MessageListModel::setStreamingText(qint64 messageId, const QString& text, const QString& reasoning, bool thinking,
                                        qint64 reasoningMs) {
    int row = rowOf(messageId);
    if (row < 0) return;
    Row& r = rows_[size_t(row)];
    const QString shown = reasoning.isEmpty() ? text : text.trimmed();
    QList<int> roles;
    if (r.content != shown) {
        r.content = shown;
        r.segmentsReady = false;
        roles << ContentRole << SegmentsRole;
    }
    if (r.reasoning != reasoning || r.thinking != thinking || r.reasoningMs / 1000 != reasoningMs / 1000) {
        r.reasoning = reasoning;
        r.thinking = thinking;
        r.reasoningMs = reasoningMs;
        roles << ReasoningRole << ThinkingRole << ReasoningLabelRole;
    }
    if (!roles.isEmpty()) emit dataChanged(index(row), index(row), roles);
}

QString MessageListModel::reasoningLabel(const Row& r) {
    if (r.reasoning.isEmpty() && !r.thinking) return {};
    if (r.thinking) return tr("Thinking…");
    const qint64 seconds = std::max<qint64>(1, (std::min<qint64>(r.reasoningMs, qint64(1) << 40) + 500) / 1000);
    if (r.reasoningMs <= 0) return tr("Reasoning");  // an imported or older reply: no time known
    return seconds < 60 ? tr("Thought for %1 s").arg(seconds)
                        : tr("Thought for %1 min %2 s").arg(seconds / 60).arg(seconds % 60);
}

void MessageListModel::setStreaming(qint64 messageId, bool streaming) {
    int row = rowOf(messageId);
    if (row < 0) return;
    rows_[size_t(row)].streaming = streaming;
    emit dataChanged(index(row), index(row), {StreamingRole});
}

void MessageListModel::setLinkColor(const QColor& color) {
    if (color == linkColor_) return;
    linkColor_ = color;
    for (auto& r : rows_) r.segmentsReady = false;
    if (!rows_.empty()) emit dataChanged(index(0), index(count() - 1), {SegmentsRole});
    emit linkColorChanged();
}

int MessageListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Row& r = rows_[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
    case ContentRole: return r.content;
    case IdRole: return r.id;
    case RoleRole: return r.role;
    case SegmentsRole:
        if (!r.segmentsReady) {
            r.segments = markdownSegments(r.content, linkColor_);
            r.segmentsReady = true;
        }
        return r.segments;
    case CompleteRole: return r.complete;
    case SiblingIndexRole: return r.siblingIndex;
    case SiblingCountRole: return r.siblingCount;
    case StatsRole: return r.stats;
    case StreamingRole: return r.streaming;
    case ReasoningRole: return r.reasoning;
    case ThinkingRole: return r.thinking;
    case ReasoningLabelRole: return reasoningLabel(r);
    }
    return {};
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
    return {{IdRole, "messageId"},
            {RoleRole, "role"},
            {ContentRole, "content"},
            {SegmentsRole, "segments"},
            {CompleteRole, "complete"},
            {SiblingIndexRole, "siblingIndex"},
            {SiblingCountRole, "siblingCount"},
            {StatsRole, "stats"},
            {StreamingRole, "streaming"},
            {ReasoningRole, "reasoning"},
            {ThinkingRole, "thinking"},
            {ReasoningLabelRole, "reasoningLabel"}};
}

int MessageListModel::rowOf(qint64 messageId) const {
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].id == messageId) return int(i);
    return -1;
}

QString MessageListModel::contentAt(int row) const {
    return row >= 0 && row < count() ? rows_[size_t(row)].content : QString();
}

}  // namespace cairn::app
