#include "model_list_model.h"

#include <QDir>

#include <QFileInfo>
#include <algorithm>

namespace cairn::app {

ModelListModel::ModelListModel(QObject* parent) : QAbstractListModel(parent) {}

void ModelListModel::scan(const QStringList& folders, const QStringList& files, const QStringList& bundledFolders) {
    std::vector<ModelFileInfo> rows;
    QStringList seen;
    auto add = [&](const QString& path, bool bundled) {
        QString abs = QFileInfo(path).absoluteFilePath();
        if (seen.contains(abs) || !QFileInfo::exists(abs)) return;
        seen << abs;
        auto info = describeModelFile(abs);
        info.bundled = bundled;
        rows.push_back(std::move(info));
    };
    for (const auto& f : findModelFiles(bundledFolders)) add(f, true);
    for (const auto& f : findModelFiles(folders)) add(f, false);
    for (const auto& f : files) add(f, false);
    // The random-weight placeholder is for a build without a trained demo
    // model; next to one it would only puzzle a user.
    const bool trainedBundled = std::any_of(rows.begin(), rows.end(), [](const ModelFileInfo& r) {
        return r.bundled && !r.placeholder && r.error.isEmpty();
    });
    if (trainedBundled) std::erase_if(rows, [](const ModelFileInfo& r) { return r.bundled && r.placeholder; });
    reset(std::move(rows));
}

void ModelListModel::setRemoteRows(std::vector<ModelFileInfo> rows) {
    std::vector<ModelFileInfo> files;
    for (auto& r : rows_)
        if (!r.remote) files.push_back(std::move(r));
    remoteRows_ = std::move(rows);
    reset(std::move(files));
}

void ModelListModel::reset(std::vector<ModelFileInfo> files) {
    for (const auto& r : remoteRows_) files.push_back(r);
    const int oldCount = count();
    beginResetModel();
    rows_ = std::move(files);
    endResetModel();
    if (oldCount != count()) emit countChanged();
}

namespace {

// Which bundled model a new user lands on: a trained model before the random
// placeholder, and the transformer demo before the Mamba one (it answers best:
// tools/demo-model/README.md).
int defaultRank(const ModelFileInfo& r) {
    if (r.placeholder) return 0;
    return r.architecture.startsWith(QLatin1String("mamba")) ? 1 : 2;
}

}  // namespace

QString ModelListModel::defaultModel() const {
    const ModelFileInfo* best = nullptr;
    for (const auto& r : rows_) {
        if (!r.bundled || !r.error.isEmpty()) continue;
        if (!best || defaultRank(r) > defaultRank(*best)) best = &r;
    }
    return best ? best->path : QString();
}

const ModelFileInfo* ModelListModel::find(const QString& path) const {
    for (const auto& r : rows_)
        if (r.path == path) return &r;
    return nullptr;
}

void ModelListModel::setLoadError(const QString& path, const QString& error) {
    for (size_t i = 0; i < rows_.size(); ++i) {
        if (rows_[i].path != path) continue;
        rows_[i].error = error;
        emit dataChanged(index(int(i)), index(int(i)));
    }
}

int ModelListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }

QVariant ModelListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const auto& r = rows_[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
    case NameRole: return r.name;
    case PathRole: return r.path;
    case FileNameRole: return r.fileName;
    case ArchitectureRole: return r.architecture;
    case ParametersRole: return humanCount(r.parameters);
    case QuantizationRole: return r.quantization;
    case FileSizeRole: return humanBytes(r.fileSize);
    case ContextLengthRole: return r.contextLength;
    case RamEstimateRole: return r.ramEstimate > 0 ? humanBytes(r.ramEstimate) : tr("unknown");
    case ErrorRole: return r.error;
    case BundledRole: return r.bundled;
    case PlaceholderRole: return r.placeholder;
    case DemoRole: return r.demo;
    case RemoteRole: return r.remote;
    case EndpointRole: return r.endpoint;
    case SummaryRole:
        if (!r.error.isEmpty()) return tr("Cannot be used: %1").arg(r.error);
        if (r.remote)
            return tr("OpenAI-compatible server · conversations are kept here, the model and its state there");
        return tr("%1 · %2 parameters · %3 · %4 · context %5 · %6")
            .arg(r.architecture, humanCount(r.parameters), r.quantization, humanBytes(r.fileSize))
            .arg(r.contextLength)
            .arg(r.ramEstimate > 0 ? tr("~%1 RAM").arg(humanBytes(r.ramEstimate)) : tr("RAM unknown"));
    }
    return {};
}

QHash<int, QByteArray> ModelListModel::roleNames() const {
    return {{PathRole, "path"},
            {NameRole, "name"},
            {FileNameRole, "fileName"},
            {ArchitectureRole, "architecture"},
            {ParametersRole, "parameters"},
            {QuantizationRole, "quantization"},
            {FileSizeRole, "fileSize"},
            {ContextLengthRole, "contextLength"},
            {RamEstimateRole, "ramEstimate"},
            {ErrorRole, "error"},
            {BundledRole, "bundled"},
            {PlaceholderRole, "placeholder"},
            {SummaryRole, "summary"},
            {DemoRole, "demo"},
            {RemoteRole, "remote"},
            {EndpointRole, "endpoint"}};
}

}  // namespace cairn::app
