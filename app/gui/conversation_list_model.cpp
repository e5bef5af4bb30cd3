#include "conversation_list_model.h"

#include "cairn/store/store.h"

namespace cairn::app {

ConversationListModel::ConversationListModel(QObject* parent) : QAbstractListModel(parent) {}

QString ConversationListModel::sectionFor(const QDateTime& when, const QDateTime& now) {
    qint64 days = when.date().daysTo(now.date());
    if (days <= 0) return tr("Today");
    if (days == 1) return tr("Yesterday");
    if (days < 7) return tr("Previous 7 days");
    return tr("Older");
}

void ConversationListModel::reload() {
    std::vector<Row> rows;
    if (store_) try {
            for (const auto& c : store_->listConversations())
                rows.push_back(
                    {c.id, QString::fromStdString(c.title), QDateTime::fromMSecsSinceEpoch(c.updatedMs), c.pinned});
        } catch (const std::exception&) {
            rows.clear();  // an unreadable database shows an empty list rather than ending the app
        }
    beginResetModel();
    rows_ = std::move(rows);
    endResetModel();
}

int ConversationListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Row& r = rows_[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
    case TitleRole: return r.title;
    case IdRole: return r.id;
    case UpdatedRole: return r.updated;
    case SectionRole: return r.pinned ? tr("Pinned") : sectionFor(r.updated, QDateTime::currentDateTime());
    case PinnedRole: return r.pinned;
    }
    return {};
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
    return {{IdRole, "conversationId"},
            {TitleRole, "title"},
            {UpdatedRole, "updated"},
            {SectionRole, "section"},
            {PinnedRole, "pinned"}};
}

int ConversationListModel::rowOf(qint64 conversationId) const {
    for (size_t i = 0; i < rows_.size(); ++i)
        if (rows_[i].id == conversationId) return int(i);
    return -1;
}

}  // namespace cairn::app
