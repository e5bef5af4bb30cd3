// GGUF files from the configured folders, the app's models folder and the
// bundled models, described from their headers. Unloadable files stay listed
// with the reason.
#pragma once

#include "model_catalog.h"

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

#include <vector>

namespace cairn::app {

class ModelListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by the ChatController")
    Q_PROPERTY(int count READ count NOTIFY countChanged)
public:
    enum Roles {
        PathRole = Qt::UserRole + 1,
        NameRole,
        FileNameRole,
        ArchitectureRole,
        ParametersRole,
        QuantizationRole,
        FileSizeRole,
        ContextLengthRole,
        RamEstimateRole,
        ErrorRole,
        BundledRole,
        PlaceholderRole,
        SummaryRole,
        DemoRole,
        RemoteRole,
        EndpointRole
    };

    explicit ModelListModel(QObject* parent = nullptr);
    // Scans `folders` (in order) plus single `files`; `bundledFolders` mark their files as bundled.
    void scan(const QStringList& folders, const QStringList& files, const QStringList& bundledFolders);
    // The remote endpoints' models (and one row per endpoint that could not be listed), after the files.
    void setRemoteRows(std::vector<ModelFileInfo> rows);
    const std::vector<ModelFileInfo>& entries() const { return rows_; }
    // The first usable bundled model, preferring a trained demo model over the placeholder.
    QString defaultModel() const;
    const ModelFileInfo* find(const QString& path) const;
    // Records why loading `path` failed (the header may be fine but the
    // model unsupported), so the picker shows the reason.
    void setLoadError(const QString& path, const QString& error);

    int count() const { return int(rows_.size()); }
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

signals:
    void countChanged();

private:
    void reset(std::vector<ModelFileInfo> files);
    std::vector<ModelFileInfo> rows_;
    std::vector<ModelFileInfo> remoteRows_;
};

}  // namespace cairn::app
