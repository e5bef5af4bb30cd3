// The Store API: conversations, the message tree, bound parameters and the
// RAII layer's error and rollback behaviour.
#include "cairn/error.h"
#include "cairn/store/store.h"
#include "store_test_util.h"

#include <QTest>

using namespace cairn;
using namespace cairn::store;

class TestStoreApi : public QObject {
    Q_OBJECT
private slots:
    void conversationsListPinnedFirstThenNewest() {
        test::TempDb tmp;
        test::ManualClock clock;
        Store s(tmp.path(), test::optionsWith(clock));
        const int64_t a = s.createConversation("a");
        clock.advance(10);
        const int64_t b = s.createConversation("b");
        clock.advance(10);
        const int64_t c = s.createConversation("c");
        auto order = [&] {
            std::vector<int64_t> ids;
            for (const auto& conv : s.listConversations()) ids.push_back(conv.id);
            return ids;
        };
        QCOMPARE(order(), (std::vector<int64_t>{c, b, a}));
        clock.advance(10);
        s.addMessage(a, std::nullopt, Role::User, "bump a");
        QCOMPARE(order(), (std::vector<int64_t>{a, c, b}));
        s.setPinned(b, true);
        QCOMPARE(order(), (std::vector<int64_t>{b, a, c}));
        QCOMPARE(s.conversation(a).updatedMs, *clock.ms);
    }

    void conversationFieldsRoundTrip() {
        test::TempDb tmp;
        Store s(tmp.path());
        const int64_t id = s.createConversation("t", "/m/x.gguf", "fp", "sys");
        s.renameConversation(id, "renamed");
        s.setSystemPrompt(id, "new system");
        s.setModel(id, "/m/y.gguf", "fp2");
        s.setSettings(id, {{"temperature", 0.2}, {"top_k", 40}});
        const Conversation c = s.conversation(id);
        QCOMPARE(c.title, std::string("renamed"));
        QCOMPARE(c.systemPrompt, std::string("new system"));
        QCOMPARE(c.modelPath, std::string("/m/y.gguf"));
        QCOMPARE(c.modelFingerprint, std::string("fp2"));
        QCOMPARE(s.settings(id)["top_k"].get<int>(), 40);
        QVERIFY_THROWS_EXCEPTION(Error, s.setSettings(id, nlohmann::json::array()));
    }

    void unknownIdsAreErrors() {
        test::TempDb tmp;
        Store s(tmp.path());
        QVERIFY_THROWS_EXCEPTION(Error, s.conversation(42));
        QVERIFY_THROWS_EXCEPTION(Error, s.renameConversation(42, "x"));
        QVERIFY_THROWS_EXCEPTION(Error, s.message(42));
        QVERIFY_THROWS_EXCEPTION(Error, s.updatePartial(42, "x"));
        QVERIFY_THROWS_EXCEPTION(Error, s.addMessage(42, std::nullopt, Role::User, "x"));
        QVERIFY_THROWS_EXCEPTION(Error, s.pathTo(42));
    }

    void parentMustBeInTheSameConversation() {
        test::TempDb tmp;
        Store s(tmp.path());
        const int64_t a = s.createConversation("a");
        const int64_t b = s.createConversation("b");
        const int64_t m = s.addMessage(a, std::nullopt, Role::User, "in a");
        QVERIFY_THROWS_EXCEPTION(Error, s.addMessage(b, m, Role::Assistant, "in b"));
        QVERIFY(s.messages(b).empty());
        QVERIFY_THROWS_EXCEPTION(Error, s.setActiveLeaf(b, m));
    }

    void hostileTextRoundTripsAsText() {
        test::TempDb tmp;
        Store s(tmp.path());
        const std::string evil = "'); DROP TABLE messages;--";
        const std::string evil2 = "\"; DELETE FROM conversations; SELECT \"";
        const int64_t c = s.createConversation(evil, evil2, evil, evil2);
        const int64_t m = s.addMessage(c, std::nullopt, Role::User, evil);
        const int64_t r = s.addMessage(c, m, Role::Assistant, evil2);
        s.renameConversation(c, evil2 + evil);
        s.setSettings(c, {{"note", evil}});

        const QStringList tables = test::tableNames(s.database());
        for (const char* t : {"conversations", "messages", "snapshots", "messages_fts"})
            QVERIFY2(tables.contains(t), t);
        QCOMPARE(s.conversation(c).title, evil2 + evil);
        QCOMPARE(s.conversation(c).modelPath, evil2);
        QCOMPARE(s.settings(c)["note"].get<std::string>(), evil);
        QCOMPARE(s.message(m).content, evil);
        QCOMPARE(s.message(r).content, evil2);
        // The search box takes FTS syntax literally too.
        QCOMPARE(s.search("DROP TABLE").size(), size_t(1));
        QCOMPARE(s.search("\"unbalanced ( * OR").size(), size_t(0));
        QCOMPARE(s.database().integrityCheck(), std::string("ok"));
    }

    void textWithNulAndUnicodeRoundTrips() {
        test::TempDb tmp;
        Store s(tmp.path());
        const std::string text = std::string("a\0b", 3) + " żółw 🐢 \n\t";
        const int64_t c = s.createConversation(text);
        const int64_t m = s.addMessage(c, std::nullopt, Role::User, text);
        QCOMPARE(s.conversation(c).title, text);
        QCOMPARE(s.message(m).content, text);
        const int64_t e = s.addMessage(c, m, Role::Assistant, "");
        QCOMPARE(s.message(e).content, std::string());
    }

    void streamingThenFinish() {
        test::TempDb tmp;
        Store s(tmp.path());
        const int64_t c = s.createConversation("c");
        const int64_t u = s.addMessage(c, std::nullopt, Role::User, "hi");
        const int64_t a = s.addMessage(c, u, Role::Assistant, "", false);
        QVERIFY(!s.message(a).complete);
        s.updatePartial(a, "Hel");
        QCOMPARE(s.message(a).content, std::string("Hel"));
        QVERIFY(!s.message(a).complete);
        MessageStats st{.tokenCount = 20, .prefillTokens = 100, .prefillMs = 50, .decodeMs = 400};
        s.finishMessage(a, "Hello there", st);
        const Message done = s.message(a);
        QVERIFY(done.complete);
        QCOMPARE(done.content, std::string("Hello there"));
        QCOMPARE(done.stats, st);
        QCOMPARE(done.stats.decodeTokensPerSecond(), 50.0);
        QCOMPARE(done.stats.prefillTokensPerSecond(), 2000.0);
        QCOMPARE(done.role, Role::Assistant);
        QCOMPARE(done.parentId, std::optional<int64_t>(u));
    }

    void treeBranchesSiblingsAndPaths() {
        test::TempDb tmp;
        Store s(tmp.path());
        const int64_t c = s.createConversation("tree");
        const int64_t u1 = s.addMessage(c, std::nullopt, Role::User, "q1");
        const int64_t a1 = s.addMessage(c, u1, Role::Assistant, "a1");
        const int64_t u2 = s.addMessage(c, a1, Role::User, "q2");
        const int64_t a2 = s.addMessage(c, u2, Role::Assistant, "a2");
        QCOMPARE(s.activeLeaf(c), std::optional<int64_t>(a2));
        // Edit q2: a sibling branch under a1.
        const int64_t u2b = s.addMessage(c, a1, Role::User, "q2 edited");
        const int64_t a2b = s.addMessage(c, u2b, Role::Assistant, "a2 edited");
        // Regenerate a2b: a sibling under u2b.
        const int64_t a2c = s.addMessage(c, u2b, Role::Assistant, "a2 regenerated");
        QCOMPARE(s.activeLeaf(c), std::optional<int64_t>(a2c));

        Siblings sib = s.siblings(u2b);
        QCOMPARE(sib.ids, (std::vector<int64_t>{u2, u2b}));
        QCOMPARE(sib.index, size_t(1));
        QCOMPARE(s.siblings(u2).index, size_t(0));
        QCOMPARE(s.siblings(a2c).ids, (std::vector<int64_t>{a2b, a2c}));
        QCOMPARE(s.siblings(u1).ids, (std::vector<int64_t>{u1}));  // the only root

        auto ids = [](const std::vector<Message>& v) {
            std::vector<int64_t> out;
            for (const auto& m : v) out.push_back(m.id);
            return out;
        };
        QCOMPARE(ids(s.pathTo(a2c)), (std::vector<int64_t>{u1, a1, u2b, a2c}));
        QCOMPARE(ids(s.pathTo(a2)), (std::vector<int64_t>{u1, a1, u2, a2}));
        QCOMPARE(ids(s.pathTo(u1)), (std::vector<int64_t>{u1}));
        QCOMPARE(ids(s.children(a1, c)), (std::vector<int64_t>{u2, u2b}));
        QCOMPARE(ids(s.children(std::nullopt, c)), (std::vector<int64_t>{u1}));

        // Switching to the first branch: its newest leaf becomes active.
        QCOMPARE(s.newestLeafUnder(u2), a2);
        QCOMPARE(s.newestLeafUnder(a1), a2c);
        s.setActiveLeaf(c, s.newestLeafUnder(u2));
        QCOMPARE(s.activeLeaf(c), std::optional<int64_t>(a2));

        // Deleting a branch removes its subtree; the active leaf falls back to newest.
        s.deleteMessage(u2);
        QCOMPARE(ids(s.messages(c)), (std::vector<int64_t>{u1, a1, u2b, a2b, a2c}));
        QCOMPARE(s.activeLeaf(c), std::optional<int64_t>(a2c));
        QCOMPARE(s.siblings(u2b).ids, (std::vector<int64_t>{u2b}));
    }

    void softDeleteRestoreAndPurge() {
        test::TempDb tmp;
        test::ManualClock clock;
        Store s(tmp.path(), test::optionsWith(clock));
        const int64_t c = s.createConversation("doomed");
        const int64_t keep = s.createConversation("kept");
        const int64_t m = s.addMessage(c, std::nullopt, Role::User, "searchable walrus");
        s.putSnapshot(std::vector<uint8_t>(16, 7), c, m, "fp", 3);

        s.deleteConversation(c);
        QCOMPARE(s.listConversations().size(), size_t(1));
        QCOMPARE(s.deletedConversations().size(), size_t(1));
        QVERIFY(s.search("walrus").empty());
        QCOMPARE(s.messages(c).size(), size_t(1));  // still there for undo

        s.restoreConversation(c);
        QCOMPARE(s.listConversations().size(), size_t(2));
        QCOMPARE(s.search("walrus").size(), size_t(1));
        QCOMPARE(s.snapshots(c).size(), size_t(1));

        s.deleteConversation(c);
        clock.advance(1000);
        QCOMPARE(s.purgeDeletedBefore(*clock.ms - 2000), 0);
        QCOMPARE(s.purgeDeletedBefore(*clock.ms), 1);
        QVERIFY_THROWS_EXCEPTION(Error, s.conversation(c));
        QVERIFY(s.messages(c).empty());
        QVERIFY(s.snapshots(c).empty());
        QCOMPARE(s.snapshotBytes(), int64_t(0));
        QCOMPARE(s.conversation(keep).title, std::string("kept"));
        test::ftsIntegrityCheck(s.database());
        QCOMPARE(s.database().integrityCheck(), std::string("ok"));
    }

    void errorsNameTheSqlAndTheReason() {
        test::TempDb tmp;
        auto db = sql::Database::open(tmp.path());
        try {
            sql::Statement bad(db, "SELECT * FROM no_such_table");
            QFAIL("prepare should fail");
        } catch (const Error& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("no such table") != std::string::npos, what.c_str());
            QVERIFY2(what.find("SELECT * FROM no_such_table") != std::string::npos, what.c_str());
        }
        db.exec("CREATE TABLE t (x INTEGER NOT NULL)");
        sql::Statement ins(db, "INSERT INTO t (x) VALUES (:x)");
        QVERIFY_THROWS_EXCEPTION(Error, ins.bind(":nope", 1));
        QVERIFY_THROWS_EXCEPTION(Error, ins.bind(2, 1));
        ins.bind(":x", nullptr);
        QVERIFY_THROWS_EXCEPTION(Error, ins.run());  // NOT NULL
        ins.reset();
        ins.bind(":x", 5).run();  // reusable after the failure
        QVERIFY_THROWS_EXCEPTION(Error, sql::Statement(db, "SELECT 1; SELECT 2"));
    }

    void transactionRollsBackUnlessCommitted() {
        test::TempDb tmp;
        auto db = sql::Database::open(tmp.path());
        db.exec("CREATE TABLE t (x INTEGER)");
        auto count = [&] {
            sql::Statement s(db, "SELECT count(*) FROM t");
            s.step();
            return s.columnInt64(0);
        };
        try {
            sql::Transaction tx(db);
            sql::Statement(db, "INSERT INTO t VALUES (1)").run();
            throw std::runtime_error("abandon");
        } catch (const std::runtime_error&) {}
        QCOMPARE(count(), int64_t(0));
        QVERIFY(!db.inTransaction());
        {
            sql::Transaction tx(db);
            sql::Statement(db, "INSERT INTO t VALUES (1)").run();
            tx.commit();
        }
        QCOMPARE(count(), int64_t(1));
    }

    void valuesOfEveryTypeBindAndRead() {
        test::TempDb tmp;
        auto db = sql::Database::open(tmp.path());
        db.exec("CREATE TABLE v (i INTEGER, d REAL, t TEXT, b BLOB, n)");
        const std::vector<uint8_t> bytes = {0, 1, 2, 0, 255};
        sql::Statement ins(db, "INSERT INTO v VALUES (@i, @d, @t, @b, @n)");
        ins.bind("@i", int64_t(-9'000'000'000'000)).bind("@d", 0.25).bind("@t", std::string("txt"));
        const std::optional<int64_t> missing;  // named: GCC 12 + ASan warns (maybe-uninitialized) on a temporary
        ins.bind("@b", sql::Blob(bytes)).bind("@n", missing).run();
        sql::Statement q(db, "SELECT i, d, t, b, n FROM v");
        QVERIFY(q.step());
        QCOMPARE(q.columnInt64(0), int64_t(-9'000'000'000'000));
        QCOMPARE(q.columnDouble(1), 0.25);
        QCOMPARE(q.columnText(2), std::string("txt"));
        QCOMPARE(q.columnBlob(3), bytes);
        QVERIFY(q.isNull(4));
        QCOMPARE(q.columnOptInt64(4), std::optional<int64_t>());
        QVERIFY(!q.step());
    }

    void secondConnectionReadsWhileFirstWrites() {
        // One connection per thread; WAL lets a reader see committed data.
        test::TempDb tmp;
        Store writer(tmp.path());
        Store reader(tmp.path());
        const int64_t c = writer.createConversation("shared");
        sql::Transaction open(writer.database());
        sql::Statement(writer.database(), "UPDATE conversations SET title = 'uncommitted'").run();
        QCOMPARE(reader.conversation(c).title, std::string("shared"));
    }
};

QTEST_APPLESS_MAIN(TestStoreApi)
#include "test_store_api.moc"
