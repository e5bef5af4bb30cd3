#include "offline_network.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QQmlEngine>

namespace cairn::app {
namespace {

class RefusingNetworkAccessManager : public QNetworkAccessManager {
public:
    using QNetworkAccessManager::QNetworkAccessManager;

protected:
    QNetworkReply* createRequest(Operation op, const QNetworkRequest& request, QIODevice* data) override {
        qWarning("cairn: refused a network request for %s", qPrintable(request.url().toDisplayString()));
        // An URL of no scheme Qt knows: the reply is an error, and nothing is sent.
        return QNetworkAccessManager::createRequest(op, QNetworkRequest(QUrl(QStringLiteral("cairn-refused:"))), data);
    }
};

}  // namespace

QNetworkAccessManager* OfflineNetworkAccessFactory::create(QObject* parent) {
    return new RefusingNetworkAccessManager(parent);
}

void makeEngineOffline(QQmlEngine& engine) {
    // The engine does not take ownership: one factory for the process, alive until exit.
    static OfflineNetworkAccessFactory factory;
    engine.setNetworkAccessManagerFactory(&factory);
}

}  // namespace cairn::app
