// The remote OpenAI-compatible endpoints the user added ("Add remote
// endpoint…" in the model picker): base URLs in the settings, API keys in the
// KeyVault (the keyring), and the models each one lists at GET {base}/models,
// fetched asynchronously on the UI thread's event loop (nothing blocks).
#pragma once

#include "model_catalog.h"

#include <QNetworkAccessManager>
#include <QObject>
#include <QStringList>

#include <functional>
#include <vector>

namespace cairn::app {

class AppSettings;
class KeyVault;

class RemoteEndpoints : public QObject {
    Q_OBJECT
public:
    RemoteEndpoints(AppSettings* settings, KeyVault* keys, QObject* parent = nullptr);

    QStringList urls() const;
    // Adds (or updates the key of) an endpoint and lists its models; returns
    // why it cannot be added ("" when it is: an http(s):// URL).
    QString add(const QString& url, const QString& apiKey);
    void remove(const QString& url);
    // Asks every endpoint for its models again; `rowsChanged` reports.
    void refresh();
    const std::vector<ModelFileInfo>& rows() const { return rows_; }
    // The endpoint's API key from the keyring ("" without one).
    void keyFor(const QString& url, std::function<void(const QString&)> done);
    static QString account(const QString& url) { return QStringLiteral("endpoint ") + url; }

signals:
    void rowsChanged();

private:
    void list(const QString& url, const QString& key, int generation);
    void setRows(const QString& url, std::vector<ModelFileInfo> rows);

    AppSettings* settings_;
    KeyVault* keys_;
    QNetworkAccessManager network_;
    std::vector<ModelFileInfo> rows_;
    int generation_ = 0;  // answers of an older refresh are dropped
};

}  // namespace cairn::app
