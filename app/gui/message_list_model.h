// The messages of the open conversation's active branch (root first), each
// with its place among its siblings for `< 1/2 >` branch switching.
#pragma once

#include <QAbstractListModel>
#include <QColor>
#include <QtQml/qqmlregistration.h>

#include <vector>

namespace cairn::store {
class Store;
}

namespace cairn::app {

class MessageListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by the ChatController")
    Q_PROPERTY(int count READ count NOTIFY countChanged)
    // The colour of links in rendered replies (the view binds the theme's).
    Q_PROPERTY(QColor linkColor READ linkColor WRITE setLinkColor NOTIFY linkColorChanged)
public:
    enum Roles {
        IdRole = Qt::UserRole + 1,
        RoleRole,
        ContentRole,
        SegmentsRole,
        CompleteRole,
        SiblingIndexRole,
        SiblingCountRole,
        StatsRole,
        StreamingRole,
        // A reasoning model's reasoning (plain text, markers left out), whether it
        // still streams, and the block's heading ("Thinking…", "Thought for 12 s").
        ReasoningRole,
        ThinkingRole,
        ReasoningLabelRole
    };

    explicit MessageListModel(QObject* parent = nullptr);
    void setStore(store::Store* store) { store_ = store; }
    // Shows the branch ending at the conversation's active leaf (-1: nothing).
    // Another conversation resets the model; the same one changes only the
    // rows that differ (inserted, removed or updated), so a view keeps its place.
    void load(qint64 conversationId);
    qint64 conversationId() const { return conversationId_; }
    // Streaming: the text of one message so far (only that row changes).
    void setStreamingText(qint64 messageId, const QString& text, const QString& reasoning = {}, bool thinking = false,
                          qint64 reasoningMs = 0);
    void setStreaming(qint64 messageId, bool streaming);

    QColor linkColor() const { return linkColor_; }
    void setLinkColor(const QColor& color);

    int count() const { return int(rows_.size()); }
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;
    Q_INVOKABLE int rowOf(qint64 messageId) const;
    Q_INVOKABLE QString contentAt(int row) const;
    Q_INVOKABLE qint64 lastMessageId() const { return rows_.empty() ? -1 : rows_.back().id; }

signals:
    void countChanged();
    void linkColorChanged();

private:
    struct Row {
        qint64 id = 0;
        QString role;
        QString content;
        bool complete = true;
        int siblingIndex = 0;
        int siblingCount = 1;
        QString stats;
        bool streaming = false;
        QString reasoning;
        bool thinking = false;
        qint64 reasoningMs = 0;
        mutable QVariantList segments;  // markdownSegments(content), made when first asked for
        mutable bool segmentsReady = false;
    };
    // Brings rows_ to `rows` of the same conversation without a reset.
    void update(std::vector<Row> rows);
    static QString reasoningLabel(const Row& r);

    store::Store* store_ = nullptr;
    qint64 conversationId_ = -1;
    std::vector<Row> rows_;
    QColor linkColor_{0x25, 0x63, 0xeb};
};

}  // namespace cairn::app
