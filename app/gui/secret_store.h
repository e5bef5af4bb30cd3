// Where API keys live: the desktop keyring through QtKeychain (libsecret /
// KWallet on Linux), never the settings file. KeyVault adds the fallback: when
// no keyring answers, a key is kept in memory for this session only and
// `warning` says so. Tests inject a SecretBackend of their own (offscreen
// runs have no secret service).
#pragma once

#include <QHash>
#include <QObject>
#include <QString>
#include <QtQml/qqmlregistration.h>

#include <functional>
#include <memory>

namespace cairn::app {

// One asynchronous keyring: `done` runs on the caller's thread (ok false with
// a reason when the keyring is unavailable; a missing entry reads as "").
class SecretBackend {
public:
    using Done = std::function<void(bool ok, const QString& secret, const QString& error)>;
    virtual ~SecretBackend() = default;
    virtual void write(const QString& account, const QString& secret, Done done) = 0;
    virtual void read(const QString& account, Done done) = 0;
    virtual void remove(const QString& account, Done done) = 0;
};

// QtKeychain under the service name "cairn".
std::unique_ptr<SecretBackend> makeKeychainBackend();

// A keyring in memory (tests): `available` false behaves like a machine without one.
class MemorySecretBackend : public SecretBackend {
public:
    explicit MemorySecretBackend(bool available = true) : available_(available) {}
    void write(const QString& account, const QString& secret, Done done) override;
    void read(const QString& account, Done done) override;
    void remove(const QString& account, Done done) override;
    const QHash<QString, QString>& entries() const { return entries_; }

private:
    bool available_;
    QHash<QString, QString> entries_;
};

class KeyVault : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by the ChatController")
    // Set once a key could not go to the keyring (it is then kept for this session only).
    Q_PROPERTY(QString warning READ warning NOTIFY warningChanged)
public:
    explicit KeyVault(std::unique_ptr<SecretBackend> backend, QObject* parent = nullptr);
    void setBackend(std::unique_ptr<SecretBackend> backend);

    // An empty secret removes the key.
    void store(const QString& account, const QString& secret, std::function<void()> done = {});
    // The key ("" when there is none); the session's own copy first.
    void fetch(const QString& account, std::function<void(const QString& secret)> done);
    QString warning() const { return warning_; }

signals:
    void warningChanged();

private:
    void setWarning(const QString& reason);
    std::unique_ptr<SecretBackend> backend_;
    QHash<QString, QString> sessionOnly_;  // keys the keyring refused: memory only, never on disk
    QString warning_;
};

}  // namespace cairn::app
