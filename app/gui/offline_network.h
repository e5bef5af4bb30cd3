// The QML engine never reaches the network: every request its network access
// manager gets (an image in rich text, a remote source) fails at once. Replies
// are rendered without images anyway (safe_markdown.h); this is the second wall.
#pragma once

#include <QQmlNetworkAccessManagerFactory>

class QQmlEngine;

namespace cairn::app {

class OfflineNetworkAccessFactory : public QQmlNetworkAccessManagerFactory {
public:
    QNetworkAccessManager* create(QObject* parent) override;
};

// Installs the factory on `engine` (which keeps it for the engine's lifetime).
void makeEngineOffline(QQmlEngine& engine);

}  // namespace cairn::app
