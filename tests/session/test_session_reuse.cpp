// A session prefills only what is new, and reusing its memory gives exactly
// the logits a fresh session computes from scratch (bit for bit), for
// attention memory (cut back) and recurrent memory (checkpoints).
#include "session_models.h"

#include "cairn/error.h"
#include "cairn/exec.h"
#include "cairn/session.h"
#include "same_bits.h"
#include "stop_when.h"

#include <QTest>

#include <cstring>
#include <stdexcept>

using namespace cairn;
using namespace cairn::test;

namespace {

std::vector<float> freshLogits(const Model& model, const std::vector<int32_t>& tokens, ExecContext& ctx,
                               int64_t chunk = 64) {
    SessionOptions o;
    o.chunk = chunk;
    Session fresh(model, o);
    fresh.feed(tokens, ctx);
    return {fresh.logits().begin(), fresh.logits().end()};
}

}  // namespace

class TestSessionReuse : public QObject {
    Q_OBJECT
    SessionModels models;
    ExecContext ctx{2};

private slots:
    void secondTurnPrefillsOnlyNewTokens() {
        for (const Model* m : models.all()) {
            auto turn1 = someTokens(37, 1), turn2 = someTokens(23, 2);
            SessionOptions o;
            o.chunk = 16;
            Session s(*m, o);
            s.feed(turn1, ctx);
            QCOMPARE(s.stats().lastPrefilled, 37);
            s.checkpoint();
            auto both = concat(turn1, turn2);
            s.feed(both, ctx);
            QCOMPARE(s.stats().lastPrefilled, 23);
            QCOMPARE(s.stats().lastReused, 37);
            QVERIFY2(sameBits(s.logits(), freshLogits(*m, both, ctx)), m->info().architecture.c_str());
            // Feeding the same sequence again computes nothing.
            s.feed(both, ctx);
            QCOMPARE(s.stats().lastPrefilled, 0);
        }
    }

    void decodeStepsThenNextTurnMatchFresh() {
        for (const Model* m : models.all()) {
            Session s(*m);
            auto prompt = someTokens(20, 3);
            s.feed(prompt, ctx);
            s.checkpoint();
            auto history = prompt;
            for (int i = 0; i < 5; ++i) {
                int32_t t = int32_t(i * 31 % 256);
                s.append(t, ctx);
                history.push_back(t);
            }
            QVERIFY(sameBits(s.logits(), freshLogits(*m, history, ctx)));
            s.checkpoint();
            auto next = concat(history, someTokens(9, 4));
            s.feed(next, ctx);
            QCOMPARE(s.stats().lastPrefilled, 9);
            QVERIFY(sameBits(s.logits(), freshLogits(*m, next, ctx)));
        }
    }

    void regenerateRestoresThePromptState() {
        for (const Model* m : models.all()) {
            Session s(*m);
            auto prompt = someTokens(30, 5);
            s.feed(prompt, ctx);
            s.checkpoint();  // message boundary before the reply
            for (int i = 0; i < 6; ++i) s.append(int32_t(100 + i), ctx);
            s.checkpoint();
            s.feed(prompt, ctx);  // regenerate: back to the prompt
            QCOMPARE(s.tokens(), prompt);
            // Attention memory recomputes the last token for its logits; recurrent memory
            // has a checkpoint holding them.
            QCOMPARE(s.stats().lastPrefilled, m->info().recurrent ? 0 : 1);
            QVERIFY(sameBits(s.logits(), freshLogits(*m, prompt, ctx)));
            // And continuing after it still matches a fresh session.
            s.append(7, ctx);
            QVERIFY(sameBits(s.logits(), freshLogits(*m, concat(prompt, {7}), ctx)));
        }
    }

    void editingAnEarlierMessageReprefillsFromTheBoundary() {
        for (const Model* m : models.all()) {
            Session s(*m);
            auto turn1 = someTokens(25, 6), reply1 = someTokens(10, 7), turn2 = someTokens(12, 8);
            s.feed(turn1, ctx);
            s.checkpoint();
            auto convo = concat(turn1, reply1);
            s.feed(convo, ctx);
            s.checkpoint();
            s.feed(concat(convo, turn2), ctx);
            s.checkpoint();
            // Edit the second user message: diverges right after reply1.
            auto edited = concat(convo, someTokens(14, 9));
            s.feed(edited, ctx);
            QCOMPARE(s.stats().lastPrefilled, 14);
            QVERIFY(sameBits(s.logits(), freshLogits(*m, edited, ctx)));
            // Edit inside the first message: a recurrent model goes back to an
            // earlier checkpoint (or the start); attention cuts back to the fork.
            auto early = concat(someTokens(25, 6), {});
            early[20] = (early[20] + 1) % 256;
            s.feed(early, ctx);
            QCOMPARE(s.stats().lastPrefilled, m->info().recurrent ? 25 : 5);
            QVERIFY(sameBits(s.logits(), freshLogits(*m, early, ctx)));
        }
    }

    void chunkSizeDoesNotChangeReuse() {
        for (const Model* m : models.all()) {
            auto tokens = someTokens(50, 10);
            auto ref = freshLogits(*m, tokens, ctx, 64);
            for (int64_t chunk : {1, 3, 7, 50}) QVERIFY(sameBits(ref, freshLogits(*m, tokens, ctx, chunk)));
        }
    }

    void checkpointBudgetIsKept() {
        SessionOptions o;
        o.maxCheckpoints = 3;
        Session s(*models.mamba, o);
        std::vector<int32_t> t;
        for (int turn = 0; turn < 6; ++turn) {
            t = concat(t, someTokens(5, 20 + turn));
            s.feed(t, ctx);
            s.checkpoint();
            QVERIFY(s.checkpointCount() <= 3);
        }
        QCOMPARE(s.checkpointCount(), size_t(3));
    }

    void fullContextIsAClearError() {
        SessionOptions o;
        o.memory.contextSize = 16;
        Session s(*models.llama, o);
        QVERIFY_THROWS_EXCEPTION(Error, s.feed(someTokens(17, 11), ctx));
        s.feed(someTokens(16, 12), ctx);
        QVERIFY_THROWS_EXCEPTION(Error, s.append(1, ctx));
    }

    void cancelStopsBetweenChunksAndKeepsAConsistentPrefix() {
        for (const Model* m : models.all()) {
            SessionOptions o;
            o.chunk = 4;
            Session s(*m, o);
            StopWhen stop([](int64_t done) { return done >= 8; });
            auto tokens = someTokens(20, 13);
            QVERIFY_THROWS_EXCEPTION(Cancelled, s.feed(tokens, ctx, stop.progress));
            QCOMPARE(s.tokens().size(), size_t(8));
            // Resuming continues from the prefix and matches a fresh run.
            s.feed(tokens, ctx);
            QCOMPARE(s.stats().lastPrefilled, 12);
            QVERIFY(sameBits(s.logits(), freshLogits(*m, tokens, ctx)));
        }
    }

    // Stop inside a chunk: the pass ends before a layer, the session keeps the
    // chunks fed before it (a recurrent state is put back to the chunk's start,
    // not left part-updated), and resuming matches a fresh run bit for bit.
    void cancelInsideAChunkKeepsTheChunksBefore() {
        for (const Model* m : models.all()) {
            SessionOptions o;
            o.chunk = 8;
            Session s(*m, o);
            StopWhen stop([](int64_t done) { return done > 8 && done < 16; });  // mid second chunk, between its layers
            auto tokens = someTokens(20, 14);
            QVERIFY_THROWS_EXCEPTION(Cancelled, s.feed(tokens, ctx, stop.progress));
            QCOMPARE(s.tokens().size(), size_t(8));
            QCOMPARE(s.memory().size(), int64_t(8));
            QVERIFY(s.logits().empty());
            // Tiny models have 2 layers: one report between them, one after each chunk.
            QCOMPARE(stop.reported, (std::vector<int64_t>{4, 8, 12}));
            s.feed(tokens, ctx);
            QCOMPARE(s.stats().lastPrefilled, 12);
            QCOMPARE(s.stats().checkpointRestores, 0);
            QVERIFY2(sameBits(s.logits(), freshLogits(*m, tokens, ctx)), m->info().architecture.c_str());
        }
    }

    // Any failure inside a pass (here the progress callback throwing) leaves
    // the session as consistent as a cancel does.
    void anErrorInsideAChunkLeavesAConsistentSession() {
        for (const Model* m : models.all()) {
            SessionOptions o;
            o.chunk = 6;
            Session s(*m, o);
            auto first = someTokens(6, 15), tokens = concat(first, someTokens(6, 16));
            s.feed(first, ctx);
            FeedProgress p;
            p.onProgress = [&](int64_t done, int64_t) {
                if (done > 0 && done < 6) throw std::runtime_error("callback failed");
            };
            QVERIFY_THROWS_EXCEPTION(std::runtime_error, s.feed(tokens, ctx, p));
            QCOMPARE(s.tokens().size(), size_t(6));
            QCOMPARE(s.memory().size(), int64_t(6));
            s.feed(tokens, ctx);
            QCOMPARE(s.stats().lastPrefilled, 6);
            QVERIFY2(sameBits(s.logits(), freshLogits(*m, tokens, ctx)), m->info().architecture.c_str());
        }
    }
};

QTEST_APPLESS_MAIN(TestSessionReuse)
#include "test_session_reuse.moc"
