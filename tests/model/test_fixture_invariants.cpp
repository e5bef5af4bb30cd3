// The bit-exactness invariants on the shared llama / qwen2 / qwen3 fixtures
// (real vocabularies, quantized weights, YaRN, rope_freqs, q/k norms), gemma3
// (sliding window), phi3 (LongRoPE, fused weights), smollm3 (NoPE) and the
// hybrid ones (attention + recurrent layers in one memory): sequential steps ≡
// any chunk size (every size 1 … 64 for the hybrids) ≡ any thread count ≡ A
// then B, f32 and f16 KV.
#include "cairn/exec.h"
#include "cairn/model.h"
#include "cairn/tokenizer.h"
#include "memory_state.h"
#include "same_bits.h"
#include "shared_data.h"
#include "tensor/matmul.h"
#include "tensor/row_tiles.h"

#include <QTest>

#include <cstring>

using namespace cairn;

namespace {

// Every position's logits of `tokens` prefilled in chunks of `chunk` on 2 threads.
std::vector<float> allLogits(const Model& m, const std::vector<int32_t>& tokens, int64_t chunk) {
    ExecContext ctx(2);
    auto mem = m.newMemory({64, KvType::F16});
    std::vector<float> all(tokens.size() * size_t(m.info().vocabSize));
    prefill(m, *mem, tokens, chunk, true, all.data(), ctx);
    return all;
}

}  // namespace

class TestFixtureInvariants : public QObject {
    Q_OBJECT
private slots:
    void invariants_data() {
        QTest::addColumn<QString>("name");
        for (const char* n :
             {"llama-spm-f16", "llama-spm-q8_0", "llama-spm-q4_0", "llama-spm-q4_k_m", "llama-bpe-q8_0", "qwen2-q8_0",
              "qwen3-q8_0", "lfm2-f16", "lfm2-q8_0", "granitehybrid-f16", "granitehybrid-q8_0", "qwen35-q8_0",
              "gemma3-f16", "gemma3-q8_0", "phi3-q8_0", "smollm3-q8_0"})
            QTest::newRow(n) << QString(n);
    }

    void invariants() {
        QFETCH(QString, name);
        auto model = Model::load(test::sharedPath("fixtures/" + name.toStdString() + ".gguf"));
        const auto tokens = model->tokenizer().encode(
            "Bit-exact or nothing: the same float operations in the same order, whether a position is computed "
            "alone or inside a chunk, on one thread or three, and past the sliding window of Gemma 3's local "
            "layers.",
            true, true);
        QVERIFY(tokens.size() > 40 && tokens.size() <= 64);  // beyond gemma3-*'s window of 32, inside the memory
        const size_t V = size_t(model->info().vocabSize), n = tokens.size();
        for (KvType kv : {KvType::F32, KvType::F16}) {
            const MemoryOptions mo{64, kv};
            std::vector<float> steps(n * V);
            {
                ExecContext ctx(1);
                auto mem = model->newMemory(mo);
                for (size_t i = 0; i < n; ++i)
                    model->forward(*mem, std::span(tokens).subspan(i, 1), false, &steps[i * V], ctx);
            }
            auto run = [&](int64_t chunk, int threads) {
                ExecContext ctx(threads);
                auto mem = model->newMemory(mo);
                std::vector<float> all(n * V);
                prefill(*model, *mem, tokens, chunk, true, all.data(), ctx);
                return std::memcmp(all.data(), steps.data(), all.size() * 4) == 0;
            };
            std::vector<int64_t> chunks{1, 2, 3, 7, 16, 64};
            if (model->info().recurrent) {  // the recurrences carry state across every chunk boundary
                chunks.clear();
                for (int64_t c = 1; c <= 64; ++c) chunks.push_back(c);
            }
            for (int64_t chunk : chunks) QVERIFY2(run(chunk, 1), qPrintable(QString("chunk %1").arg(chunk)));
            QVERIFY2(run(64, 2), "2 threads");
            QVERIFY2(run(5, 3), "3 threads");
            QVERIFY2(run(1, 3), "3 threads, steps");

            ExecContext ctx(2);
            auto mem = model->newMemory(mo);
            std::vector<float> last(V);
            const size_t na = n / 3;
            prefill(*model, *mem, std::span(tokens).first(na), 4, false, last.data(), ctx);
            QVERIFY(std::memcmp(last.data(), &steps[(na - 1) * V], V * 4) == 0);
            prefill(*model, *mem, std::span(tokens).subspan(na), 64, false, last.data(), ctx);
            QVERIFY(std::memcmp(last.data(), &steps[(n - 1) * V], V * 4) == 0);
        }
    }

    // Asking for fewer logits computes less (the last layer runs its queries
    // and feed-forward on the last position alone, or on none:
    // firstOutputPosition) but leaves the same memory, every layer's keys,
    // values and recurrent state, and the same last logits as asking for
    // every position's.
    void fewerLogitsLeaveTheSameMemory_data() {
        invariants_data();
        for (const char* n : {"mamba-f16", "mamba-q8_0", "mamba2-f16"}) QTest::newRow(n) << QString(n);
    }
    void fewerLogitsLeaveTheSameMemory() {
        QFETCH(QString, name);
        auto model = Model::load(test::sharedPath("fixtures/" + name.toStdString() + ".gguf"));
        const auto tokens = model->tokenizer().encode("Only the last position's logits, or none at all.", true, true);
        const size_t V = size_t(model->info().vocabSize), n = tokens.size();
        struct Run {
            std::unique_ptr<Memory> mem;
            std::vector<float> logits;
        };
        auto run = [&](bool all, bool withLogits) {
            ExecContext ctx(2);
            Run r{model->newMemory({64, KvType::F16}), std::vector<float>(all ? n * V : V)};
            model->forward(*r.mem, tokens, all, withLogits ? r.logits.data() : nullptr, ctx);
            return r;
        };
        Run every = run(true, true), last = run(false, true), none = run(false, false);
        QVERIFY(std::memcmp(last.logits.data(), &every.logits[(n - 1) * V], V * 4) == 0);
        const auto reference = test::stateBytes(*every.mem);
        QVERIFY(!reference.empty());
        QVERIFY2(test::stateBytes(*last.mem) == reference, "last logits only");
        QVERIFY2(test::stateBytes(*none.mem) == reference, "no logits");
        // And the memory carries on alike: one more step from each.
        ExecContext ctx(1);
        std::vector<float> a(V), b(V);
        model->forward(*every.mem, std::span(tokens).first(1), false, a.data(), ctx);
        model->forward(*none.mem, std::span(tokens).first(1), false, b.data(), ctx);
        QVERIFY(std::memcmp(a.data(), b.data(), V * 4) == 0);
    }

    // Weights re-ordered into 16-row tiles at load (tensor/row_tiles.h, on
    // CPUs whose decode kernels read them) give the bits of the file's
    // layout, in decode steps and in prefill, on every kernel path; tied
    // embeddings look their rows up in the tiles.
    void tiledWeightsGiveTheFileLayoutsBits_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("type");
        QTest::newRow("llama-spm-q4_0") << "llama-spm-q4_0" << int(TensorType::Q4_0);
        QTest::newRow("llama-spm-q8_0") << "llama-spm-q8_0" << int(TensorType::Q8_0);
        QTest::newRow("llama-bpe-q8_0 (own output matrix)") << "llama-bpe-q8_0" << int(TensorType::Q8_0);
        QTest::newRow("gemma3-q8_0") << "gemma3-q8_0" << int(TensorType::Q8_0);
        QTest::newRow("mamba-q8_0") << "mamba-q8_0" << int(TensorType::Q8_0);
        // Float weights in pairs of rows (up to 2048 columns).
        QTest::newRow("llama-spm-f16") << "llama-spm-f16" << int(TensorType::F16);
        QTest::newRow("gemma3-f16") << "gemma3-f16" << int(TensorType::F16);
        QTest::newRow("mamba-f16") << "mamba-f16" << int(TensorType::F16);
    }
    void tiledWeightsGiveTheFileLayoutsBits() {
        QFETCH(QString, name);
        QFETCH(int, type);
        const std::string path = test::sharedPath("fixtures/" + name.toStdString() + ".gguf");
        qputenv("CAIRN_ROW_TILES", "off");
        const auto plain = Model::load(path);
        qunsetenv("CAIRN_ROW_TILES");
        const auto tiled = Model::load(path);
        QCOMPARE(plain->tiledWeightBytes(), size_t(0));
        QVERIFY(plain->ownedWeightBytes() > 0);  // copied as the file lays them out
        QCOMPARE(tiled->tiledWeightBytes() > 0, tensor::rowTilesWanted(TensorType(type)));
        if (tiled->tiledWeightBytes() == 0) QSKIP("this CPU's decode kernels do not read 16-row tiles");
        const auto tokens = plain->tokenizer().encode("Tiles or rows, the weights are the same numbers.", true, true);
        const auto paths = tensor::availableKernelPaths();
        for (const std::string& p : paths) {
            QVERIFY(tensor::forceKernelPath(p));
            for (int64_t chunk : {1, 16})
                QVERIFY2(test::sameBits(allLogits(*tiled, tokens, chunk), allLogits(*plain, tokens, chunk)), qPrintable(QString::fromStdString(p)));
        }
        tensor::forceKernelPath(paths.front());
    }

    // Weights copied into the model's memory at load (model/owned_weights.h)
    // give the bits of the file's mapping, fused and split matrices included.
    void ownedWeightsGiveTheMappedBits_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("llama-spm-f16") << "llama-spm-f16";
        QTest::newRow("llama-spm-q4_k_m") << "llama-spm-q4_k_m";
        QTest::newRow("phi3-q8_0 (fused qkv, gate+up)") << "phi3-q8_0";
        QTest::newRow("mamba2-f16") << "mamba2-f16";
    }
    void ownedWeightsGiveTheMappedBits() {
        QFETCH(QString, name);
        const std::string path = test::sharedPath("fixtures/" + name.toStdString() + ".gguf");
        qputenv("CAIRN_OWNED_WEIGHTS", "off");
        const auto mapped = Model::load(path);
        qunsetenv("CAIRN_OWNED_WEIGHTS");
        const auto owned = Model::load(path);
        QCOMPARE(mapped->ownedWeightBytes(), size_t(0));
        QVERIFY(owned->ownedWeightBytes() > 0);
        const auto tokens = mapped->tokenizer().encode("Mapped or owned, the weights are the same numbers.", true, true);
        for (int64_t chunk : {1, 16})
            QVERIFY(test::sameBits(allLogits(*owned, tokens, chunk), allLogits(*mapped, tokens, chunk)));
    }

    // Every kernel path this CPU runs gives the scalar path's bits, so the
    // conformance figures (measured on the best path) hold on each of them.
    void kernelPathsAgree_data() { invariants_data(); }
    void kernelPathsAgree() {
        QFETCH(QString, name);
        auto model = Model::load(test::sharedPath("fixtures/" + name.toStdString() + ".gguf"));
        const auto tokens =
            model->tokenizer().encode("Every path, the same bits: scalar, AVX2 and AVX-512 alike.", true, true);
        const size_t V = size_t(model->info().vocabSize), n = tokens.size();
        auto run = [&] {
            ExecContext ctx(2);
            auto mem = model->newMemory({64, KvType::F16});
            std::vector<float> all(n * V);
            prefill(*model, *mem, tokens, 5, true, all.data(), ctx);
            return all;
        };
        const auto paths = tensor::availableKernelPaths();
        QVERIFY(tensor::forceKernelPath("scalar"));
        const auto reference = run();
        for (const std::string& path : paths) {
            QVERIFY(tensor::forceKernelPath(path));
            const auto got = run();
            QVERIFY2(std::memcmp(got.data(), reference.data(), got.size() * 4) == 0,
                     qPrintable(QString::fromStdString(path + " differs from scalar")));
        }
        tensor::forceKernelPath(paths.front());
    }
};

CAIRN_CONFORMANCE_MAIN(TestFixtureInvariants)
#include "test_fixture_invariants.moc"
