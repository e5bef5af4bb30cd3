#include "api_server_control.h"

#include "app_settings.h"
#include "engine_worker.h"
#include "secret_store.h"

#include "api_server.h"

#include <QPointer>

namespace cairn::app {

ApiServerControl::ApiServerControl(AppSettings* settings, KeyVault* keys, EngineWorker* worker, QObject* parent)
    : QObject(parent), settings_(settings), keys_(keys), worker_(worker) {
    status_ = tr("Off");
    connect(worker_, &EngineWorker::apiServerState, this, [this](const QString& state, const QString& detail) {
        if (state == QLatin1String("running")) show(tr("Serving the loaded model at %1").arg(detail), false, detail);
        else if (state == QLatin1String("waiting")) show(tr("Waiting: %1").arg(detail), false);
        else if (state == QLatin1String("failed")) show(tr("Not serving: %1").arg(detail), true);
        else if (!refused_) show(tr("Off"), false);  // a refusal stays shown while the server is off
    });
}

void ApiServerControl::show(const QString& status, bool failed, const QString& url) {
    status_ = status;
    failed_ = failed;
    url_ = url;
    emit statusChanged();
}

void ApiServerControl::apply() {
    const int generation = ++generation_;
    if (!settings_->apiServerEnabled()) return configure({});  // off: the keyring is not asked
    QPointer<ApiServerControl> self(this);
    keys_->fetch(QString::fromLatin1(kAccount), [self, generation](const QString& key) {
        if (self && generation == self->generation_) self->configure(key);
    });
}

void ApiServerControl::setKey(const QString& key) {
    QPointer<ApiServerControl> self(this);
    keys_->store(QString::fromLatin1(kAccount), key, [self] {
        if (self) self->apply();
    });
}

void ApiServerControl::configure(const QString& key) {
    if (settings_->apiServerEnabled() && hasKey_ != !key.isEmpty()) {
        hasKey_ = !key.isEmpty();
        emit keyChanged();
    }
    const bool enabled = settings_->apiServerEnabled();
    const QString host = settings_->apiServerHost().trimmed();
    const int port = settings_->apiServerPort();
    bool serve = enabled;
    refused_ = false;
    if (enabled) {
        // Said here, in the settings' words, before the worker would refuse it.
        if (host.isEmpty() || port < 0 || port > 65535) {
            serve = false;
            refused_ = true;
            show(tr("Not serving: give a host and a port between 1 and 65535."), true);
        } else if (!server::isLoopbackHost(host.toStdString()) && key.isEmpty()) {
            serve = false;
            refused_ = true;
            show(tr("Not serving: %1 is reachable from other machines, so it needs an API key "
                    "(or use 127.0.0.1 for this machine only).")
                     .arg(host),
                 true);
        } else {
            show(tr("Starting…"), false);
        }
    }
    std::optional<LocalServerConfig> config;
    if (serve) {
        config.emplace();
        config->host = host.toStdString();
        config->port = port;
        config->apiKey = key.toStdString();
        config->threads = AppSettings::engineThreads(settings_->threads());
    }
    QMetaObject::invokeMethod(
        worker_, [w = worker_, config] { w->configureApiServer(config); }, Qt::QueuedConnection);
    if (!enabled) show(tr("Off"), false);
}

}  // namespace cairn::app
