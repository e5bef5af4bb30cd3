#include "remote_endpoints.h"

#include "app_settings.h"
#include "secret_store.h"

#include "remote_protocol.h"

#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPointer>
#include <QUrl>

namespace cairn::app {
namespace {

constexpr int kListTimeoutMs = 15000;
constexpr qint64 kMaxListBytes = qint64(4) << 20;

ModelFileInfo endpointFailure(const QString& url, const QString& why) {
    ModelFileInfo r;
    r.remote = true;
    r.endpoint = url;
    r.path = url;
    r.name = url;
    r.fileName = QObject::tr("remote endpoint");
    r.error = why;
    return r;
}

}  // namespace

RemoteEndpoints::RemoteEndpoints(AppSettings* settings, KeyVault* keys, QObject* parent)
    : QObject(parent), settings_(settings), keys_(keys) {}

QStringList RemoteEndpoints::urls() const { return settings_->remoteEndpoints(); }

QString RemoteEndpoints::add(const QString& url, const QString& apiKey) {
    QString base;
    try {
        base = QString::fromStdString(backend::normalizeBaseUrl(url.trimmed().toStdString()));
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    QStringList list = urls();
    if (!list.contains(base)) list << base;
    settings_->setRemoteEndpoints(list);  // the URL only: the key goes to the keyring
    QPointer<RemoteEndpoints> self(this);
    keys_->store(account(base), apiKey, [self] {
        if (self) self->refresh();
    });
    return {};
}

void RemoteEndpoints::remove(const QString& url) {
    QStringList list = urls();
    list.removeAll(url);
    settings_->setRemoteEndpoints(list);
    keys_->store(account(url), {});
    refresh();
}

void RemoteEndpoints::keyFor(const QString& url, std::function<void(const QString&)> done) {
    keys_->fetch(account(url), std::move(done));
}

void RemoteEndpoints::refresh() {
    const int generation = ++generation_;
    const QStringList list = urls();
    // Rows of endpoints no longer configured go at once; the others stay until their answer.
    std::vector<ModelFileInfo> kept;
    for (auto& r : rows_)
        if (list.contains(r.endpoint)) kept.push_back(r);
    rows_ = std::move(kept);
    emit rowsChanged();
    QPointer<RemoteEndpoints> self(this);
    for (const QString& url : list)
        keyFor(url, [self, url, generation](const QString& key) {
            if (self) self->list(url, key, generation);
        });
}

void RemoteEndpoints::list(const QString& url, const QString& key, int generation) {
    QNetworkRequest request(QUrl(url + QStringLiteral("/models")));
    request.setTransferTimeout(kListTimeoutMs);
    if (!key.isEmpty()) request.setRawHeader("Authorization", "Bearer " + key.toUtf8());
    QNetworkReply* reply = network_.get(request);
    connect(reply, &QNetworkReply::downloadProgress, reply, [reply](qint64 received, qint64) {
        if (received > kMaxListBytes) reply->abort();
    });
    connect(reply, &QNetworkReply::finished, this, [this, reply, url, generation] {
        reply->deleteLater();
        if (generation != generation_) return;
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const QByteArray body = reply->readAll();
        const std::string where = "remote endpoint";
        std::vector<ModelFileInfo> rows;
        try {
            if (status >= 400) {
                const int retry = backend::parseRetryAfter(reply->rawHeader("Retry-After").toStdString());
                throw backend::httpError(status, body.toStdString(), retry, where);
            }
            if (reply->error() != QNetworkReply::NoError || status == 0)
                throw Error(where,
                            "cannot reach " + QUrl(url).authority().toStdString() + ": " +
                                backend::oneLine(reply->errorString().toStdString()));
            for (const std::string& id : backend::parseModelList(body.toStdString())) {
                ModelFileInfo r;
                r.remote = true;
                r.endpoint = url;
                r.remoteModel = QString::fromStdString(backend::oneLine(id, 200));
                r.path = remoteModelId(url, QString::fromStdString(id));
                r.name = r.remoteModel;
                r.fileName = url;
                rows.push_back(std::move(r));
            }
            if (rows.empty()) throw Error(where, "the server lists no models");
        } catch (const std::exception& e) {
            rows = {endpointFailure(url, QString::fromUtf8(e.what()))};
        }
        setRows(url, std::move(rows));
    });
}

void RemoteEndpoints::setRows(const QString& url, std::vector<ModelFileInfo> rows) {
    std::vector<ModelFileInfo> all;
    for (auto& r : rows_)
        if (r.endpoint != url) all.push_back(std::move(r));
    for (auto& r : rows) all.push_back(std::move(r));
    rows_ = std::move(all);
    emit rowsChanged();
}

}  // namespace cairn::app
