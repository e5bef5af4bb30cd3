// The real `cairn` binary as a user starts it (offscreen, --data-dir): one
// instance per data folder, no crash loop when a start dies while loading a
// model, and a reply cut by a crash is marked and costs no prefill to retry. In-process checks use the same code as main() (lockDataFolder,
// ChatController::start).
#include "chat_controller.h"
#include "engine_worker.h"
#include "instance_lock.h"

#include "app_test_support.h"
#include "message_list_model.h"
#include "running_app.h"

#include "cairn/model.h"
#include "cairn/store/store.h"
#include "cairn/tokenizer.h"

#include <QProcess>
#include <QQuickItem>
#include <QQuickStyle>
#include <QSettings>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtTest>

#include <csignal>

Q_IMPORT_QML_PLUGIN(CairnPlugin)

using namespace cairn;
using namespace cairn::app;

namespace {

// Searches the visual tree (ListView delegates are not QObject children).
QQuickItem* findItem(QQuickItem* root, const QString& name) {
    if (!root) return nullptr;
    if (root->objectName() == name && root->isVisible()) return root;
    for (auto* child : root->childItems())
        if (auto* found = findItem(child, name)) return found;
    return nullptr;
}

QString settingValue(const QString& dataDir, const QString& key) {
    QSettings s(QDir(dataDir).filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
    return s.value(key).toString();
}

void writeSettings(const QString& dataDir, const QString& model) {
    QDir().mkpath(dataDir);
    AppSettings s(QDir(dataDir).filePath(QStringLiteral("settings.ini")));
    test::fastSettings(s, model);
    s.sync();
}

// Starts cairn on `dataDir`; extra environment as KEY=VALUE.
std::unique_ptr<QProcess> startApp(const QString& dataDir, const QStringList& args = {}, const QStringList& env = {}) {
    auto p = std::make_unique<QProcess>();
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    e.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    for (const auto& kv : env) e.insert(kv.section(QLatin1Char('='), 0, 0), kv.section(QLatin1Char('='), 1));
    p->setProcessEnvironment(e);
    p->start(QStringLiteral(CAIRN_APP_BINARY), QStringList{QStringLiteral("--data-dir"), dataDir} + args);
    return p;
}

void killHard(QProcess& p) {
    ::kill(pid_t(p.processId()), SIGKILL);
    p.waitForFinished(10000);
}

}  // namespace

class TestAppProcesses : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QQuickStyle::setStyle(QStringLiteral("Basic")); }

    // cairn sends a long message and is killed while the reply streams. The
    // next start shows the reply as cut off with Retry and Continue, resumes
    // from the snapshot taken at the prompt boundary; Retry prefills nothing,
    // Continue only the stored partial reply's tokens, and it goes on in the
    // same message.
    void crashMidReplyIsMarkedAndRetriedFromThePromptSnapshot_data() {
        QTest::addColumn<bool>("continueIt");
        QTest::newRow("retry") << false;
        QTest::newRow("continue") << true;
    }
    void crashMidReplyIsMarkedAndRetriedFromThePromptSnapshot() {
        QFETCH(bool, continueIt);
        QTemporaryDir dir;
        const QString data = dir.filePath(QStringLiteral("data"));
        const QString model = test::writeTinyAppModel(dir.path());
        writeSettings(data, model);
        {
            AppSettings s(QDir(data).filePath(QStringLiteral("settings.ini")));
            s.setMaxTokens(3000);
            s.setTemperature(0);  // greedy: the tiny model's reply does not end early
            s.sync();
        }
        QString message;
        while (message.size() < 600) message += QStringLiteral("Tell me everything about stones and rivers. ");
        auto first =
            startApp(data, {QStringLiteral("--prompt"), message}, {QStringLiteral("CAIRN_TEST_PIECE_DELAY_MS=20")});
        QVERIFY(first->waitForStarted(10000));
        const QString dbPath = AppPaths::standard(data).databasePath();
        // Killed once the partial reply is in the database (committed every 2 s).
        bool partial = false;
        for (int i = 0; i < 300 && !partial; ++i) {
            QTest::qWait(100);
            if (!QFileInfo::exists(dbPath)) continue;
            store::Store db(dbPath.toStdString());
            for (const auto& c : db.listConversations())
                for (const auto& m : db.messages(c.id))
                    partial = partial || (m.role == store::Role::Assistant && !m.content.empty());
        }
        QVERIFY2(partial, "no partial reply was committed");
        killHard(*first);

        qint64 conversation = -1, userId = -1, replyId = -1;
        std::string partialReply;
        {
            store::Store db(dbPath.toStdString());
            auto conversations = db.listConversations();
            QCOMPARE(int(conversations.size()), 1);
            conversation = conversations[0].id;
            auto msgs = db.messages(conversation);
            QCOMPARE(int(msgs.size()), 2);
            QVERIFY(!msgs[1].complete);
            userId = msgs[0].id;
            replyId = msgs[1].id;
            partialReply = msgs[1].reasoning + msgs[1].content;
            auto snaps = db.snapshots(conversation);
            QCOMPARE(int(snaps.size()), 1);
            QCOMPARE(snaps[0].messageId, userId);  // at the prompt boundary
        }

        test::RunningApp app(AppPaths::standard(data), model);
        QVERIFY(app.window);
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
        QSignalSpy ready(app.controller.get(), &ChatController::conversationReady);
        app.controller->openConversation(conversation);
        QTRY_VERIFY_WITH_TIMEOUT(!ready.isEmpty(), 20000);
        QCOMPARE(ready[0][1].value<RestoreKind>(), RestoreKind::Snapshot);
        MessageListModel* m = app.controller->messages();
        QCOMPARE(m->rowCount(), 2);
        QVERIFY(!m->data(m->index(1), MessageListModel::CompleteRole).toBool());

        auto* note = findItem(app.window->contentItem(), QStringLiteral("interruptedNote"));
        QVERIFY(note);
        QCOMPARE(note->property("text").toString(), QStringLiteral("This reply was cut off before it ended."));
        auto* retry = findItem(app.window->contentItem(), QStringLiteral("regenerateButton"));
        QVERIFY(retry);
        QCOMPARE(retry->property("text").toString(), QStringLiteral("Retry"));
        auto* cont = findItem(app.window->contentItem(), QStringLiteral("continueButton"));
        QVERIFY(cont);
        app.controller->settings()->setMaxTokens(8);
        QSignalSpy finished(app.controller.get(), &ChatController::replyFinished);
        if (continueIt) {
            QMetaObject::invokeMethod(cont, "clicked");
            QVERIFY(finished.wait(30000));
            const auto stats = finished[0][2].value<ReplyStats>();
            // The session holds the prompt (from its snapshot): only the partial reply is read.
            const auto engineModel = Model::load(model.toStdString());
            const auto partialIds =
                engineModel->tokenizer().encode(partialReply, false, std::vector<TextSpan>{{0, partialReply.size()}});
            const qint64 prompt = stats.promptTokens;
            QCOMPARE(stats.prefilledTokens, qint64(partialIds.size()));
            QCOMPARE(stats.reusedTokens, prompt - qint64(partialIds.size()));
            QVERIFY(prompt - qint64(partialIds.size()) > 600);
            // The same message, now complete, starting with the stored text.
            QCOMPARE(m->rowCount(), 2);
            QCOMPARE(m->data(m->index(1), MessageListModel::IdRole).toLongLong(), replyId);
            QCOMPARE(m->data(m->index(1), MessageListModel::SiblingCountRole).toInt(), 1);
            store::Store db(dbPath.toStdString());
            const auto reply = db.message(replyId);
            QVERIFY(reply.complete);
            QVERIFY((reply.reasoning + reply.content).starts_with(partialReply));
            QVERIFY(reply.reasoning.size() + reply.content.size() > partialReply.size());
            return;
        }
        QMetaObject::invokeMethod(retry, "clicked");
        QVERIFY(finished.wait(30000));
        const auto stats = finished[0][2].value<ReplyStats>();
        const qint64 prompt = stats.promptTokens;
        QVERIFY(prompt > 600);
        QCOMPARE(stats.prefilledTokens, 0);
        QCOMPARE(stats.reusedTokens, prompt);
        // The cut-off reply stays, as a sibling of the new one.
        QCOMPARE(m->rowCount(), 2);
        QCOMPARE(m->data(m->index(1), MessageListModel::SiblingCountRole).toInt(), 2);
        QVERIFY(m->data(m->index(1), MessageListModel::IdRole).toLongLong() != replyId);
    }

    // Two lock attempts in one process (QLockFile sees its own pid alive).
    void lockIsExclusive() {
        QTemporaryDir dir;
        const QString data = dir.filePath(QStringLiteral("data"));
        auto first = lockDataFolder(data);
        QVERIFY(first);
        QString why;
        QVERIFY(!lockDataFolder(data, &why));
        QVERIFY2(why.contains(QStringLiteral("already running")) &&
                     why.contains(QString::number(QCoreApplication::applicationPid())),
                 qPrintable(why));
        first.reset();  // released: the next attempt gets it
        auto again = lockDataFolder(data);
        QVERIFY(again);
        // Another data folder is another lock.
        QVERIFY(lockDataFolder(dir.filePath(QStringLiteral("other"))));
    }

    // A running cairn holds the lock: a second start on the same folder says
    // so and exits 1 without touching anything; once the first is killed
    // (lock left behind by a dead process) the folder can be taken again.
    void secondStartSaysAlreadyRunning() {
        QTemporaryDir dir;
        const QString data = dir.filePath(QStringLiteral("data"));
        writeSettings(data, test::writeTinyAppModel(dir.path()));
        auto first = startApp(data);
        QVERIFY(first->waitForStarted(10000));
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(instanceLockPath(data)), 20000);

        auto second = startApp(data);
        QVERIFY(second->waitForFinished(20000));
        QCOMPARE(second->exitStatus(), QProcess::NormalExit);
        QCOMPARE(second->exitCode(), 1);
        const QString err = QString::fromUtf8(second->readAllStandardError());
        QVERIFY2(err.contains(QStringLiteral("already running")) && err.contains(QString::number(first->processId())),
                 qPrintable(err));
        QCOMPARE(first->state(), QProcess::Running);

        killHard(*first);
        QVERIFY(QFileInfo::exists(instanceLockPath(data)));  // stale, its process is gone
        QVERIFY(lockDataFolder(data));
    }

    // The first start is killed while it loads the model (the test hook makes
    // the load take a minute); the next start does not load it again: it
    // names the file, asks for the picker, and forgets it as last model.
    void crashDuringLoadIsNotRepeated() {
        QTemporaryDir dir;
        const QString data = dir.filePath(QStringLiteral("data"));
        const QString model = test::writeTinyAppModel(dir.path());
        writeSettings(data, model);
        auto first = startApp(data, {}, {QStringLiteral("CAIRN_TEST_MODEL_LOAD_DELAY_MS=60000")});
        QVERIFY(first->waitForStarted(10000));
        QTRY_COMPARE_WITH_TIMEOUT(settingValue(data, QStringLiteral("models/loading")), model, 20000);
        killHard(*first);
        QCOMPARE(settingValue(data, QStringLiteral("models/loading")), model);

        // The real binary: it starts, does not load, and exits normally from --screenshot.
        const QString shot = dir.filePath(QStringLiteral("after-crash.png"));
        auto second = startApp(data, {QStringLiteral("--screenshot"), shot});
        QVERIFY(second->waitForFinished(60000));
        QCOMPARE(second->exitCode(), 0);
        QVERIFY(QFileInfo::exists(shot));
        QVERIFY(settingValue(data, QStringLiteral("models/loading")).isEmpty());
        QVERIFY(
            settingValue(data, QStringLiteral("models/last")).isEmpty());  // set again only by a load that succeeded

        // The same start in-process, to look at what it says.
        {
            AppSettings marker(QDir(data).filePath(QStringLiteral("settings.ini")));
            marker.setLoadingModel(model);
            marker.setLastModel(model);
            marker.sync();
        }
        ChatController c(AppPaths::standard(data));
        QSignalSpy picker(&c, &ChatController::modelPickerRequested);
        QSignalSpy loading(c.worker(), &EngineWorker::modelLoading);
        c.start();
        QCOMPARE(picker.count(), 1);
        QCOMPARE(c.interruptedModel(), model);
        QVERIFY2(c.errorText().contains(model) && c.errorText().contains(QStringLiteral("did not load it again")),
                 qPrintable(c.errorText()));
        QTest::qWait(500);
        QCOMPARE(loading.count(), 0);
        QVERIFY(!c.modelLoading() && !c.modelReady());
        // Choosing it again works, and a load that succeeds clears the note.
        c.selectModel(model);
        QTRY_VERIFY_WITH_TIMEOUT(c.modelReady(), 20000);
        QVERIFY(c.interruptedModel().isEmpty());
        QVERIFY(c.settings()->loadingModel().isEmpty());
        c.shutdown();
    }
};

QTEST_MAIN(TestAppProcesses)
#include "test_app_processes.moc"
