// What the hub subcommands (download, search-hub) share: the --hub option, the
// Qt event loop the client's network replies need, the client with HF_TOKEN as
// its access token, and a wait for a callback.
#pragma once

#include "command.h"

#include "hub_client.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QString>

namespace cairn::cli {

// --hub URL (default: Hugging Face); consumes the option.
QString hubUrlOption(Args& args);

class HubCommand {
public:
    explicit HubCommand(const QString& hubUrl);
    hub::HubClient& client() { return client_; }

    // The loop that wait() runs; a context object for connections made meanwhile.
    QEventLoop& loop() { return loop_; }
    // Runs the loop until done() is called; returns at once if it already was
    // (a callback may run before the loop does).
    void wait();
    void done();

private:
    int argc_ = 1;
    char name_[10] = "cairn-cli";
    char* argv_[2] = {name_, nullptr};
    QCoreApplication app_;
    hub::HubClient client_;
    QEventLoop loop_;
    bool done_ = false;
};

// A file size as both commands print it ("1.5 GB").
QString sizeText(qint64 bytes);

}  // namespace cairn::cli
