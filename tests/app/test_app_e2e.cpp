// End to end, offscreen: the real UI (qrc:/Cairn/Main.qml) on a tiny model.
// Type a message and press Enter, watch the reply stream into the message
// list and land in the database; then restart (new controller, engine and
// store on the same files), reopen the conversation, check that it resumed
// from its snapshot and that the next reply prefilled only the new tokens.
#include "chat_controller.h"

#include "app_test_support.h"

#include "cairn/store/store.h"

#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtTest>

Q_IMPORT_QML_PLUGIN(CairnPlugin)

using namespace cairn;
using namespace cairn::app;

namespace {

struct RunningApp {
    std::unique_ptr<ChatController> controller;
    std::unique_ptr<QQmlApplicationEngine> engine;
    QQuickWindow* window = nullptr;

    RunningApp(const AppPaths& paths, const QString& model) {
        controller = std::make_unique<ChatController>(paths);
        test::fastSettings(*controller->settings(), model);
        engine = std::make_unique<QQmlApplicationEngine>();
        engine->setInitialProperties({{QStringLiteral("controller"), QVariant::fromValue(controller.get())}});
        engine->load(QUrl(QStringLiteral("qrc:/Cairn/Main.qml")));
        if (!engine->rootObjects().isEmpty()) window = qobject_cast<QQuickWindow*>(engine->rootObjects().first());
        controller->start();
    }
    ~RunningApp() {
        engine.reset();  // the UI goes first, then the worker thread stops
        controller.reset();
    }
    template <class T> T* find(const char* name) { return window ? window->findChild<T*>(QString::fromLatin1(name)) : nullptr; }
};

// Searches the visual tree (Repeater delegates are not QObject children).
QQuickItem* findItem(QQuickItem* root, const QString& name) {
    if (!root) return nullptr;
    if (root->objectName() == name) return root;
    for (auto* child : root->childItems())
        if (auto* found = findItem(child, name)) return found;
    return nullptr;
}

} // namespace

class TestAppEndToEnd : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QQuickStyle::setStyle(QStringLiteral("Basic")); }

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
            auto stats = finished[0][2].toMap();
            firstPrompt = stats.value(QStringLiteral("promptTokens")).toLongLong();
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
        QCOMPARE(ready[0][1].toString(), QStringLiteral("snapshot"));
        QVERIFY(app.controller->resumeNote().startsWith(QStringLiteral("Resumed from snapshot in")));
        auto* list = app.find<QQuickItem>("messageList");
        QCOMPARE(list->property("count").toInt(), 2);
        QCOMPARE(app.controller->messages()->contentAt(1), firstReply);

        QSignalSpy finished(app.controller.get(), &ChatController::replyFinished);
        app.controller->send(QStringLiteral("And a second question."));
        QVERIFY(finished.wait(30000));
        auto stats = finished[0][2].toMap();
        const qint64 prompt = stats.value(QStringLiteral("promptTokens")).toLongLong();
        const qint64 reused = stats.value(QStringLiteral("reusedTokens")).toLongLong();
        const qint64 prefilled = stats.value(QStringLiteral("prefilledTokens")).toLongLong();
        QCOMPARE(reused + prefilled, prompt);
        // A fresh engine would have computed everything; from the snapshot at
        // least the whole first prompt was reused and only what follows it was
        // computed. (The random model's reply can hold invalid UTF-8, which is
        // stored replaced, so its tokens need not all match the re-rendered text.)
        QVERIFY2(reused >= firstPrompt, qPrintable(QStringLiteral("reused %1, first prompt %2").arg(reused).arg(firstPrompt)));
        QVERIFY2(prefilled <= prompt - firstPrompt, qPrintable(QStringLiteral("prefilled %1 of %2").arg(prefilled).arg(prompt)));
        QTRY_COMPARE_WITH_TIMEOUT(list->property("count").toInt(), 4, 5000);
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
        QQuickItem* row = findItem(dialog->property("contentItem").value<QQuickItem*>(), QStringLiteral("override_maxTokens"));
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
        QCOMPARE(finished.last()[2].toMap().value(QStringLiteral("generatedTokens")).toLongLong(), 2);

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
