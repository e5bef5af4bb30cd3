// Snapshots restore a session bit-exactly, and every damaged, truncated or
// foreign snapshot is refused with a reason, never a crash.
#include "session_models.h"

#include "cairn/error.h"
#include "cairn/exec.h"
#include "cairn/session.h"

#include <QTest>

#include <cstring>
#include <random>

using namespace cairn;
using namespace cairn::test;

namespace {

bool sameBits(std::span<const float> a, std::span<const float> b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

float maxAbsDiff(std::span<const float> a, std::span<const float> b) {
    float m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
    return m;
}

} // namespace

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

    void everyTruncationIsRefused() {
        Session s(*models.mamba);
        s.feed(someTokens(10, 3), ctx);
        auto blob = s.snapshot();
        for (size_t n = 0; n < blob.size(); ++n) {
            Session r(*models.mamba);
            QVERIFY_THROWS_EXCEPTION(Error, r.restore(std::span(blob).first(n)));
            QVERIFY(r.tokens().empty());
        }
    }

    void byteFlipsAreRefused() {
        for (const Model* m : models.all()) {
            Session s(*m);
            s.feed(someTokens(12, 4), ctx);
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
