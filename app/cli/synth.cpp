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
#include <utility>
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
    // gemma3: sliding window, local RoPE base, post-norms, √n_embd embedding scale (the engine's)
    int64_t slidingWindow = 0;
    double localRopeBase = 0;
    // phi3: fused attn_qkv and gate+up ffn_up, rotated dims, LongRoPE factors (ropeDims / 2 each)
    int64_t ropeDims = 0, originalContext = 0;
    const float* longFactors = nullptr;
    const float* shortFactors = nullptr;
};

// Phi-4-mini-instruct's rope_scaling.long_factor (48 values; short_factor is 48 × 1.0), from the
// config.json of microsoft/Phi-4-mini-instruct as quoted by public loaders' tests (revision
// cfbefacb99257ffa30c83adab238a50856ac3083).
constexpr float kPhi4MiniLongFactor[48] = {
    1.0f,         1.118320672f, 1.250641126f, 1.398617824f, 1.564103225f, 1.74916897f,  1.956131817f, 2.187582649f,
    2.446418898f, 2.735880826f, 3.059592084f, 3.421605075f, 3.826451687f, 4.279200023f, 4.785517845f, 5.351743533f,
    5.984965424f, 6.693110555f, 7.485043894f, 8.370679318f, 9.36110372f,  10.4687158f,  11.70738129f, 13.09260651f,
    14.64173252f, 16.37415215f, 18.31155283f, 20.47818807f, 22.90118105f, 25.61086418f, 28.64115884f, 32.03f,
    32.1f,        32.13f,       32.23f,       32.6f,        32.61f,       32.64f,       32.66f,       32.7f,
    32.71f,       32.93f,       32.97f,       33.28f,       33.49f,       33.5f,        44.16f,       47.77f};
constexpr float kOnes48[48] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                               1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

// Real geometries (Llama-3.2-1B, Qwen2-0.5B, Qwen3-0.6B, Gemma-3-1B, Phi-4-mini, SmolLM3-3B). Mamba
// presets live in synth_mamba.cpp, the hybrids in synth_hybrid.cpp.
//   gemma-3-1b: hidden_size 1152, 26 layers, 4 heads / 1 KV head × head_dim 256, intermediate_size 6912,
//     rms_norm_eps 1e-6, rope_theta 1e6, rope_local_base_freq 1e4, sliding_window 512, pattern 6 (the
//     engine's default), max_position_embeddings 32768, no rope scaling or softcapping in the 1B; from a
//     gemma3_text config.json "with gemma-3-1B's real values" in a public GGUF writer's tests. Vocabulary:
//     Gemma's 262144 tokens are not in ../shared/vocab; llama-spm (32000) stands in.
//   phi-4-mini: hidden_size 3072, 32 layers, 24 heads / 8 KV heads × 128, intermediate_size 8192, rope_theta
//     1e4, partial_rotary_factor 0.75 (96 dims), original_max_position_embeddings 4096, max 131072,
//     rms_norm_eps 1e-5, tied; microsoft/Phi-4-mini-instruct's config.json (revision cfbefacb…) as quoted
//     by public loaders' tests. Vocabulary: its 200064 tokens are not in ../shared/vocab; phi-3 (32064).
//   smollm3-3b: hidden_size 2048, 36 layers, 16 heads / 4 KV heads, intermediate_size 11008, rope_theta
//     5e6, rms_norm_eps 1e-6, max_position_embeddings 65536, tied, vocab 128256 (= llama-bpe);
//     HuggingFaceTB/SmolLM3-3B's config.json as quoted by public loaders' tests.
constexpr TransformerPreset kPresets[] = {
    {"llama-1b", "llama", 2048, 16, 32, 8, 64, 8192, "ggml-vocab-llama-bpe.gguf", true, 500000.0, 1e-5f, 131072, false,
     false, 32.0},
    {"qwen2-0.5b", "qwen2", 896, 24, 14, 2, 64, 4864, "ggml-vocab-qwen2.gguf", true, 1000000.0, 1e-6f, 32768, true,
     false, 0.0},
    {"qwen3-0.6b", "qwen3", 1024, 28, 16, 8, 128, 3072, "ggml-vocab-qwen2.gguf", true, 1000000.0, 1e-6f, 40960, false,
     true, 0.0},
    {"gemma-3-1b", "gemma3", 1152, 26, 4, 1, 256, 6912, "ggml-vocab-llama-spm.gguf", true, 1000000.0, 1e-6f, 32768,
     false, true, 0.0, 512, 10000.0},
    {"phi-4-mini", "phi3", 3072,  32,  24, 8, 128, 8192, "ggml-vocab-phi-3.gguf", true,   10000.0, 1e-5f,
     131072,       false,  false, 0.0, 0,  0, 96,  4096, kPhi4MiniLongFactor,     kOnes48},
    {"smollm3-3b", "smollm3", 2048, 36, 16, 4, 128, 11008, "ggml-vocab-llama-bpe.gguf", true, 5000000.0, 1e-6f, 65536,
     false, false, 0.0},
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
    setCommonMetadata(w, {p.arch, p.name, p.layers, p.context, p.embedding, p.feedForward, p.heads}, type);
    w.setUInt32(a + "attention.head_count_kv", uint32_t(p.kvHeads));
    w.setFloat32(a + "rope.freq_base", float(p.ropeBase));
    w.setFloat32(a + "attention.layer_norm_rms_epsilon", p.eps);
    if (p.headDim != p.embedding / p.heads) {
        w.setUInt32(a + "attention.key_length", uint32_t(p.headDim));
        w.setUInt32(a + "attention.value_length", uint32_t(p.headDim));
    }
    if (std::string_view(p.arch) == "llama") w.setUInt32(a + "rope.dimension_count", uint32_t(p.headDim));
    const bool gemma3 = p.slidingWindow > 0, phi3 = p.longFactors != nullptr;
    if (gemma3) {
        w.setUInt32(a + "attention.sliding_window", uint32_t(p.slidingWindow));
        w.setFloat32(a + "rope.freq_base_swa", float(p.localRopeBase));
    }
    if (phi3) {
        w.setUInt32(a + "rope.dimension_count", uint32_t(p.ropeDims));
        w.setUInt32(a + "rope.scaling.original_context_length", uint32_t(p.originalContext));
        // as convert_hf_to_gguf: √(1 + ln(context / original) / ln(original))
        w.setFloat32(
            a + "rope.scaling.attn_factor",
            float(std::sqrt(
                1.0 + std::log(double(p.context) / double(p.originalContext)) / std::log(double(p.originalContext)))));
    }
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
    if (phi3)
        for (const auto& [name, values] : {std::pair{"rope_factors_long.weight", p.longFactors},
                                           std::pair{"rope_factors_short.weight", p.shortFactors}})
            w.addTensor(name, TensorType::F32, {p.ropeDims / 2},
                        {reinterpret_cast<const uint8_t*>(values), size_t(p.ropeDims / 2) * 4});
    if (p.llama3RopeFactor > 0) {
        auto f = llama3RopeFreqs(p.headDim, p.ropeBase, p.llama3RopeFactor);
        w.addTensor("rope_freqs.weight", TensorType::F32, {int64_t(f.size())},
                    {reinterpret_cast<const uint8_t*>(f.data()), f.size() * 4});
    }
    for (int64_t l = 0; l < p.layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        const TensorType more = kQuant && useMoreBits(l, p.layers) ? TensorType::Q6_K : type;
        vector(b + "attn_norm.weight", e, 1.0f, 0.1f);
        if (phi3) {
            matrix(b + "attn_qkv.weight", e, qd + 2 * kvd, se, type);
        } else {
            matrix(b + "attn_q.weight", e, qd, se, type);
            matrix(b + "attn_k.weight", e, kvd, se, type);
            matrix(b + "attn_v.weight", e, kvd, se, more);
        }
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
        if (gemma3) vector(b + "post_attention_norm.weight", e, 1.0f, 0.1f);
        vector(b + "ffn_norm.weight", e, 1.0f, 0.1f);
        if (phi3) {
            matrix(b + "ffn_up.weight", e, 2 * ff, se, type);
        } else {
            matrix(b + "ffn_gate.weight", e, ff, se, type);
            matrix(b + "ffn_up.weight", e, ff, se, type);
        }
        matrix(b + "ffn_down.weight", ff, e, 2.0f / std::sqrt(float(ff)), more);
        if (gemma3) vector(b + "post_ffw_norm.weight", e, 1.0f, 0.1f);
    }
    w.write(path);
}

}  // namespace

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

}  // namespace cairn::cli
