// Model::load: maps the file, picks the architecture from the registry below,
// and attaches the tokenizer. prefill(): chunked feeding.
#include "cairn/model.h"

#include "cairn/error.h"
#include "cairn/exec.h"
#include "cairn/gguf.h"
#include "cairn/tokenizer.h"
#include "model/architectures.h"
#include "model/owned_weights.h"

#include <algorithm>
#include <string_view>

namespace cairn {
namespace {

struct Architecture {
    std::string_view name;
    model::ArchitectureLoader load;
};

// The registry: one line per architecture.
constexpr Architecture kArchitectures[] = {
    {"llama", model::loadLlama},
    {"qwen2", model::loadQwen2},
    {"qwen3", model::loadQwen3},
    {"mamba", model::loadMamba},
    {"mamba2", model::loadMamba2},
    {"lfm2", model::loadLfm2},
    {"granitehybrid", model::loadGraniteHybrid},
    {"qwen35", model::loadQwen35},
    {"gemma3", model::loadGemma3},
    {"phi3", model::loadPhi3},
    {"smollm3", model::loadSmolLm3},
};

}  // namespace

// What every architecture shares: the file's name, architecture and parameter count.
Model::Model(std::unique_ptr<gguf::File> file)
    : file_(std::move(file)), ownedWeights_(std::make_unique<model::OwnedWeights>()) {
    info_.architecture = file_->architecture();
    info_.name = std::string(file_->getString("general.name"));
    for (const auto& t : file_->tensors()) info_.parameters += uint64_t(t.elements());
}
Model::~Model() = default;

size_t Model::ownedWeightBytes() const { return ownedWeights_->bytes(); }
size_t Model::tiledWeightBytes() const { return ownedWeights_->tiledBytes(); }

std::unique_ptr<Model> Model::load(const std::string& path) {
    auto file = std::make_unique<gguf::File>(gguf::File::open(path));
    const std::string arch = file->architecture();
    const Architecture* found = nullptr;
    for (const auto& a : kArchitectures)
        if (a.name == arch) found = &a;
    if (!found) {
        std::string known;
        for (const auto& a : kArchitectures) known += (known.empty() ? "" : ", ") + std::string(a.name);
        throw Error(path, "unsupported architecture '" + arch + "' (supported: " + known + ")");
    }
    std::unique_ptr<Model> model;
    try {
        model = found->load(std::move(file));
        model->ownedWeights_->finishLoading();
        model->tokenizer_ = Tokenizer::fromGguf(*model->file_);
    } catch (const Error& e) {
        throw Error(path, e.what());
    }
    return model;
}

void prefill(const Model& model, Memory& mem, std::span<const int32_t> tokens, int64_t chunk, bool allLogits,
             float* logits, ExecContext& ctx) {
    if (chunk <= 0) throw Error("prefill", "chunk size must be positive");
    const int64_t n = int64_t(tokens.size());
    if (mem.size() + n > mem.capacity())
        throw Error("prefill",
                    "context is full: " + std::to_string(mem.size()) + " + " + std::to_string(n) +
                        " tokens exceed the context size of " + std::to_string(mem.capacity()));
    const int64_t vocab = model.info().vocabSize;
    for (int64_t begin = 0; begin < n; begin += chunk) {
        const int64_t len = std::min(chunk, n - begin);
        const bool last = begin + len == n;
        float* out = nullptr;
        if (logits && allLogits) out = logits + begin * vocab;
        else if (logits && last) out = logits;
        model.forward(mem, tokens.subspan(size_t(begin), size_t(len)), allLogits, out, ctx);
    }
}

}  // namespace cairn
