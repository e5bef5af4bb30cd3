#include "hub_errors.h"

#include "remote_protocol.h"

#include <QNetworkReply>

namespace cairn::hub {

int httpStatus(QNetworkReply* reply) { return reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(); }

QString failureLine(const QString& what, int status, QNetworkReply* reply) {
    switch (status) {
    case 401:
        return QStringLiteral("%1: the hub wants an access token (401): the repository is gated or private; "
                              "add your token and accept its terms on the hub")
            .arg(what);
    case 403:
        return QStringLiteral(
                   "%1: access denied (403): accept the repository's terms on the hub, or check the access token")
            .arg(what);
    case 404: return QStringLiteral("%1: not found on the hub (404)").arg(what);
    case 429: return QStringLiteral("%1: the hub is rate-limiting requests (429); try again later").arg(what);
    default: break;
    }
    if (status >= 300 && status < 400)
        return QStringLiteral("%1: the hub redirected too often or to an unsafe address (HTTP %2)")
            .arg(what)
            .arg(status);
    if (status >= 400) return QStringLiteral("%1: the hub answered HTTP %2").arg(what).arg(status);
    const QString host = reply ? reply->url().host() : QString();
    const QString why = reply ? QString::fromStdString(backend::oneLine(reply->errorString().toStdString(), 200))
                              : QStringLiteral("no answer");
    if (reply && reply->error() == QNetworkReply::OperationCanceledError)
        return QStringLiteral("%1: no answer from %2 in time (network)").arg(what, host);
    return QStringLiteral("%1: network failure talking to %2: %3").arg(what, host, why);
}

}  // namespace cairn::hub
