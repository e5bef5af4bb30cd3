// Session reuse and snapshot restore on the shared fixtures (real vocabularies
// and shapes): turn 2 with reuse ≡ a fresh session fed both turns, regenerate
// ≡ fresh, and a restored snapshot continues bit-identically. For the hybrid
// fixtures also: edits and regenerations at message boundaries restore the
// recurrent layers from checkpoints that hold no KV rows, prefilling only what
// follows the checkpoint, bit-identical to a fresh session.
#include "shared_data.h"

#include "cairn/chat_session.h"
#include "cairn/exec.h"
#include "cairn/session.h"
#include "cairn/tokenizer.h"
#include "same_bits.h"
#include "stop_when.h"

#include <QTest>

#include <cstring>

using namespace cairn;
using cairn::test::sameBits;
using cairn::test::StopWhen;

namespace {}  // namespace

class TestSessionFixtures : public QObject {
    Q_OBJECT
    ExecContext ctx{2};

private slots:
    void reuseAndRestore_data() {
        QTest::addColumn<QString>("fixture");
        for (const char* f :
             {"llama-spm-q4_k_m.gguf", "llama-bpe-q8_0.gguf", "qwen3-q8_0.gguf", "mamba-f16.gguf", "mamba-q8_0.gguf",
              "lfm2-f16.gguf", "lfm2-q8_0.gguf", "granitehybrid-f16.gguf", "granitehybrid-q8_0.gguf",
              "qwen35-q8_0.gguf", "gemma3-f16.gguf", "gemma3-q8_0.gguf", "phi3-q8_0.gguf", "smollm3-q8_0.gguf"})
            QTest::newRow(f) << QString(f);
    }

    void reuseAndRestore() {
        QFETCH(QString, fixture);
        auto model = Model::load(test::sharedPath("fixtures/" + fixture.toStdString()));
        const auto& tok = model->tokenizer();
        auto turn1 = tok.encode("The lighthouse keeper climbed the stairs at dusk.", tok.addBos(), true);
        auto turn2 = tok.encode(" Below, the boats were coming home one by one.", false, true);
        auto both = turn1;
        both.insert(both.end(), turn2.begin(), turn2.end());

        Session s(*model);
        s.feed(turn1, ctx);
        s.checkpoint();
        s.feed(both, ctx);
        QCOMPARE(s.stats().lastPrefilled, int64_t(turn2.size()));
        Session fresh(*model);
        fresh.feed(both, ctx);
        QVERIFY(sameBits(s.logits(), fresh.logits()));

        // Regenerate after a few generated tokens: back to turn 1's state.
        for (int i = 0; i < 4; ++i) s.append(Sampler::greedy(s.logits()), ctx);
        s.feed(turn1, ctx);
        Session fresh1(*model);
        fresh1.feed(turn1, ctx);
        QVERIFY(sameBits(s.logits(), fresh1.logits()));

        // Snapshot, restore, continue: identical to the uninterrupted session.
        s.feed(both, ctx);
        auto blob = s.snapshot();
        Session restored(*model);
        restored.restore(blob);
        QVERIFY(sameBits(restored.logits(), s.logits()));
        for (int i = 0; i < 4; ++i) {
            int32_t next = Sampler::greedy(s.logits());
            s.append(next, ctx);
            restored.append(next, ctx);
            QVERIFY(sameBits(restored.logits(), s.logits()));
        }
        qInfo("%s: snapshot of %zu tokens = %zu bytes", qPrintable(fixture), s.tokens().size() - 4, blob.size());
    }

    // Gemma 3's sliding-window layers keep every K/V row and mask by window, so
    // turns, rewinds and snapshots far past the window (32 in the fixtures)
    // stay bit-identical to a fresh session.
    void slidingWindowSessions_data() {
        QTest::addColumn<QString>("fixture");
        for (const char* f : {"gemma3-f16.gguf", "gemma3-q8_0.gguf"}) QTest::newRow(f) << QString(f);
    }

    void slidingWindowSessions() {
        QFETCH(QString, fixture);
        auto model = Model::load(test::sharedPath("fixtures/" + fixture.toStdString()));
        const auto& tok = model->tokenizer();
        const auto turn1 = tok.encode("The lighthouse at the end of the harbor had been dark for nearly forty years "
                                      "when Mara decided to climb its spiral staircase, one cold step at a time.",
                                      tok.addBos(), true);
        const auto turn2 = tok.encode(" At the top she found the great lens still intact, wrapped in a canvas sheet "
                                      "that crumbled when she touched it, and the glass caught the late sun.",
                                      false, true);
        QVERIFY(turn1.size() > 32 && turn2.size() > 32);  // each turn alone is longer than the window
        auto both = turn1;
        both.insert(both.end(), turn2.begin(), turn2.end());
        auto fresh = [&](std::span<const int32_t> tokens) {
            Session f(*model);
            f.feed(tokens, ctx);
            return std::vector<float>(f.logits().begin(), f.logits().end());
        };

        Session s(*model);
        QVERIFY(s.memory().canTruncate());
        s.feed(turn1, ctx);
        s.feed(both, ctx);
        QCOMPARE(s.stats().lastPrefilled, int64_t(turn2.size()));
        QVERIFY(sameBits(s.logits(), fresh(both)));

        // Rewind into the second turn (past the window) and edit from there.
        auto edited = std::vector<int32_t>(both.begin(), both.begin() + std::ptrdiff_t(turn1.size() + 10));
        edited.push_back(edited.back() == 0 ? 1 : edited.back() - 1);
        s.feed(edited, ctx);
        QCOMPARE(s.stats().lastPrefilled, int64_t(1));
        QVERIFY(sameBits(s.logits(), fresh(edited)));

        // Generate, snapshot, restore, continue: identical to the uninterrupted session.
        s.feed(both, ctx);
        for (int i = 0; i < 3; ++i) s.append(Sampler::greedy(s.logits()), ctx);
        for (auto storage : {Session::KvStorage::Native, Session::KvStorage::F16}) {
            Session u(*model);
            u.feed(s.tokens(), ctx);
            const auto blob = u.snapshot(storage);
            Session r(*model);
            r.restore(blob);
            QVERIFY(sameBits(r.logits(), u.logits()));
            for (int i = 0; i < 40; ++i) {  // 40 more positions: the window slides over restored rows
                const int32_t next = Sampler::greedy(u.logits());
                u.append(next, ctx);
                r.append(next, ctx);
                QVERIFY(sameBits(r.logits(), u.logits()));
            }
            QVERIFY(sameBits(u.logits(), fresh(u.tokens())));
        }
    }

    // Stop inside a prefill chunk on every architecture (each forward pass
    // reads the flag before each layer): the session keeps its earlier turn,
    // progress moves within the chunk, and the resumed feed prefills only the
    // new turn and matches a fresh session bit for bit.
    void cancelInsideAChunk_data() {
        QTest::addColumn<QString>("fixture");
        for (const char* f : {"llama-spm-q8_0.gguf", "gemma3-q8_0.gguf", "mamba-q8_0.gguf", "mamba2-f16.gguf",
                              "lfm2-q8_0.gguf", "granitehybrid-q8_0.gguf", "qwen35-q8_0.gguf"})
            QTest::newRow(f) << QString(f);
    }

    void cancelInsideAChunk() {
        QFETCH(QString, fixture);
        auto model = Model::load(test::sharedPath("fixtures/" + fixture.toStdString()));
        QVERIFY(model->info().layers > 1);
        const auto& tok = model->tokenizer();
        auto turn1 = tok.encode("The lighthouse keeper climbed the stairs at dusk.", tok.addBos(), true);
        auto turn2 = tok.encode(" Below, the boats were coming home one by one.", false, true);
        auto both = turn1;
        both.insert(both.end(), turn2.begin(), turn2.end());
        const int64_t n2 = int64_t(turn2.size());

        Session s(*model);  // the default chunk holds turn 2 whole
        QVERIFY(n2 > 1 && n2 <= kDefaultPrefillChunk);
        s.feed(turn1, ctx);
        s.checkpoint();
        StopWhen stop([](int64_t done) { return done > 0; });
        QVERIFY_THROWS_EXCEPTION(Cancelled, s.feed(both, ctx, stop.progress));
        QCOMPARE(s.tokens().size(), turn1.size());
        QCOMPARE(s.memory().size(), int64_t(turn1.size()));
        QVERIFY(!stop.reported.empty());
        QVERIFY(stop.reported.back() > 0 && stop.reported.back() < n2);  // stopped within the chunk

        s.feed(both, ctx);
        QCOMPARE(s.stats().lastPrefilled, n2);
        Session fresh(*model);
        fresh.feed(both, ctx);
        QVERIFY(sameBits(s.logits(), fresh.logits()));
    }

    void hybridCheckpoints_data() {
        QTest::addColumn<QString>("fixture");
        for (const char* f : {"lfm2-f16.gguf", "lfm2-q8_0.gguf", "granitehybrid-f16.gguf", "granitehybrid-q8_0.gguf",
                              "qwen35-q8_0.gguf"})
            QTest::newRow(f) << QString(f);
    }

    void hybridCheckpoints() {
        QFETCH(QString, fixture);
        auto model = Model::load(test::sharedPath("fixtures/" + fixture.toStdString()));
        QVERIFY(model->info().recurrent);
        const auto& tok = model->tokenizer();
        const auto prompt1 = tok.encode("Tell me about the tides.", tok.addBos(), true);
        const auto reply1 = tok.encode(" The moon pulls the sea twice a day.", false, true);
        const auto prompt2 = tok.encode(" And the wind?", false, true);
        const auto edited2 = tok.encode(" And the storms in winter?", false, true);
        auto cat = [](std::vector<int32_t> a, const std::vector<int32_t>& b) {
            a.insert(a.end(), b.begin(), b.end());
            return a;
        };
        auto fresh = [&](const std::vector<int32_t>& tokens) {
            Session f(*model);
            f.feed(tokens, ctx);
            return std::vector<float>(f.logits().begin(), f.logits().end());
        };
        const auto upToReply1 = cat(prompt1, reply1), upToPrompt2 = cat(upToReply1, prompt2);

        Session s(*model);
        QVERIFY(!s.memory().canTruncate());
        s.feed(prompt1, ctx);
        s.checkpoint();
        for (size_t i = prompt1.size(); i < upToReply1.size(); ++i) s.append(upToReply1[i], ctx);
        s.checkpoint();
        s.feed(upToPrompt2, ctx);
        s.checkpoint();
        QCOMPARE(s.checkpointCount(), size_t(3));
        QCOMPARE(s.stats().lastPrefilled, int64_t(prompt2.size()));
        QVERIFY(sameBits(s.logits(), fresh(upToPrompt2)));

        // A checkpoint holds the recurrent layers only: far smaller than a full copy, no K/V tensor.
        auto cp = s.memory().checkpoint();
        auto full = s.memory().clone();
        QCOMPARE(cp->size(), s.memory().size());
        QVERIFY(cp->bytes() < full->bytes());
        for (const auto& t : cp->state()) QVERIFY2(!t.attention, t.name.c_str());
        bool hasKv = false;
        for (const auto& t : full->state()) hasKv |= t.attention;
        QVERIFY(hasKv);
        qInfo("%s at %lld tokens: checkpoint %zu bytes, full clone %zu bytes", qPrintable(fixture),
              (long long)s.memory().size(), cp->bytes(), full->bytes());

        // Regenerate the second reply: the checkpoint at the prompt's end, nothing prefilled.
        for (int i = 0; i < 5; ++i) s.append(Sampler::greedy(s.logits()), ctx);
        s.feed(upToPrompt2, ctx);
        QCOMPARE(s.stats().lastPrefilled, int64_t(0));
        QVERIFY(sameBits(s.logits(), fresh(upToPrompt2)));
        const int32_t next = Sampler::greedy(s.logits());
        s.append(next, ctx);
        QVERIFY(sameBits(s.logits(), fresh(cat(upToPrompt2, {next}))));

        // Edit the second message: back to the first reply's end, only the new message is prefilled.
        const auto edited = cat(upToReply1, edited2);
        s.feed(edited, ctx);
        QCOMPARE(s.stats().lastPrefilled, int64_t(edited2.size()));
        QVERIFY(sameBits(s.logits(), fresh(edited)));

        // Edit inside the first message: no checkpoint before it, everything is read again.
        auto early = prompt1;
        early.back() = early.back() == 0 ? 1 : early.back() - 1;
        s.feed(early, ctx);
        QCOMPARE(s.stats().lastPrefilled, int64_t(early.size()));
        QVERIFY(sameBits(s.logits(), fresh(early)));

        // Snapshot with checkpoints → restore → regenerate from the stored checkpoint, then continue.
        Session t(*model);
        t.feed(prompt1, ctx);
        t.checkpoint();
        for (size_t i = prompt1.size(); i < upToReply1.size(); ++i) t.append(upToReply1[i], ctx);
        t.checkpoint();
        t.feed(upToPrompt2, ctx);
        t.checkpoint();
        for (int i = 0; i < 3; ++i) t.append(Sampler::greedy(t.logits()), ctx);
        t.checkpoint();
        for (auto storage : {Session::KvStorage::Native, Session::KvStorage::F16}) {
            const auto blob = t.snapshot(storage);
            Session r(*model);
            r.restore(blob);
            QCOMPARE(r.tokens(), t.tokens());
            QCOMPARE(r.checkpointCount(), size_t(3));
            r.feed(upToPrompt2, ctx);
            QCOMPARE(r.stats().lastPrefilled, int64_t(0));
            QVERIFY(sameBits(r.logits(), fresh(upToPrompt2)));
            r.feed(edited, ctx);
            QCOMPARE(r.stats().lastPrefilled, int64_t(edited2.size()));
            QVERIFY(sameBits(r.logits(), fresh(edited)));

            // Checkpoints kept as the snapshot's bytes: the same snapshot again, and after moving on
            // a new one whose checkpoint at the old state's end holds no K/V and still restores exactly.
            Session u(*model);
            u.restore(std::vector<uint8_t>(blob));
            QVERIFY(u.snapshot(storage) == blob);
            u.append(Sampler::greedy(u.logits()), ctx);
            u.checkpoint();
            Session v(*model);
            v.restore(u.snapshot(storage));
            v.feed(t.tokens(), ctx);
            QCOMPARE(v.stats().lastPrefilled, int64_t(0));
            QVERIFY(sameBits(v.logits(), fresh(t.tokens())));
        }
    }
};

CAIRN_CONFORMANCE_MAIN(TestSessionFixtures)
#include "test_session_fixtures.moc"
