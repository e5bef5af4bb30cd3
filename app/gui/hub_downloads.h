// The download view's model (ui/DownloadView.qml): hub search, a
// repository's GGUF files grouped by quantization with their size, whether
// they fit this machine (weights + K/V at the configured context against the
// memory available) and whether Cairn runs their architecture (read from the
// GGUF header with a ranged request), and the download queue with progress,
// pause / resume / cancel. Unfinished downloads are kept in the settings and
// come back paused after a restart (their .part files are resumed with Range).
// The access token for gated repositories lives in the keyring (KeyVault).
#pragma once

#include "app_settings.h"
#include "download_job_list_model.h"
#include "secret_store.h"

#include "downloader.h"
#include "hub_client.h"

#include <QObject>
#include <QPointer>
#include <QVariantList>
#include <QtQml/qqmlparserstatus.h>
#include <QtQml/qqmlregistration.h>

#include <functional>
#include <memory>

namespace cairn::app {

class HubDownloads : public QObject, public QQmlParserStatus {
    Q_OBJECT
    Q_INTERFACES(QQmlParserStatus)
    QML_ELEMENT
    Q_PROPERTY(cairn::app::AppSettings* settings READ settings WRITE setSettings NOTIFY configChanged)
    Q_PROPERTY(cairn::app::KeyVault* keys READ keys WRITE setKeys NOTIFY configChanged)
    Q_PROPERTY(QString modelsDir READ modelsDir WRITE setModelsDir NOTIFY configChanged)
    // Bytes of memory available for a model (MemAvailable at start; tests set it).
    Q_PROPERTY(qint64 availableMemory READ availableMemory WRITE setAvailableMemory NOTIFY filesChanged)
    Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)
    Q_PROPERTY(QVariantList repos READ repos NOTIFY reposChanged)
    Q_PROPERTY(QVariantList recommended READ recommended CONSTANT)
    Q_PROPERTY(QString currentRepo READ currentRepo NOTIFY filesChanged)
    Q_PROPERTY(QString architectureNote READ architectureNote NOTIFY filesChanged)
    Q_PROPERTY(QVariantList fileGroups READ fileGroups NOTIFY filesChanged)
    Q_PROPERTY(cairn::app::DownloadJobListModel* jobs READ jobs CONSTANT)
    Q_PROPERTY(bool hasToken READ hasToken NOTIFY tokenChanged)

public:
    explicit HubDownloads(QObject* parent = nullptr);
    ~HubDownloads() override;

    AppSettings* settings() const { return settings_; }
    void setSettings(AppSettings* s);
    KeyVault* keys() const { return keys_; }
    void setKeys(KeyVault* k);
    QString modelsDir() const { return modelsDir_; }
    void setModelsDir(const QString& dir);
    qint64 availableMemory() const { return availableMemory_; }
    void setAvailableMemory(qint64 bytes);
    bool busy() const { return busy_ > 0; }
    QString error() const { return error_; }
    QVariantList repos() const { return repos_; }
    QVariantList recommended() const;
    QString currentRepo() const { return currentRepo_; }
    QString architectureNote() const { return architectureNote_; }
    QVariantList fileGroups() const { return fileGroups_; }
    DownloadJobListModel* jobs() { return &jobs_; }
    bool hasToken() const { return hasToken_; }

    void classBegin() override {}
    void componentComplete() override { start(); }
    // Connects to the hub of the settings and restores unfinished downloads (paused).
    Q_INVOKABLE void start();

    // sort: 0 downloads, 1 likes, 2 recently updated.
    Q_INVOKABLE void search(const QString& query, int sort);
    Q_INVOKABLE void openRepo(const QString& repo);
    // Queues the file of the current repository (its whole split set); false with `error` set when refused.
    Q_INVOKABLE bool download(const QString& path);
    Q_INVOKABLE void pause(int id);
    Q_INVOKABLE void resume(int id);
    Q_INVOKABLE void cancel(int id);
    Q_INVOKABLE void forget(int id);
    // A new hub address (empty: Hugging Face); "" or the reason it was refused.
    Q_INVOKABLE QString setHubUrl(const QString& url);
    // Stored in the keyring; empty removes it.
    Q_INVOKABLE void setToken(const QString& token);

    hub::Downloader* downloader() { return downloader_.get(); }

signals:
    void configChanged();
    void busyChanged();
    void errorChanged();
    void reposChanged();
    void filesChanged();
    void tokenChanged();
    // A download is in the models folder (its first file's path).
    void modelDownloaded(const QString& path);

private:
    void setError(const QString& e);
    void setBusy(int delta);
    void rebuildFiles();
    void rebuildJobs();
    void saveJobs();
    void restoreJobs();
    void withToken(std::function<void()> action);

    QPointer<AppSettings> settings_;
    QPointer<KeyVault> keys_;
    QString modelsDir_;
    qint64 availableMemory_ = 0;
    std::unique_ptr<hub::HubClient> client_;
    std::unique_ptr<hub::Downloader> downloader_;
    bool started_ = false;
    int busy_ = 0;
    int generation_ = 0;  // answers for an earlier search or repository are dropped
    QString error_;
    QVariantList repos_;
    QString currentRepo_;
    std::vector<hub::HubFile> files_;
    QString architecture_;  // of the current repository, from the header peek ("" unknown)
    QString architectureNote_;
    std::optional<hub::GgufPeek> peek_;
    QVariantList fileGroups_;
    DownloadJobListModel jobs_;
    bool hasToken_ = false;
    bool tokenRead_ = false;
};

}  // namespace cairn::app
