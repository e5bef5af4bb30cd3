// The UI side of the "Local API server" setting: reads the setting and the
// key, refuses an open non-loopback host before anything starts, hands the
// configuration to the engine worker (which runs the server) and shows its
// state as one line: "off", the URL it serves on, or why it does not.
#pragma once

#include <QObject>
#include <QString>
#include <QtQml/qqmlregistration.h>

namespace cairn::app {

class AppSettings;
class EngineWorker;
class KeyVault;

class ApiServerControl : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by the ChatController")
    Q_PROPERTY(QString status READ status NOTIFY statusChanged)
    Q_PROPERTY(bool failed READ failed NOTIFY statusChanged)
    Q_PROPERTY(bool running READ running NOTIFY statusChanged)
    Q_PROPERTY(QString url READ url NOTIFY statusChanged)
    Q_PROPERTY(bool hasKey READ hasKey NOTIFY keyChanged)
public:
    static constexpr const char* kAccount = "local API server";

    ApiServerControl(AppSettings* settings, KeyVault* keys, EngineWorker* worker, QObject* parent = nullptr);

    // Applies the settings (enabled, host, port) and the stored key.
    Q_INVOKABLE void apply();
    // Stores the key (empty: none) and applies.
    Q_INVOKABLE void setKey(const QString& key);

    QString status() const { return status_; }
    bool failed() const { return failed_; }
    bool running() const { return !url_.isEmpty(); }
    QString url() const { return url_; }
    bool hasKey() const { return hasKey_; }

signals:
    void statusChanged();
    void keyChanged();

private:
    void configure(const QString& key);
    void show(const QString& status, bool failed, const QString& url = {});

    AppSettings* settings_;
    KeyVault* keys_;
    EngineWorker* worker_;
    QString status_, url_;
    bool failed_ = false, hasKey_ = false, refused_ = false;
    int generation_ = 0;  // an older apply's key read is dropped
};

}  // namespace cairn::app
