// Bit-exactness of the forward pass on tiny random models: batched prefill ≡
// sequential steps, any chunk size, any thread count, A then B ≡ A+B, for
// f32 and f16 KV caches and several weight types.
#include "cairn/error.h"
#include "cairn/exec.h"
#include "cairn/model.h"
#include "same_bits.h"
#include "tiny_models.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <random>

using namespace cairn;
using namespace cairn::test;

namespace {

std::vector<int32_t> randomTokens(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<int32_t> t(n);
    for (auto& x : t) x = int32_t(rng() % uint32_t(kTinyVocab));
    return t;
}

// Logits of every position, fed in chunks of `chunk` on `threads` threads.
std::vector<float> allLogits(const Model& m, KvType kv, const std::vector<int32_t>& tokens, int64_t chunk,
                             int threads) {
    ExecContext ctx(threads);
    auto mem = m.newMemory({128, kv});
    std::vector<float> out(tokens.size() * size_t(m.info().vocabSize));
    prefill(m, *mem, tokens, chunk, true, out.data(), ctx);
    return out;
}

}  // namespace

class TestTransformerInvariants : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    std::unique_ptr<Model> load(const TinyModelOptions& o, const QString& name) {
        return Model::load(writeTinyModel(dir_.filePath(name).toStdString(), o));
    }

private slots:
    void invariants_data() {
        QTest::addColumn<int>("arch");
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("kv");
        QTest::addColumn<bool>("extra");  // llama: rope_freqs + untied; qwen2: YaRN
        const std::pair<const char*, TinyArch> archs[] = {
            {"llama", TinyArch::Llama}, {"qwen2", TinyArch::Qwen2}, {"qwen3", TinyArch::Qwen3}};
        const std::pair<const char*, TensorType> types[] = {
            {"F32", TensorType::F32}, {"F16", TensorType::F16}, {"Q8_0", TensorType::Q8_0}, {"Q4_0", TensorType::Q4_0}};
        for (auto [an, a] : archs)
            for (auto [tn, t] : types)
                for (int kv = 0; kv < 2; ++kv) {
                    const bool extra = a != TinyArch::Qwen3 && t == TensorType::Q8_0;
                    QTest::addRow("%s-%s-kv%s%s", an, tn, kv ? "f16" : "f32", extra ? "-extra" : "")
                        << int(a) << int(t) << kv << extra;
                }
    }

    void invariants() {
        QFETCH(int, arch);
        QFETCH(int, type);
        QFETCH(int, kv);
        QFETCH(bool, extra);
        TinyModelOptions o;
        o.arch = TinyArch(arch);
        o.type = TensorType(type);
        o.seed = uint32_t(11 + arch * 7 + type);
        if (extra && o.arch == TinyArch::Llama) {
            o.ropeFreqs = true;
            o.tied = false;
        }
        if (extra && o.arch == TinyArch::Qwen2) o.yarn = true;
        auto model = load(o, QString("m-%1-%2.gguf").arg(arch).arg(type));
        const KvType kvType = kv ? KvType::F16 : KvType::F32;
        const auto tokens = randomTokens(70, uint32_t(arch * 100 + type));
        const int64_t V = model->info().vocabSize;

        // Sequential steps: one position per forward.
        std::vector<float> steps(tokens.size() * size_t(V));
        {
            ExecContext ctx(1);
            auto mem = model->newMemory({128, kvType});
            for (size_t i = 0; i < tokens.size(); ++i)
                model->forward(*mem, std::span(tokens).subspan(i, 1), false, &steps[i * size_t(V)], ctx);
            QCOMPARE(mem->size(), int64_t(tokens.size()));
        }
        // The logits are not degenerate.
        float lo = steps[0], hi = steps[0];
        for (float x : steps) {
            lo = std::min(lo, x);
            hi = std::max(hi, x);
            QVERIFY(std::isfinite(x));
        }
        QVERIFY(hi - lo > 1.0f);

        for (int64_t chunk : {1, 2, 3, 7, 16, 64})
            QVERIFY2(sameBits(allLogits(*model, kvType, tokens, chunk, 1), steps),
                     qPrintable(QString("chunk %1 differs from steps").arg(chunk)));
        for (int threads : {2, 3})
            QVERIFY2(sameBits(allLogits(*model, kvType, tokens, 16, threads), steps),
                     qPrintable(QString("%1 threads differ").arg(threads)));

        // prefill(A) then prefill(B) ≡ prefill(A+B), last logits only.
        ExecContext ctx(2);
        const size_t na = 23;
        auto mem = model->newMemory({128, kvType});
        std::vector<float> last(static_cast<size_t>(V));
        prefill(*model, *mem, std::span(tokens).first(na), 7, false, last.data(), ctx);
        QVERIFY(std::memcmp(last.data(), &steps[(na - 1) * size_t(V)], size_t(V) * 4) == 0);
        prefill(*model, *mem, std::span(tokens).subspan(na), 5, false, last.data(), ctx);
        QVERIFY(std::memcmp(last.data(), &steps[(tokens.size() - 1) * size_t(V)], size_t(V) * 4) == 0);

        // Truncate and refeed, and a clone continues like the original.
        auto copy = mem->clone();
        mem->truncate(40);
        QCOMPARE(mem->size(), int64_t(40));
        prefill(*model, *mem, std::span(tokens).subspan(40), 64, false, last.data(), ctx);
        QVERIFY(std::memcmp(last.data(), &steps[(tokens.size() - 1) * size_t(V)], size_t(V) * 4) == 0);
        QCOMPARE(copy->size(), int64_t(tokens.size()));
        std::vector<float> a(static_cast<size_t>(V)), b(static_cast<size_t>(V));
        const int32_t next = 65;
        model->forward(*mem, std::span(&next, 1), false, a.data(), ctx);
        model->forward(*copy, std::span(&next, 1), false, b.data(), ctx);
        QVERIFY(std::memcmp(a.data(), b.data(), size_t(V) * 4) == 0);
    }

    void fullContextIsAnError() {
        auto model = load({}, "full.gguf");
        ExecContext ctx(1);
        auto mem = model->newMemory({8, KvType::F16});
        const auto tokens = randomTokens(9, 3);
        std::vector<float> logits(size_t(model->info().vocabSize));
        QVERIFY_THROWS_EXCEPTION(Error, prefill(*model, *mem, tokens, 4, false, logits.data(), ctx));
        prefill(*model, *mem, std::span(tokens).first(8), 4, false, logits.data(), ctx);
        QCOMPARE(mem->size(), int64_t(8));
        QVERIFY_THROWS_EXCEPTION(Error, model->forward(*mem, std::span(tokens).first(1), false, logits.data(), ctx));
        QCOMPARE(mem->size(), int64_t(8));
    }
};

QTEST_GUILESS_MAIN(TestTransformerInvariants)
#include "test_transformer_invariants.moc"
