// Schema migrations: from an empty file and from every earlier version, with
// data written at that version surviving the upgrade.
#include "cairn/error.h"
#include "cairn/store/schema.h"
#include "cairn/store/store.h"
#include "store_test_util.h"

#include <QFile>
#include <QTest>

using namespace cairn;
using namespace cairn::store;

namespace {

// The schema as SQLite reports it, for comparing two databases.
QStringList schemaOf(sql::Database& db) {
    sql::Statement s(db,
                     "SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_master "
                     "WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name");
    QStringList out;
    while (s.step()) out << QString::fromStdString(s.columnText(0));
    return out;
}

struct OldData {
    int64_t conversation = 0;
    int64_t root = 0, reply = 0, branch = 0;
    std::vector<uint8_t> blob;
};

// Writes with the SQL of schema version 1 (valid for every later version too):
// what an older Cairn would have stored.
OldData writeVersion1Data(sql::Database& db) {
    OldData d;
    sql::Statement c(db,
                     "INSERT INTO conversations (title, model_path, model_fingerprint, system_prompt, "
                     "settings_json, created_ms, updated_ms, pinned) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    c.bind(1, "old chat").bind(2, "/models/a.gguf").bind(3, "fp-a").bind(4, "be brief");
    c.bind(5, R"({"temperature":0.5})").bind(6, 1000).bind(7, 2000).bind(8, 1).run();
    d.conversation = db.lastInsertRowid();
    sql::Statement m(db,
                     "INSERT INTO messages (conversation_id, parent_id, role, content, created_ms, "
                     "token_count, prefill_ms, decode_ms, complete) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    auto add = [&](std::optional<int64_t> parent, const char* role, const char* text) {
        m.reset();
        m.bind(1, d.conversation).bind(2, parent).bind(3, role).bind(4, text).bind(5, 1500);
        m.bind(6, 7).bind(7, 12.5).bind(8, 30.0).bind(9, 1).run();
        return db.lastInsertRowid();
    };
    d.root = add(std::nullopt, "user", "tell me about penguins");
    d.reply = add(d.root, "assistant", "penguins are flightless seabirds");
    d.branch = add(d.root, "assistant", "emperor penguins breed in winter");
    d.blob = {1, 2, 3, 0, 255, 254, 9};
    sql::Statement s(db,
                     "INSERT INTO snapshots (conversation_id, message_id, model_fingerprint, token_count, "
                     "size_bytes, created_ms, last_used_ms, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, d.conversation).bind(2, d.reply).bind(3, "fp-a").bind(4, 40);
    s.bind(5, static_cast<int64_t>(d.blob.size())).bind(6, 1600).bind(7, 1700).bind(8, sql::Blob(d.blob)).run();
    return d;
}

}  // namespace

class TestStoreMigrations : public QObject {
    Q_OBJECT
private slots:
    void listIsOrderedFromOne() {
        const auto& list = migrations();
        QVERIFY(list.size() >= 2);
        for (size_t i = 0; i < list.size(); ++i) QCOMPARE(list[i].version, int(i) + 1);
        QCOMPARE(latestSchemaVersion(), list.back().version);
    }

    void fromEmptyDatabase() {
        test::TempDb tmp;
        Store store(tmp.path());
        QCOMPARE(store.database().userVersion(), latestSchemaVersion());
        const QStringList tables = test::tableNames(store.database());
        for (const char* t : {"conversations", "messages", "snapshots", "messages_fts"})
            QVERIFY2(tables.contains(t), t);
        QCOMPARE(store.database().integrityCheck(), std::string("ok"));
        QVERIFY(store.listConversations().empty());
    }

    void fromEveryEarlierVersion_data() {
        QTest::addColumn<int>("version");
        for (int v = 1; v < latestSchemaVersion(); ++v) QTest::newRow(("from v" + std::to_string(v)).c_str()) << v;
    }

    void fromEveryEarlierVersion() {
        QFETCH(int, version);
        test::TempDb tmp;
        OldData d;
        {
            auto db = sql::Database::open(tmp.path());
            QCOMPARE(migrate(db, version), version);
            d = writeVersion1Data(db);
        }
        Store store(tmp.path());
        QCOMPARE(store.database().userVersion(), latestSchemaVersion());
        QCOMPARE(store.database().integrityCheck(), std::string("ok"));
        test::ftsIntegrityCheck(store.database());

        const auto list = store.listConversations();
        QCOMPARE(list.size(), size_t(1));
        const Conversation& c = list[0];
        QCOMPARE(c.id, d.conversation);
        QCOMPARE(c.title, std::string("old chat"));
        QCOMPARE(c.modelPath, std::string("/models/a.gguf"));
        QCOMPARE(c.modelFingerprint, std::string("fp-a"));
        QCOMPARE(c.systemPrompt, std::string("be brief"));
        QCOMPARE(c.settings.value("temperature", 0.0), 0.5);
        QVERIFY(c.pinned);
        QVERIFY(!c.deletedMs);

        const auto msgs = store.messages(d.conversation);
        QCOMPARE(msgs.size(), size_t(3));
        QCOMPARE(msgs[1].content, std::string("penguins are flightless seabirds"));
        QCOMPARE(msgs[1].stats.tokenCount, int64_t(7));
        QCOMPARE(msgs[1].stats.prefillMs, 12.5);
        // Version 4: no reasoning in what was written before it.
        QVERIFY(msgs[1].reasoning.empty());
        QCOMPARE(msgs[1].stats.reasoningMs, int64_t(0));
        QCOMPARE(store.siblings(d.branch).ids, (std::vector<int64_t>{d.reply, d.branch}));
        // Version 3 fills the active leaf with the newest message.
        QCOMPARE(store.activeLeaf(d.conversation), std::optional<int64_t>(d.branch));

        // Version 2 indexes the messages written before it existed.
        const auto hits = store.search("flightless");
        QCOMPARE(hits.size(), size_t(1));
        QCOMPARE(hits[0].messageId, d.reply);

        const auto snap = store.bestSnapshot(d.conversation, std::vector<int64_t>{d.root, d.reply}, "fp-a");
        QVERIFY(snap.has_value());
        QCOMPARE(store.snapshotData(snap->id), d.blob);
    }

    void migratedSchemaEqualsFreshSchema() {
        test::TempDb tmp;
        {
            auto db = sql::Database::open(tmp.path("old.db"));
            migrate(db, 1);
            writeVersion1Data(db);
        }
        Store upgraded(tmp.path("old.db"));
        Store fresh(tmp.path("new.db"));
        QCOMPARE(schemaOf(upgraded.database()), schemaOf(fresh.database()));
    }

    void openingTwiceChangesNothing() {
        test::TempDb tmp;
        int64_t id = 0;
        {
            Store s(tmp.path());
            id = s.createConversation("keep me");
        }
        Store again(tmp.path());
        QCOMPARE(again.database().userVersion(), latestSchemaVersion());
        QCOMPARE(again.conversation(id).title, std::string("keep me"));
    }

    void refusesNewerSchema() {
        test::TempDb tmp;
        {
            auto db = sql::Database::open(tmp.path());
            migrate(db);
            db.setUserVersion(latestSchemaVersion() + 1);
        }
        QVERIFY_THROWS_EXCEPTION(Error, Store(tmp.path()));
        auto db = sql::Database::open(tmp.path());
        QCOMPARE(db.userVersion(), latestSchemaVersion() + 1);  // left untouched
    }

    void notADatabaseIsAnError() {
        test::TempDb tmp;
        {
            QFile f(QString::fromStdString(tmp.path()));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray(8192, 'x'));
        }
        try {
            Store s(tmp.path());
            QFAIL("opened a file that is not a database");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("not a database"), e.what());
        }
        QVERIFY_THROWS_EXCEPTION(Error, Store(tmp.path("missing/dir/x.db")));
    }

    void databaseSettingsAreApplied() {
        test::TempDb tmp;
        Store store(tmp.path());
        auto pragma = [&](const char* sqlText) {
            sql::Statement s(store.database(), sqlText);
            s.step();
            return s.columnText(0);
        };
        QCOMPARE(pragma("PRAGMA journal_mode"), std::string("wal"));
        QCOMPARE(pragma("PRAGMA foreign_keys"), std::string("1"));
        QCOMPARE(pragma("PRAGMA synchronous"), std::string("2"));  // FULL
        QCOMPARE(pragma("PRAGMA busy_timeout"), std::string("5000"));
    }
};

QTEST_APPLESS_MAIN(TestStoreMigrations)
#include "test_store_migrations.moc"
