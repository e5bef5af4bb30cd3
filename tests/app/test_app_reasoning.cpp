// Reasoning models in the offscreen app (issue 19), on the qwen3 fixture with
// Qwen3-0.6B's chat template (../shared; skipped without it):
// - a stored reply with reasoning shows it as a block, closed ("Thought for 12 s"),
//   opened by a click; the answer alone is the message text, the title, what
//   search finds and what export writes unless asked to include the reasoning;
// - the next turn's prompt is the template's rendering of the stored reply
//   (Qwen3 drops earlier reasoning) and the Thinking switch passes
//   enable_thinking = false to it, kept with the chat;
// - with a generation prompt that opens the block (DeepSeek-R1's), the reply
//   streams as reasoning ("Thinking…") and is stored as reasoning.
#include "running_app.h"

#include "engine_worker.h"
#include "fixture_copy.h"
#include "message_list_model.h"
#include "shared_data.h"

#include "cairn/chat_session.h"
#include "cairn/model.h"
#include "cairn/store/store.h"

#include <QFile>
#include <QGuiApplication>
#include <QQuickItem>
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

// Searches the visual tree (ListView delegates are not QObject children).
QQuickItem* findItem(QQuickItem* root, const QString& name) {
    if (!root) return nullptr;
    if (root->objectName() == name && root->isVisible()) return root;
    for (auto* child : root->childItems())
        if (auto* found = findItem(child, name)) return found;
    return nullptr;
}

QString readText(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

const char* const kReasoning = "<think>\nFirst 2, then 3 more: zebra counting.\n</think>";
const char* const kAnswer = "\n\nIt is 5.";

}  // namespace

class TestAppReasoning : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString qwen3_;

private slots:
    void initTestCase() {
        QQuickStyle::setStyle(QStringLiteral("Basic"));
        qwen3_ = dir_.filePath(QStringLiteral("qwen3.gguf"));
        test::writeFixtureWithTemplate(test::sharedPath("fixtures/qwen3-q8_0.gguf"),
                                       test::readFile(test::sharedPath("templates/templates/Qwen-Qwen3-0.6B.jinja")),
                                       qwen3_.toStdString());
    }

    void storedReasoningIsABlockAndStaysOutOfTheRest() {
        QTemporaryDir dir;
        const AppPaths paths = AppPaths::standard(dir.filePath(QStringLiteral("data")));
        QDir().mkpath(paths.dataDir);
        qint64 conversation = -1;
        {
            store::Store db(paths.databasePath().toStdString());
            conversation = db.createConversation("Sums");
            const int64_t user = db.addMessage(conversation, std::nullopt, store::Role::User, "What is 2 + 3?");
            const int64_t reply = db.addMessage(conversation, user, store::Role::Assistant, "", false);
            store::MessageStats st;
            st.tokenCount = 12;
            st.reasoningMs = 12000;
            db.finishMessage(reply, kAnswer, st, kReasoning);
        }
        RunningApp app(paths, qwen3_);
        QVERIFY(app.window);
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
        QVERIFY(app.controller->thinkingAvailable());
        QVERIFY(findItem(app.window->contentItem(), QStringLiteral("thinkingSwitch")));
        app.controller->openConversation(conversation);
        QTRY_VERIFY_WITH_TIMEOUT(!app.controller->busy(), 20000);
        MessageListModel* m = app.controller->messages();
        QCOMPARE(m->rowCount(), 2);
        QCOMPARE(m->data(m->index(1), MessageListModel::ContentRole).toString(), QStringLiteral("It is 5."));
        QCOMPARE(m->data(m->index(1), MessageListModel::ReasoningRole).toString(),
                 QStringLiteral("First 2, then 3 more: zebra counting."));

        // Closed by default, opened by a click.
        QQuickItem* toggle = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((toggle = findItem(app.window->contentItem(), QStringLiteral("reasoningToggle"))),
                                 5000);
        QCOMPARE(toggle->property("text").toString(), QStringLiteral("▸ Thought for 12 s"));
        QVERIFY(!findItem(app.window->contentItem(), QStringLiteral("reasoningText")));
        QMetaObject::invokeMethod(toggle, "clicked");
        QQuickItem* text = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((text = findItem(app.window->contentItem(), QStringLiteral("reasoningText"))), 5000);
        QCOMPARE(text->property("text").toString(), QStringLiteral("First 2, then 3 more: zebra counting."));
        QCOMPARE(toggle->property("text").toString(), QStringLiteral("▾ Thought for 12 s"));

        // Search finds the answer, not the reasoning; the title is the question's.
        app.controller->library()->search(QStringLiteral("zebra"));
        QCOMPARE(app.controller->library()->searchResults().size(), 0);
        app.controller->library()->search(QStringLiteral("It is"));
        QCOMPARE(app.controller->library()->searchResults().size(), 1);
        QVERIFY(!app.controller->currentTitle().contains(QStringLiteral("zebra")));

        // Export: the answer; the reasoning only when asked.
        QVERIFY(app.controller->library()->hasReasoning(app.controller->currentConversation()));
        const QString md = dir.filePath(QStringLiteral("out.md"));
        QVERIFY(
            app.controller->library()->exportToPath(app.controller->currentConversation(), md, QStringLiteral("md")));
        QVERIFY(readText(md).contains(QStringLiteral("It is 5.")));
        QVERIFY(!readText(md).contains(QStringLiteral("zebra")));
        QVERIFY(app.controller->library()->exportToPath(app.controller->currentConversation(), md, QStringLiteral("md"),
                                                        true));
        QVERIFY(readText(md).contains(QStringLiteral("zebra")));
        const QString json = dir.filePath(QStringLiteral("out.json"));
        QVERIFY(app.controller->library()->exportToPath(app.controller->currentConversation(), json,
                                                        QStringLiteral("json")));
        QVERIFY(!readText(json).contains(QStringLiteral("zebra")));
        QVERIFY(app.controller->library()->exportToPath(app.controller->currentConversation(), json,
                                                        QStringLiteral("json"), true));
        QVERIFY(readText(json).contains(QStringLiteral("\"reasoning\"")));

        // The next turn: the stored reply as the template renders it (no earlier reasoning).
        const auto engineModel = Model::load(qwen3_.toStdString());
        ChatSession expected(*engineModel);
        std::vector<ChatMessage> messages = {
            {"user", "What is 2 + 3?"}, {"assistant", std::string(kReasoning) + kAnswer}, {"user", "And 3 + 4?"}};
        ChatRendering rendering;
        const auto ids = expected.promptTokens(messages, true, &rendering);
        QVERIFY(rendering.text.find("zebra") == std::string::npos);
        QVERIFY(rendering.text.find("It is 5.") != std::string::npos);
        QSignalSpy finished(app.controller.get(), &ChatController::replyFinished);
        app.controller->send(QStringLiteral("And 3 + 4?"));
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished[0][2].value<ReplyStats>().promptTokens, qint64(ids.size()));

        // Thinking off for this chat (kept with it): regenerating the reply renders
        // the template's empty reasoning block after the same prompt, which is reused.
        app.controller->setThinking(false);
        QVERIFY(!app.controller->thinking());
        {
            store::Store db(paths.databasePath().toStdString());
            QCOMPARE(db.settings(conversation).value("thinking", true), false);
        }
        expected.setThinking(false);
        const auto offIds = expected.promptTokens(messages, true, &rendering);
        QVERIFY(rendering.text.ends_with("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
        app.controller->regenerate(m->lastMessageId());
        QVERIFY(finished.wait(30000));
        const auto stats = finished[1][2].value<ReplyStats>();
        QCOMPARE(stats.promptTokens, qint64(offIds.size()));
        QCOMPARE(stats.reusedTokens, qint64(ids.size()));
        QCOMPARE(stats.prefilledTokens, qint64(offIds.size() - ids.size()));
    }

    void promptThatOpensReasoningStreamsAsThinking() {
        QTemporaryDir dir;
        // ChatML whose generation prompt opens the reasoning, as DeepSeek-R1's does.
        const QString model = dir.filePath(QStringLiteral("r1.gguf"));
        test::writeFixtureWithTemplate(
            test::sharedPath("fixtures/qwen3-q8_0.gguf"),
            "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{% endfor %}"
            "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n<think>\\n' }}{% endif %}",
            model.toStdString());
        const AppPaths paths = AppPaths::standard(dir.filePath(QStringLiteral("data")));
        RunningApp app(paths, model);
        QVERIFY(app.window);
        QTRY_VERIFY_WITH_TIMEOUT(app.controller->modelReady() && !app.controller->busy(), 20000);
        QVERIFY(!app.controller->thinkingAvailable());  // this template does not read enable_thinking
        app.controller->settings()->setMaxTokens(8);
        app.controller->settings()->setTemperature(0);
        bool thinkingSeen = false, answerSeen = false;
        QObject receiver;
        connect(app.controller->worker(), &EngineWorker::replyText, &receiver,
                [&](qint64, const QString& text, const QString&, bool thinking, qint64) {
                    thinkingSeen = thinkingSeen || thinking;
                    answerSeen = answerSeen || !text.isEmpty();
                });
        QSignalSpy finished(app.controller.get(), &ChatController::replyFinished);
        app.controller->send(QStringLiteral("Hi"));
        QVERIFY(finished.wait(30000));
        QVERIFY(finished[0][2].value<ReplyStats>().generatedTokens > 0);
        QVERIFY(thinkingSeen);
        QVERIFY(!answerSeen);
        store::Store db(paths.databasePath().toStdString());
        const auto msgs = db.messages(app.controller->currentConversation());
        QCOMPARE(int(msgs.size()), 2);
        QVERIFY(!msgs[1].reasoning.empty());
        QVERIFY(msgs[1].content.empty());
        MessageListModel* m = app.controller->messages();
        QVERIFY(!m->data(m->index(1), MessageListModel::ReasoningRole).toString().isEmpty());
        QVERIFY(!m->data(m->index(1), MessageListModel::ThinkingRole).toBool());
        QVERIFY(m->data(m->index(1), MessageListModel::ReasoningLabelRole)
                    .toString()
                    .startsWith(QStringLiteral("Thought for")));
    }
};

// QTEST_MAIN, but skipped (77) like the conformance tests without ../shared.
int main(int argc, char** argv) {
    if (cairn::test::sharedDir().empty()) {
        std::printf("SKIPPED: shared data folder not found (set -DCAIRN_SHARED_DIR=...)\n");
        return 77;
    }
    QGuiApplication app(argc, argv);
    TestAppReasoning tc;
    return QTest::qExec(&tc, argc, argv);
}
#include "test_app_reasoning.moc"
