// The controller ↔ engine-worker bridge: signal order, Stop during prefill
// and during decode, errors as signals, a UI thread that never blocks, and
// the kernel calibration's cache in the data folder after a model load.
#include "chat_controller.h"
#include "engine_worker.h"

#include "app_test_support.h"

#include "tiny_models.h"

#include "cairn/gguf.h"
#include "cairn/kernel_calibration.h"
#include "cairn/store/store.h"

#include <QElapsedTimer>
#include <QGuiApplication>
#include <QTemporaryDir>
#include <QtTest>

using namespace cairn;
using namespace cairn::app;

namespace {

// A prompt of about n byte tokens (the tiny vocabulary has no merges).
QString longText(int n) {
    QString s;
    while (s.size() < n) s += QStringLiteral("the quick brown fox jumps over the lazy dog ");
    return s.left(n);
}

}  // namespace

class TestAppBridge : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString model_;

    std::unique_ptr<ChatController> makeController(const QString& name) {
        auto paths = AppPaths::standard(dir_.filePath(name));
        auto c = std::make_unique<ChatController>(paths);
        test::fastSettings(*c->settings(), model_);
        return c;
    }

    static bool waitReady(ChatController& c) {
        c.start();
        return QTest::qWaitFor([&] { return c.modelReady() && !c.busy(); }, 20000);
    }

private slots:
    void cleanup() { EngineWorker::setKernelMeasure({}); }

    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = test::writeTinyAppModel(dir_.path(), 4);
    }

    void signalOrder() {
        auto c = makeController(QStringLiteral("order"));
        // Receives the worker's queued signals; it dies with this function, so a signal
        // still queued when the test ends never reaches the lambdas' dead locals.
        QObject receiver;
        c->settings()->setPrefillChunk(16);
        QStringList events;
        auto* w = c->worker();
        connect(w, &EngineWorker::modelLoading, &receiver, [&] { events << QStringLiteral("loading"); });
        connect(w, &EngineWorker::modelLoaded, &receiver, [&] { events << QStringLiteral("loaded"); });
        connect(w, &EngineWorker::prefillProgress, &receiver, [&] { events << QStringLiteral("progress"); });
        connect(w, &EngineWorker::replyText, &receiver, [&] { events << QStringLiteral("text"); });
        connect(c.get(), &ChatController::replyFinished, &receiver, [&] { events << QStringLiteral("finished"); });
        QVERIFY(waitReady(*c));
        QSignalSpy finished(c.get(), &ChatController::replyFinished);
        c->send(longText(300));
        QVERIFY(c->generating());
        QVERIFY(finished.wait(30000));
        QCOMPARE(events.value(0), QStringLiteral("loading"));
        QCOMPARE(events.value(1), QStringLiteral("loaded"));
        const int firstProgress = events.indexOf(QStringLiteral("progress"));
        const int lastProgress = events.lastIndexOf(QStringLiteral("progress"));
        const int firstText = events.indexOf(QStringLiteral("text"));
        QVERIFY2(firstProgress == 2, qPrintable(events.join(QLatin1Char(' '))));
        QVERIFY(events.count(QStringLiteral("progress")) >= 2);  // 300+ tokens in chunks of 16
        QVERIFY(firstText > lastProgress);
        QCOMPARE(events.last(), QStringLiteral("finished"));
        QVERIFY(!c->generating());

        auto stats = finished[0][2].value<ReplyStats>();
        QVERIFY(stats.promptTokens >= 300);
        QCOMPARE(stats.prefilledTokens, stats.promptTokens);
        // The streamed text is what was stored.
        store::Store db(c->paths().databasePath().toStdString());
        auto msg = db.message(finished[0][1].toLongLong());
        QVERIFY(msg.complete);
        QCOMPARE(c->messages()->contentAt(1), QString::fromStdString(msg.content));
        QCOMPARE(msg.stats.tokenCount, stats.generatedTokens);
        QVERIFY(!c->speedText().isEmpty());
        // The tiny model has no chat template: the model note says so.
        QVERIFY(c->modelNote().contains(QStringLiteral("ChatML")));
        // Streaming is coalesced: at most one text update per interval (plus the final one).
        const double replyMs = stats.prefillMs + stats.decodeMs;
        QVERIFY(events.count(QStringLiteral("text")) <= int(replyMs / EngineWorker::kStreamIntervalMs) + 2);
        QCOMPARE(c->contextSize(), 4096);
        QVERIFY(c->contextUsed() > 300);
    }

    // Stop pressed on the UI thread while a long prefill runs (chunks of 1),
    // while a timer on the UI thread keeps firing.
    void stopDuringPrefillAndUiNeverBlocks() {
        auto c = makeController(QStringLiteral("prefill"));
        // Receives the worker's queued signals; it dies with this function, so a signal
        // still queued when the test ends never reaches the lambdas' dead locals.
        QObject receiver;
        c->settings()->setPrefillChunk(1);
        QVERIFY(waitReady(*c));
        qint64 lastDone = 0, total = 0;
        bool stopped = false;
        int ticks = 0;
        connect(c->worker(), &EngineWorker::prefillProgress, &receiver, [&](qint64 done, qint64 t) {
            lastDone = done;
            total = t;
            // Stop once the UI timer has been seen ticking during the prefill, so the
            // gap check below measures a prefill and not an idle moment.
            if (done >= 200 && ticks >= 3 && !stopped) {
                stopped = true;
                c->stop();
            }
        });
        QElapsedTimer clock;
        qint64 maxGap = 0, last = -1;
        QTimer timer;
        timer.setInterval(10);
        connect(&timer, &QTimer::timeout, this, [&] {
            qint64 now = clock.elapsed();
            if (last >= 0) maxGap = std::max(maxGap, now - last);
            last = now;
            ++ticks;
        });
        QSignalSpy finished(c.get(), &ChatController::replyFinished);
        clock.start();
        timer.start();
        c->send(longText(3000));
        QVERIFY(finished.wait(60000));
        timer.stop();
        auto stats = finished[0][2].value<ReplyStats>();
        QCOMPARE(stats.stop, backend::Finish::Cancelled);
        QCOMPARE(stats.generatedTokens, 0);
        QVERIFY(stopped);
        QVERIFY2(lastDone < total, qPrintable(QStringLiteral("%1 of %2").arg(lastDone).arg(total)));
        QVERIFY(ticks >= 3);
        QVERIFY2(maxGap <= 50, qPrintable(QStringLiteral("UI timer gap %1 ms").arg(maxGap)));
        // The user's message is kept, and so is the reply that never began:
        // unfinished (complete = 0, empty), so the view offers Retry.
        store::Store db(c->paths().databasePath().toStdString());
        auto msgs = db.messages(c->currentConversation());
        QCOMPARE(int(msgs.size()), 2);
        QCOMPARE(msgs[0].role, store::Role::User);
        QCOMPARE(msgs[1].role, store::Role::Assistant);
        QVERIFY(!msgs[1].complete);
        QVERIFY(msgs[1].content.empty());
        QCOMPARE(c->messages()->rowCount(), 2);
        QCOMPARE(c->messages()->data(c->messages()->index(1), MessageListModel::CompleteRole).toBool(), false);

        // Retry replaces it: one reply under the message, finished.
        c->settings()->setPrefillChunk(64);
        c->regenerate(msgs[1].id);
        QVERIFY(finished.wait(60000));
        msgs = db.messages(c->currentConversation());
        QCOMPARE(int(msgs.size()), 2);
        QCOMPARE(msgs[1].id, finished[1][1].toLongLong());
        QVERIFY(msgs[1].complete);
        QCOMPARE(db.siblings(msgs[1].id).ids.size(), size_t(1));
        QCOMPARE(c->messages()->rowCount(), 2);
    }

    void stopDuringDecode() {
        auto c = makeController(QStringLiteral("decode"));
        // Receives the worker's queued signals; it dies with this function, so a signal
        // still queued when the test ends never reaches the lambdas' dead locals.
        QObject receiver;
        c->settings()->setMaxTokens(3000);
        c->settings()->setTemperature(0);  // greedy: no end token by chance
        QVERIFY(waitReady(*c));
        int pieces = 0;
        // Pressed as soon as the first text reaches the UI thread.
        connect(c->worker(), &EngineWorker::replyText, &receiver, [&] {
            if (pieces++ == 0) c->stop();
        });
        QSignalSpy finished(c.get(), &ChatController::replyFinished);
        c->send(longText(400));
        QVERIFY(finished.wait(60000));
        auto stats = finished[0][2].value<ReplyStats>();
        if (stats.stop == backend::Finish::Stop) QSKIP("the model ended its reply before Stop arrived");
        QCOMPARE(stats.stop, backend::Finish::Cancelled);
        const qint64 generated = stats.generatedTokens;
        QVERIFY(generated > 0);
        QVERIFY(generated < 3000);
        // The partial reply is committed, complete, with what was generated.
        store::Store db(c->paths().databasePath().toStdString());
        auto msgs = db.messages(c->currentConversation());
        QCOMPARE(int(msgs.size()), 2);
        QVERIFY(msgs[1].complete);
        QVERIFY(!msgs[1].content.empty());
        QCOMPARE(msgs[1].stats.tokenCount, generated);
    }

    // Closing the app while a reply streams: the worker stops and the reply so
    // far is committed, nothing is lost.
    void closingMidReplyLosesNothing() {
        auto c = makeController(QStringLiteral("close"));
        // Receives the worker's queued signals; it dies with this function, so a signal
        // still queued when the test ends never reaches the lambdas' dead locals.
        QObject receiver;
        c->settings()->setMaxTokens(3000);
        c->settings()->setTemperature(0);
        QVERIFY(waitReady(*c));
        bool streaming = false;
        connect(c->worker(), &EngineWorker::replyText, &receiver, [&] { streaming = true; });
        c->send(longText(100));
        QTRY_VERIFY_WITH_TIMEOUT(streaming, 20000);
        const QString dbPath = c->paths().databasePath();
        const qint64 conversation = c->currentConversation();
        c.reset();  // what the window's close does: shutdown(), quit(), wait()
        store::Store db(dbPath.toStdString());
        auto msgs = db.messages(conversation);
        QCOMPARE(int(msgs.size()), 2);
        QCOMPARE(msgs[0].content, longText(100).toStdString());
        QVERIFY(msgs[1].complete);
        QVERIFY(!msgs[1].content.empty());
        QVERIFY(msgs[1].stats.tokenCount > 0);
    }

    void errorsAreSignals() {
        auto c = makeController(QStringLiteral("errors"));
        // A file that is not a model: modelFailed with a message, no crash.
        QFile bad(dir_.filePath(QStringLiteral("bad.gguf")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(QByteArray(64, 'x'));
        bad.close();
        c->settings()->setLastModel(bad.fileName());
        // The worker's signals reach these spies directly from its thread, maybe
        // before a wait() would start: count them instead of waiting for the next one.
        QSignalSpy failed(c->worker(), &EngineWorker::modelFailed);
        // start() picks the last model (it exists, so no fallback to the bundled one).
        c->start();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
        QVERIFY(!failed[0][1].toString().isEmpty());
        QTRY_VERIFY(!c->errorText().isEmpty());  // the controller hears of it through the event loop
        QVERIFY(!c->modelReady());

        // Sending without a model: the message is kept, the error arrives as a signal.
        QSignalSpy error(c->worker(), &EngineWorker::errorOccurred);
        c->send(QStringLiteral("hello?"));
        QTRY_COMPARE_WITH_TIMEOUT(error.count(), 1, 10000);
        QVERIFY(error[0][0].toString().contains(QStringLiteral("No model")));
        QTRY_VERIFY(!c->generating());
        store::Store db(c->paths().databasePath().toStdString());
        QCOMPARE(int(db.messages(c->currentConversation()).size()), 1);

        // A context too small for the conversation (stop policy): an error, not a crash.
        c->settings()->setContextSize(256);
        c->selectModel(model_);
        QTRY_VERIFY_WITH_TIMEOUT(c->modelReady() && !c->busy(), 20000);
        error.clear();
        c->send(longText(600));
        QTRY_VERIFY_WITH_TIMEOUT(error.count() >= 1, 20000);
        QVERIFY2(error.last()[0].toString().contains(QStringLiteral("does not fit")),
                 qPrintable(error.last()[0].toString()));
        QVERIFY(error.last()[0].toString().contains(QStringLiteral("raise the context size")));

        // The model's own limit is the cap: raising the setting would not help, so it is not advised.
        QDir().mkpath(dir_.filePath(QStringLiteral("short")));
        const QString shortModel = test::writeTinyAppModel(dir_.filePath(QStringLiteral("short")), 2, 512);
        c->settings()->setContextSize(4096);
        c->selectModel(shortModel);
        QTRY_VERIFY_WITH_TIMEOUT(c->modelReady() && !c->busy() && c->modelPath() == shortModel, 20000);
        QCOMPARE(c->contextSize(), 512);  // in effect, as Settings shows it
        error.clear();
        c->send(longText(600));
        QTRY_VERIFY_WITH_TIMEOUT(error.count() >= 1, 20000);
        const QString capped = error.last()[0].toString();
        QVERIFY2(capped.contains(QStringLiteral("the most this model allows")) &&
                     !capped.contains(QStringLiteral("raise")),
                 qPrintable(capped));
    }

    // A model whose chat template fails to render: it still loads, replies
    // use ChatML, and the model note says why.
    void brokenTemplateFallsBackWithTheReason() {
        gguf::Writer w = test::tinyModelWriter({});
        w.setString("tokenizer.chat_template", "{% if %}broken");
        const QString path = dir_.filePath(QStringLiteral("broken-template.gguf"));
        w.write(path.toStdString());
        auto c = makeController(QStringLiteral("template"));
        c->settings()->setLastModel(path);
        QVERIFY(waitReady(*c));
        QVERIFY2(c->modelNote().contains(QStringLiteral("chat template failed")) &&
                     c->modelNote().contains(QStringLiteral("ChatML")),
                 qPrintable(c->modelNote()));
        QVERIFY(c->settings()->loadingModel().isEmpty());  // it loaded: no crash marker left
        QSignalSpy finished(c.get(), &ChatController::replyFinished);
        c->send(QStringLiteral("hello"));
        QVERIFY(finished.wait(30000));
    }

    // Regenerate makes a sibling reply, Edit a sibling user message; switching
    // branches shows the other path.
    void branches() {
        auto c = makeController(QStringLiteral("branches"));
        c->settings()->setMaxTokens(6);
        QVERIFY(waitReady(*c));
        QSignalSpy finished(c.get(), &ChatController::replyFinished);
        c->send(QStringLiteral("first question"));
        QVERIFY(finished.wait(20000));
        auto* m = c->messages();
        const qint64 user = m->data(m->index(0), MessageListModel::IdRole).toLongLong();
        const qint64 reply1 = m->lastMessageId();

        c->regenerate(reply1);
        QVERIFY(finished.wait(20000));
        QCOMPARE(m->rowCount(), 2);
        QVERIFY(m->lastMessageId() != reply1);
        QCOMPARE(m->data(m->index(1), MessageListModel::SiblingIndexRole).toInt(), 1);
        QCOMPARE(m->data(m->index(1), MessageListModel::SiblingCountRole).toInt(), 2);

        c->switchBranch(m->lastMessageId(), -1);
        QCOMPARE(m->lastMessageId(), reply1);
        QCOMPARE(m->data(m->index(1), MessageListModel::SiblingIndexRole).toInt(), 0);

        c->editMessage(user, QStringLiteral("second question"));
        QVERIFY(finished.wait(20000));
        QCOMPARE(m->rowCount(), 2);
        QCOMPARE(m->contentAt(0), QStringLiteral("second question"));
        QCOMPARE(m->data(m->index(0), MessageListModel::SiblingCountRole).toInt(), 2);
        c->switchBranch(m->data(m->index(0), MessageListModel::IdRole).toLongLong(), -1);
        QCOMPARE(m->contentAt(0), QStringLiteral("first question"));
        // Back on the first question's branch, with its two replies (the newest shown).
        QCOMPARE(m->data(m->index(1), MessageListModel::SiblingCountRole).toInt(), 2);
        QCOMPARE(m->data(m->index(1), MessageListModel::SiblingIndexRole).toInt(), 1);
    }

    // Sidebar operations on the UI thread's store: search, rename, delete with
    // undo, export and import.
    void sidebarSearchExportImport() {
        auto c = makeController(QStringLiteral("sidebar"));
        auto& db = c->store();
        int64_t a = db.createConversation("Apples");
        int64_t u = db.addMessage(a, std::nullopt, store::Role::User, "how do pomegranates grow?");
        db.addMessage(a, u, store::Role::Assistant, "Slowly, in **warm** places.\n\n```\nsun + water\n```");
        int64_t b = db.createConversation("Other");
        db.addMessage(b, std::nullopt, store::Role::User, "unrelated words");
        c->conversations()->reload();
        QCOMPARE(c->conversations()->rowCount(), 2);

        c->library()->search(QStringLiteral("pomegran"));
        QCOMPARE(c->library()->searchResults().size(), 1);
        auto hit = c->library()->searchResults()[0].toMap();
        QCOMPARE(hit.value(QStringLiteral("conversationId")).toLongLong(), a);
        QVERIFY(hit.value(QStringLiteral("snippet")).toString().contains(QStringLiteral("<b><u>pomegranates</u></b>")));
        // Markup in a message is text in its snippet: only the hit is highlighted.
        int64_t tags = db.createConversation("Tags");
        db.addMessage(tags, std::nullopt, store::Role::User,
                      "quince <b>not bold</b> <img src=\"http://127.0.0.1:1/x\">");
        c->library()->search(QStringLiteral("quince"));
        QCOMPARE(c->library()->searchResults().size(), 1);
        const QString snippet = c->library()->searchResults()[0].toMap().value(QStringLiteral("snippet")).toString();
        QVERIFY2(snippet.contains(QStringLiteral("&lt;b&gt;not bold&lt;/b&gt; &lt;img src=")), qPrintable(snippet));
        QCOMPARE(snippet.count(QStringLiteral("<b>")), 1);
        QVERIFY(!snippet.contains(QStringLiteral("<img")));
        db.purgeConversation(tags);
        c->library()->search(QString());
        QCOMPARE(c->library()->searchResults().size(), 0);

        c->library()->renameConversation(a, QStringLiteral("  Fruit  "));
        QCOMPARE(QString::fromStdString(db.conversation(a).title), QStringLiteral("Fruit"));

        c->openConversation(a);
        QCOMPARE(c->messages()->rowCount(), 2);
        c->library()->deleteConversation(a);
        QCOMPARE(c->conversations()->rowCount(), 1);
        QCOMPARE(c->currentConversation(), -1);
        QCOMPARE(c->library()->undoTitle(), QStringLiteral("Fruit"));
        c->library()->undoDelete();
        QCOMPARE(c->conversations()->rowCount(), 2);
        QVERIFY(c->library()->undoTitle().isEmpty());

        c->openConversation(a);
        const QString md = dir_.filePath(QStringLiteral("fruit.md")),
                      json = dir_.filePath(QStringLiteral("fruit.json"));
        QVERIFY(
            c->library()->exportConversation(c->currentConversation(), QUrl::fromLocalFile(md), QStringLiteral("md")));
        QVERIFY(c->library()->exportConversation(c->currentConversation(), QUrl::fromLocalFile(json),
                                                 QStringLiteral("json")));
        QFile mdFile(md);
        QVERIFY(mdFile.open(QIODevice::ReadOnly));
        QVERIFY(mdFile.readAll().contains("pomegranates"));
        // The import runs on its own thread: the call returns at once, importFinished follows.
        QSignalSpy imported(c->library(), &ConversationLibrary::importFinished);
        QVERIFY(c->library()->importConversation(QUrl::fromLocalFile(json)));
        QVERIFY(c->library()->importing());
        QVERIFY(!c->library()->importConversation(QUrl::fromLocalFile(json)));  // one at a time
        QVERIFY(imported.wait(20000));
        QVERIFY(!c->library()->importing());
        const qint64 copy = imported[0][0].toLongLong();
        QVERIFY(copy > 0 && copy != a);
        QCOMPARE(c->conversations()->rowCount(), 3);
        QCOMPARE(c->currentConversation(), copy);
        QCOMPARE(c->messages()->rowCount(), 2);
        QCOMPARE(c->messages()->contentAt(1), QString::fromStdString(db.message(db.messages(a)[1].id).content));
        // "Fruit" exists: the copy says it is one, and the notice says why.
        QCOMPARE(QString::fromStdString(db.conversation(copy).title), QStringLiteral("Fruit (imported)"));
        QCOMPARE(imported[0][1].toString(), QStringLiteral("Fruit (imported)"));
        QVERIFY2(c->noticeText().contains(QStringLiteral("“Fruit” already exists")), qPrintable(c->noticeText()));
        c->clearError();
        QVERIFY(c->library()->importConversation(QUrl::fromLocalFile(json)));
        QVERIFY(imported.wait(20000));
        QCOMPARE(QString::fromStdString(db.conversation(imported[1][0].toLongLong()).title),
                 QStringLiteral("Fruit (imported 2)"));
        // A file that is not a conversation: an error message, nothing imported.
        c->clearError();
        QVERIFY(c->library()->importConversation(QUrl::fromLocalFile(md)));
        QVERIFY(imported.wait(20000));
        QCOMPARE(imported[2][0].toLongLong(), -1);
        QVERIFY(c->errorText().startsWith(QStringLiteral("Import failed")));
        QCOMPARE(c->conversations()->rowCount(), 4);
    }

    // A search hit on a branch that is not shown: opening it switches to that
    // branch and asks the view to scroll to it; a hit on the shown branch
    // leaves the branch alone.
    void searchHitOpensItsBranch() {
        auto c = makeController(QStringLiteral("searchhit"));
        auto& db = c->store();
        int64_t conv = db.createConversation("Branches");
        int64_t u = db.addMessage(conv, std::nullopt, store::Role::User, "tell me about birds");
        int64_t first = db.addMessage(conv, u, store::Role::Assistant, "albatross glide far");
        int64_t second = db.addMessage(conv, u, store::Role::Assistant, "penguins swim well");
        QCOMPARE(db.activeLeaf(conv).value_or(-1), second);
        c->conversations()->reload();
        QSignalSpy focus(c.get(), &ChatController::messageFocusRequested);

        c->library()->search(QStringLiteral("albatross"));
        QCOMPARE(c->library()->searchResults().size(), 1);
        QCOMPARE(c->library()->searchResults()[0].toMap().value(QStringLiteral("messageId")).toLongLong(), first);
        c->openSearchResult(conv, first);
        QCOMPARE(c->currentConversation(), conv);
        QCOMPARE(c->messages()->rowOf(first), 1);
        QCOMPARE(db.activeLeaf(conv).value_or(-1), first);
        QCOMPARE(focus.count(), 1);
        QCOMPARE(focus[0][0].toLongLong(), first);

        c->openSearchResult(conv, u);  // on the shown branch
        QCOMPARE(db.activeLeaf(conv).value_or(-1), first);
        QCOMPARE(focus.count(), 2);
        c->openSearchResult(conv, 12345);  // gone meanwhile: an error, no crash
        QVERIFY(!c->errorText().isEmpty());
        c->clearError();
        c->openConversation(9999);  // no such conversation: an error, the open one stays
        QVERIFY(c->errorText().contains(QStringLiteral("no conversation 9999")));
        QCOMPARE(c->currentConversation(), conv);
        QCOMPARE(c->messages()->rowCount(), 2);
        db.deleteConversation(conv);
        c->newChat();
        c->openConversation(conv);  // deleted
        QCOMPARE(c->currentConversation(), -1);
    }

    // Reopening: a matching snapshot is restored; a damaged one is dropped and
    // the branch is prefilled again with progress (the messages are untouched).
    void reopenRestoresOrPrefills() {
        auto c = makeController(QStringLiteral("reopen"));
        c->settings()->setPrefillChunk(8);
        QVERIFY(waitReady(*c));
        QSignalSpy finished(c.get(), &ChatController::replyFinished);
        c->send(longText(120));
        QVERIFY(finished.wait(20000));
        const qint64 conv = c->currentConversation();
        const qint64 used = c->contextUsed();
        QCOMPARE(int(c->store().snapshots(conv).size()), 1);

        QSignalSpy ready(c.get(), &ChatController::conversationReady);
        c->newChat();
        c->send(QStringLiteral("another chat"));  // the engine moves to another conversation
        QVERIFY(finished.wait(20000));
        c->openConversation(conv);
        QVERIFY(ready.wait(20000));
        QCOMPARE(ready.last()[1].value<RestoreKind>(), RestoreKind::Snapshot);
        QCOMPARE(c->contextUsed(), used);

        c->newChat();
        c->send(QStringLiteral("and another"));
        QVERIFY(finished.wait(20000));
        c->store().database().exec("UPDATE snapshots SET data = zeroblob(64)");
        QSignalSpy progress(c->worker(), &EngineWorker::prefillProgress);
        c->openConversation(conv);
        QVERIFY(ready.wait(20000));
        QCOMPARE(ready.last()[1].value<RestoreKind>(), RestoreKind::Prefill);
        QVERIFY(progress.count() >= 2);
        QVERIFY(c->resumeNote().startsWith(QStringLiteral("Read the conversation")));
        QCOMPARE(int(c->store().messages(conv).size()), 2);
        QCOMPARE(c->messages()->rowCount(), 2);
    }

    // A conversation's overrides, set before its first message, are stored
    // with it and applied to its replies (also after a restart); resetting
    // one brings the app default back.
    void conversationOverridesApplied() {
        qint64 conv = -1;
        {
            auto c = makeController(QStringLiteral("overrides"));
            QVERIFY(waitReady(*c));
            auto* o = c->conversationSettings();
            QVERIFY(o->setOverride(QStringLiteral("maxTokens"), 3));
            QVERIFY(o->setOverride(QStringLiteral("temperature"), 0));
            c->setConversationSystemPrompt(QStringLiteral("Answer in one word."));
            QCOMPARE(c->conversationSystemPrompt(), QStringLiteral("Answer in one word."));
            QCOMPARE(c->generationSettings().maxTokens, 24);  // no conversation yet
            QSignalSpy finished(c.get(), &ChatController::replyFinished);
            c->send(QStringLiteral("short answers please"));
            QVERIFY(finished.wait(20000));
            conv = c->currentConversation();
            QCOMPARE(c->store().settings(conv).value("maxTokens", 0), 3);
            QCOMPARE(c->store().conversation(conv).systemPrompt, std::string("Answer in one word."));
            auto stats = finished.last()[2].value<ReplyStats>();
            QCOMPARE(stats.generatedTokens, 3);
            QCOMPARE(stats.stop, backend::Finish::Length);
            // A new chat starts from the defaults.
            c->newChat();
            QCOMPARE(c->conversationSettings()->overrideCount(), 0);
            QVERIFY(c->conversationSystemPrompt().isEmpty());
            QCOMPARE(c->generationSettings().maxTokens, 24);
        }
        auto c = makeController(QStringLiteral("overrides"));
        QVERIFY(waitReady(*c));
        c->openConversation(conv);
        QCOMPARE(c->conversationSettings()->overrideCount(), 2);
        auto g = c->generationSettings();
        QCOMPARE(g.maxTokens, 3);
        QCOMPARE(g.temperature, 0.0f);
        QCOMPARE(g.topK, c->settings()->topK());  // not overridden

        QSignalSpy finished(c.get(), &ChatController::replyFinished);
        c->conversationSettings()->resetOverride(QStringLiteral("maxTokens"));
        QVERIFY(!c->store().settings(conv).contains("maxTokens"));
        QCOMPARE(c->generationSettings().maxTokens, 24);
        c->send(QStringLiteral("now a longer one"));
        QVERIFY(finished.wait(20000));
        auto stats = finished.last()[2].value<ReplyStats>();
        QVERIFY2(stats.generatedTokens > 3, qPrintable(QString::number(int(stats.stop))));
    }

    // Only the sampling fields, in range, come from a conversation's stored
    // settings: an imported file cannot ask for 100000 threads or a huge context.
    void storedSettingsAreChecked() {
        auto c = makeController(QStringLiteral("checked"));
        auto& db = c->store();
        int64_t conv = db.createConversation("imported");
        db.setSettings(conv,
                       {{"threads", 100000},
                        {"contextSize", 1LL << 40},
                        {"snapshotBudgetMiB", -1},
                        {"temperature", 99.0},
                        {"topK", 3},
                        {"seed", 1.5},
                        {"maxTokens", "many"}});
        c->openConversation(conv);
        const auto mine = c->settings()->generationSettings();
        const auto g = c->generationSettings();
        for (const GenerationLimit* l : {&limits::threads, &limits::contextSize, &limits::snapshotBudgetMiB,
                                         &limits::temperature, &limits::seed, &limits::maxTokens})
            QCOMPARE(g.value(*l), mine.value(*l));
        QCOMPARE(g.topK, 3);
        QCOMPARE(c->conversationSettings()->overrideCount(), 1);
    }

    // A settings file edited by hand with absurd engine values still gives a
    // working chat: the worker bounds threads, context and chunk.
    void absurdEngineSettingsAreBounded() {
        auto c = makeController(QStringLiteral("absurd"));
        c->settings()->setThreads(1000000);
        c->settings()->setContextSize(2000000000);
        c->settings()->setPrefillChunk(1 << 30);
        c->settings()->setMaxTokens(4);
        QVERIFY(waitReady(*c));
        QCOMPARE(c->contextSize(), 4096);  // the model's own limit
        QSignalSpy finished(c.get(), &ChatController::replyFinished);
        c->send(QStringLiteral("still fine?"));
        QVERIFY(finished.wait(20000));
        QVERIFY(finished.last()[2].value<ReplyStats>().generatedTokens > 0);
    }

    // Pin and unpin from the controller (the sidebar's action).
    // Switching conversation clears the other one's figures; the context
    // counter follows the branch shown; the next start opens the last chat.
    void statusFollowsTheConversationAndStartOpensTheLast() {
        auto c = makeController(QStringLiteral("status"));
        QVERIFY(waitReady(*c));
        QSignalSpy finished(c.get(), &ChatController::replyFinished);
        c->send(QStringLiteral("a first question"));
        QVERIFY(finished.wait(30000));
        const qint64 first = c->currentConversation();
        QVERIFY(!c->speedText().isEmpty());
        const qint64 firstUsed = c->contextUsed();
        QVERIFY(firstUsed > 0);

        // A branch with a much longer question: the counter follows it there and back.
        const qint64 userId = c->messages()->data(c->messages()->index(0), MessageListModel::IdRole).toLongLong();
        c->editMessage(userId, longText(400));
        QVERIFY(finished.wait(30000));
        const qint64 longUsed = c->contextUsed();
        QVERIFY2(longUsed > firstUsed + 300, qPrintable(QStringLiteral("%1 vs %2").arg(longUsed).arg(firstUsed)));
        QSignalSpy ready(c.get(), &ChatController::conversationReady);
        c->switchBranch(c->messages()->data(c->messages()->index(0), MessageListModel::IdRole).toLongLong(), -1);
        QVERIFY(ready.wait(20000));
        QVERIFY2(c->contextUsed() < firstUsed + 50, qPrintable(QString::number(c->contextUsed())));

        auto& db = c->store();
        const qint64 other = db.createConversation("Other");
        db.addMessage(other, std::nullopt, store::Role::User, "unrelated");
        c->conversations()->reload();
        c->openConversation(other);
        QVERIFY(c->speedText().isEmpty());
        QVERIFY(c->resumeNote().isEmpty());
        c->openConversation(first);
        const QString paths = c->paths().dataDir;
        c.reset();

        ChatController again(AppPaths::standard(paths));
        again.settings()->setThreads(1);
        again.start();
        QCOMPARE(again.currentConversation(), first);
        QCOMPARE(again.messages()->rowCount(), 2);
        QTRY_VERIFY_WITH_TIMEOUT(again.modelReady() && !again.busy(), 20000);
        // A deleted one is not opened: a new chat.
        again.library()->deleteConversation(first);
        again.shutdown();
        ChatController third(AppPaths::standard(paths));
        third.start();
        QCOMPARE(third.currentConversation(), -1);
        QTRY_VERIFY_WITH_TIMEOUT(third.modelReady() && !third.busy(), 20000);
        third.shutdown();
    }

    // Loading a model leaves the calibration in the data folder, for this CPU
    // and thread count; the next start reuses it (the file is not rewritten:
    // a new measurement would change measure_ms) and a hostile file is replaced.
    // A measurement that favours the first candidate, with `othersShare` of
    // the CPU taken by other programs meanwhile (the suite runs tests side by
    // side, so the real figure would decide whether the file is written).
    static EngineWorker::KernelMeasure fakeMeasure(double othersShare) {
        return [othersShare](ExecContext&, const std::vector<std::string>& candidates) {
            KernelMeasurement m;
            m.othersCpuShare = othersShare;
            for (KernelFamily f : kKernelFamilies)
                for (KernelRegime r : kKernelRegimes)
                    for (const std::string& p : candidates)
                        m.timings.push_back({f, r, p, p == candidates.front() ? 0.001 : 0.002, 1e6, {}, 1});
            return m;
        };
    }

    void loadWritesTheKernelCalibration() {
        if (kernelPathOverridden()) QSKIP("CAIRN_KERNELS overrides the calibration");
        EngineWorker::setKernelMeasure(fakeMeasure(0.0));
        auto c = makeController(QStringLiteral("calibration"));
        const QString file = c->paths().kernelCalibrationPath();
        QVERIFY(!QFile::exists(file));
        QVERIFY(waitReady(*c));
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray first = f.readAll();
        f.close();
        const auto k = kernelCalibrationFromJson(first.toStdString(), "test", supportedKernelPaths());
        QCOMPARE(k.cpuModel, cpuModelName());
        QCOMPARE(k.threads, 1);
        const QString dataDir = c->paths().dataDir;
        c.reset();

        auto again = std::make_unique<ChatController>(AppPaths::standard(dataDir));
        QVERIFY(waitReady(*again));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), first);
        f.close();
        again.reset();

        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write("{\"format\": 1, \"cpu\": [");
        f.close();
        auto third = std::make_unique<ChatController>(AppPaths::standard(dataDir));
        QVERIFY(waitReady(*third));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(kernelCalibrationFromJson(f.readAll().toStdString(), "test", supportedKernelPaths()).threads, 1);
    }

    // Measured while other programs took most of the CPU: the model still
    // loads, and nothing is cached for the next start.
    void busyMachineLeavesNoKernelCalibration() {
        if (kernelPathOverridden()) QSKIP("CAIRN_KERNELS overrides the calibration");
        EngineWorker::setKernelMeasure(fakeMeasure(0.8));
        auto c = makeController(QStringLiteral("calibration-busy"));
        QVERIFY(waitReady(*c));
        QVERIFY(!QFile::exists(c->paths().kernelCalibrationPath()));
    }

    void pinning() {
        auto c = makeController(QStringLiteral("pin"));
        auto& db = c->store();
        int64_t a = db.createConversation("first");
        db.createConversation("second");
        c->conversations()->reload();
        QCOMPARE(c->conversations()->rowOf(a), 1);
        c->library()->setPinned(a, true);
        QVERIFY(db.conversation(a).pinned);
        QCOMPARE(c->conversations()->rowOf(a), 0);
        QCOMPARE(c->conversations()->data(c->conversations()->index(0), ConversationListModel::SectionRole).toString(),
                 QStringLiteral("Pinned"));
        c->library()->setPinned(a, false);
        QVERIFY(!db.conversation(a).pinned);
        QCOMPARE(c->conversations()->rowOf(a), 1);
        c->library()->setPinned(9999, true);  // unknown: an error message, no crash
        QVERIFY(!c->errorText().isEmpty());
    }

    void dropOldestTurns() {
        auto c = makeController(QStringLiteral("drop"));
        c->settings()->setContextSize(512);
        c->settings()->setDropOldestTurns(true);
        c->settings()->setMaxTokens(8);
        QVERIFY(waitReady(*c));
        QSignalSpy finished(c.get(), &ChatController::replyFinished);
        c->send(longText(250));
        QVERIFY(finished.wait(30000));
        c->send(longText(250));
        QVERIFY(finished.wait(30000));
        auto stats = finished.last()[2].value<ReplyStats>();
        QVERIFY(stats.droppedTurns >= 1);
        QVERIFY(stats.promptTokens < 512);
    }
};

QTEST_MAIN(TestAppBridge)
#include "test_app_bridge.moc"
