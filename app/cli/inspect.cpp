// cairn-cli inspect MODEL.gguf [--tensors] [--json] [--ctx N]
#include "command.h"

#include "cairn/error.h"
#include "cairn/gguf.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>

namespace cairn::cli {
namespace {

// Bytes of per-conversation memory at `ctx` tokens: an f16 KV cache for
// attention models, f32 conv + SSM state for Mamba.
uint64_t memoryBytes(const gguf::File& f, int64_t ctx) {
    std::string arch = f.architecture();
    int64_t layers = f.getInt(arch + ".block_count", 0);
    if (arch == "mamba") {
        int64_t inner = f.getInt("mamba.ssm.inner_size", 0), state = f.getInt("mamba.ssm.state_size", 0);
        int64_t conv = f.getInt("mamba.ssm.conv_kernel", 0);
        return uint64_t(layers * inner * (state + conv - 1) * 4);
    }
    int64_t embd = f.getInt(arch + ".embedding_length", 0);
    int64_t heads = f.getInt(arch + ".attention.head_count", 0);
    int64_t kvHeads = f.getInt(arch + ".attention.head_count_kv", heads);
    if (heads <= 0) return 0;
    int64_t keyLen = f.getInt(arch + ".attention.key_length", embd / heads);
    int64_t valueLen = f.getInt(arch + ".attention.value_length", embd / heads);
    return uint64_t(layers * ctx * kvHeads * (keyLen + valueLen) * 2);
}

std::string humanBytes(double b) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) { b /= 1024; ++u; }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", b, units[u]);
    return buf;
}

std::string shapeString(const gguf::TensorInfo& t) {
    std::string s = "[";
    for (uint32_t d = 0; d < t.nDims; ++d) s += (d ? ", " : "") + std::to_string(t.ne[d]);
    return s + "]";
}

} // namespace

int runInspect(Args& args) {
    bool json = args.flag("--json");
    bool showTensors = args.flag("--tensors");
    auto ctxOpt = args.number("-c", "--ctx", -1);
    auto pos = args.positionals();
    if (pos.size() != 1) throw Error("cairn-cli inspect", "expected one model file");

    auto file = gguf::File::open(pos[0]);
    std::string arch = file.architecture();
    int64_t ctxTrain = file.getInt(arch + ".context_length", 0);
    int64_t ctx = ctxOpt > 0 ? int64_t(ctxOpt) : (ctxTrain > 0 ? std::min<int64_t>(ctxTrain, 4096) : 4096);

    uint64_t params = 0;
    std::map<std::string, std::pair<int, uint64_t>> mix;  // type -> (tensors, elements)
    for (const auto& t : file.tensors()) {
        params += uint64_t(t.elements());
        auto& m = mix[std::string(tensorTypeName(t.type))];
        m.first++;
        m.second += uint64_t(t.elements());
    }
    std::string tokModel(file.getString("tokenizer.ggml.model"));
    std::string tokPre(file.getString("tokenizer.ggml.pre"));
    uint64_t vocab = 0;
    if (auto* v = file.find("tokenizer.ggml.tokens"); v && v->isArray()) vocab = v->size();
    bool hasTemplate = file.find("tokenizer.chat_template") != nullptr;
    uint64_t mem = memoryBytes(file, ctx);
    uint64_t ram = file.fileSize() + mem;

    if (json) {
        nlohmann::json j;
        j["path"] = pos[0];
        j["gguf_version"] = file.version();
        j["architecture"] = arch;
        j["name"] = std::string(file.getString("general.name"));
        j["parameters"] = params;
        j["tensor_count"] = file.tensors().size();
        nlohmann::json types = nlohmann::json::object();
        for (const auto& [name, m] : mix) types[name] = {{"tensors", m.first}, {"elements", m.second}};
        j["tensor_types"] = types;
        j["context_length"] = ctxTrain;
        j["tokenizer"] = {{"model", tokModel}, {"pre", tokPre}, {"size", vocab}};
        j["chat_template"] = hasTemplate;
        j["file_size"] = file.fileSize();
        j["ram_estimate"] = {{"context", ctx}, {"memory_bytes", mem}, {"total_bytes", ram}};
        if (showTensors) {
            auto arr = nlohmann::json::array();
            for (const auto& t : file.tensors())
                arr.push_back({{"name", std::string(t.name)}, {"type", std::string(tensorTypeName(t.type))},
                               {"shape", std::vector<int64_t>(t.ne.begin(), t.ne.begin() + t.nDims)},
                               {"offset", t.offset}, {"bytes", t.nbytes}});
            j["tensors"] = arr;
        }
        std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return 0;
    }

    std::printf("file            %s (GGUF v%u)\n", pos[0].c_str(), file.version());
    std::printf("architecture    %s\n", arch.c_str());
    std::printf("name            %s\n", std::string(file.getString("general.name", "(none)")).c_str());
    std::printf("parameters      %llu (%.2f M)\n", (unsigned long long)params, params / 1e6);
    std::printf("tensor types   ");
    for (const auto& [name, m] : mix) std::printf(" %s×%d", name.c_str(), m.first);
    std::printf("\ncontext length  %lld\n", (long long)ctxTrain);
    std::printf("tokenizer       %s%s%s, %llu tokens\n", tokModel.empty() ? "(none)" : tokModel.c_str(),
                tokPre.empty() ? "" : " / ", tokPre.c_str(), (unsigned long long)vocab);
    std::printf("chat template   %s\n", hasTemplate ? "yes" : "no");
    std::printf("file size       %s (%llu bytes)\n", humanBytes(double(file.fileSize())).c_str(),
                (unsigned long long)file.fileSize());
    std::printf("RAM estimate    %s at %lld tokens of context (weights mapped + %s session memory)\n",
                humanBytes(double(ram)).c_str(), (long long)ctx, humanBytes(double(mem)).c_str());
    if (showTensors) {
        std::printf("\n%-40s %-6s %-24s %12s\n", "tensor", "type", "shape", "bytes");
        for (const auto& t : file.tensors())
            std::printf("%-40s %-6s %-24s %12zu\n", std::string(t.name).c_str(),
                        std::string(tensorTypeName(t.type)).c_str(), shapeString(t).c_str(), t.nbytes);
    }
    return 0;
}

} // namespace cairn::cli
