// End to end, offscreen: the real UI (qrc:/Cairn/Main.qml) on a tiny model.
// Type a message and press Enter, watch the reply stream into the message
// list and land in the database; then restart (new controller, engine and
// store on the same files), reopen the conversation, check that it resumed
// from its snapshot and that the next reply prefilled only the new tokens.
#include "chat_controller.h"
#include "engine_worker.h"
#include "offline_network.h"

#include "app_test_support.h"
#include "running_app.h"

#include "cairn/exec.h"
#include "cairn/store/store.h"

#include <QQmlApplicationEngine>
#include <QQmlComponent>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickTextDocument>
#include <QQuickWindow>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextDocument>
#include <QtQml/qqmlextensionplugin.h>
#include <QtTest>

#include <algorithm>
#include <cmath>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

Q_IMPORT_QML_PLUGIN(CairnPlugin)

using namespace cairn;
using namespace cairn::app;
using cairn::test::RunningApp;

namespace {

// Searches the visual tree (Repeater delegates are not QObject children).
QQuickItem* findItem(QQuickItem* root, const QString& name) {
    if (!root) return nullptr;
    if (root->objectName() == name) return root;
    for (auto* child : root->childItems())
        if (auto* found = findItem(child, name)) return found;
    return nullptr;
}

// Every item in the window's visual tree.
void collectItems(QQuickItem* root, QList<QQuickItem*>& out) {
    if (!root) return;
    out << root;
    for (auto* child : root->childItems()) collectItems(child, out);
}

// WCAG's contrast ratio of two colours (1 to 21; text wants at least 4.5).
double contrast(const QColor& a, const QColor& b) {
    auto luminance = [](const QColor& c) {
        auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
    };
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

// A loopback server that only counts who connects (an image fetch would).
struct CountingServer {
    QTcpServer server;
    int connections = 0;
    CountingServer() {
        QObject::connect(&server, &QTcpServer::newConnection, &server, [this] {
            while (auto* s = server.nextPendingConnection()) {
                ++connections;
                s->deleteLater();
            }
        });
    }
    bool listen() { return server.listen(QHostAddress::LocalHost, 0); }
    QString url(const char* path) const {
        return QStringLiteral("http://127.0.0.1:%1/%2").arg(server.serverPort()).arg(QLatin1String(path));
    }
};

}  // namespace

class TestAppEndToEnd : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QQuickStyle::setStyle(QStringLiteral("Basic")); }

    // A stored conversation whose title, messages and code-fence label hold
    // HTML, images and `<`: shown as text, nothing fetched (no request reaches
    // a loopback server), nothing cut. The view alone is tested here: the
    // engine is not made offline, so a fetch would arrive.
    void hostileConversationLoadsNothingAndHidesNothing() {
        CountingServer server;
        QVERIFY(server.listen());
        QTemporaryDir dir;
        const QString model = test::writeTinyAppModel(dir.path());
        const AppPaths paths = AppPaths::standard(dir.filePath(QStringLiteral("data")));
        paths.create();
        const QString title = QStringLiteral("<img src=\"%1\"> <b>title</b>").arg(server.url("title"));
        const QString language = QStringLiteral("<img src=\"%1\">").arg(server.url("lang"));
        const QString reply =
            QStringLiteral("Compare x<y and y>z.\n\n<img src=\"%1\"> ![x](%2) <b>raw</b>\n\n"
                           "[click](javascript:alert(1))\n\n```%3\nint a = b < c;\n```\nafter the fence")
                .arg(server.url("html"), server.url("markdown"), language);
        QString longMessage = QStringLiteral("early < sign ");
        while (longMessage.size() < 10000) longMessage += QStringLiteral("more text ");
        longMessage += QStringLiteral("THE END");
        qint64 conversation = -1;
        {
            store::Store db(paths.databasePath().toStdString());
            conversation = db.createConversation(title.toStdString());
            auto u = db.addMessage(conversation, std::nullopt, store::Role::User, longMessage.toStdString());
            db.addMessage(conversation, u, store::Role::Assistant, reply.toStdString());
        }

        RunningApp app(paths, model);
        QVERIFY(app.window);
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
        auto* list = app.find<QQuickItem>("messageList");
        QVERIFY(list);
        list->setProperty("cacheBuffer", 1000000);  // every message made, also those scrolled out of sight
        app.controller->openConversation(conversation);
        QTRY_COMPARE(list->property("count").toInt(), 2);
        app.controller->library()->search(QStringLiteral("raw"));  // the sidebar shows the hit's snippet
        QTest::qWait(1500);  // time for any fetch to be tried

        QList<QQuickItem*> items;
        collectItems(app.window->contentItem(), items);
        QStringList rendered;
        int messageTexts = 0;
        for (QQuickItem* item : items) {
            const char* type = item->metaObject()->className();
            const bool isText = item->inherits("QQuickText"), isEdit = item->inherits("QQuickTextEdit");
            if (!isText && !isEdit) continue;
            const QString text = item->property("text").toString();
            const int format = item->property("textFormat").toInt();  // 0 plain in both enums
            if (item->objectName() == QLatin1String("messageText")) {
                ++messageTexts;
                auto* doc = item->property("textDocument").value<QQuickTextDocument*>()->textDocument();
                rendered << doc->toPlainText();
                for (QTextBlock b = doc->begin(); b.isValid(); b = b.next())
                    for (auto it = b.begin(); !it.atEnd(); ++it) {
                        QVERIFY2(!it.fragment().charFormat().isImageFormat(), "an image in a rendered message");
                        if (it.fragment().charFormat().isAnchor())
                            QVERIFY2(!it.fragment().charFormat().anchorHref().startsWith(QLatin1String("javascript")),
                                     "a javascript: link");
                    }
            } else if (item->objectName() == QLatin1String("searchSnippet")) {
                QVERIFY2(!text.contains(QLatin1String("<img")), qPrintable(text));  // escaped
            } else if (text.contains(QLatin1String("<img")) || text.contains(QLatin1String("<b>"))) {
                QVERIFY2(format == 0,
                         qPrintable(QStringLiteral("%1 shows \"%2\" as rich text").arg(QLatin1String(type), text)));
            }
        }
        QCOMPARE(messageTexts, 3);  // the user message, the reply's prose before and after the fence
        const QString all = rendered.join(QLatin1Char('\n'));
        QVERIFY2(all.contains(longMessage), "the long message is not shown whole");
        QVERIFY(all.contains(QStringLiteral("Compare x<y and y>z.")));
        QVERIFY(all.contains(QStringLiteral("<img src=\"%1\"> x (image: %2) <b>raw</b>")
                                 .arg(server.url("html"), server.url("markdown"))));
        QVERIFY(all.contains(QStringLiteral("after the fence")));
        // The code fence's label and body, as text.
        auto* label = findItem(app.window->contentItem(), QStringLiteral("codeLanguage"));
        QVERIFY(label);
        QCOMPARE(label->property("text").toString(), language);
        QCOMPARE(findItem(app.window->contentItem(), QStringLiteral("codeBody"))->property("text").toString(),
                 QStringLiteral("int a = b < c;"));
        QCOMPARE(app.controller->currentTitle(), title);

        QCoreApplication::processEvents();
        QCOMPARE(server.connections, 0);
    }

    // The second wall: the engine main() sets up refuses every network request.
    void offlineEngineFetchesNothing() {
        CountingServer server;
        QVERIFY(server.listen());
        const QByteArray qml =
            QStringLiteral("import QtQuick\nImage { source: \"%1\" }").arg(server.url("image")).toUtf8();
        {
            // Control: without the factory the same item does reach the server.
            QQmlEngine plain;
            QQmlComponent component(&plain);
            component.setData(qml, QUrl());
            std::unique_ptr<QObject> image(component.create());
            QVERIFY(image);
            QTRY_VERIFY_WITH_TIMEOUT(server.connections > 0, 5000);
        }
        server.connections = 0;
        QQmlEngine engine;
        makeEngineOffline(engine);
        QQmlComponent component(&engine);
        component.setData(qml, QUrl());
        std::unique_ptr<QObject> image(component.create());
        QVERIFY2(image, qPrintable(component.errorString()));
        QTRY_COMPARE_WITH_TIMEOUT(image->property("status").toInt(), 3, 5000);  // Image.Error
        QTest::qWait(300);
        QCOMPARE(server.connections, 0);
    }

    void chatRestartResume() {
        QTemporaryDir dir;
        const QString model = test::writeTinyAppModel(dir.path());
        const AppPaths paths = AppPaths::standard(dir.filePath(QStringLiteral("data")));
        qint64 conversation = -1;
        qint64 firstPrompt = 0;
        QString firstReply;
        {
            RunningApp app(paths, model);
            QVERIFY(app.window);
            QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady(), 20000);
            auto* input = app.find<QQuickItem>("composerInput");
            auto* list = app.find<QQuickItem>("messageList");
            QVERIFY(input && list);
            QCOMPARE(list->property("count").toInt(), 0);

            int streamed = 0;
            connect(app.controller->messages(), &QAbstractItemModel::dataChanged, this, [&] { ++streamed; });
            QSignalSpy finished(app.controller.get(), &ChatController::replyFinished);
            input->setProperty("text", QStringLiteral("Hello there, tiny model!"));
            input->forceActiveFocus();
            QTest::keyClick(app.window, Qt::Key_Return);
            QTRY_COMPARE_WITH_TIMEOUT(list->property("count").toInt(), 2, 10000);  // user + streaming reply
            QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 30000);
            QVERIFY(streamed >= 1);
            QCOMPARE(input->property("text").toString(), QString());
            conversation = app.controller->currentConversation();
            QVERIFY(conversation >= 0);
            auto stats = finished[0][2].value<ReplyStats>();
            firstPrompt = stats.promptTokens;
            firstReply = app.controller->messages()->contentAt(1);
            QVERIFY(!firstReply.isEmpty());

            // In the database, from another connection.
            store::Store db(paths.databasePath().toStdString());
            auto msgs = db.messages(conversation);
            QCOMPARE(int(msgs.size()), 2);
            QCOMPARE(msgs[0].content, std::string("Hello there, tiny model!"));
            QCOMPARE(QString::fromStdString(msgs[1].content), firstReply);
            QVERIFY(msgs[1].complete);
            QCOMPARE(int(db.snapshots(conversation).size()), 1);
        }

        // Restart: everything new on the same files.
        RunningApp app(paths, model);
        QVERIFY(app.window);
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
        QCOMPARE(app.controller->conversations()->rowCount(), 1);
        QSignalSpy ready(app.controller.get(), &ChatController::conversationReady);
        app.controller->openConversation(conversation);
        QVERIFY(ready.wait(20000));
        QCOMPARE(ready[0][1].value<RestoreKind>(), RestoreKind::Snapshot);
        QVERIFY(app.controller->resumeNote().startsWith(QStringLiteral("Resumed from snapshot in")));
        auto* list = app.find<QQuickItem>("messageList");
        QCOMPARE(list->property("count").toInt(), 2);
        QCOMPARE(app.controller->messages()->contentAt(1), firstReply);

        QSignalSpy finished(app.controller.get(), &ChatController::replyFinished);
        app.controller->send(QStringLiteral("And a second question."));
        QVERIFY(finished.wait(30000));
        auto stats = finished[0][2].value<ReplyStats>();
        const qint64 prompt = stats.promptTokens;
        const qint64 reused = stats.reusedTokens;
        const qint64 prefilled = stats.prefilledTokens;
        QCOMPARE(reused + prefilled, prompt);
        // A fresh engine would have computed everything; from the snapshot at
        // least the whole first prompt was reused and only what follows it was
        // computed. (The random model's reply can hold invalid UTF-8, which is
        // stored replaced, so its tokens need not all match the re-rendered text.)
        QVERIFY2(reused >= firstPrompt,
                 qPrintable(QStringLiteral("reused %1, first prompt %2").arg(reused).arg(firstPrompt)));
        QVERIFY2(prefilled <= prompt - firstPrompt,
                 qPrintable(QStringLiteral("prefilled %1 of %2").arg(prefilled).arg(prompt)));
        QTRY_COMPARE_WITH_TIMEOUT(list->property("count").toInt(), 4, 5000);
    }

    // The view follows a streaming reply only while the reader is at the
    // bottom: after sending a long message it shows the reply's start, a
    // wheel turn up while text streams stays where it is, and the reply
    // ending does not move the view either.
    void viewFollowsOnlyAtTheBottom() {
        QTemporaryDir dir;
        const QString model = test::writeTinyAppModel(dir.path());
        const AppPaths paths = AppPaths::standard(dir.filePath(QStringLiteral("data")));
        paths.create();
        QString paragraph;
        while (paragraph.size() < 300) paragraph += QStringLiteral("A line of an earlier message that wraps. ");
        qint64 conversation = -1;
        {
            store::Store db(paths.databasePath().toStdString());
            conversation = db.createConversation("long");
            std::optional<int64_t> parent;
            for (int i = 0; i < 6; ++i)
                parent = db.addMessage(conversation, parent, i % 2 ? store::Role::Assistant : store::Role::User,
                                       paragraph.toStdString());
        }
        qputenv("CAIRN_TEST_PIECE_DELAY_MS", "15");  // a reply that streams for seconds
        RunningApp app(paths, model);
        QVERIFY(app.window);
        app.controller->settings()->setMaxTokens(400);
        app.controller->settings()->setTemperature(0);
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
        auto* list = app.find<QQuickItem>("messageList");
        QVERIFY(list);
        auto atBottom = [list] {
            QVariant yes;
            QMetaObject::invokeMethod(list, "atBottom", Q_RETURN_ARG(QVariant, yes));
            return yes.toBool();
        };
        auto where = [list] {
            return QStringLiteral("contentY %1, originY %2, contentHeight %3, height %4")
                .arg(list->property("contentY").toDouble())
                .arg(list->property("originY").toDouble())
                .arg(list->property("contentHeight").toDouble())
                .arg(list->height());
        };
        app.controller->openConversation(conversation);
        QTRY_COMPARE(list->property("count").toInt(), 6);
        QTRY_VERIFY2(atBottom(), qPrintable(where()));

        QSignalSpy finished(app.controller.get(), &ChatController::replyFinished);
        QString question;
        while (question.size() < 1500) question += QStringLiteral("A long question that fills the screen. ");
        app.controller->send(question);
        QTRY_COMPARE_WITH_TIMEOUT(list->property("count").toInt(), 8, 10000);
        QTRY_VERIFY_WITH_TIMEOUT(!app.controller->messages()->contentAt(7).isEmpty(), 20000);
        // The reply is in sight, not the top of the question.
        QTRY_VERIFY(atBottom());

        // A wheel turn up over the list.
        const QPoint at = list->mapToScene(QPointF(list->width() / 2, list->height() / 2)).toPoint();
        auto wheel = [&](int delta) {
            QWheelEvent e(at, app.window->mapToGlobal(at), QPoint(), QPoint(0, delta), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
            QCoreApplication::sendEvent(app.window, &e);
        };
        wheel(360);
        QTRY_VERIFY(!list->property("following").toBool());
        QTRY_VERIFY(!list->property("moving").toBool());
        const double y = list->property("contentY").toDouble();
        const int streamed = app.controller->messages()->contentAt(7).size();
        const qint64 used = app.controller->contextUsed();
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->messages()->contentAt(7).size() > streamed + 20,
                                 10000);  // text arrived
        QTRY_VERIFY(app.controller->contextUsed() > used);  // the counter moves while the reply streams
        QTest::qWait(700);
        QVERIFY2(list->property("contentY").toDouble() == y, qPrintable(where()));
        QVERIFY(!atBottom());

        // Still scrolled up when the reply ends: the view stays there.
        const double before = list->property("contentY").toDouble();
        QVERIFY(finished.wait(60000));
        QTest::qWait(300);
        QVERIFY2(list->property("contentY").toDouble() == before, qPrintable(where()));
        qunsetenv("CAIRN_TEST_PIECE_DELAY_MS");
    }

    // The import dialog (Qt's own FileDialog) in both themes: the path bar's
    // crumbs and the selected row's name read against what is behind them.
    void fileDialogsReadableInBothThemes() {
        QTemporaryDir dir;
        const QString model = test::writeTinyAppModel(dir.path());
        const AppPaths paths = AppPaths::standard(dir.filePath(QStringLiteral("data")));
        RunningApp app(paths, model);
        QVERIFY(app.window);
        auto* dialog = app.find<QObject>("importDialog");
        QVERIFY(dialog);
        dialog->setProperty("currentFolder", QUrl::fromLocalFile(paths.dataDir));  // holds the "models" folder
        app.window->setProperty("themeOverride", QStringLiteral("dark"));
        QMetaObject::invokeMethod(app.window, "openPanel", Q_ARG(QVariant, QStringLiteral("import")));
        QQuickItem* label = nullptr;
        auto findLabel = [&] {
            QList<QQuickItem*> items;
            collectItems(app.window->contentItem(), items);
            for (auto* item : items)
                if (item->objectName() == QLatin1String("dialogTitleBarLabel") && item->isVisible() &&
                    item->property("text").toString() == QLatin1String("Import a conversation"))
                    return item;
            return static_cast<QQuickItem*>(nullptr);
        };
        QTRY_VERIFY((label = findLabel()) != nullptr);
        QQuickItem* bar = label->parentItem()->childItems().value(1);
        QVERIFY(bar && bar->property("upButton").isValid());
        auto crumbContrast = [&] {
            QList<QQuickItem*> items;
            collectItems(bar, items);
            double worst = 99;
            const QColor back = bar->property("background").value<QQuickItem*>()->property("color").value<QColor>();
            for (auto* item : items)
                if (item->property("folderName").isValid() && item->isVisible())
                    worst = std::min(
                        worst,
                        contrast(item->property("contentItem").value<QQuickItem*>()->property("color").value<QColor>(),
                                 back));
            return worst;
        };
        auto list = [&] {
            QList<QQuickItem*> items;
            collectItems(app.window->contentItem(), items);
            for (auto* item : items)
                if (item->objectName() == QLatin1String("fileDialogListView") && item->isVisible()) return item;
            return static_cast<QQuickItem*>(nullptr);
        };
        QTRY_VERIFY(list() && list()->property("count").toInt() >= 1);
        list()->setProperty("currentIndex", 0);
        auto rowContrast = [&] {
            QList<QQuickItem*> items;
            collectItems(list(), items);
            for (auto* row : items) {
                if (row->objectName() != QLatin1String("fileDialogDelegate0")) continue;
                if (!row->property("highlighted").toBool()) return 0.0;
                const QString name = row->property("fileName").toString();
                QList<QQuickItem*> parts;
                collectItems(row, parts);
                const QColor back = row->property("background").value<QQuickItem*>()->property("color").value<QColor>();
                for (auto* part : parts)
                    if (part->property("text").toString() == name && part != row)
                        return contrast(part->property("color").value<QColor>(), back);
            }
            return 0.0;
        };
        QTRY_VERIFY2(crumbContrast() >= 4.5 && crumbContrast() < 99, qPrintable(QString::number(crumbContrast())));
        QTRY_VERIFY2(rowContrast() >= 4.5, qPrintable(QString::number(rowContrast())));
        app.window->setProperty("themeOverride", QStringLiteral("light"));  // switched while the dialog is open
        QTRY_VERIFY2(crumbContrast() >= 4.5, qPrintable(QString::number(crumbContrast())));
        QTRY_VERIFY2(rowContrast() >= 4.5, qPrintable(QString::number(rowContrast())));
    }

    // A long prefill on every core leaves the UI thread live: a 10 ms timer on
    // it is never held up for long, and prefill progress reaches it at most
    // once per 16 ms (plus the first and the last). Generous bounds: a loaded
    // 2-core machine is slow, not frozen (measured: worst gap ~70 ms for 7,000 tokens).
    void prefillLeavesTheUiThreadLive() {
        QTemporaryDir dir;
        const QString model = test::writeTinyAppModel(dir.path(), 8, 8192);
        const AppPaths paths = AppPaths::standard(dir.filePath(QStringLiteral("data")));
        RunningApp app(paths, model);
        QVERIFY(app.window);
        app.controller->settings()->setThreads(0);  // all cores, the default
        app.controller->settings()->setContextSize(8192);
        app.controller->settings()->setPrefillChunk(128);
        app.controller->settings()->setMaxTokens(1);
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
#if defined(__linux__)
        const int uiNice = getpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid)));
        if (uiNice >= kBackgroundNice) QSKIP("the test itself runs at background priority");
#endif
        int progressUpdates = 0;
        QObject counter;
        connect(app.controller->worker(), &EngineWorker::prefillProgress, &counter, [&] { ++progressUpdates; });
        QSignalSpy finished(app.controller.get(), &ChatController::replyFinished);
        QString question;
        while (question.size() < 7000) question += QStringLiteral("word %1 ").arg(question.size());
        QElapsedTimer gap;
        qint64 worst = 0;
        QTimer tick;
        tick.setInterval(10);
        connect(&tick, &QTimer::timeout, &counter, [&] { worst = std::max(worst, gap.restart()); });
        app.controller->send(question);
        gap.start();
        tick.start();
        QVERIFY(finished.wait(120000));
        tick.stop();
        const ReplyStats stats = finished.first().at(2).value<ReplyStats>();
        const double prefillMs = stats.prefillMs;
        QVERIFY(stats.prefilledTokens > 6000);
        qInfo("prefill %.0f ms, worst UI gap %lld ms, %d progress updates", prefillMs, worst, progressUpdates);
        QVERIFY2(worst < 1000, qPrintable(QString::number(worst)));
#if defined(__linux__)
        // The engine computed at background priority and left the UI thread's alone.
        int lowered = 0;
        for (const QFileInfo& task :
             QDir(QStringLiteral("/proc/self/task")).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot)) {
            const long tid = task.fileName().toLong();
            if (tid == long(syscall(SYS_gettid))) QCOMPARE(getpriority(PRIO_PROCESS, id_t(tid)), uiNice);
            else lowered += getpriority(PRIO_PROCESS, id_t(tid)) >= kBackgroundNice;
        }
        QVERIFY2(lowered >= 2, qPrintable(QString::number(lowered)));  // the worker thread and the ExecContext's worker
#endif
        QVERIFY(progressUpdates >= 2);
        QVERIFY2(progressUpdates <= prefillMs / 16 + 2, qPrintable(QString::number(progressUpdates)));
    }

    // Export through the real dialog: a file name proposed from the title,
    // Save writes the file and the notice line names it. Then Ctrl+Q asks to
    // quit (main() quits on it; shutting down as it then does keeps the chat
    // and where it was for the next start).
    void exportWritesAndSaysSoThenCtrlQQuits() {
        QTemporaryDir dir;
        const QString model = test::writeTinyAppModel(dir.path());
        const AppPaths paths = AppPaths::standard(dir.filePath(QStringLiteral("data")));
        RunningApp app(paths, model);
        QVERIFY(app.window);
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
        QSignalSpy finished(app.controller.get(), &ChatController::replyFinished);
        app.controller->send(QStringLiteral("Plans for: a trip?"));
        QVERIFY(finished.wait(30000));

        auto* dialog = app.find<QObject>("exportDialog");
        QVERIFY(dialog);
        QMetaObject::invokeMethod(dialog, "openFor", Q_ARG(QVariant, QStringLiteral("md")));
        QTRY_VERIFY(dialog->property("opened").toBool());
        QQuickItem* content = dialog->property("contentItem").value<QQuickItem*>();
        QQuickItem* field = findItem(content, QStringLiteral("exportPath"));
        QVERIFY(field);
        // The title made a file name (':' and '?' are not safe in one).
        QCOMPARE(QFileInfo(field->property("text").toString()).fileName(), QStringLiteral("Plans for- a trip-.md"));
        const QString target = dir.filePath(QStringLiteral("trip.md"));
        field->setProperty("text", target);
        QVERIFY(!findItem(content, QStringLiteral("exportExists"))->isVisible());
        QQuickItem* save = findItem(dialog->property("footer").value<QQuickItem*>(), QStringLiteral("exportSave"));
        QVERIFY(save);
        QMetaObject::invokeMethod(save, "clicked");
        QTRY_VERIFY(!dialog->property("opened").toBool());
        QFile written(target);
        QVERIFY(written.open(QIODevice::ReadOnly));
        QVERIFY(written.readAll().contains("Plans for: a trip?"));
        QCOMPARE(app.controller->noticeText(), QStringLiteral("Exported to %1").arg(QDir::toNativeSeparators(target)));
        auto* notice = app.find<QQuickItem>("noticeBanner");
        QVERIFY(notice && notice->isVisible());
        // Opened again on the same name: it says Save replaces the file.
        QMetaObject::invokeMethod(dialog, "openFor", Q_ARG(QVariant, QStringLiteral("md")));
        field->setProperty("text", target);
        QVERIFY(findItem(content, QStringLiteral("exportExists"))->isVisible());
        QMetaObject::invokeMethod(dialog, "close");

        const qint64 conversation = app.controller->currentConversation();
        QSignalSpy quit(app.controller.get(), &ChatController::quitRequested);
        app.window->requestActivate();
        QTest::keyClick(app.window, Qt::Key_Q, Qt::ControlModifier);
        QCOMPARE(quit.count(), 1);
        app.controller->shutdown();  // what main() does on quit
        QCOMPARE(app.controller->settings()->lastConversation(), conversation);
        store::Store db(paths.databasePath().toStdString());
        QCOMPARE(int(db.messages(conversation).size()), 2);
    }

    // Search from the keyboard: Down chooses the next hit, Enter opens it.
    void searchByKeyboard() {
        QTemporaryDir dir;
        const QString model = test::writeTinyAppModel(dir.path());
        const AppPaths paths = AppPaths::standard(dir.filePath(QStringLiteral("data")));
        paths.create();
        {
            store::Store db(paths.databasePath().toStdString());
            for (const char* title : {"one", "two"}) {
                auto c = db.createConversation(title);
                db.addMessage(c, std::nullopt, store::Role::User, std::string("pomegranate ") + title);
            }
        }
        RunningApp app(paths, model);
        QVERIFY(app.window);
        auto* field = app.find<QQuickItem>("searchField");
        auto* results = app.find<QQuickItem>("searchResults");
        QVERIFY(field && results);
        field->forceActiveFocus();
        QTRY_VERIFY(field->hasActiveFocus());
        for (const char c : std::string("pomegranate")) QTest::keyClick(app.window, c);
        QTRY_COMPARE(results->property("count").toInt(), 2);
        QCOMPARE(results->property("currentIndex").toInt(), 0);
        QTest::keyClick(app.window, Qt::Key_Down);
        QCOMPARE(results->property("currentIndex").toInt(), 1);
        const qint64 second =
            app.controller->library()->searchResults()[1].toMap().value(QStringLiteral("conversationId")).toLongLong();
        QTest::keyClick(app.window, Qt::Key_Return);
        QCOMPARE(app.controller->currentConversation(), second);
        QTest::keyClick(app.window, Qt::Key_Up);
        QCOMPARE(results->property("currentIndex").toInt(), 0);
    }

    // A conversation's override set through the real UI: Chat settings in the
    // header, a value typed into the Maximum reply tokens row; it lands in the
    // database, the header says so, and the next reply follows it. Reset
    // removes it.
    void overrideThroughTheUi() {
        QTemporaryDir dir;
        const QString model = test::writeTinyAppModel(dir.path());
        RunningApp app(AppPaths::standard(dir.filePath(QStringLiteral("data"))), model);
        QVERIFY(app.window);
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
        QSignalSpy finished(app.controller.get(), &ChatController::replyFinished);
        app.controller->send(QStringLiteral("first"));
        QVERIFY(finished.wait(30000));
        const qint64 conversation = app.controller->currentConversation();

        auto* button = app.find<QQuickItem>("chatSettingsButton");
        auto* dialog = app.find<QObject>("conversationDialog");
        QVERIFY(button && dialog);
        QMetaObject::invokeMethod(button, "clicked");
        QTRY_VERIFY(dialog->property("opened").toBool());
        QQuickItem* row =
            findItem(dialog->property("contentItem").value<QQuickItem*>(), QStringLiteral("override_maxTokens"));
        QVERIFY(row);
        QQuickItem* field = findItem(row, QStringLiteral("field"));
        QVERIFY(field);
        field->forceActiveFocus();
        QTRY_VERIFY(field->hasActiveFocus());
        QTest::keyClick(app.window, Qt::Key_2);
        QTest::keyClick(app.window, Qt::Key_Return);

        store::Store db(AppPaths::standard(dir.filePath(QStringLiteral("data"))).databasePath().toStdString());
        QTRY_COMPARE(db.settings(conversation).value("maxTokens", 0), 2);
        QCOMPARE(field->property("text").toString(), QStringLiteral("2"));
        auto* summary = app.find<QQuickItem>("overrideSummary");
        QVERIFY(summary);
        QCOMPARE(summary->property("text").toString(), QStringLiteral("This chat: maximum reply tokens 2"));

        app.controller->send(QStringLiteral("second"));
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished.last()[2].value<ReplyStats>().generatedTokens, 2);

        QQuickItem* reset = findItem(row, QStringLiteral("reset"));
        QVERIFY(reset && reset->isEnabled());
        QMetaObject::invokeMethod(reset, "clicked");
        QVERIFY(!db.settings(conversation).contains("maxTokens"));
        QCOMPARE(field->property("text").toString(), QString());
        QCOMPARE(summary->property("text").toString(), QString());
    }
};

QTEST_MAIN(TestAppEndToEnd)
#include "test_app_e2e.moc"
