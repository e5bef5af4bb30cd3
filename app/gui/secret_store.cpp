#include "secret_store.h"

#include <qt6keychain/keychain.h>

#include <QPointer>

namespace cairn::app {
namespace {

const QString kService = QStringLiteral("cairn");

class KeychainBackend : public SecretBackend {
public:
    void write(const QString& account, const QString& secret, Done done) override {
        auto* job = new QKeychain::WritePasswordJob(kService);
        job->setKey(account);
        job->setTextData(secret);
        run(job, std::move(done), false);
    }
    void read(const QString& account, Done done) override {
        auto* job = new QKeychain::ReadPasswordJob(kService);
        job->setKey(account);
        run(job, std::move(done), true);
    }
    void remove(const QString& account, Done done) override {
        auto* job = new QKeychain::DeletePasswordJob(kService);
        job->setKey(account);
        run(job, std::move(done), false);
    }

private:
    // insecureFallback stays off: QtKeychain would otherwise write the key in
    // clear to a settings file when no keyring runs.
    static void run(QKeychain::Job* job, Done done, bool reading) {
        job->setAutoDelete(true);
        job->setInsecureFallback(false);
        QObject::connect(job, &QKeychain::Job::finished, job, [done = std::move(done), reading](QKeychain::Job* j) {
            if (j->error() == QKeychain::NoError) {
                done(true, reading ? static_cast<QKeychain::ReadPasswordJob*>(j)->textData() : QString(), {});
            } else if (j->error() == QKeychain::EntryNotFound) {
                done(true, {}, {});
            } else {
                done(false, {}, j->errorString());
            }
        });
        job->start();
    }
};

}  // namespace

std::unique_ptr<SecretBackend> makeKeychainBackend() { return std::make_unique<KeychainBackend>(); }

void MemorySecretBackend::write(const QString& account, const QString& secret, Done done) {
    if (!available_) return done(false, {}, QStringLiteral("no secret service in this test"));
    entries_[account] = secret;
    done(true, {}, {});
}

void MemorySecretBackend::read(const QString& account, Done done) {
    if (!available_) return done(false, {}, QStringLiteral("no secret service in this test"));
    done(true, entries_.value(account), {});
}

void MemorySecretBackend::remove(const QString& account, Done done) {
    if (!available_) return done(false, {}, QStringLiteral("no secret service in this test"));
    entries_.remove(account);
    done(true, {}, {});
}

KeyVault::KeyVault(std::unique_ptr<SecretBackend> backend, QObject* parent)
    : QObject(parent), backend_(std::move(backend)) {}

void KeyVault::setBackend(std::unique_ptr<SecretBackend> backend) { backend_ = std::move(backend); }

void KeyVault::setWarning(const QString& reason) {
    const QString text = tr("No keyring is available (%1): API keys are kept for this session only and must be "
                            "entered again after a restart.")
                             .arg(reason.simplified().left(200));
    if (warning_ == text) return;
    warning_ = text;
    emit warningChanged();
}

void KeyVault::store(const QString& account, const QString& secret, std::function<void()> done) {
    QPointer<KeyVault> self(this);
    auto finish = [self, account, secret, done](bool ok, const QString&, const QString& error) {
        if (!self) return;
        if (ok) self->sessionOnly_.remove(account);
        else if (secret.isEmpty()) self->sessionOnly_.remove(account);
        else {
            self->sessionOnly_[account] = secret;
            self->setWarning(error);
        }
        if (done) done();
    };
    if (secret.isEmpty()) backend_->remove(account, finish);
    else backend_->write(account, secret, finish);
}

void KeyVault::fetch(const QString& account, std::function<void(const QString&)> done) {
    if (auto it = sessionOnly_.constFind(account); it != sessionOnly_.constEnd()) return done(*it);
    QPointer<KeyVault> self(this);
    backend_->read(account, [self, done](bool ok, const QString& secret, const QString& error) {
        if (!self) return;
        if (!ok) self->setWarning(error);
        done(ok ? secret : QString());
    });
}

}  // namespace cairn::app
