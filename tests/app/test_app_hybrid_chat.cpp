// The hybrid architectures (lfm2, granitehybrid, qwen35) in the real app,
// offscreen, each on its shared fixture with its own model family's chat
// template written into the metadata: the picker shows the architecture; a
// chat sends, regenerates, edits and resumes after a restart, and each turn
// prefills only what the session's memory (KV cache cut back, recurrent state
// restored from message-boundary checkpoints, a snapshot after the restart)
// does not already hold.
#include "chat_controller.h"
#include "message_list_model.h"
#include "model_list_model.h"

#include "app_test_support.h"
#include "fixture_copy.h"
#include "running_app.h"
#include "shared_data.h"

#include <QDir>
#include <QGuiApplication>
#include <QQuickStyle>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtTest>

#include <cstdio>

Q_IMPORT_QML_PLUGIN(CairnPlugin)

using namespace cairn;
using namespace cairn::app;
using cairn::test::RunningApp;

namespace {

struct TurnStats {
    qint64 prompt = 0, reused = 0, prefilled = 0, generated = 0;
};

TurnStats statsOf(const ReplyStats& s) {
    return {s.promptTokens, s.reusedTokens, s.prefilledTokens, s.generatedTokens};
}

QString describe(const char* what, const TurnStats& t) {
    return QStringLiteral("%1: prompt %2, reused %3, prefilled %4, generated %5")
        .arg(QLatin1String(what))
        .arg(t.prompt)
        .arg(t.reused)
        .arg(t.prefilled)
        .arg(t.generated);
}

// Waits for the next replyFinished and returns its token counts.
TurnStats nextReply(QSignalSpy& finished) {
    const int before = finished.count();
    if (!QTest::qWaitFor([&] { return finished.count() > before; }, 60000)) return {-1, -1, -1, -1};
    const TurnStats t = statsOf(finished.last()[2].value<ReplyStats>());
    qInfo("prompt %lld, reused %lld, prefilled %lld", t.prompt, t.reused, t.prefilled);
    return t;
}

}  // namespace

class TestAppHybridChat : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QQuickStyle::setStyle(QStringLiteral("Basic")); }

    void chatEditRegenerateResume_data() {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QString>("chatTemplate");
        QTest::addColumn<QString>("architecture");
        QTest::newRow("lfm2") << "lfm2-f16.gguf"
                              << "LFM2-8B-A1B.jinja"
                              << "lfm2";
        QTest::newRow("granitehybrid") << "granitehybrid-f16.gguf"
                                       << "ibm-granite-granite-3.3-2B-Instruct.jinja"
                                       << "granitehybrid";
        QTest::newRow("qwen35") << "qwen35-q8_0.gguf"
                                << "Qwen-Qwen3-0.6B.jinja"
                                << "qwen35";
    }

    void chatEditRegenerateResume() {
        QFETCH(QString, fixture);
        QFETCH(QString, chatTemplate);
        QFETCH(QString, architecture);
        QTemporaryDir dir;
        const AppPaths paths = AppPaths::standard(dir.filePath(QStringLiteral("data")));
        // In the app's own models folder, where the picker looks.
        QVERIFY(QDir().mkpath(paths.modelsDir()));
        const QString model = QDir(paths.modelsDir()).filePath(fixture);
        test::writeFixtureWithTemplate(
            test::sharedPath("fixtures/" + fixture.toStdString()),
            test::readFile(test::sharedPath("templates/templates/" + chatTemplate.toStdString())), model.toStdString());
        qint64 conversation = -1;
        TurnStats second;
        {
            RunningApp app(paths, model);
            QVERIFY(app.window);
            QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 30000);
            // Its own template renders (no ChatML fallback note).
            QVERIFY2(!app.controller->modelNote().contains(QLatin1String("ChatML")),
                     qPrintable(app.controller->modelNote()));

            // The picker lists the file with its architecture.
            ModelListModel* models = app.controller->models();
            int row = -1;
            QTRY_VERIFY_WITH_TIMEOUT(
                [&] {
                    for (int i = 0; i < models->rowCount(); ++i)
                        if (models->data(models->index(i), ModelListModel::PathRole).toString() == model) row = i;
                    return row >= 0;
                }(),
                10000);
            QCOMPARE(models->data(models->index(row), ModelListModel::ArchitectureRole).toString(), architecture);
            QVERIFY(models->data(models->index(row), ModelListModel::ErrorRole).toString().isEmpty());

            QSignalSpy finished(app.controller.get(), &ChatController::replyFinished);
            app.controller->send(QStringLiteral("Hello there, hybrid model!"));
            const TurnStats first = nextReply(finished);
            QVERIFY(first.prompt > 0);
            QCOMPARE(first.reused, 0);
            QCOMPARE(first.prefilled, first.prompt);
            conversation = app.controller->currentConversation();
            MessageListModel* m = app.controller->messages();

            // Turn 2 continues the session: the whole first exchange (prompt
            // and reply) is reused, only the new message is prefilled.
            QVERIFY(first.generated > 0);
            app.controller->send(QStringLiteral("And a second question?"));
            second = nextReply(finished);
            QCOMPARE(second.reused + second.prefilled, second.prompt);
            QVERIFY2(second.reused >= first.prompt + first.generated, qPrintable(describe("turn 2", second)));

            // Regenerate the last reply: its prompt is what turn 2 prefilled
            // up to; the recurrent layers come back from the checkpoint at the
            // prompt's end, so nothing is prefilled again.
            app.controller->regenerate(m->lastMessageId());
            const TurnStats regen = nextReply(finished);
            QCOMPARE(regen.prompt, second.prompt);
            QVERIFY2(regen.prefilled == 0, qPrintable(describe("regenerate", regen)));

            // Edit the second question: back to the checkpoint at the end of
            // the first reply, then only the edited message is prefilled.
            const qint64 secondUser = m->data(m->index(2), MessageListModel::IdRole).toLongLong();
            app.controller->editMessage(secondUser, QStringLiteral("An edited second question, longer than before?"));
            const TurnStats edit = nextReply(finished);
            QCOMPARE(edit.reused + edit.prefilled, edit.prompt);
            QVERIFY2(edit.reused >= first.prompt + first.generated, qPrintable(describe("edit", edit)));
            second = edit;
            QCOMPARE(m->rowCount(), 4);
        }

        // Restart on the same files: the conversation resumes from its
        // snapshot, and the next turn prefills only its own message.
        RunningApp app(paths, model);
        QVERIFY(app.window);
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 30000);
        QSignalSpy ready(app.controller.get(), &ChatController::conversationReady);
        app.controller->openConversation(conversation);
        QVERIFY(ready.wait(30000));
        QCOMPARE(ready[0][1].value<RestoreKind>(), RestoreKind::Snapshot);
        QSignalSpy finished(app.controller.get(), &ChatController::replyFinished);
        app.controller->send(QStringLiteral("A third one after the restart."));
        const TurnStats third = nextReply(finished);
        QCOMPARE(third.reused + third.prefilled, third.prompt);
        QVERIFY2(third.reused >= second.prompt + second.generated, qPrintable(describe("after restart", third)));

        // Regenerating that reply after the restart prefills nothing either.
        app.controller->regenerate(app.controller->messages()->lastMessageId());
        const TurnStats regen = nextReply(finished);
        QCOMPARE(regen.prompt, third.prompt);
        QVERIFY2(regen.prefilled == 0, qPrintable(describe("regenerate after restart", regen)));
    }
};

// The fixtures are in ../shared: without it the test says why and is skipped.
int main(int argc, char** argv) {
    if (cairn::test::sharedDir().empty()) {
        std::printf("SKIPPED: shared data folder not found (set -DCAIRN_SHARED_DIR=...)\n");
        return 77;
    }
    QGuiApplication app(argc, argv);
    TestAppHybridChat tc;
    return QTest::qExec(&tc, argc, argv);
}

#include "test_app_hybrid_chat.moc"
