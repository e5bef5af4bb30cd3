#include "hub_transfer.h"

#include <QNetworkRequest>

namespace cairn::hub {

HubTransfer::HubTransfer(QNetworkAccessManager* nam, const QUrl& url, TransferOptions options, QObject* parent)
    : QObject(parent), nam_(nam), options_(std::move(options)), url_(url) {
    idle_.setSingleShot(true);
    idle_.setInterval(options_.idleTimeoutMs);
    connect(&idle_, &QTimer::timeout, this, [this] {
        timedOut_ = true;
        if (reply_) reply_->abort();
    });
}

HubTransfer::~HubTransfer() {
    done_ = true;
    if (reply_) {
        reply_->disconnect(this);
        reply_->abort();
        reply_->deleteLater();
    }
}

void HubTransfer::start() { issue(url_); }

void HubTransfer::abort() {
    if (reply_) reply_->abort();
}

void HubTransfer::issue(const QUrl& url) {
    QNetworkRequest request(url);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    request.setHeader(QNetworkRequest::UserAgentHeader, QStringLiteral("cairn/" CAIRN_HUB_VERSION));
    // The token travels only to the hub's own host, and in clear only on loopback (tests, local mirrors).
    const bool loopback = url.host() == QLatin1String("127.0.0.1") || url.host() == QLatin1String("localhost");
    if (!options_.token.isEmpty() && url.host() == options_.tokenHost &&
        (url.scheme() == QLatin1String("https") || loopback))
        request.setRawHeader("Authorization", "Bearer " + options_.token.toUtf8());
    if (options_.rangeStart >= 0) {
        QByteArray range = "bytes=" + QByteArray::number(options_.rangeStart) + "-";
        if (options_.rangeEnd >= options_.rangeStart) range += QByteArray::number(options_.rangeEnd);
        request.setRawHeader("Range", range);
    }
    // Sizes and ranges count the stored bytes, never a recompressed body.
    request.setRawHeader("Accept-Encoding", "identity");
    redirecting_ = false;
    status_ = 0;
    reply_ = nam_->get(request);
    idle_.start();
    connect(reply_, &QNetworkReply::metaDataChanged, this, [this] {
        idle_.start();
        status_ = reply_->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const bool redirect = status_ == 301 || status_ == 302 || status_ == 303 || status_ == 307 || status_ == 308;
        if (redirect && reply_->hasRawHeader("Location")) {
            redirecting_ = true;
            return;
        }
        emit headersReady();
    });
    connect(reply_, &QNetworkReply::readyRead, this, [this] {
        idle_.start();
        if (redirecting_) {
            reply_->readAll();  // a redirect's own body is dropped
            return;
        }
        emit bytesReady();
    });
    connect(reply_, &QNetworkReply::finished, this, [this] {
        idle_.stop();
        if (done_) return;
        QNetworkReply* r = reply_;
        if (redirecting_ && r->error() == QNetworkReply::NoError) {
            const QUrl next = r->url().resolved(QUrl::fromEncoded(r->rawHeader("Location")));
            if (++hops_ > 5 || !next.isValid() ||
                (next.scheme() != QLatin1String("https") && next.scheme() != QLatin1String("http")) ||
                (r->url().scheme() == QLatin1String("https") && next.scheme() == QLatin1String("http"))) {
                emit finished();  // status() stays the 3xx: failureLine names it
                return;
            }
            r->disconnect(this);
            r->deleteLater();
            issue(next);
            return;
        }
        if (status_ == 0) status_ = r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        emit finished();
    });
}

}  // namespace cairn::hub
