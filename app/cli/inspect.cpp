// cairn-cli inspect MODEL.gguf [--tensors] [--json] [--ctx N]
//
// Describes a model file from its header alone (no tensor data is read):
// architecture, size, tensor-type mix, tokenizer, and the RAM a session at a
// given context would need. Metadata of an unexpected type is reported as
// absent rather than failing, so that any readable GGUF file can be inspected.
// Strings from the file are never written raw: terminalSafe() in the table, \u
// escapes for everything outside printable ASCII in --json.
#include "command.h"
#include "terminal_text.h"

#include "cairn/error.h"
#include "cairn/gguf.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <optional>

namespace cairn::cli {
namespace {

std::optional<int64_t> intKey(const gguf::File& f, const std::string& key) {
    const auto* v = f.find(key);
    if (!v) return std::nullopt;
    if (v->isInteger()) {
        try {
            return v->asInt();
        } catch (const Error&) {  // a uint64 beyond int64
            return std::nullopt;
        }
    }
    // Per-layer values (e.g. head_count_kv of some models): the largest.
    if (v->isArray() && v->elementType() != gguf::ValueType::String && v->size() > 0) {
        auto n = v->numbers();
        double m = *std::max_element(n.begin(), n.end());
        if (!(m >= -1e15 && m <= 1e15)) return std::nullopt;  // also NaN
        return int64_t(m);
    }
    return std::nullopt;
}

// Layers with a KV cache: all, or in hybrids those with head_count_kv[l] > 0
// (lfm2, granitehybrid) or every full_attention_interval-th (qwen35).
int64_t attentionLayers(const gguf::File& f, const std::string& a, int64_t layers) {
    const auto* v = f.find(a + ".attention.head_count_kv");
    if (v && v->isArray() && v->elementType() != gguf::ValueType::String &&
        v->elementType() != gguf::ValueType::Array) {
        int64_t n = 0;
        for (double h : v->numbers()) n += h > 0 ? 1 : 0;
        return std::min(n, layers);
    }
    if (auto every = intKey(f, a + ".full_attention_interval"); every && *every > 0) return layers / *every;
    return layers;
}

std::string stringKey(const gguf::File& f, const std::string& key) {
    const auto* v = f.find(key);
    return v && v->type() == gguf::ValueType::String ? std::string(v->asString()) : std::string();
}

struct Summary {
    std::string arch, name;
    uint64_t params = 0, tensorBytes = 0;
    struct Mix {
        std::string type;
        uint64_t tensors = 0, elements = 0, bytes = 0;
    };
    std::vector<Mix> mix;  // most parameters first
    std::optional<int64_t> trainedContext;
    std::string tokModel, tokPre;
    uint64_t vocab = 0;
    bool chatTemplate = false;
    int64_t ctx = 0;
    std::optional<uint64_t> sessionBytes;  // nullopt: unknown for this architecture
    std::string sessionKind;
};

// Product of factors read from the file, or nullopt if one is not positive
// or the product is beyond belief (metadata is not trusted to be sane).
std::optional<uint64_t> product(std::initializer_list<int64_t> factors) {
    double p = 1;
    for (int64_t x : factors) {
        if (x <= 0) return std::nullopt;
        p *= double(x);
    }
    if (p > 1e18) return std::nullopt;
    uint64_t r = 1;
    for (int64_t x : factors) r *= uint64_t(x);
    return r;
}

// Per-session memory at `ctx` tokens: an f16 KV cache for attention models,
// f32 conv and SSM state (independent of ctx) for Mamba.
void estimateSession(const gguf::File& f, Summary& s) {
    const std::string& a = s.arch;
    int64_t layers = intKey(f, a + ".block_count").value_or(0);
    if (a == "mamba") {
        int64_t inner = intKey(f, a + ".ssm.inner_size").value_or(0);
        int64_t state = intKey(f, a + ".ssm.state_size").value_or(0);
        int64_t conv = intKey(f, a + ".ssm.conv_kernel").value_or(0);
        if (state > (int64_t(1) << 40) || conv > (int64_t(1) << 40)) return;
        s.sessionBytes = product({layers, inner, state + conv - 1, 4});
        s.sessionKind = "recurrent state (f32)";
        return;
    }
    int64_t heads = intKey(f, a + ".attention.head_count").value_or(0);
    int64_t embd = intKey(f, a + ".embedding_length").value_or(0);
    if (heads <= 0) return;
    int64_t kvHeads = intKey(f, a + ".attention.head_count_kv").value_or(heads);
    int64_t keyLen = intKey(f, a + ".attention.key_length").value_or(embd / heads);
    int64_t valueLen = intKey(f, a + ".attention.value_length").value_or(embd / heads);
    if (keyLen <= 0 || valueLen <= 0 || keyLen > (int64_t(1) << 40) || valueLen > (int64_t(1) << 40)) return;
    const int64_t kvLayers = attentionLayers(f, a, layers);
    s.sessionBytes = product({kvLayers, s.ctx, kvHeads, keyLen + valueLen, 2});
    s.sessionKind = kvLayers < layers
        ? "KV cache (f16) of " + std::to_string(kvLayers) + " attention layers" + " (+ recurrent state)"
        : "KV cache (f16)";
}

Summary summarize(const gguf::File& f, std::optional<int64_t> ctxOption) {
    Summary s;
    s.arch = stringKey(f, "general.architecture");
    s.name = stringKey(f, "general.name");
    std::map<std::string, Summary::Mix> mix;
    for (const auto& t : f.tensors()) {
        s.params += uint64_t(t.elements());
        s.tensorBytes += t.nbytes;
        auto& m = mix[std::string(tensorTypeName(t.type))];
        m.type = tensorTypeName(t.type);
        m.tensors++;
        m.elements += uint64_t(t.elements());
        m.bytes += t.nbytes;
    }
    for (auto& [_, m] : mix) s.mix.push_back(m);
    std::stable_sort(s.mix.begin(), s.mix.end(), [](const auto& x, const auto& y) { return x.elements > y.elements; });
    s.trainedContext = intKey(f, s.arch + ".context_length");
    s.tokModel = stringKey(f, "tokenizer.ggml.model");
    s.tokPre = stringKey(f, "tokenizer.ggml.pre");
    if (const auto* v = f.find("tokenizer.ggml.tokens"); v && v->isArray()) s.vocab = v->size();
    s.chatTemplate = f.find("tokenizer.chat_template") != nullptr;
    s.ctx = ctxOption ? *ctxOption : std::min<int64_t>(s.trainedContext.value_or(4096), 4096);
    if (s.ctx <= 0) s.ctx = 4096;
    estimateSession(f, s);
    return s;
}

std::string tokenizerKind(const std::string& model) {
    if (model == "llama") return "SentencePiece";
    if (model == "gpt2") return "byte-level BPE";
    if (model == "bert") return "WordPiece";
    if (model == "t5") return "Unigram";
    if (model == "rwkv") return "RWKV";
    if (model.empty() || model == "none" || model == "no_vocab") return "none";
    return "unknown";
}

std::string humanBytes(double b) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", b, units[u]);
    return buf;
}

std::string humanCount(double n) {
    const char* units[] = {"", " K", " M", " B", " T"};
    int u = 0;
    while (n >= 1000 && u < 4) {
        n /= 1000;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f%s" : "%.2f%s", n, units[u]);
    return buf;
}

std::string grouped(uint64_t n) {
    std::string digits = std::to_string(n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string shapeString(const gguf::TensorInfo& t) {
    std::string s = "[";
    for (uint32_t d = 0; d < t.nDims; ++d) s += (d ? ", " : "") + std::to_string(t.ne[d]);
    return s + "]";
}

std::string baseName(const std::string& path) {
    auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

void printJson(const gguf::File& f, const Summary& s, const std::string& path, bool withTensors) {
    nlohmann::json j;
    j["path"] = path;
    j["gguf_version"] = f.version();
    j["architecture"] = s.arch;
    j["name"] = s.name;
    j["parameters"] = s.params;
    j["tensor_count"] = f.tensors().size();
    j["metadata_count"] = f.metadata().size();
    nlohmann::json types = nlohmann::json::object();
    for (const auto& m : s.mix) types[m.type] = {{"tensors", m.tensors}, {"elements", m.elements}, {"bytes", m.bytes}};
    j["tensor_types"] = types;
    j["context_length"] = s.trainedContext ? nlohmann::json(*s.trainedContext) : nlohmann::json(nullptr);
    j["tokenizer"] = {{"model", s.tokModel}, {"kind", tokenizerKind(s.tokModel)}, {"pre", s.tokPre}, {"size", s.vocab}};
    j["chat_template"] = s.chatTemplate;
    j["file_size"] = f.fileSize();
    nlohmann::json ram = {{"context", s.ctx}, {"weights_bytes", f.fileSize()}};
    if (s.sessionBytes) {
        ram["memory_bytes"] = *s.sessionBytes;
        ram["total_bytes"] = f.fileSize() + *s.sessionBytes;
    } else {
        ram["memory_bytes"] = nullptr;
        ram["total_bytes"] = nullptr;
    }
    j["ram_estimate"] = ram;
    if (withTensors) {
        auto arr = nlohmann::json::array();
        for (const auto& t : f.tensors())
            arr.push_back({{"name", std::string(t.name)},
                           {"type", std::string(tensorTypeName(t.type))},
                           {"shape", std::vector<int64_t>(t.ne.begin(), t.ne.begin() + t.nDims)},
                           {"offset", t.offset},
                           {"bytes", t.nbytes}});
        j["tensors"] = arr;
    }
    std::printf("%s\n", j.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace).c_str());
}

void printHuman(const gguf::File& f, const Summary& s, const std::string& path) {
    auto row = [](const char* label, const std::string& value) {
        std::printf("  %-16s%s\n", label, terminalSafe(value).c_str());
    };
    std::printf("%s: GGUF v%u, %zu tensors, %zu metadata keys\n", terminalSafe(baseName(path)).c_str(), f.version(),
                f.tensors().size(), f.metadata().size());
    row("architecture", s.arch.empty() ? "(not set)" : s.arch);
    row("name", s.name.empty() ? "(not set)" : s.name);
    row("parameters",
        s.params < 1000 ? grouped(s.params) : humanCount(double(s.params)) + " (" + grouped(s.params) + ")");
    std::string mix;
    for (const auto& m : s.mix) {
        char pct[32];
        double share = s.params ? 100.0 * double(m.elements) / double(s.params) : 0.0;
        if (share > 0 && share < 0.05) std::snprintf(pct, sizeof pct, "<0.1 %%");
        else std::snprintf(pct, sizeof pct, "%.1f %%", share);
        mix += (mix.empty() ? "" : ", ") + m.type + " x" + std::to_string(m.tensors) + " (" + pct + ")";
    }
    row("tensor types", mix.empty() ? "(no tensors)" : mix);
    row("context length", s.trainedContext ? grouped(uint64_t(*s.trainedContext)) + " (trained)" : "(not set)");
    std::string tok = tokenizerKind(s.tokModel);
    if (!s.tokModel.empty()) tok += " (" + s.tokModel + (s.tokPre.empty() ? "" : ", pre-tokenizer " + s.tokPre) + ")";
    if (s.vocab) tok += ", " + grouped(s.vocab) + " tokens";
    row("tokenizer", tok);
    row("chat template", s.chatTemplate ? "yes" : "no");
    row("file size", humanBytes(double(f.fileSize())) + " (" + grouped(f.fileSize()) + " bytes)");
    if (s.sessionBytes) {
        row("RAM estimate",
            humanBytes(double(f.fileSize() + *s.sessionBytes)) + " at " + grouped(uint64_t(s.ctx)) +
                " tokens: " + humanBytes(double(f.fileSize())) + " weights + " +
                humanBytes(double(*s.sessionBytes)) + " " + s.sessionKind);
    } else {
        row("RAM estimate",
            humanBytes(double(f.fileSize())) + " weights; session memory unknown for '" + s.arch + "'");
    }
}

void printTensorTable(const gguf::File& f) {
    size_t nameWidth = 6;
    std::vector<std::string> names;
    for (const auto& t : f.tensors()) names.push_back(terminalSafe(t.name));
    for (const auto& name : names) nameWidth = std::max(nameWidth, name.size());
    nameWidth = std::min<size_t>(nameWidth, 64);
    std::printf("\n  %4s  %-*s  %-7s  %-22s  %14s  %14s\n", "#", int(nameWidth), "tensor", "type", "shape", "bytes",
                "offset");
    size_t i = 0;
    for (const auto& t : f.tensors()) {
        std::printf("  %4zu  %-*.*s  %-7s  %-22s  %14s  %14s\n", i, int(nameWidth), int(nameWidth), names[i].c_str(),
                    std::string(tensorTypeName(t.type)).c_str(), shapeString(t).c_str(), grouped(t.nbytes).c_str(),
                    grouped(t.offset).c_str());
        ++i;
    }
}

}  // namespace

int runInspect(Args& args) {
    bool json = args.flag("--json");
    bool showTensors = args.flag("--tensors");
    double ctxArg = args.number("-c", "--ctx", -1);
    std::optional<int64_t> ctx;
    if (ctxArg != -1) {
        if (!(ctxArg >= 1 && ctxArg <= 1e9) || std::floor(ctxArg) != ctxArg)
            throw Error("cairn-cli inspect", "--ctx needs a whole number of tokens from 1 to 1000000000");
        ctx = int64_t(ctxArg);
    }
    auto pos = args.positionals();
    if (pos.size() != 1) throw Error("cairn-cli inspect", "expected one model file");

    auto file = gguf::File::open(pos[0]);
    auto s = summarize(file, ctx);
    if (json) {
        printJson(file, s, pos[0], showTensors);
        return 0;
    }
    printHuman(file, s, pos[0]);
    if (showTensors) printTensorTable(file);
    return 0;
}

}  // namespace cairn::cli
