// Snapshots restore a session bit-exactly, and every damaged, truncated or
// foreign snapshot is refused with a reason, never a crash.
#include "session_models.h"

#include "cairn/error.h"
#include "cairn/exec.h"
#include "cairn/session.h"
#include "same_bits.h"

#include <QTest>

#include <xxhash.h>

#include <cstring>
#include <random>

using namespace cairn;
using namespace cairn::test;

namespace {

float maxAbsDiff(std::span<const float> a, std::span<const float> b) {
    float m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
    return m;
}

// A Mamba session at message boundaries: prompt, reply, prompt, reply; a checkpoint at each.
struct Boundaries {
    std::vector<int32_t> prompt1, reply1, prompt2, reply2;
    std::vector<int32_t> upTo(int n) const {
        std::vector<int32_t> t;
        for (const auto* part : {&prompt1, &reply1, &prompt2, &reply2}) {
            if (n-- <= 0) break;
            t = concat(t, *part);
        }
        return t;
    }
};

Boundaries boundaries() { return {someTokens(20, 31), someTokens(8, 32), someTokens(11, 33), someTokens(6, 34)}; }

void talk(Session& s, const Boundaries& b, ExecContext& ctx) {
    for (int n = 1; n <= 4; ++n) {
        auto t = b.upTo(n);
        if (n % 2 == 1) {
            s.feed(t, ctx);
        } else {
            for (size_t i = s.tokens().size(); i < t.size(); ++i) s.append(t[i], ctx);
        }
        s.checkpoint();
    }
}

// Rewrites a snapshot's version field and checksum.
std::vector<uint8_t> withVersion(std::vector<uint8_t> blob, uint32_t version) {
    std::memcpy(blob.data() + 8, &version, sizeof version);
    uint64_t sum = XXH3_64bits(blob.data(), blob.size() - 8);
    std::memcpy(blob.data() + blob.size() - 8, &sum, sizeof sum);
    return blob;
}

}  // namespace

class TestSnapshot : public QObject {
    Q_OBJECT
    SessionModels models;
    ExecContext ctx{2};

    void checkRestoreContinuesExactly(const Model& m, KvType kv, Session::KvStorage storage) {
        SessionOptions o;
        o.memory.kvType = kv;
        o.memory.contextSize = 128;
        Session original(m, o);
        auto prompt = someTokens(40, 1);
        original.feed(prompt, ctx);
        original.append(42, ctx);
        auto blob = original.snapshot(storage);

        Session restored(m, o);
        restored.restore(blob);
        QCOMPARE(restored.tokens(), original.tokens());
        QVERIFY(sameBits(restored.logits(), original.logits()));
        for (int32_t t : {5, 17, 250}) {
            original.append(t, ctx);
            restored.append(t, ctx);
            QVERIFY2(sameBits(restored.logits(), original.logits()), m.info().architecture.c_str());
        }
        QCOMPARE(restored.stats().prefilledTotal, 0);
    }

private slots:
    void restoreIsBitExact() {
        checkRestoreContinuesExactly(*models.llama, KvType::F16, Session::KvStorage::Native);
        checkRestoreContinuesExactly(*models.llama, KvType::F16, Session::KvStorage::F16);  // lossless on f16 KV
        checkRestoreContinuesExactly(*models.llama, KvType::F32, Session::KvStorage::Native);
        checkRestoreContinuesExactly(*models.mamba, KvType::F16, Session::KvStorage::Native);
        checkRestoreContinuesExactly(*models.mamba, KvType::F16, Session::KvStorage::Q8_0);  // Mamba state stays f32
    }

    void q8StorageIsSmallerAndClose() {
        // q8_0 blocks need head dimensions that are multiples of 32 (else f16 is stored): qwen3's tiny model.
        TinyModelOptions t;
        t.arch = TinyArch::Qwen3;
        auto qwen3 = Model::load(writeTinyModel((models.dir.path() + "/qwen3.gguf").toStdString(), t));
        Session original(*qwen3);
        original.feed(someTokens(60, 2), ctx);
        auto f16 = original.snapshot(Session::KvStorage::F16);
        auto q8 = original.snapshot(Session::KvStorage::Q8_0);
        QVERIFY(q8.size() < f16.size());
        Session restored(*qwen3);
        restored.restore(q8);
        original.append(9, ctx);
        restored.append(9, ctx);
        // 8-bit keys and values (rounding error ≤ 1/254 of each block's largest
        // value, ≈ 0.4 %) move the next logits by about that share of their
        // spread, not more: allow 1 % of the logit range.
        float d = maxAbsDiff(original.logits(), restored.logits());
        auto [lo, hi] = std::minmax_element(original.logits().begin(), original.logits().end());
        qInfo("q8_0 KV snapshot: max |logit diff| after one step = %g (logit range %g)", d, *hi - *lo);
        QVERIFY(d > 0);  // it really was lossy
        QVERIFY(d < 0.01f * (*hi - *lo));
    }

    void emptySessionRoundTrips() {
        for (const Model* m : models.all()) {
            Session s(*m);
            Session r(*m);
            r.restore(s.snapshot());
            QVERIFY(r.tokens().empty());
        }
    }

    void recurrentCheckpointsAreStoredAndRestoredExactly() {
        const Model& m = *models.mamba;
        auto b = boundaries();
        Session original(m);
        talk(original, b, ctx);
        QCOMPARE(original.checkpointCount(), size_t(4));
        Session plain(m);
        plain.feed(b.upTo(4), ctx);
        auto blob = original.snapshot();
        QVERIFY(blob.size() > plain.snapshot().size());  // the two checkpoints before the end are in it

        Session restored(m);
        restored.restore(blob);
        QCOMPARE(restored.checkpointCount(),
                 size_t(3));  // the latest three: reply 1, prompt 2, reply 2 (the state itself)
        QCOMPARE(restored.tokens(), original.tokens());
        QVERIFY(sameBits(restored.logits(), original.logits()));
        // Regenerate the last reply: back to the second prompt's end, from its checkpoint, nothing prefilled.
        auto prompt2 = b.upTo(3);
        restored.feed(prompt2, ctx);
        QCOMPARE(restored.stats().lastPrefilled, 0);
        QCOMPARE(restored.stats().checkpointRestores, 1);
        Session fresh(m);
        fresh.feed(prompt2, ctx);
        QVERIFY(sameBits(restored.logits(), fresh.logits()));
        restored.append(3, ctx);
        fresh.append(3, ctx);
        QVERIFY(sameBits(restored.logits(), fresh.logits()));
        // Edit the second message: from the first reply's end, only the new message is prefilled.
        Session again(m);
        again.restore(blob);
        auto edited = concat(b.upTo(2), someTokens(9, 35));
        again.feed(edited, ctx);
        QCOMPARE(again.stats().lastPrefilled, 9);
        Session fresh2(m);
        fresh2.feed(edited, ctx);
        QVERIFY(sameBits(again.logits(), fresh2.logits()));
        // Before the oldest stored checkpoint there is none: the whole sequence is read again.
        auto early = b.prompt1;
        early.back() = (early.back() + 1) % 256;
        again.feed(early, ctx);
        QCOMPARE(again.stats().lastPrefilled, int64_t(early.size()));
    }

    // A restored session keeps its stored checkpoints as the snapshot's bytes
    // until one is used: snapshotting it again gives the same bytes; after it
    // moved on, a new snapshot still holds them (the one that was the state
    // itself without its K/V), and they still restore exactly.
    void storedCheckpointsSurviveASecondSnapshot() {
        for (const Model* m : models.all()) {
            if (!m->info().recurrent) continue;
            auto b = boundaries();
            Session original(*m);
            talk(original, b, ctx);
            const auto blob = original.snapshot();
            Session restored(*m);
            restored.restore(std::vector<uint8_t>(blob));
            QVERIFY(restored.snapshot() == blob);
            Session fromSpan(*m);
            fromSpan.restore(std::span<const uint8_t>(blob));
            QVERIFY(fromSpan.snapshot() == blob);

            // Two more positions and a checkpoint there: the stored ones are now older than the state.
            restored.append(7, ctx);
            restored.append(8, ctx);
            restored.checkpoint();
            const auto second = restored.snapshot();
            Session again(*m);
            again.restore(std::vector<uint8_t>(second));
            QCOMPARE(again.checkpointCount(), size_t(3));  // prompt 2, reply 2 (stored), and the state
            // Regenerate from reply 2's end (the checkpoint that was the first snapshot's state), then from prompt 2's end.
            for (int n : {4, 3}) {
                const auto upTo = b.upTo(n);
                again.feed(upTo, ctx);
                QCOMPARE(again.stats().lastPrefilled, 0);
                Session fresh(*m);
                fresh.feed(upTo, ctx);
                QVERIFY2(sameBits(again.logits(), fresh.logits()), m->info().architecture.c_str());
                again.append(9, ctx);
                fresh.append(9, ctx);
                QVERIFY(sameBits(again.logits(), fresh.logits()));
            }
        }
    }

    void version1SnapshotsAreStillRead() {
        // Version 1 is version 2 without the checkpoint count (zero for attention memory).
        for (const Model* m : models.all()) {
            Session s(*m);
            s.feed(someTokens(15, 36), ctx);
            auto v2 = s.snapshot();
            std::vector<uint8_t> v1(v2.begin(), v2.end() - 12);
            v1.resize(v1.size() + 8);
            v1 = withVersion(v1, 1);
            Session r(*m);
            r.restore(v1);
            QCOMPARE(r.tokens(), s.tokens());
            QVERIFY(sameBits(r.logits(), s.logits()));
            s.append(4, ctx);
            r.append(4, ctx);
            QVERIFY(sameBits(r.logits(), s.logits()));
        }
    }

    void version2SnapshotsAreStillRead() {
        // Version 3 only added hybrid checkpoints; a version 2 snapshot (with Mamba checkpoints) reads the same.
        for (const Model* m : models.all()) {
            Session s(*m);
            talk(s, boundaries(), ctx);
            Session r(*m);
            r.restore(withVersion(s.snapshot(), 2));
            QCOMPARE(r.tokens(), s.tokens());
            QCOMPARE(r.checkpointCount(), m->info().recurrent ? size_t(3) : size_t(0));
            QVERIFY(sameBits(r.logits(), s.logits()));
            s.append(5, ctx);
            r.append(5, ctx);
            QVERIFY(sameBits(r.logits(), s.logits()));
        }
    }

    void otherVersionsAreRefusedWithTheReason() {
        Session s(*models.llama);
        s.feed(someTokens(5, 37), ctx);
        for (uint32_t version : {0u, 4u, 0xffffffffu}) {
            Session r(*models.llama);
            try {
                r.restore(withVersion(s.snapshot(), version));
                QFAIL("restored an unknown version");
            } catch (const Error& e) {
                QVERIFY2(std::string(e.what()).find("version") != std::string::npos, e.what());
            }
        }
    }

    void everyTruncationIsRefused() {
        Session s(*models.mamba);
        talk(s, boundaries(), ctx);  // with checkpoints
        auto blob = s.snapshot();
        qInfo("Mamba snapshot with checkpoints: %zu bytes", blob.size());
        for (size_t n = 0; n < blob.size(); ++n) {
            Session r(*models.mamba);
            QVERIFY_THROWS_EXCEPTION(Error, r.restore(std::span(blob).first(n)));
            QVERIFY(r.tokens().empty());
        }
    }

    // Bytes after the last checkpoint are found only once everything else was
    // read into the session's memory: the refusal must still leave it empty,
    // and the session must then compute as a fresh one does, bit for bit.
    void aFailedRestoreLeavesTheSessionEmpty() {
        for (const Model* m : models.all()) {
            Session s(*m);
            talk(s, boundaries(), ctx);
            auto blob = s.snapshot();
            blob.insert(blob.end() - 8, {1, 2, 3, 4});
            const uint64_t sum = XXH3_64bits(blob.data(), blob.size() - 8);
            std::memcpy(blob.data() + blob.size() - 8, &sum, sizeof sum);

            Session r(*m);
            QVERIFY_THROWS_EXCEPTION(Error, r.restore(blob));
            QVERIFY(r.tokens().empty());
            QCOMPARE(r.memory().size(), int64_t(0));
            QCOMPARE(r.checkpointCount(), size_t(0));
            Session fresh(*m);
            const auto prompt = someTokens(12, 77);
            r.feed(prompt, ctx);
            fresh.feed(prompt, ctx);
            QVERIFY2(sameBits(r.logits(), fresh.logits()), m->info().architecture.c_str());
        }
    }

    void byteFlipsAreRefused() {
        for (const Model* m : models.all()) {
            Session s(*m);
            talk(s, boundaries(), ctx);  // checkpoints on Mamba
            auto blob = s.snapshot();
            std::mt19937 rng(1234);
            for (int i = 0; i < 3000; ++i) {
                auto bad = blob;
                size_t pos = rng() % bad.size();
                bad[pos] ^= uint8_t(1u << (rng() % 8));
                Session r(*m);
                QVERIFY_THROWS_EXCEPTION(Error, r.restore(bad));
            }
        }
    }

    void anotherModelsSnapshotIsRefused() {
        Session s(*models.llama);
        s.feed(someTokens(8, 5), ctx);
        auto blob = s.snapshot();
        Session r(*models.mamba);
        try {
            r.restore(blob);
            QFAIL("restored a snapshot of another model");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("another model") != std::string::npos, e.what());
        }
    }

    void aTooLongSnapshotDoesNotFitASmallerContext() {
        SessionOptions big;
        big.memory.contextSize = 128;
        Session s(*models.llama, big);
        s.feed(someTokens(100, 6), ctx);
        auto blob = s.snapshot();
        SessionOptions small;
        small.memory.contextSize = 64;
        Session r(*models.llama, small);
        QVERIFY_THROWS_EXCEPTION(Error, r.restore(blob));
    }
};

QTEST_APPLESS_MAIN(TestSnapshot)
#include "test_snapshot.moc"
