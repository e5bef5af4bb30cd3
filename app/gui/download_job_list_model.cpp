#include "download_job_list_model.h"

#include <algorithm>

namespace cairn::app {

DownloadJobListModel::DownloadJobListModel(QObject* parent) : QAbstractListModel(parent) {}

void DownloadJobListModel::sync(std::vector<DownloadJobRow> rows) {
    const int before = count();
    auto present = [&](int id) {
        return std::any_of(rows.begin(), rows.end(), [id](const auto& r) { return r.id == id; });
    };
    for (int i = int(rows_.size()) - 1; i >= 0; --i)
        if (!present(rows_[size_t(i)].id)) {
            beginRemoveRows({}, i, i);
            rows_.erase(rows_.begin() + i);
            endRemoveRows();
        }
    // What is left is a prefix of `rows` by id: update it in place, then append the new jobs.
    bool prefix = rows_.size() <= rows.size();
    for (size_t i = 0; prefix && i < rows_.size(); ++i) prefix = rows_[i].id == rows[i].id;
    if (!prefix) {  // not how the queue changes; kept correct anyway
        beginResetModel();
        rows_ = std::move(rows);
        endResetModel();
        if (count() != before) emit countChanged();
        return;
    }
    for (size_t i = 0; i < rows_.size() && i < rows.size(); ++i)
        if (!(rows_[i] == rows[i])) {
            rows_[i] = rows[i];
            emit dataChanged(index(int(i)), index(int(i)));
        }
    if (rows.size() > rows_.size()) {
        beginInsertRows({}, int(rows_.size()), int(rows.size()) - 1);
        rows_.insert(rows_.end(), rows.begin() + long(rows_.size()), rows.end());
        endInsertRows();
    }
    if (count() != before) emit countChanged();
}

int DownloadJobListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : count(); }

QVariant DownloadJobListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= count()) return {};
    const DownloadJobRow& r = rows_[size_t(index.row())];
    switch (role) {
    case IdRole: return r.id;
    case NameRole: return r.name;
    case RepoRole: return r.repo;
    case StateRole: return r.state;
    case StatusRole: return r.status;
    case BytesTextRole: return r.bytesText;
    case ErrorRole: return r.error;
    case PathRole: return r.path;
    case ProgressRole: return r.progress;
    case CanPauseRole: return r.canPause;
    case CanResumeRole: return r.canResume;
    case CanCancelRole: return r.canCancel;
    case CanForgetRole: return r.canForget;
    }
    return {};
}

QHash<int, QByteArray> DownloadJobListModel::roleNames() const {
    return {{IdRole, "id"},
            {NameRole, "name"},
            {RepoRole, "repo"},
            {StateRole, "state"},
            {StatusRole, "status"},
            {BytesTextRole, "bytesText"},
            {ErrorRole, "error"},
            {PathRole, "path"},
            {ProgressRole, "progress"},
            {CanPauseRole, "canPause"},
            {CanResumeRole, "canResume"},
            {CanCancelRole, "canCancel"},
            {CanForgetRole, "canForget"}};
}

QVariantMap DownloadJobListModel::get(int row) const {
    QVariantMap out;
    if (row < 0 || row >= count()) return out;
    const auto names = roleNames();
    for (auto it = names.begin(); it != names.end(); ++it)
        out.insert(QString::fromLatin1(it.value()), data(index(row), it.key()));
    return out;
}

}  // namespace cairn::app
