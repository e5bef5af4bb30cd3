// Qt Quick Test runner for the QML components of ui/ (tests in qml/tst_*.qml).
#include <QQmlEngine>
#include <QQuickStyle>
#include <QtQml/qqmlextensionplugin.h>
#include <QtQuickTest/quicktest.h>

Q_IMPORT_QML_PLUGIN(CairnPlugin)

class Setup : public QObject {
    Q_OBJECT
public:
    Setup() { QQuickStyle::setStyle(QStringLiteral("Basic")); }
public slots:
    // The module's QML files live in the resources at qrc:/Cairn/.
    void qmlEngineAvailable(QQmlEngine* engine) { engine->addImportPath(QStringLiteral("qrc:/")); }
};

QUICK_TEST_MAIN_WITH_SETUP(cairn_qml, Setup)
#include "test_app_qml.moc"
