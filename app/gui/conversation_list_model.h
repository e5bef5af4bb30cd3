// The sidebar's conversations (not deleted), newest first, with a date
// section ("Today", "Yesterday", "Previous 7 days", "Older") for grouping.
#pragma once

#include <QAbstractListModel>
#include <QDateTime>
#include <QtQml/qqmlregistration.h>

#include <vector>

namespace cairn::store {
class Store;
struct Conversation;
}  // namespace cairn::store

namespace cairn::app {

class ConversationListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by the ChatController")
public:
    enum Roles { IdRole = Qt::UserRole + 1, TitleRole, UpdatedRole, SectionRole, PinnedRole };

    explicit ConversationListModel(QObject* parent = nullptr);
    void setStore(store::Store* store) { store_ = store; }
    // Reads the list again (after any change).
    void reload();
    // The section a time falls in, relative to `now`.
    static QString sectionFor(const QDateTime& when, const QDateTime& now);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;
    Q_INVOKABLE int rowOf(qint64 conversationId) const;

private:
    struct Row {
        qint64 id;
        QString title;
        QDateTime updated;
        bool pinned;
    };
    store::Store* store_ = nullptr;
    std::vector<Row> rows_;
};

}  // namespace cairn::app
