// One GET on the hub that follows redirects itself (at most 5), so the access
// token goes only to the hub's own host and never to the storage host a file
// redirects to. The final answer's headers, bytes and end come as signals;
// an idle timeout ends a transfer that stops moving.
#pragma once

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <QUrl>

namespace cairn::hub {

struct TransferOptions {
    QString token;  // "Bearer" token, sent to `tokenHost` only
    QString tokenHost;
    qint64 rangeStart = -1;  // >= 0: "Range: bytes=N-"
    qint64 rangeEnd = -1;  // with rangeStart: "bytes=N-M"
    int idleTimeoutMs = 30000;  // no bytes for this long ends it as a network failure
};

class HubTransfer : public QObject {
    Q_OBJECT
public:
    HubTransfer(QNetworkAccessManager* nam, const QUrl& url, TransferOptions options, QObject* parent = nullptr);
    ~HubTransfer() override;
    void start();
    void abort();  // ends with finished(); reply()->error() is OperationCanceledError
    // The final (non-redirect) reply once headersReady came; stays valid until this object dies.
    QNetworkReply* reply() const { return reply_; }
    int status() const { return status_; }
    bool timedOut() const { return timedOut_; }

signals:
    void headersReady();
    void bytesReady();  // read them from reply()
    void finished();

private:
    void issue(const QUrl& url);
    QNetworkAccessManager* nam_;
    TransferOptions options_;
    QUrl url_;
    QPointer<QNetworkReply> reply_;
    QTimer idle_;
    int hops_ = 0;
    int status_ = 0;
    bool redirecting_ = false;
    bool timedOut_ = false;
    bool done_ = false;
};

}  // namespace cairn::hub
