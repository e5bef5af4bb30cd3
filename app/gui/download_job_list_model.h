// The download queue as the view shows it: one row per job, updated in place.
// A progress update changes a row's data (dataChanged) rather than replacing
// the list, so the delegates live on: with a plain list re-sent ten times a
// second, every row's delegate was rebuilt between a mouse press and its
// release, and a click on Pause could be lost.
#pragma once

#include <QAbstractListModel>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

#include <vector>

namespace cairn::app {

struct DownloadJobRow {
    int id = 0;
    QString name, repo, state, status, bytesText, error, path;
    double progress = 0;
    bool canPause = false, canResume = false, canCancel = false, canForget = false;
    bool operator==(const DownloadJobRow&) const = default;
};

class DownloadJobListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by HubDownloads")
    Q_PROPERTY(int count READ count NOTIFY countChanged)
public:
    enum Roles {
        IdRole = Qt::UserRole + 1,
        NameRole,
        RepoRole,
        StateRole,
        StatusRole,
        BytesTextRole,
        ErrorRole,
        PathRole,
        ProgressRole,
        CanPauseRole,
        CanResumeRole,
        CanCancelRole,
        CanForgetRole
    };

    explicit DownloadJobListModel(QObject* parent = nullptr);
    // The queue's rows in order; rows keep their place (jobs are appended and removed, never reordered).
    void sync(std::vector<DownloadJobRow> rows);
    const std::vector<DownloadJobRow>& rows() const { return rows_; }
    // One row by its roles' names (tests, and QML outside a delegate); empty past the end.
    Q_INVOKABLE QVariantMap get(int row) const;

    int count() const { return int(rows_.size()); }
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

signals:
    void countChanged();

private:
    std::vector<DownloadJobRow> rows_;
};

}  // namespace cairn::app
