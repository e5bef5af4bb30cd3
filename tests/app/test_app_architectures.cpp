// End to end, offscreen, one row per architecture added with issue 18: the
// real UI on a shared fixture (gemma3-q8_0, phi3-q8_0, smollm3-q8_0) with its
// family's chat template in its metadata (Gemma's turn markup — Gemma 3 uses
// Gemma 2's —, Phi-3.5-mini's, SmolLM3-3B's). The template is used (no ChatML
// fallback), the prompt fed is exactly the ids ChatSession::promptTokens gives
// for the conversation, the reply streams and lands in the database, the
// second message reuses the whole first turn, and after a restart the
// conversation resumes from its snapshot and still reuses it.
#include "running_app.h"

#include "fixture_copy.h"
#include "shared_data.h"

#include "cairn/chat_session.h"
#include "cairn/model.h"
#include "cairn/store/store.h"

#include <QGuiApplication>
#include <QQuickItem>
#include <QQuickStyle>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtTest>

#include <cstdio>

Q_IMPORT_QML_PLUGIN(CairnPlugin)

using namespace cairn;
using cairn::test::RunningApp;

class TestAppArchitectures : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QQuickStyle::setStyle(QStringLiteral("Basic")); }

    void chatsThroughItsTemplate_data() {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QString>("chatTemplate");
        QTest::newRow("gemma3") << "gemma3-q8_0"
                                << "google-gemma-2-2b-it";
        QTest::newRow("phi3") << "phi3-q8_0"
                              << "microsoft-Phi-3.5-mini-instruct";
        QTest::newRow("smollm3") << "smollm3-q8_0"
                                 << "HuggingFaceTB-SmolLM3-3B";
    }

    void chatsThroughItsTemplate() {
        QFETCH(QString, fixture);
        QFETCH(QString, chatTemplate);
        QTemporaryDir dir;
        const QString model = dir.filePath(fixture + QStringLiteral(".gguf"));
        test::writeFixtureWithTemplate(
            test::sharedPath("fixtures/" + fixture.toStdString() + ".gguf"),
            test::readFile(test::sharedPath("templates/templates/" + chatTemplate.toStdString() + ".jinja")),
            model.toStdString());
        const auto engineModel = Model::load(model.toStdString());
        const ChatSession expected(*engineModel);
        const std::string first = "What is the tallest mountain in Europe?";
        const app::AppPaths paths = app::AppPaths::standard(dir.filePath(QStringLiteral("data")));
        qint64 conversation = -1;
        qint64 firstPrompt = 0;
        {
            RunningApp app(paths, model);
            QVERIFY(app.window);
            QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady(), 20000);
            QVERIFY2(!app.controller->modelNote().contains(QStringLiteral("ChatML")),
                     qPrintable(app.controller->modelNote()));
            auto* input = app.find<QQuickItem>("composerInput");
            auto* list = app.find<QQuickItem>("messageList");
            QVERIFY(input && list);
            QSignalSpy finished(app.controller.get(), &app::ChatController::replyFinished);
            input->setProperty("text", QString::fromStdString(first));
            input->forceActiveFocus();
            QTest::keyClick(app.window, Qt::Key_Return);
            QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 30000);
            QTRY_COMPARE_WITH_TIMEOUT(list->property("count").toInt(), 2, 5000);
            conversation = app.controller->currentConversation();
            const auto stats = finished[0][2].value<app::ReplyStats>();
            firstPrompt = stats.promptTokens;
            ChatRendering rendering;
            const auto ids = expected.promptTokens({{"user", first}}, true, &rendering);
            QVERIFY2(!rendering.usedFallback, rendering.fallbackReason.c_str());
            QCOMPARE(firstPrompt, qint64(ids.size()));
            QVERIFY(firstPrompt > qint64(engineModel->tokenizer().encode(first, false, false).size()));

            store::Store db(paths.databasePath().toStdString());
            const auto msgs = db.messages(conversation);
            QCOMPARE(int(msgs.size()), 2);
            QCOMPARE(msgs[0].content, first);
            QVERIFY(msgs[1].complete);
            QCOMPARE(int(db.snapshots(conversation).size()), 1);
        }

        RunningApp app(paths, model);
        QVERIFY(app.window);
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
        QSignalSpy ready(app.controller.get(), &app::ChatController::conversationReady);
        app.controller->openConversation(conversation);
        QVERIFY(ready.wait(20000));
        QCOMPARE(ready[0][1].value<app::RestoreKind>(), app::RestoreKind::Snapshot);
        QSignalSpy finished(app.controller.get(), &app::ChatController::replyFinished);
        app.controller->send(QStringLiteral("And the highest one in Africa?"));
        QVERIFY(finished.wait(30000));
        const auto stats = finished[0][2].value<app::ReplyStats>();
        const qint64 prompt = stats.promptTokens;
        const qint64 reused = stats.reusedTokens;
        QCOMPARE(reused + stats.prefilledTokens, prompt);
        QVERIFY2(reused >= firstPrompt,
                 qPrintable(QStringLiteral("reused %1 of the first %2").arg(reused).arg(firstPrompt)));
    }
};

// QTEST_MAIN, but skipped (77) like the conformance tests without ../shared.
int main(int argc, char** argv) {
    if (cairn::test::sharedDir().empty()) {
        std::printf("SKIPPED: shared data folder not found (set -DCAIRN_SHARED_DIR=...)\n");
        return 77;
    }
    QGuiApplication app(argc, argv);
    TestAppArchitectures tc;
    return QTest::qExec(&tc, argc, argv);
}
#include "test_app_architectures.moc"
