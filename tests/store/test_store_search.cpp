// Full-text search over message content, kept in sync by triggers.
#include "cairn/store/store.h"
#include "store_test_util.h"

#include <QTest>

using namespace cairn;
using namespace cairn::store;

namespace {

std::vector<int64_t> messageIds(const std::vector<SearchHit>& hits) {
    std::vector<int64_t> ids;
    for (const auto& h : hits) ids.push_back(h.messageId);
    std::sort(ids.begin(), ids.end());
    return ids;
}

}  // namespace

class TestStoreSearch : public QObject {
    Q_OBJECT
private slots:
    void findsMessagesWithConversationAndSnippet() {
        test::TempDb tmp;
        Store s(tmp.path());
        const int64_t c1 = s.createConversation("one");
        const int64_t c2 = s.createConversation("two");
        const int64_t m1 = s.addMessage(c1, std::nullopt, Role::User, "How do I cook risotto with mushrooms?");
        const int64_t m2 = s.addMessage(c1, m1, Role::Assistant, "Toast the rice, then add stock slowly.");
        const int64_t m3 = s.addMessage(c2, std::nullopt, Role::User, "Mushrooms in the forest: which are safe?");

        auto hits = s.search("mushrooms");
        QCOMPARE(messageIds(hits), (std::vector<int64_t>{m1, m3}));
        for (const auto& h : hits) {
            QCOMPARE(h.conversationId, h.messageId == m1 ? c1 : c2);
            QVERIFY2(QString::fromStdString(h.snippet).contains("[Mushrooms]", Qt::CaseInsensitive), h.snippet.c_str());
        }
        QCOMPARE(messageIds(s.search("stock rice")), (std::vector<int64_t>{m2}));  // all words, any order
        QCOMPARE(messageIds(s.search("risot")), (std::vector<int64_t>{m1}));  // last word is a prefix
        QVERIFY(s.search("risotto forest").empty());
        QVERIFY(s.search("   ").empty());
        QCOMPARE(s.search("mushrooms", 1).size(), size_t(1));
        QVERIFY(QString::fromStdString(s.search("stock", 5, "<b>", "</b>")[0].snippet).contains("<b>stock</b>"));
    }

    void caseAndDiacriticsAreFolded() {
        test::TempDb tmp;
        Store s(tmp.path());
        const int64_t c = s.createConversation("c");
        const int64_t m = s.addMessage(c, std::nullopt, Role::User, "Crème BRÛLÉE recipe");
        QCOMPARE(messageIds(s.search("creme brulee")), (std::vector<int64_t>{m}));
    }

    void staysInSyncAfterEditStreamingAndDelete() {
        test::TempDb tmp;
        Store s(tmp.path());
        const int64_t c = s.createConversation("c");
        const int64_t u = s.addMessage(c, std::nullopt, Role::User, "tell me about otters");
        const int64_t a = s.addMessage(c, u, Role::Assistant, "", false);
        s.updatePartial(a, "Otters are semiaquatic");
        QCOMPARE(messageIds(s.search("semiaquatic")), (std::vector<int64_t>{a}));
        s.finishMessage(a, "Sea otters hold hands while sleeping", {});
        QVERIFY(s.search("semiaquatic").empty());
        QCOMPARE(messageIds(s.search("sleeping")), (std::vector<int64_t>{a}));

        s.setMessageContent(u, "tell me about beavers");
        QCOMPARE(messageIds(s.search("otters")), (std::vector<int64_t>{a}));
        QCOMPARE(messageIds(s.search("beavers")), (std::vector<int64_t>{u}));

        s.deleteMessage(u);  // takes its reply with it
        QVERIFY(s.search("beavers").empty());
        QVERIFY(s.search("sleeping").empty());
        test::ftsIntegrityCheck(s.database());

        const int64_t again = s.addMessage(c, std::nullopt, Role::User, "beavers build dams");
        s.purgeConversation(c);
        QVERIFY(s.search("dams").empty());
        Q_UNUSED(again);
        test::ftsIntegrityCheck(s.database());
        sql::Statement rows(s.database(), "SELECT count(*) FROM messages_fts");
        rows.step();
        QCOMPARE(rows.columnInt64(0), int64_t(0));
    }
};

QTEST_APPLESS_MAIN(TestStoreSearch)
#include "test_store_search.moc"
