// One HTTP request on a thread of its own (its own QNetworkAccessManager and
// event loop), handing the answer's status, headers and body bytes to the
// calling thread as they arrive. The caller reads with next(); destroying the
// exchange aborts the request and joins its thread.
#pragma once

#include <QByteArray>
#include <QString>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

class QThread;

namespace cairn::backend {

struct HttpRequest {
    std::string url;
    std::string apiKey;
    std::string body;  // empty: GET, else POST application/json
    bool eventStream = false;  // Accept: text/event-stream
    int connectTimeoutMs = 20000;
    int idleTimeoutMs = 120000;
    size_t maxBytes = size_t(64) << 20;
    const std::atomic<bool>* cancel = nullptr;
};

// How the transfer ended, once it has.
enum class TransferEnd { Running, Complete, Failed, TimedOut, Cancelled, TooLarge, Tls };

class HttpExchange {
public:
    explicit HttpExchange(HttpRequest request);
    ~HttpExchange();
    HttpExchange(const HttpExchange&) = delete;
    HttpExchange& operator=(const HttpExchange&) = delete;

    // Waits for more: appends new body bytes to `bytes` and returns true, or
    // returns false once the transfer has ended and everything was handed over.
    bool next(std::string& bytes);
    int status() const;  // 0 until the headers came (or without any)
    int retryAfterSeconds() const;  // -1: no usable Retry-After header
    TransferEnd end() const;
    std::string errorText() const;  // Qt's (or the TLS layer's) words for a failure
    const std::string& host() const { return host_; }

private:
    void run();  // on the thread

    HttpRequest request_;
    std::string host_;
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::string pending_;
    int status_ = 0;
    int retryAfter_ = -1;
    TransferEnd end_ = TransferEnd::Running;
    std::string error_;
    std::atomic<bool> abort_{false};
    std::unique_ptr<QThread> thread_;
};

}  // namespace cairn::backend
