#include "hub_client.h"

#include "hub_errors.h"
#include "hub_transfer.h"

#include "cairn/error.h"

namespace cairn::hub {

HubClient::HubClient(QString baseUrl, QObject* parent) : QObject(parent) { setBaseUrl(baseUrl); }

void HubClient::setBaseUrl(const QString& url) { base_ = normalizeHubUrl(url); }

TransferOptions HubClient::transferOptions() const {
    TransferOptions o;
    o.token = token_;
    o.tokenHost = QUrl(base_).host();
    return o;
}

void HubClient::get(const QUrl& url, qint64 maxBytes, qint64 rangeEnd, const QString& what,
                    std::function<void(QByteArray, QString)> done) {
    TransferOptions options = transferOptions();
    if (rangeEnd >= 0) {
        options.rangeStart = 0;
        options.rangeEnd = rangeEnd;
    }
    auto* t = new HubTransfer(&nam_, url, options, this);
    auto body = std::make_shared<QByteArray>();
    auto tooLarge = std::make_shared<bool>(false);
    connect(t, &HubTransfer::bytesReady, t, [t, body, maxBytes, tooLarge] {
        *body += t->reply()->read(maxBytes + 1 - body->size());
        if (body->size() > maxBytes) {
            *tooLarge = true;
            t->abort();
        }
    });
    connect(t, &HubTransfer::finished, t, [t, body, what, done, tooLarge, maxBytes] {
        t->deleteLater();
        QNetworkReply* r = t->reply();
        const int status = t->status();
        if (*tooLarge) {
            // A ranged peek that got the whole file keeps its first bytes.
            if (status == 200 && maxBytes < kMaxApiReplyBytes) return done(body->left(maxBytes), {});
            return done({}, QStringLiteral("%1: the hub's reply is larger than %2 bytes").arg(what).arg(maxBytes));
        }
        if (status < 200 || status >= 300 || !r || (r->error() != QNetworkReply::NoError && status == 0))
            return done({}, failureLine(what, status, r));
        *body += r->read(maxBytes + 1 - body->size());
        if (body->size() > maxBytes && !(status == 200 && maxBytes < kMaxApiReplyBytes))
            return done({}, QStringLiteral("%1: the hub's reply is larger than %2 bytes").arg(what).arg(maxBytes));
        done(body->left(maxBytes), {});
    });
    t->start();
}

void HubClient::search(const QString& query, SearchSort sort, int limit,
                       std::function<void(std::vector<HubRepo>, QString)> done) {
    get(searchUrl(base_, query, sort, limit), kMaxApiReplyBytes, -1, QStringLiteral("search '%1'").arg(query.left(80)),
        [done](QByteArray body, QString error) {
            if (!error.isEmpty()) return done({}, error);
            try {
                done(parseSearchReply(body), {});
            } catch (const std::exception& e) {
                done({}, QString::fromUtf8(e.what()));
            }
        });
}

void HubClient::listFiles(const QString& repo, std::function<void(std::vector<HubFile>, QString)> done) {
    if (!isValidRepoId(repo))
        return done({}, QStringLiteral("'%1' is not a repository name (owner/name)").arg(repo.left(120)));
    get(treeUrl(base_, repo), kMaxApiReplyBytes, -1, repo, [done, repo](QByteArray body, QString error) {
        if (!error.isEmpty()) return done({}, error);
        try {
            done(parseTreeReply(body), {});
        } catch (const std::exception& e) {
            done({}, repo + QStringLiteral(": ") + QString::fromUtf8(e.what()));
        }
    });
}

void HubClient::peekHeader(const QString& repo, const HubFile& file, std::function<void(GgufPeek, QString)> done) {
    const QString what = repo + QLatin1Char('/') + file.path;
    get(fileUrl(base_, repo, file.path), kPeekBytes, kPeekBytes - 1, what,
        [done, what](QByteArray body, QString error) {
            if (!error.isEmpty()) return done({}, error);
            try {
                done(peekGguf(body, what), {});
            } catch (const std::exception& e) {
                done({}, QString::fromUtf8(e.what()));
            }
        });
}

}  // namespace cairn::hub
