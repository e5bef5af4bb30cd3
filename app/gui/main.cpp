// cairn: the desktop app. Parses the command line, creates the controller
// (which starts the engine thread) and shows ui/Main.qml.
#include "app_paths.h"
#include "app_settings.h"
#include "chat_controller.h"
#include "instance_lock.h"
#include "offline_network.h"

#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QGuiApplication>
#include <QImage>
#include <QQmlApplicationEngine>
#include <QQmlEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSettings>
#include <QTimer>
#include <QtQml/qqmlextensionplugin.h>

#include <cstdio>
#include <cstring>
#include <memory>

Q_IMPORT_QML_PLUGIN(CairnPlugin)

using namespace cairn::app;

namespace {

bool hasArgument(int argc, char** argv, std::initializer_list<const char*> names) {
    for (int i = 1; i < argc; ++i)
        for (const char* n : names)
            if (std::strcmp(argv[i], n) == 0) return true;
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    // --help and --version need no display; --screenshot renders offscreen
    // when there is no display either.
    const bool infoOnly = hasArgument(argc, argv, {"-h", "--help", "-v", "--version", "--help-all"});
    if (hasArgument(argc, argv, {"--screenshot"}) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
        qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    std::unique_ptr<QCoreApplication> application =
        infoOnly ? std::make_unique<QCoreApplication>(argc, argv) : std::make_unique<QGuiApplication>(argc, argv);
    QCoreApplication& app = *application;
    QCoreApplication::setOrganizationName(QStringLiteral("cairn"));
    QCoreApplication::setApplicationName(QStringLiteral("cairn"));
    QCoreApplication::setApplicationVersion(QStringLiteral(CAIRN_VERSION));
    if (!infoOnly) {
        QGuiApplication::setApplicationDisplayName(QStringLiteral("Cairn"));
        QGuiApplication::setDesktopFileName(QStringLiteral(CAIRN_APP_ID));  // Wayland app id = installed .desktop
    }

    const AppPaths standard = AppPaths::standard();
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Cairn: chat with local language models.\n\n"
                                                    "Your data lives in:\n"
                                                    "  conversations  %1 (with their engine snapshots)\n"
                                                    "  models folder  %2 (every *.gguf here is listed)\n"
                                                    "  settings       %3\n"
                                                    "Bundled models:  %4")
                                         .arg(standard.databasePath(), standard.modelsDir(), QSettings().fileName(),
                                              bundledModelDirs().join(QStringLiteral(", "))));
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                  QStringLiteral("Render the main window offscreen after loading, save it and exit."),
                                  QStringLiteral("FILE.png"));
    QCommandLineOption theme(QStringLiteral("theme"), QStringLiteral("light or dark (this run only)."),
                             QStringLiteral("THEME"));
    QCommandLineOption conversation(QStringLiteral("conversation"), QStringLiteral("Open this conversation."),
                                    QStringLiteral("ID"));
    QCommandLineOption prompt(QStringLiteral("prompt"), QStringLiteral("Send this message after loading (repeatable)."),
                              QStringLiteral("TEXT"));
    QCommandLineOption dataDir(QStringLiteral("data-dir"),
                               QStringLiteral("Keep the database, models folder and settings here instead."),
                               QStringLiteral("DIR"));
    QCommandLineOption model(QStringLiteral("model"), QStringLiteral("Load this GGUF file."), QStringLiteral("FILE"));
    QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size, e.g. 1200x760."),
                            QStringLiteral("WxH"));
    QCommandLineOption panel(
        QStringLiteral("panel"),
        QStringLiteral("Open a dialog at start: models, downloads, settings, conversation or import."),
        QStringLiteral("NAME"));
    QCommandLineOption search(QStringLiteral("search"),
                              QStringLiteral("Search the conversations for TEXT at start (as Ctrl+K)."),
                              QStringLiteral("TEXT"));
    parser.addOptions({screenshot, theme, conversation, prompt, dataDir, model, size, panel, search});
    parser.process(app);

    QQuickStyle::setStyle(QStringLiteral("Basic"));  // our Theme colours drive its palette

    const AppPaths paths = parser.isSet(dataDir) ? AppPaths::standard(parser.value(dataDir)) : standard;
    // A second start on the same data folder says so and exits (status 1);
    // it never opens the database the first one is using.
    QString lockRefusal;
    const auto instanceLock = lockDataFolder(paths.dataDir, &lockRefusal);
    if (!instanceLock) {
        std::fprintf(stderr, "cairn: %s\n", qPrintable(lockRefusal));
        return 1;
    }

    ChatController controller(paths);
    if (parser.isSet(model)) controller.settings()->setLastModel(QFileInfo(parser.value(model)).absoluteFilePath());

    QQmlApplicationEngine engine;
    makeEngineOffline(engine);  // nothing shown in the window is fetched from the network
    engine.addImportPath(QStringLiteral("qrc:/"));  // the Cairn module's qmldir (Qt 6.4 does not look there)
    QObject::connect(
        &engine, &QQmlApplicationEngine::objectCreationFailed, &app, [] { QCoreApplication::exit(1); },
        Qt::QueuedConnection);
    engine.setInitialProperties({{QStringLiteral("controller"), QVariant::fromValue(&controller)},
                                 {QStringLiteral("themeOverride"), parser.value(theme)}});  // this run only
    engine.load(QUrl(QStringLiteral("qrc:/Cairn/Main.qml")));
    if (engine.rootObjects().isEmpty()) return 1;
    auto* window = qobject_cast<QQuickWindow*>(engine.rootObjects().first());
    if (parser.isSet(size) && window) {
        auto wh = parser.value(size).split(QLatin1Char('x'));
        if (wh.size() == 2) window->resize(wh[0].toInt(), wh[1].toInt());
    }
    QObject::connect(&app, &QCoreApplication::aboutToQuit, &controller, [&controller] { controller.shutdown(); });
    QObject::connect(&controller, &ChatController::quitRequested, &app, &QCoreApplication::quit, Qt::QueuedConnection);

    controller.start();
    if (parser.isSet(panel) && window)
        QMetaObject::invokeMethod(window, "openPanel", Q_ARG(QVariant, parser.value(panel)));
    if (parser.isSet(conversation)) controller.openConversation(parser.value(conversation).toLongLong());
    if (parser.isSet(search) && window)
        QMetaObject::invokeMethod(window, "showSearch", Q_ARG(QVariant, parser.value(search)));

    // Scripted start (screenshots, smoke tests): send the prompts one after
    // another once the model is ready, then grab the window when idle.
    QStringList prompts = parser.values(prompt);
    const QString shotFile = parser.value(screenshot);
    if (!prompts.isEmpty() || !shotFile.isEmpty()) {
        auto* poll = new QTimer(&app);
        QElapsedTimer clock;
        clock.start();
        // `clock` and `quiet` live in the lambda (this block ends before the timer fires).
        QObject::connect(poll, &QTimer::timeout, &app, [&, poll, clock, quiet = 0]() mutable {
            bool idle = !controller.modelLoading() && !controller.generating() && !controller.busy();
            if (!idle) {
                quiet = 0;
                return;
            }
            if (!prompts.isEmpty() && controller.modelReady()) {
                controller.send(prompts.takeFirst());
                quiet = 0;
                return;
            }
            if (++quiet < 5 && clock.elapsed() < 60000) return;  // let the scene settle
            if (!shotFile.isEmpty() && window) {
                QImage image = window->grabWindow();
                if (image.isNull() || !image.save(shotFile)) {
                    std::fprintf(stderr, "cairn: could not write %s\n", qPrintable(shotFile));
                    QCoreApplication::exit(1);
                    return;
                }
                std::printf("%s\n", qPrintable(shotFile));
                QCoreApplication::exit(0);
            }
            poll->stop();
        });
        poll->start(200);
    }
    return app.exec();
}
