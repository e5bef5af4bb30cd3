// cairn-cli dump -m MODEL --cases CASES.json -o OUT.json [-t N] [--chunk C] [--kv f16|f32]
// Evaluates the reference cases (../shared/reference/cases.json) and writes
// them in the reference files' schema, for compare.py.
#include "command.h"

#include "cairn/error.h"
#include "cairn/exec.h"
#include "cairn/gguf.h"
#include "cairn/model.h"
#include "model/reference_run.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace cairn::cli {
namespace {

// Six significant digits, as the reference files store them.
double round6(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", double(v));
    return std::strtod(buf, nullptr);
}

nlohmann::json positionsJson(const std::vector<model::PositionTop>& ps) {
    auto arr = nlohmann::json::array();
    for (const auto& p : ps) {
        auto top = nlohmann::json::array();
        for (auto [id, l] : p.top) top.push_back({id, round6(l)});
        arr.push_back({{"pos", p.pos}, {"argmax", p.argmax}, {"margin", round6(p.margin)}, {"top", top}});
    }
    return arr;
}

nlohmann::json greedyJson(const std::vector<model::GreedyStep>& g) {
    auto arr = nlohmann::json::array();
    for (const auto& s : g) arr.push_back({{"id", s.id}, {"logit", round6(s.logit)}, {"margin", round6(s.margin)}});
    return arr;
}

// The vocabulary family named in cases.json's "vocabs".
std::string vocabFamily(const gguf::File& f) {
    if (f.getString("tokenizer.ggml.model") == "llama") return "llama-spm";
    std::string pre(f.getString("tokenizer.ggml.pre", "default"));
    return pre == "mpt" ? "gpt-neox" : pre;
}

}  // namespace

int runDump(Args& args) {
    const std::string modelPath = args.require("-m", "--model");
    const std::string casesPath = args.require("", "--cases");
    const std::string outPath = args.require("-o", "--output");
    const int threads = int(args.number("-t", "--threads", 2));
    const int64_t chunk = int64_t(args.number("", "--chunk", 64));
    const std::string kv = args.option("", "--kv").value_or("f16");
    const bool all = args.flag("--all-cases");
    args.positionals();
    if (kv != "f16" && kv != "f32") throw Error("cairn-cli dump", "--kv must be f16 or f32");

    std::ifstream in(casesPath);
    if (!in) throw Error(casesPath, "cannot read");
    nlohmann::json cases;
    try {
        cases = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
        throw Error(casesPath, std::string("invalid JSON: ") + e.what());
    }
    if (!cases.is_array()) throw Error(casesPath, "expected a list of cases");

    auto model = Model::load(modelPath);
    ExecContext ctx(threads);
    model::ReferenceRunOptions options;
    options.chunk = chunk;
    options.kvType = kv == "f32" ? KvType::F32 : KvType::F16;
    const std::string family = vocabFamily(model->file());

    nlohmann::json out;
    out["header"] = {{"fixture", modelPath},
                     {"engine", "cairn"},
                     {"settings",
                      {{"n_threads", threads},
                       {"chunk", chunk},
                       {"type_k", kv},
                       {"type_v", kv},
                       {"n_vocab", model->info().vocabSize}}}};
    out["cases"] = nlohmann::json::array();
    bool first = true;
    for (const auto& c : cases) {
        if (!all && c.contains("vocabs")) {
            bool match = false;
            for (const auto& v : c["vocabs"]) match |= v.get<std::string>() == family;
            if (!match) continue;
        }
        const std::string name = c.value("name", "");
        const std::string prompt = c.at("prompt").get<std::string>();
        std::optional<std::string> promptB;
        if (c.contains("prompt_b")) promptB = c["prompt_b"].get<std::string>();
        const int nGreedy = c.value("n_greedy", 32);
        auto r = model::runReference(*model, prompt, promptB, nGreedy, options, ctx);

        nlohmann::json j;
        j["name"] = name;
        j["prompt"] = prompt;
        if (promptB) j["prompt_b"] = *promptB;
        j["n_greedy"] = nGreedy;
        j["tokens"] = r.tokens;
        j["positions"] = positionsJson(r.positions);
        if (first) {
            auto last = nlohmann::json::array();
            for (float l : r.lastLogits) last.push_back(round6(l));
            j["last_logits"] = std::move(last);
        }
        j["greedy"] = greedyJson(r.greedy);
        if (promptB) {
            j["tokens_b"] = r.tokensB;
            j["positions_b"] = positionsJson(r.positionsB);
            j["greedy_b"] = greedyJson(r.greedyB);
        }
        out["cases"].push_back(std::move(j));
        first = false;
        std::fprintf(stderr, "%s: %zu + %zu tokens\n", name.c_str(), r.tokens.size(), r.tokensB.size());
    }
    std::ofstream o(outPath);
    if (!o) throw Error(outPath, "cannot write");
    o << out.dump(1) << "\n";
    if (!o) throw Error(outPath, "write failed");
    return 0;
}

}  // namespace cairn::cli
