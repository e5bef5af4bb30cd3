// The list models under QAbstractItemModelTester, model-file descriptions
// (including unusable files), Markdown segments and settings persistence.
#include "app_settings.h"
#include "conversation_list_model.h"
#include "conversation_settings_model.h"
#include "markdown_segments.h"
#include "message_list_model.h"
#include "model_catalog.h"
#include "model_list_model.h"

#include "app_test_support.h"
#include "shared_data.h"
#include "tiny_mamba.h"
#include "tiny_models.h"

#include "cairn/gguf.h"
#include "cairn/model.h"
#include "cairn/sampler.h"

#include "cairn/store/store.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

using namespace cairn;
using namespace cairn::app;

class TestAppModels : public QObject {
    Q_OBJECT
private slots:
    void conversationsAndMessages() {
        QTemporaryDir dir;
        store::Store db(dir.filePath(QStringLiteral("c.sqlite")).toStdString());
        ConversationListModel conversations;
        MessageListModel messages;
        QAbstractItemModelTester t1(&conversations, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(&messages, QAbstractItemModelTester::FailureReportingMode::QtTest);
        conversations.setStore(&db);
        messages.setStore(&db);
        conversations.reload();
        QCOMPARE(conversations.rowCount(), 0);

        int64_t a = db.createConversation("first");
        int64_t b = db.createConversation("second");
        int64_t u = db.addMessage(b, std::nullopt, store::Role::User, "hello");
        int64_t r1 = db.addMessage(b, u, store::Role::Assistant, "one");
        int64_t r2 = db.addMessage(b, u, store::Role::Assistant, "two");
        conversations.reload();
        QCOMPARE(conversations.rowCount(), 2);
        QCOMPARE(conversations.data(conversations.index(0), ConversationListModel::IdRole).toLongLong(), b);
        QCOMPARE(conversations.data(conversations.index(1), ConversationListModel::TitleRole).toString(),
                 QStringLiteral("first"));
        QCOMPARE(conversations.data(conversations.index(0), ConversationListModel::SectionRole).toString(),
                 QStringLiteral("Today"));
        QCOMPARE(conversations.rowOf(a), 1);

        messages.load(b);
        QCOMPARE(messages.rowCount(), 2);
        QCOMPARE(messages.data(messages.index(1), MessageListModel::IdRole).toLongLong(), r2);
        QCOMPARE(messages.data(messages.index(1), MessageListModel::SiblingIndexRole).toInt(), 1);
        QCOMPARE(messages.data(messages.index(1), MessageListModel::SiblingCountRole).toInt(), 2);
        QCOMPARE(messages.data(messages.index(0), MessageListModel::SiblingCountRole).toInt(), 1);

        db.setActiveLeaf(b, r1);
        messages.load(b);
        QCOMPARE(messages.data(messages.index(1), MessageListModel::ContentRole).toString(), QStringLiteral("one"));
        QSignalSpy changed(&messages, &QAbstractItemModel::dataChanged);
        messages.setStreamingText(r1, QStringLiteral("one more"));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed[0][0].value<QModelIndex>().row(), 1);
        QCOMPARE(messages.contentAt(1), QStringLiteral("one more"));
        messages.load(-1);
        QCOMPARE(messages.rowCount(), 0);

        db.deleteConversation(a);
        conversations.reload();
        QCOMPARE(conversations.rowCount(), 1);
    }

    // Pinned conversations come first, in their own "Pinned" section, and
    // keep it until unpinned.
    void pinnedSection() {
        QTemporaryDir dir;
        store::Store db(dir.filePath(QStringLiteral("c.sqlite")).toStdString());
        ConversationListModel conversations;
        QAbstractItemModelTester tester(&conversations, QAbstractItemModelTester::FailureReportingMode::QtTest);
        conversations.setStore(&db);
        int64_t a = db.createConversation("older");
        int64_t b = db.createConversation("newer");
        db.setPinned(a, true);
        conversations.reload();
        QCOMPARE(conversations.rowOf(a), 0);
        QVERIFY(conversations.data(conversations.index(0), ConversationListModel::PinnedRole).toBool());
        QCOMPARE(conversations.data(conversations.index(0), ConversationListModel::SectionRole).toString(),
                 QStringLiteral("Pinned"));
        QCOMPARE(conversations.data(conversations.index(1), ConversationListModel::SectionRole).toString(),
                 QStringLiteral("Today"));
        db.setPinned(a, false);
        conversations.reload();
        QCOMPARE(conversations.rowOf(b), 0);
        QCOMPARE(conversations.data(conversations.index(1), ConversationListModel::SectionRole).toString(),
                 QStringLiteral("Today"));
    }

    // Per-conversation overrides: set → stored in the conversation's settings
    // JSON under the generationSettings key; reset → the key is gone; values
    // out of range are refused; keys the model does not own are kept.
    void conversationOverrides() {
        QTemporaryDir dir;
        store::Store db(dir.filePath(QStringLiteral("c.sqlite")).toStdString());
        AppSettings settings(dir.filePath(QStringLiteral("s.ini")));
        settings.setTemperature(0.7);
        ConversationSettingsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setStore(&db);
        model.setDefaults(&settings);
        int64_t conv = db.createConversation("tuned");
        db.setSettings(conv, {{"someone_else", "kept"}});
        model.load(conv);
        QCOMPARE(model.rowCount(), 7);
        QCOMPARE(model.overrideCount(), 0);
        auto row = [&](const char* key) {
            for (int r = 0; r < model.rowCount(); ++r)
                if (model.data(model.index(r), ConversationSettingsModel::KeyRole).toString() == QLatin1String(key))
                    return r;
            return -1;
        };
        const QModelIndex temp = model.index(row("temperature"));
        QVERIFY(temp.isValid());
        QVERIFY(!model.data(temp, ConversationSettingsModel::OverriddenRole).toBool());
        QCOMPARE(model.data(temp, ConversationSettingsModel::DefaultTextRole).toString(), QStringLiteral("0.7"));
        QCOMPARE(model.data(temp, ConversationSettingsModel::ValueRole).toDouble(), 0.7);

        QSignalSpy changed(&model, &ConversationSettingsModel::overridesChanged);
        QVERIFY(model.setOverrideText(QStringLiteral("temperature"), QStringLiteral("0,25")));
        QVERIFY(model.setOverride(QStringLiteral("seed"), 42));
        QVERIFY(model.setOverrideText(QStringLiteral("maxTokens"), QStringLiteral(" 64 ")));
        QCOMPARE(changed.count(), 3);
        QVERIFY(model.data(temp, ConversationSettingsModel::OverriddenRole).toBool());
        QCOMPARE(model.data(temp, ConversationSettingsModel::ValueTextRole).toString(), QStringLiteral("0.25"));
        auto json = db.settings(conv);
        QCOMPARE(json.value("temperature", 0.0), 0.25);
        QVERIFY(json["seed"].is_number_integer());
        QCOMPARE(json.value("seed", 0), 42);
        QCOMPARE(json.value("maxTokens", 0), 64);
        QCOMPARE(json.value("someone_else", std::string()), std::string("kept"));
        QCOMPARE(model.summary(), QStringLiteral("temperature 0.25 · seed 42 · maximum reply tokens 64"));

        // Refused: out of range, not a whole number, not a number, unknown key.
        QVERIFY(!model.setOverride(QStringLiteral("topP"), 1.5));
        QVERIFY(!model.setOverride(QStringLiteral("maxTokens"), 0));
        QVERIFY(!model.setOverrideText(QStringLiteral("topK"), QStringLiteral("2.5")));
        QCOMPARE(model.refusal(), QStringLiteral("Top-k is a whole number from 0 to 1000."));  // as the Settings panel
        QVERIFY(!model.setOverride(QStringLiteral("topK"), 1001));
        QVERIFY(!model.setOverride(QStringLiteral("maxTokens"), 32769));
        QVERIFY(model.setOverride(QStringLiteral("maxTokens"), 32768));
        model.resetOverride(QStringLiteral("maxTokens"));
        QVERIFY(model.setOverrideText(QStringLiteral("maxTokens"), QStringLiteral("64")));
        QVERIFY(!model.setOverrideText(QStringLiteral("minP"), QStringLiteral("lots")));
        QCOMPARE(model.refusal(), QStringLiteral("Min-p is a number from 0 to 1."));
        QVERIFY(!model.setOverride(QStringLiteral("contextSize"), 100));
        QCOMPARE(model.overrideCount(), 3);
        QVERIFY(model.setOverride(QStringLiteral("topK"), 20));  // a good value clears the refusal
        QVERIFY(model.refusal().isEmpty());
        model.resetOverride(QStringLiteral("topK"));
        QCOMPARE(db.settings(conv).size(), size_t(4));

        // Read back by a fresh model (as after a restart), then reset.
        ConversationSettingsModel again;
        again.setStore(&db);
        again.setDefaults(&settings);
        again.load(conv);
        QCOMPARE(again.overrides(), model.overrides());
        QVERIFY(again.setOverrideText(QStringLiteral("temperature"), QString()));
        again.resetOverride(QStringLiteral("seed"));
        QVERIFY(!db.settings(conv).contains("temperature"));
        QVERIFY(!db.settings(conv).contains("seed"));
        again.resetAll();
        QCOMPARE(again.overrideCount(), 0);
        QVERIFY(again.summary().isEmpty());
        QCOMPARE(db.settings(conv), nlohmann::json({{"someone_else", "kept"}}));
        // The defaults follow the app settings.
        settings.setTemperature(0.3);
        QCOMPARE(again.data(again.index(temp.row()), ConversationSettingsModel::DefaultTextRole).toString(),
                 QStringLiteral("0.3"));

        // Before the first message: pending, then written when attached.
        ConversationSettingsModel pending;
        pending.setStore(&db);
        pending.load(-1);
        QVERIFY(pending.setOverride(QStringLiteral("topK"), 5));
        int64_t fresh = db.createConversation("fresh");
        QVERIFY(db.settings(fresh).empty());
        pending.attach(fresh);
        QCOMPARE(db.settings(fresh).value("topK", 0), 5);
        QCOMPARE(pending.overrideCount(), 1);
    }

    // The hybrid fixtures (per-layer head_count_kv arrays, recurrent layers) are listed with their
    // architecture and a memory estimate, not as unusable files.
    void hybridModelFiles() {
        const QString fixtures = QString::fromStdString(test::sharedPath("fixtures"));
        if (!QFileInfo::exists(fixtures + QStringLiteral("/lfm2-f16.gguf"))) QSKIP("needs ../shared");
        for (const char* arch : {"lfm2", "granitehybrid", "qwen35"}) {
            const QString file =
                fixtures + QStringLiteral("/%1-%2.gguf").arg(arch, arch == std::string("qwen35") ? "q8_0" : "f16");
            auto info = describeModelFile(file);
            QVERIFY2(info.error.isEmpty(), qPrintable(info.error));
            QCOMPARE(info.architecture, QString(arch));
            QVERIFY(info.ramEstimate > info.fileSize);
        }
    }

    void dateSections() {
        QDateTime now(QDate(2026, 11, 29), QTime(12, 0));
        QCOMPARE(ConversationListModel::sectionFor(now.addSecs(-3600), now), QStringLiteral("Today"));
        QCOMPARE(ConversationListModel::sectionFor(now.addDays(-1), now), QStringLiteral("Yesterday"));
        QCOMPARE(ConversationListModel::sectionFor(now.addDays(-5), now), QStringLiteral("Previous 7 days"));
        QCOMPARE(ConversationListModel::sectionFor(now.addDays(-30), now), QStringLiteral("Older"));
    }

    void modelFiles() {
        QTemporaryDir dir, bundled;
        QString good = test::writeTinyAppModel(dir.path());
        QFile bad(dir.filePath(QStringLiteral("broken.gguf")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("GGUF but not really");
        bad.close();
        QFile::copy(good, bundled.filePath(QStringLiteral("placeholder-random-tiny.gguf")));

        auto info = describeModelFile(good);
        QVERIFY2(info.error.isEmpty(), qPrintable(info.error));
        QCOMPARE(info.architecture, QStringLiteral("llama"));
        QCOMPARE(info.quantization, QStringLiteral("F32"));
        QCOMPARE(info.contextLength, 4096);
        QVERIFY(info.parameters > 0);
        QCOMPARE(info.fileSize, quint64(QFileInfo(good).size()));
        QVERIFY(info.ramEstimate > info.fileSize);
        auto broken = describeModelFile(bad.fileName());
        QVERIFY(!broken.error.isEmpty());

        ModelListModel models;
        QAbstractItemModelTester tester(&models, QAbstractItemModelTester::FailureReportingMode::QtTest);
        models.scan({dir.path(), dir.path() + QStringLiteral("/missing")}, {good}, {bundled.path()});
        QCOMPARE(models.rowCount(), 3);  // bundled copy, broken, good (listed once)
        QVERIFY(models.data(models.index(0), ModelListModel::BundledRole).toBool());
        QVERIFY(models.data(models.index(0), ModelListModel::PlaceholderRole).toBool());
        QCOMPARE(models.defaultModel(),
                 QFileInfo(bundled.filePath(QStringLiteral("placeholder-random-tiny.gguf"))).absoluteFilePath());
        int brokenRow =
            models.data(models.index(1), ModelListModel::FileNameRole).toString() == QStringLiteral("broken.gguf") ? 1
                                                                                                                   : 2;
        QVERIFY(models.data(models.index(brokenRow), ModelListModel::SummaryRole)
                    .toString()
                    .startsWith(QStringLiteral("Cannot be used")));
        QVERIFY(!models.data(models.index(brokenRow), ModelListModel::ErrorRole).toString().isEmpty());
        QVERIFY(!info.demo);

        // A trained demo model is marked as such and preferred over the placeholder.
        QFile::copy(good, bundled.filePath(QStringLiteral("cairn-demo-tiny.gguf")));
        QVERIFY(describeModelFile(bundled.filePath(QStringLiteral("cairn-demo-tiny.gguf"))).demo);
        models.scan({}, {}, {bundled.path()});
        QCOMPARE(models.defaultModel(),
                 QFileInfo(bundled.filePath(QStringLiteral("cairn-demo-tiny.gguf"))).absoluteFilePath());
        QVERIFY(models.data(models.index(0), ModelListModel::DemoRole).toBool());
        QCOMPARE(models.rowCount(), 1);  // the placeholder is not listed next to a trained demo

        // The transformer demo is preferred over the Mamba demo, whatever their names' order.
        const QString mambaDemo = bundled.filePath(QStringLiteral("cairn-demo-a-mamba.gguf"));
        test::writeTinyMamba(mambaDemo.toStdString(), {});
        QCOMPARE(describeModelFile(mambaDemo).architecture, QStringLiteral("mamba"));
        models.scan({}, {}, {bundled.path()});
        QCOMPARE(models.data(models.index(0), ModelListModel::PathRole).toString(),
                 QFileInfo(mambaDemo).absoluteFilePath());
        QCOMPARE(models.defaultModel(),
                 QFileInfo(bundled.filePath(QStringLiteral("cairn-demo-tiny.gguf"))).absoluteFilePath());
    }

    // Header values whose products overflow 64 bits (or are negative): the
    // picker's estimate says "unknown" instead of wrapping around (checked
    // arithmetic, no undefined behaviour).
    void hostileHeaderSizesDoNotOverflow() {
        QTemporaryDir dir;
        struct Case {
            const char* key;
            int64_t value;
        };
        const Case cases[] = {
            {"llama.block_count", int64_t(1) << 60},
            {"llama.attention.head_count_kv", int64_t(1) << 60},
            {"llama.attention.key_length", int64_t(1) << 62},
            {"llama.attention.value_length", -5},
            {"llama.block_count", -1},
        };
        int n = 0;
        for (const Case& c : cases) {
            gguf::Writer w = test::tinyModelWriter({});
            w.setInt64(c.key, c.value);
            const QString path = dir.filePath(QStringLiteral("hostile-%1.gguf").arg(n++));
            w.write(path.toStdString());
            const auto info = describeModelFile(path);
            QCOMPARE(info.ramEstimate, quint64(0));
            QCOMPARE(sessionMemoryBytes(path, 4096), quint64(0));
            ModelListModel models;
            models.scan({}, {path}, {});
            QCOMPARE(models.rowCount(), 1);
            const QString summary = models.data(models.index(0), ModelListModel::SummaryRole).toString();
            QVERIFY2(summary.contains(QStringLiteral("unknown")) ||
                         summary.startsWith(QStringLiteral("Cannot be used")),
                     qPrintable(summary));
        }
        // The same model with sane values gets a real estimate.
        const QString sane = dir.filePath(QStringLiteral("sane.gguf"));
        test::tinyModelWriter({}).write(sane.toStdString());
        QVERIFY(describeModelFile(sane).ramEstimate > 0);
    }

    void markdown() {
        auto segs = markdownSegments(QStringLiteral("Intro **bold**\n\n```cpp\nint x = 1;\n```\nAfter\n```\nopen"));
        QCOMPARE(segs.size(), 4);
        QCOMPARE(segs[0].toMap()[QStringLiteral("kind")].toString(), QStringLiteral("text"));
        QCOMPARE(segs[1].toMap()[QStringLiteral("kind")].toString(), QStringLiteral("code"));
        QCOMPARE(segs[1].toMap()[QStringLiteral("language")].toString(), QStringLiteral("cpp"));
        QCOMPARE(segs[1].toMap()[QStringLiteral("text")].toString(), QStringLiteral("int x = 1;"));
        QCOMPARE(segs[2].toMap()[QStringLiteral("text")].toString(), QStringLiteral("After"));
        QCOMPARE(segs[3].toMap()[QStringLiteral("text")].toString(), QStringLiteral("open"));
        QCOMPARE(markdownSegments(QString()).size(), 0);
    }

    void settingsPersist() {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("settings.ini"));
        {
            AppSettings s(file);
            QCOMPARE(s.contextSize(), 4096);  // default
            QSignalSpy changed(&s, &AppSettings::changed);
            s.setContextSize(1024);
            s.setTemperature(0.25);
            s.setTheme(QStringLiteral("dark"));
            s.setModelFolders({QStringLiteral("/a"), QStringLiteral("/b")});
            s.setDropOldestTurns(true);
            s.setContextSize(1024);  // unchanged: no signal
            QCOMPARE(changed.count(), 5);
            s.sync();
        }
        AppSettings s(file);
        QCOMPARE(s.contextSize(), 1024);
        QCOMPARE(s.temperature(), 0.25);
        QCOMPARE(s.theme(), QStringLiteral("dark"));
        QCOMPARE(s.modelFolders(), (QStringList{QStringLiteral("/a"), QStringLiteral("/b")}));
        QVERIFY(s.dropOldestTurns());
        auto g = s.generationSettings({{&limits::temperature, 0.5}, {&limits::topK, 1e9}});
        QCOMPARE(g.temperature, 0.5f);
        QCOMPARE(g.topK, int32_t(limits::topK.max));  // clamped to its range
        QCOMPARE(g.contextSize, 1024);
        QVERIFY(g.dropOldestTurns);
        QVERIFY(g.threads >= 1);
        // Threads: 0 is every CPU, and no setting goes past that count.
        const int cpus = AppSettings::cpuCount();
        QCOMPARE(cpus, std::max(1, QThread::idealThreadCount()));
        QCOMPARE(AppSettings::engineThreads(0), cpus);
        QCOMPARE(AppSettings::engineThreads(1), 1);
        QCOMPARE(AppSettings::engineThreads(cpus), cpus);
        QCOMPARE(AppSettings::engineThreads(cpus + 1), cpus);
        QCOMPARE(AppSettings::engineThreads(int(limits::threads.max)), std::min(int(limits::threads.max), cpus));
        s.setThreads(cpus + 7);
        QCOMPARE(s.generationSettings().threads, cpus);
    }

    // The one table of generation settings: the app's defaults are the
    // engine's own, every key it names is one generationSettings() gives, and
    // the conversation overrides accept exactly the table's ranges.
    void generationLimitsAreTheOneSource() {
        QTemporaryDir dir;
        AppSettings s(dir.filePath(QStringLiteral("settings.ini")));
        const SamplerOptions engine;
        QCOMPARE(float(s.temperature()), engine.temperature);
        QCOMPARE(s.topK(), engine.topK);
        QCOMPARE(float(s.topP()), engine.topP);
        QCOMPARE(float(s.minP()), engine.minP);
        QCOMPARE(float(s.repeatPenalty()), engine.repeatPenalty);
        QCOMPARE(s.temperature(), 0.8);  // as a user would type it, not 0.800000011920929
        QCOMPARE(s.prefillChunk(), int(kDefaultPrefillChunk));

        const GenerationSettings g = s.generationSettings();
        const QVariantMap table = AppSettings::generationLimits();
        QCOMPARE(table.size(), 11);
        for (const GenerationLimit* limit : limits::all)  // each a field with its default (threads: resolved)
            if (limit != &limits::threads) QCOMPARE(g.value(*limit), limit->defaultValue);
        for (auto it = table.begin(); it != table.end(); ++it) {
            const QVariantMap l = it.value().toMap();
            QVERIFY(l.value(QStringLiteral("min")).toDouble() <= l.value(QStringLiteral("defaultValue")).toDouble());
            QVERIFY(l.value(QStringLiteral("defaultValue")).toDouble() <= l.value(QStringLiteral("max")).toDouble());
        }
        for (const auto& f : ConversationSettingsModel::fields()) {
            const QVariantMap l = table.value(QLatin1String(f.key)).toMap();
            QCOMPARE(f.min, l.value(QStringLiteral("min")).toDouble());
            QCOMPARE(f.max, l.value(QStringLiteral("max")).toDouble());
            QCOMPARE(f.integer, l.value(QStringLiteral("integer")).toBool());
        }
    }
};

QTEST_GUILESS_MAIN(TestAppModels)
#include "test_app_models.moc"
