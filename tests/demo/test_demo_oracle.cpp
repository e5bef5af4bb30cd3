// The embedded demo models (resources/models/cairn-demo-*.gguf) reproduce the
// PyTorch oracle written by tools/demo-model/export_gguf.py: same token ids for
// the prompts, logits within tolerance at every prompt position (top-20 of the
// oracle) and over the whole vocabulary at the last one, and the same 32
// greedy tokens. The oracle ran in float64 on the stored (F16) weights, so the
// only differences left are our float32 arithmetic.
#include "cairn/exec.h"
#include "cairn/model.h"
#include "cairn/tokenizer.h"

#include <QTest>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

using namespace cairn;

namespace {

// |ours − torch| ≤ 1e-3 · max(1, |torch|): relative for large logits, absolute
// near zero, where a relative bound would demand more than float32 gives.
bool close(float ours, double torch) {
    return std::fabs(double(ours) - torch) <= 1e-3 * std::max(1.0, std::fabs(torch));
}

nlohmann::json readJson(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return nlohmann::json::parse(in);
}

}  // namespace

class TestDemoOracle : public QObject {
    Q_OBJECT

    void check(const std::string& modelFile, const std::string& oracleFile) {
        const std::string root = CAIRN_SOURCE_DIR;
        auto model = Model::load(root + "/resources/models/" + modelFile);
        const nlohmann::json oracle = readJson(root + "/tests/data/demo-oracle/" + oracleFile);
        const int64_t vocab = model->info().vocabSize;
        QCOMPARE(vocab, int64_t(oracle["cases"][0]["last_logits"].size()));
        ExecContext ctx(2);
        double worst = 0;  // largest |ours − torch| / max(1, |torch|), for the log
        int compared = 0;
        for (const auto& c : oracle["cases"]) {
            const std::string kind = c["kind"];
            const auto expectedIds = c["tokens"].get<std::vector<int32_t>>();
            const auto ids = model->tokenizer().encode(c["prompt"].get<std::string>(), true, true);
            QVERIFY2(ids == expectedIds, ("token ids differ from the oracle's for the " + kind + " prompt").c_str());

            auto mem = model->newMemory({.contextSize = 256, .kvType = KvType::F32});
            const int64_t n = int64_t(ids.size());
            std::vector<float> logits(size_t(n * vocab));
            model->forward(*mem, ids, true, logits.data(), ctx);

            QString firstMismatch;  // (QFAIL inside a lambda would only leave the lambda)
            auto expect = [&](int64_t pos, int64_t id, double torch) {
                const float ours = logits[size_t(pos * vocab + id)];
                worst = std::max(worst, std::fabs(double(ours) - torch) / std::max(1.0, std::fabs(torch)));
                ++compared;
                if (!close(ours, torch) && firstMismatch.isEmpty())
                    firstMismatch = QString("%1: position %2 token %3: ours %4, torch %5")
                                        .arg(kind.c_str())
                                        .arg(pos)
                                        .arg(id)
                                        .arg(ours)
                                        .arg(torch);
            };
            for (int64_t pos = 0; pos < n; ++pos)
                for (size_t k = 0; k < 20; ++k)
                    expect(pos, c["top_ids"][pos][k].get<int64_t>(), c["top_logits"][pos][k].get<double>());
            for (int64_t id = 0; id < vocab; ++id) expect(n - 1, id, c["last_logits"][id].get<double>());
            QVERIFY2(firstMismatch.isEmpty(), qPrintable(firstMismatch));

            // greedy continuation, one decode step at a time
            std::vector<int32_t> greedy;
            std::vector<float> last(logits.end() - vocab, logits.end());
            for (size_t i = 0; i < c["greedy"].size(); ++i) {
                const int32_t next = int32_t(std::max_element(last.begin(), last.end()) - last.begin());
                greedy.push_back(next);
                model->forward(*mem, std::span(&next, 1), false, last.data(), ctx);
            }
            QCOMPARE(greedy, c["greedy"].get<std::vector<int32_t>>());
        }
        qInfo("%s: %d logits compared, max |ours - torch| / max(1, |torch|) = %.2e", modelFile.c_str(), compared,
              worst);
    }

private slots:
    void transformer() { check("cairn-demo-transformer.gguf", "transformer.json"); }
    void mamba() { check("cairn-demo-mamba.gguf", "mamba.json"); }
};

QTEST_GUILESS_MAIN(TestDemoOracle)
#include "test_demo_oracle.moc"
