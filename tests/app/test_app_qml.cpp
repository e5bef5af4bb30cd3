// Qt Quick Test runner for the QML components of ui/ (tests in qml/tst_*.qml).
// Components that need the controller get `testController`: a ChatController
// on a temporary folder with two conversations and no model loaded.
#include "chat_controller.h"

#include "cairn/store/store.h"

#include <QQmlContext>
#include <QQmlEngine>
#include <QQuickStyle>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtQuickTest/quicktest.h>

Q_IMPORT_QML_PLUGIN(CairnPlugin)

class Setup : public QObject {
    Q_OBJECT
public:
    Setup() { QQuickStyle::setStyle(QStringLiteral("Basic")); }
    ~Setup() override {
        if (controller_) controller_->shutdown();
    }
public slots:
    // The module's QML files live in the resources at qrc:/Cairn/.
    void qmlEngineAvailable(QQmlEngine* engine) {
        engine->addImportPath(QStringLiteral("qrc:/"));
        engine->rootContext()->setContextProperty(QStringLiteral("testController"), controller());
    }

private:
    cairn::app::ChatController* controller() {
        if (!controller_) {
            controller_ = std::make_unique<cairn::app::ChatController>(cairn::app::AppPaths::standard(dir_.path()));
            controller_->store().createConversation("alpha");
            controller_->store().createConversation("beta");
            controller_->conversations()->reload();
        }
        return controller_.get();
    }
    QTemporaryDir dir_;
    std::unique_ptr<cairn::app::ChatController> controller_;
};

QUICK_TEST_MAIN_WITH_SETUP(cairn_qml, Setup)
#include "test_app_qml.moc"
