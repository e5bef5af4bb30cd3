#include "hub_command.h"

#include <QLocale>

namespace cairn::cli {

QString hubUrlOption(Args& args) {
    return QString::fromStdString(args.option("--hub").value_or(hub::kDefaultHubUrl.toStdString()));
}

HubCommand::HubCommand(const QString& hubUrl) : app_(argc_, argv_), client_(hubUrl) {
    client_.setToken(qEnvironmentVariable("HF_TOKEN"));
}

void HubCommand::wait() {
    if (!done_) loop_.exec();
    done_ = false;
}

void HubCommand::done() {
    done_ = true;
    loop_.quit();
}

QString sizeText(qint64 bytes) { return QLocale::c().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat); }

}  // namespace cairn::cli
