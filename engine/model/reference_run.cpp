#include "model/reference_run.h"

#include "cairn/error.h"
#include "cairn/exec.h"
#include "cairn/tokenizer.h"

#include <algorithm>

namespace cairn::model {

PositionTop topLogits(const float* logits, int64_t n, int64_t pos, int topN) {
    std::vector<int32_t> ids(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) ids[size_t(i)] = int32_t(i);
    const size_t k = size_t(std::min<int64_t>(std::max(topN, 2), n));
    std::partial_sort(ids.begin(), ids.begin() + ptrdiff_t(k), ids.end(),
                      [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
    PositionTop p;
    p.pos = pos;
    p.argmax = ids[0];
    p.margin = n > 1 ? logits[ids[0]] - logits[ids[1]] : 0.0f;
    for (size_t i = 0; i < std::min(k, size_t(topN)); ++i) p.top.emplace_back(ids[i], logits[ids[i]]);
    return p;
}

namespace {

// Feeds `tokens` with logits for every position and appends their tops.
std::vector<float> evaluate(const Model& model, Memory& mem, const std::vector<int32_t>& tokens,
                            const ReferenceRunOptions& o, ExecContext& ctx, std::vector<PositionTop>& out) {
    const int64_t V = model.info().vocabSize, start = mem.size();
    std::vector<float> logits(tokens.size() * size_t(V));
    prefill(model, mem, tokens, o.chunk, true, logits.data(), ctx);
    for (size_t i = 0; i < tokens.size(); ++i)
        out.push_back(topLogits(&logits[i * size_t(V)], V, start + int64_t(i), o.topN));
    return std::vector<float>(logits.end() - V, logits.end());
}

std::vector<GreedyStep> greedyRun(const Model& model, Memory& mem, std::vector<float> logits, int n, ExecContext& ctx) {
    const int64_t V = model.info().vocabSize;
    std::vector<GreedyStep> steps;
    for (int k = 0; k < n; ++k) {
        PositionTop t = topLogits(logits.data(), V, 0, 2);
        steps.push_back({t.argmax, t.top[0].second, t.margin});
        if (k + 1 < n) model.forward(mem, std::span(&t.argmax, 1), false, logits.data(), ctx);
    }
    return steps;
}

}  // namespace

ReferenceRun runReference(const Model& model, const std::string& prompt, const std::optional<std::string>& promptB,
                          int nGreedy, const ReferenceRunOptions& o, ExecContext& ctx) {
    const Tokenizer& tok = model.tokenizer();
    ReferenceRun r;
    r.tokens = tok.encode(prompt, true, true);
    if (promptB) r.tokensB = tok.encode(*promptB, false, true);
    if (r.tokens.empty()) throw Error("reference run", "the prompt gives no tokens");
    MemoryOptions mo;
    mo.contextSize = std::max(o.contextSize, int64_t(r.tokens.size() + r.tokensB.size()) + nGreedy + 1);
    mo.kvType = o.kvType;
    auto mem = model.newMemory(mo);
    r.lastLogits = evaluate(model, *mem, r.tokens, o, ctx, r.positions);
    if (!promptB) {
        r.greedy = greedyRun(model, *mem, r.lastLogits, nGreedy, ctx);
        return r;
    }
    auto first = mem->clone();
    r.greedy = greedyRun(model, *first, r.lastLogits, nGreedy, ctx);
    first.reset();
    if (!r.tokensB.empty()) {
        std::vector<float> lastB = evaluate(model, *mem, r.tokensB, o, ctx, r.positionsB);
        r.greedyB = greedyRun(model, *mem, std::move(lastB), nGreedy, ctx);
    }
    return r;
}

}  // namespace cairn::model
