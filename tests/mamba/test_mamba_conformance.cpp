// Mamba against llama.cpp's reference outputs for the shared mamba fixtures
// (../shared/reference/README.md): prompt ids, logits over the shared top-20,
// top-1 where the margin is clear, greedy continuations, and the multi-turn
// cases continued on the same state. Prints the largest |logit diff| per fixture.
#include "cairn/exec.h"
#include "cairn/model.h"
#include "cairn/tokenizer.h"
#include "shared_data.h"
#include "tensor/matmul.h"

#include <QTest>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

using namespace cairn;
using json = nlohmann::json;

namespace {

// Indices of the k largest logits, ties by lower id first (the references' rule).
std::vector<int32_t> topK(const float* logits, int64_t n, int k) {
    std::vector<int32_t> idx(static_cast<size_t>(n));
    std::iota(idx.begin(), idx.end(), 0);
    std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                      [&](int32_t a, int32_t b) { return logits[a] != logits[b] ? logits[a] > logits[b] : a < b; });
    idx.resize(size_t(k));
    return idx;
}

struct Tally {
    double maxDiff = 0;
    std::string where;
    int top1Checked = 0, greedySteps = 0;
};

}  // namespace

class TestMambaConformance : public QObject {
    Q_OBJECT

    // Rules 2 and 3 over one block of positions.
    void checkPositions(const json& ref, const std::vector<float>& logits, int64_t V, double tol, Tally& tally,
                        const std::string& label) {
        QCOMPARE(int64_t(ref.size()) * V, int64_t(logits.size()));
        for (size_t i = 0; i < ref.size(); ++i) {
            const float* row = &logits[i * size_t(V)];
            const auto ours = topK(row, V, 20);
            for (const auto& entry : ref[i]["top"]) {
                const int32_t id = entry[0].get<int32_t>();
                if (std::find(ours.begin(), ours.end(), id) == ours.end()) continue;  // shared ids only
                const double d = std::abs(double(row[id]) - entry[1].get<double>());
                if (d > tally.maxDiff) {
                    tally.maxDiff = d;
                    tally.where = label + " pos " + std::to_string(ref[i]["pos"].get<int>());
                }
                QVERIFY2(
                    d <= tol,
                    qPrintable(
                        QString("%1 pos %2 id %3: |diff| %4 > %5").arg(label.c_str()).arg(i).arg(id).arg(d).arg(tol)));
            }
            if (ref[i]["margin"].get<double>() > 2 * tol) {
                ++tally.top1Checked;
                QVERIFY2(ours[0] == ref[i]["argmax"].get<int32_t>(),
                         qPrintable(QString("%1 pos %2: argmax %3, reference %4")
                                        .arg(label.c_str())
                                        .arg(i)
                                        .arg(ours[0])
                                        .arg(ref[i]["argmax"].get<int>())));
            }
        }
    }

    // Rule 4: greedy decoding from `last` (the logits after the prompt) on `mem`.
    void checkGreedy(const Model& m, Memory& mem, std::vector<float> last, const json& ref, double tol,
                     ExecContext& ctx, Tally& tally, const std::string& label) {
        size_t required = ref.size();
        for (size_t i = 0; i < ref.size(); ++i)
            if (ref[i]["margin"].get<double>() < 2 * tol) {
                required = i;
                break;
            }
        const int64_t V = m.info().vocabSize;
        for (size_t i = 0; i < required; ++i) {
            const int32_t id = topK(last.data(), V, 1)[0];
            QVERIFY2(id == ref[i]["id"].get<int32_t>(),
                     qPrintable(QString("%1 step %2: %3, reference %4")
                                    .arg(label.c_str())
                                    .arg(i)
                                    .arg(id)
                                    .arg(ref[i]["id"].get<int>())));
            ++tally.greedySteps;
            if (i + 1 < required) m.forward(mem, std::span(&id, 1), false, last.data(), ctx);
        }
    }

    void runFixture(const std::string& name, const std::string& referenceFile, double tol) {
        const std::string fixture = test::sharedPath("fixtures/" + name + ".gguf");
        const json ref = json::parse(test::readFile(test::sharedPath("reference/" + referenceFile)));
        auto model = Model::load(fixture);
        const int64_t V = model->info().vocabSize;
        QCOMPARE(V, int64_t(50280));
        ExecContext ctx(2);
        Tally tally;
        bool tokenizerChecked = false;
        for (const auto& c : ref["cases"]) {
            const std::string cname = c["name"];
            const auto tokens = c["tokens"].get<std::vector<int32_t>>();
            // Rule 1: the tokenizer gives the reference's ids (no BOS for this vocabulary).
            QCOMPARE(model->tokenizer().encode(c["prompt"].get<std::string>(), true, true), tokens);
            if (c.contains("tokens_b"))
                QCOMPARE(model->tokenizer().encode(c["prompt_b"].get<std::string>(), false, true),
                         c["tokens_b"].get<std::vector<int32_t>>());
            tokenizerChecked = true;

            auto mem = model->newMemory({});
            std::vector<float> logits(tokens.size() * size_t(V));
            prefill(*model, *mem, tokens, 64, true, logits.data(), ctx);
            checkPositions(c["positions"], logits, V, tol, tally, cname);
            if (QTest::currentTestFailed()) return;
            if (c.contains("last_logits")) {
                const auto refLast = c["last_logits"].get<std::vector<double>>();
                double d = 0;
                for (int64_t i = 0; i < V; ++i)
                    d = std::max(d, std::abs(refLast[size_t(i)] - logits[logits.size() - size_t(V) + size_t(i)]));
                std::printf("  %s: last_logits max|diff| over the whole vocabulary %.4g (info)\n", cname.c_str(), d);
            }
            // `greedy` continues a fresh context holding only `tokens`: a clone of the state.
            auto greedyMem = mem->clone();
            checkGreedy(*model, *greedyMem, {logits.end() - V, logits.end()}, c["greedy"], tol, ctx, tally,
                        cname + " greedy");
            if (QTest::currentTestFailed()) return;
            if (c.contains("tokens_b")) {
                const auto tokensB = c["tokens_b"].get<std::vector<int32_t>>();
                std::vector<float> logitsB(tokensB.size() * size_t(V));
                prefill(*model, *mem, tokensB, 7, true, logitsB.data(), ctx);
                checkPositions(c["positions_b"], logitsB, V, tol, tally, cname + " b");
                if (QTest::currentTestFailed()) return;
                checkGreedy(*model, *mem, {logitsB.end() - V, logitsB.end()}, c["greedy_b"], tol, ctx, tally,
                            cname + " greedy_b");
                if (QTest::currentTestFailed()) return;
            }
        }
        QVERIFY(tokenizerChecked);
        QVERIFY(tally.top1Checked > 100);  // the margin rule leaves most positions checked
        std::printf("%s vs %s (tol %.2g): max |logit diff| over shared top-20 %.4g at %s; top-1 checked at %d "
                    "positions; %d greedy steps matched\n",
                    name.c_str(), referenceFile.c_str(), tol, tally.maxDiff, tally.where.c_str(), tally.top1Checked,
                    tally.greedySteps);
    }

private slots:
    void mambaF16() { runFixture("mamba-f16", "mamba-f16.json", 0.02); }

    void mambaF16AgainstF32Reference() { runFixture("mamba-f16", "mamba-f16.deq-f32.kvf32.json", 0.02); }

    void mambaQ8_0() {
        // llama.cpp quantizes activations to 8 bits for Q8_0 weights; compare with
        // the reference made the same way as our kernels compute.
        if (tensor::quantizesActivations(TensorType::Q8_0)) runFixture("mamba-q8_0", "mamba-q8_0.json", 0.3);
        else runFixture("mamba-q8_0", "mamba-q8_0.deq-f32.kvf32.json", 0.02);
    }
};

CAIRN_CONFORMANCE_MAIN(TestMambaConformance)
#include "test_mamba_conformance.moc"
