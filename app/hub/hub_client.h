// The hub's API, asynchronous on the caller's thread: search repositories
// with GGUF files, list a repository's GGUF files, and read a file's GGUF
// header with a ranged request before downloading it. Each callback runs
// once, with the result or a one-line error.
#pragma once

#include "gguf_peek.h"
#include "hub_listing.h"
#include "hub_transfer.h"

#include <QNetworkAccessManager>
#include <QObject>

#include <functional>

namespace cairn::hub {

// Mirrors speak the same API; the app's setting and `--hub` replace this.
inline const QString kDefaultHubUrl = QStringLiteral("https://huggingface.co");

class HubClient : public QObject {
    Q_OBJECT
public:
    explicit HubClient(QString baseUrl, QObject* parent = nullptr);
    // Throws cairn::Error for a URL that is not http(s)://host.
    void setBaseUrl(const QString& url);
    const QString& baseUrl() const { return base_; }
    void setToken(const QString& token) { token_ = token; }
    const QString& token() const { return token_; }
    QNetworkAccessManager* network() { return &nam_; }
    // The token and the host it may go to, for transfers of this hub.
    TransferOptions transferOptions() const;

    void search(const QString& query, SearchSort sort, int limit,
                std::function<void(std::vector<HubRepo>, QString error)> done);
    void listFiles(const QString& repo, std::function<void(std::vector<HubFile>, QString error)> done);
    void peekHeader(const QString& repo, const HubFile& file, std::function<void(GgufPeek, QString error)> done);

private:
    // GET with at most `maxBytes` of body (more ends it as an error).
    void get(const QUrl& url, qint64 maxBytes, qint64 rangeEnd, const QString& what,
             std::function<void(QByteArray body, QString error)> done);
    QNetworkAccessManager nam_;
    QString base_;
    QString token_;
};

}  // namespace cairn::hub
