// Bit-exact invariants of the Mamba forward pass on tiny random models:
// prefill ≡ repeated single steps, any thread count and chunk size, split
// prefills, state clones and snapshots continue identically.
#include "cairn/error.h"
#include "cairn/exec.h"
#include "cairn/model.h"
#include "memory/recurrent_state.h"
#include "memory_state.h"
#include "same_bits.h"
#include "tiny_mamba.h"
#include "tiny_models.h"

#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <random>
#include <vector>

using namespace cairn;
using cairn::test::sameBits;
using cairn::test::stateBytes;

namespace {

struct Run {
    std::vector<float> logits;  // every position
    std::vector<uint8_t> state;  // all state bytes
};

std::vector<int32_t> randomTokens(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<int32_t> v(n);
    for (auto& t : v) t = int32_t(rng() % test::kTinyVocab);
    return v;
}

}  // namespace

class TestMambaInvariants : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<Model> models_[4];  // mamba F32, F16, Q8_0; mamba2 F16
    std::vector<int32_t> tokens_ = randomTokens(53, 11);

    const Model& model(int i) { return *models_[i]; }

    Run prefillAll(const Model& m, const std::vector<int32_t>& toks, int64_t chunk, int threads) {
        ExecContext ctx(threads);
        auto mem = m.newMemory({});
        Run r;
        r.logits.resize(toks.size() * size_t(m.info().vocabSize));
        prefill(m, *mem, toks, chunk, true, r.logits.data(), ctx);
        r.state = stateBytes(*mem);
        return r;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        const TensorType types[3] = {TensorType::F32, TensorType::F16, TensorType::Q8_0};
        for (int i = 0; i < 3; ++i) {
            test::TinyMambaOptions o;
            o.type = types[i];
            o.seed = 100 + uint32_t(i);
            o.inner = i == 2 ? 128 : 136;  // Q8_0 needs rows of 32k for ssm_out
            o.tied = i != 1;
            const std::string path = dir_.filePath(QString("tiny-mamba-%1.gguf").arg(i)).toStdString();
            test::writeTinyMamba(path, o);
            models_[i] = Model::load(path);
        }
        test::TinyMambaOptions o;
        o.mamba2 = true;
        o.type = TensorType::F16;
        o.inner = 128;  // 8 heads of 16 channels, 2 groups
        const std::string path = dir_.filePath("tiny-mamba2.gguf").toStdString();
        test::writeTinyMamba(path, o);
        models_[3] = Model::load(path);
    }

    static void addModelRows() {
        QTest::addColumn<int>("type");
        QTest::newRow("f32") << 0;
        QTest::newRow("f16") << 1;
        QTest::newRow("q8_0") << 2;
        QTest::newRow("mamba2-f16") << 3;
    }

    void loadsMetadata() {
        const auto& info = model(0).info();
        QCOMPARE(info.architecture, std::string("mamba"));
        QVERIFY(info.recurrent);
        QCOMPARE(info.layers, int64_t(2));
        QCOMPARE(info.vocabSize, test::kTinyVocab);
        auto mem = model(0).newMemory({});
        QVERIFY(!mem->canTruncate());
        // 2 layers × 136 channels (padded to 144, whole 16-lane blocks) × (3 conv + 16 state) floats
        QCOMPARE(mem->bytes(), size_t(2 * 144 * (3 + 16) * 4));
        QCOMPARE(mem->state().size(), size_t(4));
    }

    void logitsAreFiniteAndVary() {
        Run r = prefillAll(model(0), tokens_, 64, 1);
        const int64_t V = model(0).info().vocabSize;
        for (float v : r.logits) QVERIFY(std::isfinite(v));
        // Positions differ (the state carries information).
        QVERIFY(std::memcmp(&r.logits[0], &r.logits[size_t(V)], size_t(V) * 4) != 0);
        bool nonzeroState = false;
        for (auto b : r.state) nonzeroState |= b != 0;
        QVERIFY(nonzeroState);
    }

    void prefillEqualsSteps_data() { addModelRows(); }
    void prefillEqualsSteps() {
        QFETCH(int, type);
        const Model& m = model(type);
        const int64_t V = m.info().vocabSize;
        Run batched = prefillAll(m, tokens_, 64, 2);

        ExecContext ctx(1);
        auto mem = m.newMemory({});
        std::vector<float> stepLogits(tokens_.size() * size_t(V));
        for (size_t i = 0; i < tokens_.size(); ++i)
            m.forward(*mem, std::span(&tokens_[i], 1), false, &stepLogits[i * size_t(V)], ctx);
        QCOMPARE(mem->size(), int64_t(tokens_.size()));
        QVERIFY(sameBits(batched.logits, stepLogits));
        QVERIFY(batched.state == stateBytes(*mem));
    }

    void anyThreadsAnyChunk_data() { addModelRows(); }
    void anyThreadsAnyChunk() {
        QFETCH(int, type);
        const Model& m = model(type);
        Run ref = prefillAll(m, tokens_, 64, 1);
        for (int threads : {1, 2, 3})
            for (int64_t chunk : {1, 2, 3, 7, 16, 64}) {
                Run r = prefillAll(m, tokens_, chunk, threads);
                QVERIFY2(sameBits(ref.logits, r.logits),
                         qPrintable(QString("threads %1 chunk %2").arg(threads).arg(chunk)));
                QVERIFY(ref.state == r.state);
            }
    }

    void splitPrefillEqualsWhole_data() { addModelRows(); }
    void splitPrefillEqualsWhole() {
        QFETCH(int, type);
        const Model& m = model(type);
        const int64_t V = m.info().vocabSize;
        Run whole = prefillAll(m, tokens_, 16, 2);
        ExecContext ctx(2);
        for (size_t split : {size_t(1), size_t(20), size_t(52)}) {
            auto mem = m.newMemory({});
            std::vector<float> a(split * size_t(V)), b((tokens_.size() - split) * size_t(V));
            prefill(m, *mem, std::span(tokens_).first(split), 7, true, a.data(), ctx);
            prefill(m, *mem, std::span(tokens_).subspan(split), 5, true, b.data(), ctx);
            QVERIFY(std::memcmp(a.data(), whole.logits.data(), a.size() * 4) == 0);
            QVERIFY(std::memcmp(b.data(), whole.logits.data() + a.size(), b.size() * 4) == 0);
            QVERIFY(whole.state == stateBytes(*mem));
        }
    }

    void lastLogitsOnly() {
        const Model& m = model(2);
        const int64_t V = m.info().vocabSize;
        Run whole = prefillAll(m, tokens_, 64, 1);
        ExecContext ctx(2);
        auto mem = m.newMemory({});
        std::vector<float> last(static_cast<size_t>(V));
        prefill(m, *mem, tokens_, 9, false, last.data(), ctx);
        QVERIFY(std::memcmp(last.data(), whole.logits.data() + whole.logits.size() - size_t(V), size_t(V) * 4) == 0);
    }

    void cloneContinuesIdentically_data() { addModelRows(); }
    void cloneContinuesIdentically() {
        QFETCH(int, type);
        const Model& m = model(type);
        const int64_t V = m.info().vocabSize;
        ExecContext ctx(2);
        auto mem = m.newMemory({});
        prefill(m, *mem, std::span(tokens_).first(30), 8, false, nullptr, ctx);
        auto copy = mem->clone();
        QCOMPARE(copy->size(), mem->size());
        QVERIFY(stateBytes(*copy) == stateBytes(*mem));

        const auto rest = std::span(tokens_).subspan(30);
        std::vector<float> a(rest.size() * size_t(V)), b(a.size());
        prefill(m, *mem, rest, 4, true, a.data(), ctx);
        const auto afterOriginal = stateBytes(*mem);
        prefill(m, *copy, rest, 64, true, b.data(), ctx);
        QVERIFY(sameBits(a, b));
        QVERIFY(afterOriginal == stateBytes(*copy));
    }

    void snapshotRestoreContinuesIdentically_data() { addModelRows(); }
    void snapshotRestoreContinuesIdentically() {
        QFETCH(int, type);
        const Model& m = model(type);
        const int64_t V = m.info().vocabSize;
        ExecContext ctx(1);
        auto mem = m.newMemory({});
        prefill(m, *mem, std::span(tokens_).first(25), 64, false, nullptr, ctx);
        const auto saved = stateBytes(*mem);

        auto restored = m.newMemory({});
        restored->resizeForRestore(mem->size());
        size_t off = 0;
        for (const auto& t : restored->state()) {
            const size_t rb = size_t(t.cols) * 4;
            for (int64_t r = 0; r < t.rows; ++r, off += rb)
                std::memcpy(t.data + size_t(r) * t.rowStride, &saved[off], rb);
        }
        QCOMPARE(off, saved.size());
        QCOMPARE(restored->size(), int64_t(25));

        const auto rest = std::span(tokens_).subspan(25);
        std::vector<float> a(rest.size() * size_t(V)), b(a.size());
        prefill(m, *mem, rest, 64, true, a.data(), ctx);
        prefill(m, *restored, rest, 64, true, b.data(), ctx);
        QVERIFY(sameBits(a, b));
    }

    void truncateOnlyResets() {
        const Model& m = model(0);
        const int64_t V = m.info().vocabSize;
        ExecContext ctx(1);
        auto mem = m.newMemory({});
        std::vector<float> first(static_cast<size_t>(V)), again(static_cast<size_t>(V));
        prefill(m, *mem, std::span(tokens_).first(10), 64, false, first.data(), ctx);
        mem->truncate(10);  // no-op
        QCOMPARE(mem->size(), int64_t(10));
        QVERIFY_THROWS_EXCEPTION(Error, mem->truncate(5));
        QCOMPARE(mem->size(), int64_t(10));
        mem->truncate(0);
        QCOMPARE(mem->size(), int64_t(0));
        prefill(m, *mem, std::span(tokens_).first(10), 3, false, again.data(), ctx);
        QVERIFY(sameBits(first, again));
    }

    void badTokenLeavesStateUntouched() {
        const Model& m = model(0);
        ExecContext ctx(1);
        auto mem = m.newMemory({});
        prefill(m, *mem, std::span(tokens_).first(5), 64, false, nullptr, ctx);
        const auto before = stateBytes(*mem);
        const int32_t bad[2] = {3, int32_t(test::kTinyVocab)};
        QVERIFY_THROWS_EXCEPTION(Error, m.forward(*mem, bad, false, nullptr, ctx));
        QCOMPARE(mem->size(), int64_t(5));
        QVERIFY(before == stateBytes(*mem));
    }

    void refusesForeignMemory() {
        ExecContext ctx(1);
        auto other = model(2).newMemory({});  // inner 128, not 136
        const int32_t tok = 1;
        QVERIFY_THROWS_EXCEPTION(Error, model(0).forward(*other, std::span(&tok, 1), false, nullptr, ctx));
    }

    void mamba2Loads() {
        const auto& info = model(3).info();
        QCOMPARE(info.architecture, std::string("mamba2"));
        QVERIFY(info.recurrent);
        Run r = prefillAll(model(3), tokens_, 64, 2);
        for (float v : r.logits) QVERIFY(std::isfinite(v));
        // conv over x, B, C: 128 + 2·2·16 = 192 channels × 3; SSM 128 × 16; 2 layers.
        QCOMPARE(model(3).newMemory({})->bytes(), size_t(2 * (192 * 3 + 128 * 16) * 4));
    }

    void refusesUnsupportedFeatures() {
        test::TinyMambaOptions o;
        o.dtBcRms = true;
        const std::string path = dir_.filePath("dtbc.gguf").toStdString();
        test::writeTinyMamba(path, o);
        try {
            Model::load(path);
            QFAIL("loaded a model with ssm.dt_b_c_rms");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("dt_b_c_rms") != std::string::npos, e.what());
        }
        o.dtBcRms = false;
        o.conv = 40;
        test::writeTinyMamba(path, o);
        QVERIFY_THROWS_EXCEPTION(Error, Model::load(path));
    }
};

QTEST_APPLESS_MAIN(TestMambaInvariants)
#include "test_mamba_invariants.moc"
