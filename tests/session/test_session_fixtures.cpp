// Session reuse and snapshot restore on the shared fixtures (real vocabularies
// and shapes): turn 2 with reuse ≡ a fresh session fed both turns, regenerate
// ≡ fresh, and a restored snapshot continues bit-identically.
#include "shared_data.h"

#include "cairn/chat_session.h"
#include "cairn/exec.h"
#include "cairn/session.h"
#include "cairn/tokenizer.h"

#include <QTest>

#include <cstring>

using namespace cairn;

namespace {

bool sameBits(std::span<const float> a, std::span<const float> b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace

class TestSessionFixtures : public QObject {
    Q_OBJECT
    ExecContext ctx{2};

private slots:
    void reuseAndRestore_data() {
        QTest::addColumn<QString>("fixture");
        for (const char* f : {"llama-spm-q4_k_m.gguf", "llama-bpe-q8_0.gguf", "qwen3-q8_0.gguf", "mamba-f16.gguf",
                              "mamba-q8_0.gguf"})
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
};

CAIRN_CONFORMANCE_MAIN(TestSessionFixtures)
#include "test_session_fixtures.moc"
