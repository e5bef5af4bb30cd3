// Snapshots: best match along a path, LRU eviction to the byte budget, and
// removing a damaged snapshot without touching the conversation.
#include "cairn/error.h"
#include "cairn/store/store.h"
#include "store_test_util.h"

#include <QTest>

#include <map>
#include <random>

using namespace cairn;
using namespace cairn::store;

namespace {

std::vector<uint8_t> bytes(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 31);
    return v;
}

}  // namespace

class TestStoreSnapshots : public QObject {
    Q_OBJECT
private slots:
    void bestSnapshotIsDeepestOnThePathWithTheFingerprint() {
        test::TempDb tmp;
        Store s(tmp.path());
        const int64_t c = s.createConversation("c");
        const int64_t u1 = s.addMessage(c, std::nullopt, Role::User, "q1");
        const int64_t a1 = s.addMessage(c, u1, Role::Assistant, "a1");
        const int64_t u2 = s.addMessage(c, a1, Role::User, "q2");
        const int64_t a2 = s.addMessage(c, u2, Role::Assistant, "a2");
        const int64_t a2b = s.addMessage(c, u2, Role::Assistant, "a2 other branch");

        const auto sa1 = s.putSnapshot(bytes(100, 1), c, a1, "fpA", 10);
        const auto sa2b = s.putSnapshot(bytes(120, 2), c, a2b, "fpA", 30);
        const auto sa2other = s.putSnapshot(bytes(130, 3), c, a2, "fpB", 30);
        QVERIFY(sa1 && sa2b && sa2other);

        const std::vector<int64_t> path = {u1, a1, u2, a2};
        auto best = s.bestSnapshot(c, path, "fpA");
        QVERIFY(best);
        QCOMPARE(best->id, *sa1);  // a2b is on another branch, a2's is another model
        QCOMPARE(best->tokenCount, int64_t(10));
        QCOMPARE(best->sizeBytes, int64_t(100));
        QCOMPARE(s.snapshotData(best->id), bytes(100, 1));
        QCOMPARE(s.bestSnapshot(c, std::vector<int64_t>{u1, a1, u2, a2b}, "fpA")->id, *sa2b);
        QCOMPARE(s.bestSnapshot(c, path, "fpB")->id, *sa2other);
        QVERIFY(!s.bestSnapshot(c, path, "fpC"));
        QVERIFY(!s.bestSnapshot(c, std::vector<int64_t>{u1}, "fpA"));

        // Same message and fingerprint: replaced, not duplicated.
        const auto again = s.putSnapshot(bytes(50, 9), c, a1, "fpA", 11);
        QCOMPARE(*again, *sa1);
        QCOMPARE(s.snapshotData(*sa1), bytes(50, 9));
        QCOMPARE(s.snapshots(c).size(), size_t(3));
        QCOMPARE(s.snapshotBytes(), int64_t(50 + 120 + 130));

        const int64_t other = s.createConversation("other");
        QVERIFY_THROWS_EXCEPTION(Error, s.putSnapshot(bytes(10, 0), other, a1, "fpA", 1));
    }

    void evictionIsLeastRecentlyUsedAndKeepsTheBudget() {
        test::TempDb tmp;
        test::ManualClock clock;
        auto options = test::optionsWith(clock);
        options.snapshotBudgetBytes = 1000;
        Store s(tmp.path(), options);
        const int64_t c = s.createConversation("c");
        std::vector<int64_t> msgs, snaps;
        for (int i = 0; i < 4; ++i) {
            msgs.push_back(s.addMessage(c, msgs.empty() ? std::nullopt : std::optional(msgs.back()), Role::User,
                                        std::string("m").append(std::to_string(i))));
            clock.advance(10);
            snaps.push_back(*s.putSnapshot(bytes(300, uint8_t(i)), c, msgs.back(), "fp", i));
        }
        // 4 x 300 > 1000: the oldest (snaps[0]) went when the 4th arrived.
        QVERIFY(!s.snapshotInfo(snaps[0]));
        QCOMPARE(s.snapshotBytes(), int64_t(900));

        clock.advance(10);
        s.touchSnapshot(snaps[1]);  // now the most recent use
        clock.advance(10);
        const int64_t m4 = s.addMessage(c, msgs.back(), Role::User, "m4");
        const auto big = s.putSnapshot(bytes(500, 4), c, m4, "fp", 4);
        QVERIFY(big);
        // 1400 bytes: snaps[2] (least recently used) goes, still 1100, then snaps[3].
        QVERIFY(!s.snapshotInfo(snaps[2]));
        QVERIFY(!s.snapshotInfo(snaps[3]));
        QVERIFY(s.snapshotInfo(snaps[1]));
        QVERIFY(s.snapshotInfo(*big));
        QCOMPARE(s.snapshotBytes(), int64_t(800));
        QVERIFY(s.snapshotBytes() <= int64_t(s.snapshotBudget()));

        // Too big for the budget: not stored, nothing evicted.
        QVERIFY(!s.putSnapshot(bytes(1001, 0), c, m4, "fp-other", 9));
        QCOMPARE(s.snapshotBytes(), int64_t(800));

        // Lowering the budget evicts at once, oldest use first.
        s.setSnapshotBudget(600);
        QVERIFY(!s.snapshotInfo(snaps[1]));
        QVERIFY(s.snapshotInfo(*big));
        QCOMPARE(s.snapshotBytes(), int64_t(500));
        QCOMPARE(s.messages(c).size(), size_t(5));  // eviction never touches messages
    }

    void randomWorkloadNeverExceedsBudget() {
        test::TempDb tmp;
        test::ManualClock clock;
        auto options = test::optionsWith(clock);
        options.snapshotBudgetBytes = 5000;
        Store s(tmp.path(), options);
        const int64_t c = s.createConversation("c");
        std::mt19937 rng(7);
        std::vector<int64_t> msgs;
        std::vector<int64_t> order;  // snapshot ids from least to most recently used
        std::map<int64_t, int64_t> sizes;
        size_t evictions = 0;
        for (int i = 0; i < 60; ++i) {
            clock.advance(rng() % 3);  // ties on purpose: order must not depend on the clock's resolution
            if (!order.empty() && rng() % 3 == 0) {
                const int64_t id = order[rng() % order.size()];
                s.touchSnapshot(id);
                order.erase(std::find(order.begin(), order.end(), id));
                order.push_back(id);
                continue;
            }
            msgs.push_back(s.addMessage(c, std::nullopt, Role::User, "m"));
            const size_t size = 200 + rng() % 1500;
            const auto id = s.putSnapshot(bytes(size, uint8_t(i)), c, msgs.back(), "fp", i);
            QVERIFY(id);
            sizes[*id] = int64_t(size);
            order.push_back(*id);
            QVERIFY(s.snapshotBytes() <= 5000);
            // Survivors are exactly the most recently used suffix that fits:
            // evicted ones form a prefix of the use order, and no more went than needed.
            std::vector<int64_t> alive;
            for (const auto& info : s.snapshots(c)) alive.push_back(info.id);
            std::sort(alive.begin(), alive.end());
            const size_t evicted = order.size() - alive.size();
            std::vector<int64_t> suffix(order.begin() + evicted, order.end());
            std::sort(suffix.begin(), suffix.end());
            QCOMPARE(alive, suffix);
            if (evicted > 0) {
                int64_t total = sizes[order[evicted - 1]];
                for (size_t k = evicted; k < order.size(); ++k) total += sizes[order[k]];
                QVERIFY(total > 5000);
            }
            order.erase(order.begin(), order.begin() + evicted);
            evictions += evicted;
        }
        QVERIFY(evictions > 0);
        QVERIFY(order.size() >= 3);
    }

    void damagedSnapshotIsDeletedAndConversationStays() {
        test::TempDb tmp;
        Store s(tmp.path());
        const int64_t c = s.createConversation("c");
        const int64_t u = s.addMessage(c, std::nullopt, Role::User, "hello");
        const int64_t a = s.addMessage(c, u, Role::Assistant, "hi there");
        const auto good = bytes(256, 5);
        const int64_t id = *s.putSnapshot(good, c, a, "fp", 12);

        // Damage the stored bytes behind the store's back (as a bad disk would).
        sql::Statement flip(s.database(), "UPDATE snapshots SET data = ? WHERE id = ?");
        auto damaged = good;
        damaged[100] ^= 0x40;
        flip.bind(1, sql::Blob(damaged)).bind(2, id).run();

        // The caller (the engine's restore) sees different bytes and refuses them...
        const std::vector<int64_t> path = {u, a};
        const auto found = s.bestSnapshot(c, path, "fp");
        QVERIFY(found);
        QVERIFY(s.snapshotData(found->id) != good);
        // ...deletes the snapshot and re-prefills from the messages.
        s.deleteSnapshot(found->id);
        QVERIFY(!s.bestSnapshot(c, path, "fp"));
        const auto msgs = s.messages(c);
        QCOMPARE(msgs.size(), size_t(2));
        QCOMPARE(msgs[0].content, std::string("hello"));
        QCOMPARE(msgs[1].content, std::string("hi there"));
        QCOMPARE(s.activeLeaf(c), std::optional<int64_t>(a));
        QCOMPARE(s.conversation(c).title, std::string("c"));
        QVERIFY_THROWS_EXCEPTION(Error, s.deleteSnapshot(found->id));
        QCOMPARE(s.database().integrityCheck(), std::string("ok"));
    }

    void emptyBlobRoundTrips() {
        test::TempDb tmp;
        Store s(tmp.path());
        const int64_t c = s.createConversation("c");
        const int64_t m = s.addMessage(c, std::nullopt, Role::User, "x");
        const auto id = s.putSnapshot(std::vector<uint8_t>{}, c, m, "fp", 0);
        QVERIFY(id);
        QVERIFY(s.snapshotData(*id).empty());
    }
};

QTEST_APPLESS_MAIN(TestStoreSnapshots)
#include "test_store_snapshots.moc"
