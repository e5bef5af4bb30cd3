// Samplers on synthetic logits.
#include "cairn/sampler.h"

#include <QTest>

#include <map>
#include <set>

using namespace cairn;

namespace {

std::vector<int32_t> draw(Sampler& s, const std::vector<float>& logits, int n, std::span<const int32_t> history = {}) {
    std::vector<int32_t> out;
    for (int i = 0; i < n; ++i) out.push_back(s.sample(logits, history));
    return out;
}

SamplerOptions plain(float temperature) {
    SamplerOptions o;
    o.temperature = temperature;
    o.topK = 0;
    o.topP = 1.0f;
    o.minP = 0.0f;
    return o;
}

}  // namespace

class TestSampler : public QObject {
    Q_OBJECT
private slots:
    void greedyTakesArgmaxLowerIdOnTies() {
        QCOMPARE(Sampler::greedy(std::vector<float>{1, 3, 3, 2}), 1);
        Sampler s(plain(0.0f));
        QCOMPARE(s.sample(std::vector<float>{0.5f, -1, 4, 4}, {}), 2);
    }

    void seedReproducesTheSequence() {
        std::vector<float> logits(50);
        for (size_t i = 0; i < logits.size(); ++i) logits[i] = float(i % 7) * 0.3f;
        SamplerOptions o = plain(1.0f);
        o.seed = 42;
        Sampler a(o), b(o);
        auto x = draw(a, logits, 200), y = draw(b, logits, 200);
        QCOMPARE(x, y);
        a.reseed(42);
        QCOMPARE(draw(a, logits, 200), x);
        o.seed = 43;
        Sampler c(o);
        QVERIFY(draw(c, logits, 200) != x);
        QVERIFY(std::set<int32_t>(x.begin(), x.end()).size() > 10);  // really samples
    }

    void frequenciesFollowTheSoftmax() {
        // p ∝ exp(l / T): logits ln 1, ln 2, ln 3 at T = 1 give 1/6, 2/6, 3/6.
        std::vector<float> logits = {0.0f, std::log(2.0f), std::log(3.0f)};
        Sampler s(plain(1.0f));
        std::map<int32_t, int> count;
        const int n = 60000;
        for (int32_t id : draw(s, logits, n)) count[id]++;
        QVERIFY(std::abs(count[0] / double(n) - 1 / 6.0) < 0.01);
        QVERIFY(std::abs(count[2] / double(n) - 0.5) < 0.01);
        // A low temperature sharpens towards the argmax.
        Sampler cold(plain(0.1f));
        int top = 0;
        for (int32_t id : draw(cold, logits, 1000)) top += id == 2;
        QVERIFY(top > 980);
    }

    void topKKeepsTheBestK() {
        std::vector<float> logits = {5, 4, 3, 2, 1, 0};
        SamplerOptions o = plain(100.0f);  // nearly uniform before truncation
        o.topK = 2;
        Sampler s(o);
        auto ids = draw(s, logits, 500);
        QCOMPARE(std::set<int32_t>(ids.begin(), ids.end()), (std::set<int32_t>{0, 1}));
    }

    void topPKeepsTheSmallestSufficientPrefix() {
        // probabilities 0.5, 0.3, 0.2 (T = 1): top-p 0.75 keeps the first two.
        std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
        SamplerOptions o = plain(1.0f);
        o.topP = 0.75f;
        Sampler s(o);
        auto ids = draw(s, logits, 2000);
        QCOMPARE(std::set<int32_t>(ids.begin(), ids.end()), (std::set<int32_t>{0, 1}));
    }

    void minPDropsUnlikelyTokens() {
        // p relative to the top: 1, 0.5, 0.04 → min-p 0.1 drops the last.
        std::vector<float> logits = {0.0f, std::log(0.5f), std::log(0.04f)};
        SamplerOptions o = plain(1.0f);
        o.minP = 0.1f;
        Sampler s(o);
        auto ids = draw(s, logits, 2000);
        QCOMPARE(std::set<int32_t>(ids.begin(), ids.end()), (std::set<int32_t>{0, 1}));
    }

    void penaltiesChangeTheArgmax() {
        std::vector<float> logits = {2.0f, 1.9f, -1.0f};
        std::vector<int32_t> history = {0, 0, 0};
        SamplerOptions o = plain(0.0f);
        o.repeatPenalty = 1.1f;  // 2 / 1.1 = 1.82 < 1.9
        QCOMPARE(Sampler(o).sample(logits, history), 1);
        o.repeatPenalty = 1.0f;
        o.presencePenalty = 0.2f;  // 1.8 < 1.9
        QCOMPARE(Sampler(o).sample(logits, history), 1);
        o.presencePenalty = 0.0f;
        o.frequencyPenalty = 0.05f;  // 2 - 3·0.05 = 1.85 < 1.9
        QCOMPARE(Sampler(o).sample(logits, history), 1);
        o.frequencyPenalty = 0.02f;  // 1.94 > 1.9
        QCOMPARE(Sampler(o).sample(logits, history), 0);
        // Outside the window the history does not count.
        o.frequencyPenalty = 0.05f;
        o.penaltyLastN = 1;  // one occurrence: 1.95
        QCOMPARE(Sampler(o).sample(logits, std::vector<int32_t>{0, 0, 2}), 0);
        // A negative logit is multiplied by the repeat penalty.
        SamplerOptions r = plain(0.0f);
        r.repeatPenalty = 2.0f;
        QCOMPARE(Sampler(r).sample(std::vector<float>{-1.0f, -1.5f}, std::vector<int32_t>{0}), 1);
    }

    void logitBiasMovesAndBansTokens() {
        const std::vector<float> logits = {2.0f, 1.9f, -1.0f};
        SamplerOptions o = plain(0.0f);
        o.logitBias = {{0, -0.2f}};  // 1.8 < 1.9
        QCOMPARE(Sampler(o).sample(logits, {}), 1);
        o.logitBias = {{2, 3.5f}};  // 2.5 > 2
        QCOMPARE(Sampler(o).sample(logits, {}), 2);
        o.logitBias = {{-1, 100.0f}, {3, 100.0f}};  // outside the vocabulary: ignored
        QCOMPARE(Sampler(o).sample(logits, {}), 0);
        // At temperature 1, -100 on the two likeliest leaves only the third.
        SamplerOptions t = plain(1.0f);
        t.logitBias = {{0, -100.0f}, {1, -100.0f}};
        Sampler s(t);
        auto ids = draw(s, logits, 2000);
        QCOMPARE(std::set<int32_t>(ids.begin(), ids.end()), (std::set<int32_t>{2}));
    }
};

QTEST_APPLESS_MAIN(TestSampler)
#include "test_sampler.moc"
