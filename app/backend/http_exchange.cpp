#include "http_exchange.h"

#include "remote_protocol.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSslError>
#include <QThread>
#include <QTimer>
#include <QUrl>

namespace cairn::backend {

HttpExchange::HttpExchange(HttpRequest request) : request_(std::move(request)) {
    const QUrl url(QString::fromStdString(request_.url));
    host_ = url.host().toStdString();
    if (url.port() > 0) host_ += ':' + std::to_string(url.port());
    thread_.reset(QThread::create([this] { run(); }));
    thread_->start();
}

HttpExchange::~HttpExchange() {
    abort_ = true;
    thread_->wait();
}

void HttpExchange::run() {
    QEventLoop loop;  // first: it gives this thread its event dispatcher
    QNetworkAccessManager nam;
    QNetworkRequest req{QUrl(QString::fromStdString(request_.url))};
    if (!request_.apiKey.empty()) req.setRawHeader("Authorization", QByteArray("Bearer ") + request_.apiKey.c_str());
    req.setRawHeader("Accept", request_.eventStream ? "text/event-stream" : "application/json");
    QNetworkReply* reply = nullptr;
    if (request_.body.empty()) {
        reply = nam.get(req);
    } else {
        req.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
        reply = nam.post(req, QByteArray::fromStdString(request_.body));
    }

    TransferEnd why = TransferEnd::Running;  // set when we end it ourselves
    std::string tlsText;
    size_t received = 0;
    bool headers = false;
    QElapsedTimer quiet;  // since the last sign of life
    quiet.start();

    auto takeHeaders = [&] {
        if (headers) return;
        const QVariant s = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
        if (!s.isValid()) return;
        headers = true;
        std::lock_guard lock(mutex_);
        status_ = s.toInt();
        retryAfter_ = parseRetryAfter(reply->rawHeader("Retry-After").toStdString());
    };
    auto takeBody = [&] {
        takeHeaders();
        const QByteArray b = reply->readAll();
        if (b.isEmpty()) return;
        quiet.restart();
        received += size_t(b.size());
        if (received > request_.maxBytes) {
            why = TransferEnd::TooLarge;
            reply->abort();
            return;
        }
        std::lock_guard lock(mutex_);
        pending_.append(b.constData(), size_t(b.size()));
        changed_.notify_all();
    };
    QObject::connect(reply, &QNetworkReply::metaDataChanged, reply, [&] {
        quiet.restart();
        takeHeaders();
        changed_.notify_all();
    });
    QObject::connect(reply, &QNetworkReply::readyRead, reply, takeBody);
    QObject::connect(reply, &QNetworkReply::sslErrors, reply, [&](const QList<QSslError>& errors) {
        if (!errors.isEmpty()) tlsText = errors.first().errorString().toStdString();
    });
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer tick;
    tick.setInterval(10);
    QObject::connect(&tick, &QTimer::timeout, reply, [&] {
        if (reply->isFinished()) return;
        if (abort_ || (request_.cancel && request_.cancel->load())) {
            why = TransferEnd::Cancelled;
            reply->abort();
        } else if (quiet.elapsed() > (headers ? request_.idleTimeoutMs : request_.connectTimeoutMs)) {
            why = TransferEnd::TimedOut;
            reply->abort();
        }
    });
    tick.start();
    if (!reply->isFinished()) loop.exec();
    tick.stop();
    if (why == TransferEnd::Running) takeBody();  // what came with the end

    std::lock_guard lock(mutex_);
    const auto error = reply->error();
    if (why != TransferEnd::Running) {
        end_ = why;
    } else if (error == QNetworkReply::NoError || status_ >= 400) {
        end_ = TransferEnd::Complete;  // an HTTP error status is an answer: the caller reads it
    } else if (error == QNetworkReply::SslHandshakeFailedError || !tlsText.empty()) {
        end_ = TransferEnd::Tls;
        error_ = tlsText.empty() ? reply->errorString().toStdString() : tlsText;
    } else {
        end_ = TransferEnd::Failed;
        error_ = reply->errorString().toStdString();
    }
    delete reply;
    changed_.notify_all();
}

bool HttpExchange::next(std::string& bytes) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !pending_.empty() || end_ != TransferEnd::Running; });
    if (pending_.empty()) return false;
    bytes.append(pending_);
    pending_.clear();
    return true;
}

int HttpExchange::status() const {
    std::lock_guard lock(mutex_);
    return status_;
}

int HttpExchange::retryAfterSeconds() const {
    std::lock_guard lock(mutex_);
    return retryAfter_;
}

TransferEnd HttpExchange::end() const {
    std::lock_guard lock(mutex_);
    return end_;
}

std::string HttpExchange::errorText() const {
    std::lock_guard lock(mutex_);
    return error_;
}

}  // namespace cairn::backend
