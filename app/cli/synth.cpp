// cairn-cli synth --preset NAME --type TYPE -o FILE.gguf [--vocab-dir DIR] [--seed S] [-t THREADS]
// Random-weight models with real geometries and real vocabularies, for
// benchmarks that need no download. Weights follow the fixture README's
// distributions; tensors are generated and quantized while the file is written
// (the writer's Filler), so memory stays small.
#include "command.h"
#include "synth_common.h"
#include "synth_hybrid.h"
#include "synth_mamba.h"

#include "cairn/error.h"
#include "cairn/exec.h"
#include "cairn/gguf.h"
#include "tensor/quant.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

namespace cairn::cli {
namespace {

struct TransformerPreset {
    const char* name;
    const char* arch;
    int64_t embedding, layers, heads, kvHeads, headDim, feedForward;
    const char* vocabFile;
    bool tied;
    double ropeBase;
    float eps;
    int64_t context;
    bool qkvBias, qkNorm;
    double llama3RopeFactor;  // > 0: Llama-3.x rope_freqs (factor, low 1, high 4, original 8192)
};

// Real geometries (Llama-3.2-1B, Qwen2-0.5B, Qwen3-0.6B). Mamba presets live in synth_mamba.cpp.
constexpr TransformerPreset kPresets[] = {
    {"llama-1b", "llama", 2048, 16, 32, 8, 64, 8192, "ggml-vocab-llama-bpe.gguf", true, 500000.0, 1e-5f, 131072,
     false, false, 32.0},
    {"qwen2-0.5b", "qwen2", 896, 24, 14, 2, 64, 4864, "ggml-vocab-qwen2.gguf", true, 1000000.0, 1e-6f, 32768, true,
     false, 0.0},
    {"qwen3-0.6b", "qwen3", 1024, 28, 16, 8, 128, 3072, "ggml-vocab-qwen2.gguf", true, 1000000.0, 1e-6f, 40960, false,
     true, 0.0},
};

// llama.cpp's Q4_K_M rule for attn_v / ffn_down: more bits in the first and last
// eighth of the layers and every third layer between.
bool useMoreBits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

std::vector<float> llama3RopeFreqs(int64_t headDim, double base, double factor) {
    const double low = 1.0, high = 4.0, original = 8192.0;
    const double lowWavelen = original / low, highWavelen = original / high;
    std::vector<float> f;
    for (int64_t i = 0; i < headDim; i += 2) {
        const double freq = 1.0 / std::pow(base, double(i) / double(headDim));
        const double wavelen = 2 * M_PI / freq;
        if (wavelen < highWavelen) f.push_back(1.0f);
        else if (wavelen > lowWavelen) f.push_back(float(factor));
        else {
            const double smooth = (original / wavelen - low) / (high - low);
            f.push_back(float(1.0 / ((1 - smooth) / factor + smooth)));
        }
    }
    return f;
}

std::string vocabDirectory(Args& args) {
    if (auto d = args.option("", "--vocab-dir")) return *d;
    if (const char* env = std::getenv("CAIRN_SHARED_DIR"); env && *env) return std::string(env) + "/vocab";
    for (const char* candidate : {"../shared/vocab", "../../shared/vocab", "/work/shared/vocab"})
        if (std::filesystem::is_directory(candidate)) return candidate;
    return "../shared/vocab";
}

void writeTransformer(const TransformerPreset& p, TensorType type, const std::string& vocabPath,
                      const std::string& path, uint64_t seed, ExecContext& ctx) {
    const std::string a = std::string(p.arch) + ".";
    gguf::Writer w;
    w.setString("general.architecture", p.arch);
    w.setString("general.name", std::string("cairn-synth-") + p.name + "-" + std::string(tensorTypeName(type)));
    w.setUInt32("general.quantization_version", 2);
    w.setUInt32(a + "block_count", uint32_t(p.layers));
    w.setUInt32(a + "context_length", uint32_t(p.context));
    w.setUInt32(a + "embedding_length", uint32_t(p.embedding));
    w.setUInt32(a + "feed_forward_length", uint32_t(p.feedForward));
    w.setUInt32(a + "attention.head_count", uint32_t(p.heads));
    w.setUInt32(a + "attention.head_count_kv", uint32_t(p.kvHeads));
    w.setFloat32(a + "rope.freq_base", float(p.ropeBase));
    w.setFloat32(a + "attention.layer_norm_rms_epsilon", p.eps);
    if (p.headDim != p.embedding / p.heads) {
        w.setUInt32(a + "attention.key_length", uint32_t(p.headDim));
        w.setUInt32(a + "attention.value_length", uint32_t(p.headDim));
    }
    if (std::string_view(p.arch) == "llama") w.setUInt32(a + "rope.dimension_count", uint32_t(p.headDim));
    copyVocabulary(w, vocabPath);
    const auto vocab = gguf::File::open(vocabPath);
    const int64_t nVocab = int64_t(vocab.get("tokenizer.ggml.tokens").size());
    w.setUInt32(a + "vocab_size", uint32_t(nVocab));

    const bool kQuant = type == TensorType::Q4_K;
    const bool lowBits = type == TensorType::Q4_0 || kQuant;
    uint64_t tensorSeed = seed * 1000003;
    auto matrix = [&](const std::string& name, int64_t cols, int64_t rows, float stddev, TensorType t) {
        t = fitType(t, cols);
        addRandomMatrix(w, ctx, name, t, cols, rows, stddev, ++tensorSeed * 0x100000001B3ull);
    };
    auto vector = [&](const std::string& name, int64_t n, float mean, float stddev) {
        std::vector<float> v(static_cast<size_t>(n));
        Rng rng{++tensorSeed * 0x100000001B3ull};
        rng.normals(v.data(), n, stddev);
        for (auto& x : v) x += mean;
        w.addTensor(name, TensorType::F32, {n}, {reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4});
    };

    const int64_t e = p.embedding, qd = p.heads * p.headDim, kvd = p.kvHeads * p.headDim, ff = p.feedForward;
    const float se = 1.0f / std::sqrt(float(e));
    // Tied embeddings are the output matrix too: llama-quantize gives it Q6_K in the low-bit mixes.
    const TensorType embType = lowBits ? TensorType::Q6_K : type;
    matrix("token_embd.weight", e, nVocab, p.tied ? 2.5f * se : 0.15f, embType);
    vector("output_norm.weight", e, 1.0f, 0.1f);
    if (!p.tied) matrix("output.weight", e, nVocab, 2.5f * se, lowBits ? TensorType::Q6_K : type);
    if (p.llama3RopeFactor > 0) {
        auto f = llama3RopeFreqs(p.headDim, p.ropeBase, p.llama3RopeFactor);
        w.addTensor("rope_freqs.weight", TensorType::F32, {int64_t(f.size())},
                    {reinterpret_cast<const uint8_t*>(f.data()), f.size() * 4});
    }
    for (int64_t l = 0; l < p.layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        const TensorType more = kQuant && useMoreBits(l, p.layers) ? TensorType::Q6_K : type;
        vector(b + "attn_norm.weight", e, 1.0f, 0.1f);
        matrix(b + "attn_q.weight", e, qd, se, type);
        matrix(b + "attn_k.weight", e, kvd, se, type);
        matrix(b + "attn_v.weight", e, kvd, se, more);
        if (p.qkvBias) {
            vector(b + "attn_q.bias", qd, 0.0f, 0.02f);
            vector(b + "attn_k.bias", kvd, 0.0f, 0.02f);
            vector(b + "attn_v.bias", kvd, 0.0f, 0.02f);
        }
        if (p.qkNorm) {
            vector(b + "attn_q_norm.weight", p.headDim, 1.0f, 0.1f);
            vector(b + "attn_k_norm.weight", p.headDim, 1.0f, 0.1f);
        }
        matrix(b + "attn_output.weight", qd, e, 2.0f / std::sqrt(float(qd)), type);
        vector(b + "ffn_norm.weight", e, 1.0f, 0.1f);
        matrix(b + "ffn_gate.weight", e, ff, se, type);
        matrix(b + "ffn_up.weight", e, ff, se, type);
        matrix(b + "ffn_down.weight", ff, e, 2.0f / std::sqrt(float(ff)), more);
    }
    w.write(path);
}

} // namespace

int runSynth(Args& args) {
    const std::string preset = args.require("", "--preset");
    const std::string typeName = args.require("", "--type");
    const std::string out = args.require("-o", "--output");
    const std::string vocabDir = vocabDirectory(args);
    const uint64_t seed = uint64_t(args.number("", "--seed", 1));
    const int threads = int(args.number("-t", "--threads", 2));
    args.positionals();

    std::optional<TensorType> type;
    for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_K})
        if (tensorTypeName(t) == typeName || (typeName == "Q4_K_M" && t == TensorType::Q4_K)) type = t;
    if (!type) throw Error("cairn-cli synth", "unsupported --type '" + typeName + "' (F32, F16, Q8_0, Q4_0, Q4_K)");

    if (const HybridPreset* h = findHybridPreset(preset)) {
        ExecContext ctx(threads);
        writeHybridModel(*h, *type, vocabDir, out, seed, ctx);
        return 0;
    }
    if (const MambaPreset* m = findMambaPreset(preset)) {
        writeMambaModel(*m, *type, vocabDir + "/ggml-vocab-mpt.gguf", out, seed);
        return 0;
    }
    for (const auto& p : kPresets) {
        if (preset != p.name) continue;
        ExecContext ctx(threads);
        writeTransformer(p, *type, vocabDir + "/" + p.vocabFile, out, seed, ctx);
        return 0;
    }
    std::string names;
    for (const auto& p : kPresets) names += std::string(names.empty() ? "" : ", ") + p.name;
    for (const auto& m : mambaPresets()) names += ", " + m.name;
    for (const auto& h : hybridPresets()) names += ", " + std::string(h.name);
    throw Error("cairn-cli synth", "unknown preset '" + preset + "' (" + names + ")");
}

} // namespace cairn::cli
