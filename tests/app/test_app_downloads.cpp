// The download view (ui/DownloadView.qml) offscreen in the real app, against
// the loopback mock hub (tests/hub/mock_hub.h), from an empty models folder
// to a chat: search by clicking, open a repository, see its files by
// quantization with fit badges and an unsupported architecture marked (read
// from the header by a ranged request), download with progress, pause and
// resume, a gated file that fails with 401 until a token is saved (to the
// keyring), a download paused across a restart, then "Use" and chat.
#include "chat_controller.h"
#include "hub_downloads.h"
#include "secret_store.h"

#include "app_test_support.h"
#include "mock_hub.h"
#include "running_app.h"

#include <QPointer>
#include <QQuickItem>
#include <QQuickStyle>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtTest>

Q_IMPORT_QML_PLUGIN(CairnPlugin)

using namespace cairn;
using namespace cairn::app;
using cairn::test::MockFile;
using cairn::test::MockHub;
using cairn::test::RunningApp;

namespace {

std::string fileBytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll().toStdString() : std::string();
}

// A GGUF header of another architecture, then filler.
std::string foreignModel(size_t total) {
    gguf::Writer w;
    w.setString("general.architecture", "gpt2");
    w.setUInt32("gpt2.block_count", 2);
    const auto h = w.toBytes();
    return std::string(reinterpret_cast<const char*>(h.data()), h.size()) + test::fillerBytes(total - h.size(), 3);
}

void collect(QQuickItem* root, QList<QQuickItem*>& out) {
    if (!root) return;
    out << root;
    for (auto* c : root->childItems()) collect(c, out);
}

// The visible item under `root` whose objectName is `name` (and, if given, whose `property` is `value`).
QQuickItem* item(QQuickItem* root, const QString& name, const char* property = nullptr, const QVariant& value = {}) {
    QList<QQuickItem*> all;
    collect(root, all);
    for (auto* i : all)
        if (i->objectName() == name && i->isVisible() && (!property || i->property(property) == value)) return i;
    return nullptr;
}

QQuickItem* child(QQuickItem* root, const QString& name) { return root ? item(root, name) : nullptr; }

// False when the item is missing, hidden, disabled or destroyed while it settles
// (a delegate rebuilt under the pointer is what a user's click would miss too).
bool click(QQuickWindow* window, QQuickItem* item) {
    QPointer<QQuickItem> target(item);
    if (!target || !target->isVisible() || !target->isEnabled()) return false;
    // Once laid out: the same place in the scene on two looks 50 ms apart (a new row or an opening dialog moves).
    QPointF p, before(-1, -1);
    for (int i = 0; i < 40 && p != before; ++i) {
        before = p;
        QTest::qWait(50);
        if (!target) return false;
        p = target->mapToScene(QPointF(target->width() / 2, target->height() / 2));
    }
    QTest::mousePress(window, Qt::LeftButton, {}, p.toPoint());
    QTest::qWait(80);  // a person's click lasts about this long; the item must survive it
    if (!target) return false;
    QTest::mouseRelease(window, Qt::LeftButton, {}, p.toPoint());
    return true;
}

QVariantMap firstJob(HubDownloads* hub) { return hub->jobs()->get(0); }

}  // namespace

class TestAppDownloads : public QObject {
    Q_OBJECT
    MockHub mock_;
    std::string tinyModel_;

private slots:
    void initTestCase() {
        QQuickStyle::setStyle(QStringLiteral("Basic"));
        test::TinyModelOptions o;
        o.seed = 5;
        const auto bytes = test::tinyModelWriter(o).toBytes();
        tinyModel_.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        MockFile slow{"slow-Q8_0.gguf", tinyModel_ + test::fillerBytes(1500000, 9)};
        slow.delayMsPerChunk = 60;
        mock_.repos = {
            {"org/Tiny-GGUF",
             500,
             9,
             {},
             {{"tiny-Q8_0.gguf", tinyModel_}, {"tiny-F16.gguf", tinyModel_ + std::string(4096, '\0')}}},
            {"org/Gpt2-GGUF", 20, 1, {}, {{"gpt2-Q4_0.gguf", foreignModel(300000)}}},
            {"org/Slow-GGUF", 10, 1, {}, {slow}},
            {"org/Gated-GGUF", 5, 1, "hf_test", {{"gated-Q4_0.gguf", tinyModel_}}},
        };
        mock_.start();
    }

    // The queue's model changes rows in place: a progress update is a
    // dataChanged of that row (its delegate lives on), a new job an insert at
    // the end, a forgotten one a removal, and never a reset.
    void aProgressUpdateKeepsTheRows() {
        DownloadJobListModel model;
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged),
            inserted(&model, &QAbstractItemModel::rowsInserted), removed(&model, &QAbstractItemModel::rowsRemoved),
            reset(&model, &QAbstractItemModel::modelReset);
        auto row = [](int id, double progress) {
            DownloadJobRow r;
            r.id = id;
            r.state = QStringLiteral("downloading");
            r.progress = progress;
            return r;
        };
        model.sync({row(1, 0.1), row(2, 0)});
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(model.count(), 2);
        model.sync({row(1, 0.2), row(2, 0)});
        QCOMPARE(changed.size(), 1);
        QCOMPARE(changed.first().at(0).toModelIndex().row(), 0);
        QCOMPARE(model.get(0)[QStringLiteral("progress")].toDouble(), 0.2);
        model.sync({row(1, 0.2), row(2, 0)});  // nothing new: no signal
        QCOMPARE(changed.size(), 1);
        model.sync({row(2, 0), row(3, 0)});  // 1 forgotten, 3 queued
        QCOMPARE(removed.size(), 1);
        QCOMPARE(removed.first().at(1).toInt(), 0);
        QCOMPARE(inserted.size(), 2);
        QCOMPARE(model.get(0)[QStringLiteral("id")].toInt(), 2);
        QCOMPARE(model.get(1)[QStringLiteral("id")].toInt(), 3);
        QVERIFY(model.get(2).isEmpty());
        QCOMPARE(reset.size(), 0);
    }

    void fromEmptyFolderToChat() {
        QTemporaryDir dir;
        const AppPaths paths = AppPaths::standard(dir.filePath(QStringLiteral("data")));
        paths.create();
        auto* backend = new MemorySecretBackend;
        auto prepare = [&](ChatController& c) {
            c.settings()->setHubUrl(QString::fromStdString(mock_.url()));
            c.keys()->setBackend(std::unique_ptr<SecretBackend>(backend));
        };
        auto app = std::make_unique<RunningApp>(paths, QString(), prepare);
        QVERIFY(app->window);
        app->window->resize(1100, 800);
        QMetaObject::invokeMethod(app->window, "openPanel", Q_ARG(QVariant, QStringLiteral("downloads")));
        auto* view = app->window->findChild<QObject*>(QStringLiteral("downloadView"));
        QVERIFY(view);
        QTRY_VERIFY(view->property("opened").toBool());
        auto* hub = view->property("hub").value<HubDownloads*>();
        QVERIFY(hub);
        hub->setAvailableMemory(qint64(8) << 30);
        QQuickItem* content = view->property("contentItem").value<QQuickItem*>();
        QQuickItem* root = app->window->contentItem();
        QVERIFY(content);

        // Before a search: the recommended list.
        auto* repos = child(content, QStringLiteral("hubRepos"));
        QVERIFY(repos);
        QCOMPARE(repos->property("count").toInt(), int(hub->recommended().size()));

        // Search by typing and clicking.
        child(content, QStringLiteral("hubQuery"))->setProperty("text", QStringLiteral("gguf"));
        QVERIFY(click(app->window, child(content, QStringLiteral("hubSearch"))));
        QTRY_COMPARE_WITH_TIMEOUT(hub->repos().size(), 4, 20000);
        QTRY_COMPARE(repos->property("count").toInt(), 4);
        QCOMPARE(mock_.lastSearchQuery(), std::string("search=gguf&filter=gguf&sort=downloads&direction=-1"));

        // An architecture Cairn does not run: marked, its Download disabled.
        QTest::qWait(100);
        QTRY_VERIFY(item(root, QString(), "repo", QStringLiteral("org/Gpt2-GGUF")));
        QVERIFY(click(app->window, item(root, QString(), "repo", QStringLiteral("org/Gpt2-GGUF"))));
        QTRY_VERIFY_WITH_TIMEOUT(hub->architectureNote().contains(QLatin1String("gpt2")), 20000);
        QTRY_VERIFY(child(content, QStringLiteral("hubFile_gpt2-Q4_0.gguf")));
        auto* gptRow = child(content, QStringLiteral("hubFile_gpt2-Q4_0.gguf"));
        QVERIFY(!child(gptRow, QStringLiteral("downloadButton"))->isEnabled());
        QVERIFY(hub->fileGroups()
                    .first()
                    .toMap()[QStringLiteral("files")]
                    .toList()
                    .first()
                    .toMap()[QStringLiteral("note")]
                    .toString() == QStringLiteral("not supported: gpt2"));

        // A supported repository: two quantizations, fit badges from weights + K/V.
        QVERIFY(click(app->window, item(root, QString(), "repo", QStringLiteral("org/Tiny-GGUF"))));
        QTRY_VERIFY_WITH_TIMEOUT(hub->architectureNote().contains(QLatin1String("llama")), 20000);
        QCOMPARE(hub->fileGroups().size(), 2);
        QCOMPARE(hub->fileGroups()[0].toMap()[QStringLiteral("quantization")].toString(), QStringLiteral("Q8_0"));
        QTRY_VERIFY(child(content, QStringLiteral("hubFile_tiny-Q8_0.gguf")));
        auto* row = child(content, QStringLiteral("hubFile_tiny-Q8_0.gguf"));
        QTRY_COMPARE(child(row, QStringLiteral("fitBadge"))->property("text").toString(), QStringLiteral("fits"));
        hub->setAvailableMemory(100000);
        QTRY_COMPARE(child(child(content, QStringLiteral("hubFile_tiny-Q8_0.gguf")), QStringLiteral("fitBadge"))
                         ->property("text")
                         .toString(),
                     QStringLiteral("won't fit"));
        hub->setAvailableMemory(qint64(8) << 30);

        // Download it, then Use: the model loads and chats.
        row = child(content, QStringLiteral("hubFile_tiny-Q8_0.gguf"));
        QVERIFY(click(app->window, child(row, QStringLiteral("downloadButton"))));
        QTRY_COMPARE_WITH_TIMEOUT(firstJob(hub)[QStringLiteral("state")].toString(), QStringLiteral("done"), 30000);
        const QString path = QDir(paths.modelsDir()).filePath(QStringLiteral("tiny-Q8_0.gguf"));
        QCOMPARE(firstJob(hub)[QStringLiteral("path")].toString(), path);
        QVERIFY(fileBytes(path) == tinyModel_);
        QTRY_VERIFY(app->controller->models()->rowCount() > 0);
        bool listed = false;  // modelDownloaded refreshed the picker's list
        const int pathRole = app->controller->models()->roleNames().key("path");
        for (int i = 0; i < app->controller->models()->rowCount(); ++i)
            listed |= app->controller->models()->index(i).data(pathRole).toString() == path;
        QVERIFY(listed);
        QVERIFY(click(app->window, child(content, QStringLiteral("jobUse"))));
        QTRY_VERIFY_WITH_TIMEOUT(app->controller->modelReady() && app->controller->modelPath() == path, 20000);
        app->controller->send(QStringLiteral("Hello"));
        QTRY_VERIFY_WITH_TIMEOUT(!app->controller->generating() && app->controller->messages()->rowCount() == 2, 30000);

        // The gated file: 401 until the token is saved, then Resume finishes it.
        QMetaObject::invokeMethod(app->window, "openPanel", Q_ARG(QVariant, QStringLiteral("downloads")));
        QTRY_VERIFY(view->property("opened").toBool());
        hub->forget(firstJob(hub)[QStringLiteral("id")].toInt());
        hub->openRepo(QStringLiteral("org/Gated-GGUF"));
        QTRY_VERIFY_WITH_TIMEOUT(child(content, QStringLiteral("hubFile_gated-Q4_0.gguf")), 20000);
        QVERIFY(
            click(app->window,
                  child(child(content, QStringLiteral("hubFile_gated-Q4_0.gguf")), QStringLiteral("downloadButton"))));
        QTRY_COMPARE_WITH_TIMEOUT(firstJob(hub)[QStringLiteral("state")].toString(), QStringLiteral("failed"), 20000);
        QTRY_VERIFY(child(content, QStringLiteral("jobError")));
        QVERIFY2(
            child(content, QStringLiteral("jobError"))->property("text").toString().contains(QLatin1String("(401)")),
            qPrintable(child(content, QStringLiteral("jobError"))->property("text").toString()));
        child(content, QStringLiteral("hubToken"))->setProperty("text", QStringLiteral("hf_test"));
        QMetaObject::invokeMethod(child(content, QStringLiteral("hubToken")), "accepted");
        QTRY_VERIFY(hub->hasToken());
        QCOMPARE(backend->entries().value(QStringLiteral("hub-token")), QStringLiteral("hf_test"));
        QVERIFY(click(app->window, child(content, QStringLiteral("jobResume"))));
        QTRY_COMPARE_WITH_TIMEOUT(firstJob(hub)[QStringLiteral("state")].toString(), QStringLiteral("done"), 20000);
        hub->forget(firstJob(hub)[QStringLiteral("id")].toInt());

        // A slow download: pause from the view, quit, start again: it is back paused with its bytes; resume finishes it.
        hub->openRepo(QStringLiteral("org/Slow-GGUF"));
        QTRY_VERIFY_WITH_TIMEOUT(child(content, QStringLiteral("hubFile_slow-Q8_0.gguf")), 20000);
        QVERIFY(
            click(app->window,
                  child(child(content, QStringLiteral("hubFile_slow-Q8_0.gguf")), QStringLiteral("downloadButton"))));
        QTRY_VERIFY_WITH_TIMEOUT(firstJob(hub)[QStringLiteral("progress")].toDouble() > 0.1, 20000);
        QVERIFY(
            firstJob(hub)[QStringLiteral("status")].toString().contains(QLatin1String("/s")));  // speed and time left
        QVERIFY(click(app->window, child(content, QStringLiteral("jobPause"))));
        QTRY_COMPARE_WITH_TIMEOUT(firstJob(hub)[QStringLiteral("state")].toString(), QStringLiteral("paused"), 10000);
        const QString bytesText = firstJob(hub)[QStringLiteral("bytesText")].toString();
        // The picture of docs/screenshots/downloads.png: a repository's files and a paused download.
        if (qEnvironmentVariableIsSet("CAIRN_DOWNLOAD_SCREENSHOT")) {
            hub->openRepo(QStringLiteral("org/Tiny-GGUF"));
            QTRY_VERIFY_WITH_TIMEOUT(hub->architectureNote().contains(QLatin1String("llama")), 20000);
            QTest::qWait(500);
            app->window->grabWindow().save(qEnvironmentVariable("CAIRN_DOWNLOAD_SCREENSHOT"));
        }
        app.reset();

        auto* backend2 = new MemorySecretBackend;
        app = std::make_unique<RunningApp>(paths, QString(), [&](ChatController& c) {
            c.keys()->setBackend(std::unique_ptr<SecretBackend>(backend2));
        });
        app->window->resize(1100, 800);
        QMetaObject::invokeMethod(app->window, "openPanel", Q_ARG(QVariant, QStringLiteral("downloads")));
        view = app->window->findChild<QObject*>(QStringLiteral("downloadView"));
        QTRY_VERIFY(view->property("opened").toBool());
        hub = view->property("hub").value<HubDownloads*>();
        content = view->property("contentItem").value<QQuickItem*>();
        QCOMPARE(hub->jobs()->count(), 1);
        QCOMPARE(firstJob(hub)[QStringLiteral("state")].toString(), QStringLiteral("paused"));
        QCOMPARE(firstJob(hub)[QStringLiteral("bytesText")].toString(), bytesText);
        mock_.clearLog();
        QTRY_VERIFY(child(content, QStringLiteral("jobResume")));
        QVERIFY(click(app->window, child(content, QStringLiteral("jobResume"))));
        QTRY_COMPARE_WITH_TIMEOUT(firstJob(hub)[QStringLiteral("state")].toString(), QStringLiteral("done"), 30000);
        QVERIFY(fileBytes(QDir(paths.modelsDir()).filePath(QStringLiteral("slow-Q8_0.gguf"))) ==
                mock_.repos[2].files[0].content);
        QVERIFY(QString::fromStdString(mock_.log().back().range).startsWith(QLatin1String("bytes=")));
        QCOMPARE(app->controller->settings()->hubDownloads(), QStringLiteral("[]"));
    }
};

QTEST_MAIN(TestAppDownloads)
#include "test_app_downloads.moc"
