#include "tiny_models.h"

#include "tensor/quant.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace cairn::test {
namespace {

// GPT-2's byte → printable code point map, as UTF-8.
std::string byteToken(int b) {
    int cp;
    if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255)) {
        cp = b;
    } else {
        int n = 0;
        for (int x = 0; x < b; ++x)
            if (!((x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174 && x <= 255))) ++n;
        cp = 256 + n;
    }
    std::string s;
    if (cp < 0x80) {
        s += char(cp);
    } else {
        s += char(0xC0 | (cp >> 6));
        s += char(0x80 | (cp & 0x3F));
    }
    return s;
}

// Deterministic normal numbers (Box–Muller over mt19937's raw output).
class Normal {
public:
    explicit Normal(uint32_t seed) : rng_(seed) {}
    float operator()(float stddev) {
        double u1 = (double(rng_()) + 1.0) / 4294967297.0, u2 = double(rng_()) / 4294967296.0;
        return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979 * u2) * stddev);
    }

private:
    std::mt19937 rng_;
};

std::vector<uint8_t> encodeRows(TensorType type, const std::vector<float>& v, int64_t cols) {
    const int64_t rows = int64_t(v.size()) / cols;
    const size_t rb = rowBytes(type, cols);
    std::vector<uint8_t> out(rb * size_t(rows));
    for (int64_t r = 0; r < rows; ++r) {
        const float* src = v.data() + r * cols;
        uint8_t* dst = out.data() + size_t(r) * rb;
        if (!traits(type).supported) std::memset(dst, 0, rb);  // for refusal tests
        else if (type == TensorType::F32) std::memcpy(dst, src, size_t(cols) * 4);
        else tensor::quantizeRow(type, src, dst, cols);
    }
    return out;
}

}  // namespace

void addTinyVocabulary(gguf::Writer& w) {
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    for (int b = 0; b < 256; ++b) {
        tokens.push_back(byteToken(b));
        types.push_back(1);
    }
    for (const char* s : {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "Ġt"}) {
        tokens.push_back(s);
        types.push_back(std::string(s) == "Ġt" ? 1 : 3);
    }
    w.setString("tokenizer.ggml.model", "gpt2");
    w.setString("tokenizer.ggml.pre", "gpt-2");
    w.setStrings("tokenizer.ggml.tokens", tokens);
    w.setInt32s("tokenizer.ggml.token_type", types);
    w.setStrings("tokenizer.ggml.merges", {"Ġ t"});
    w.setUInt32("tokenizer.ggml.bos_token_id", kTinyEndOfText);
    w.setUInt32("tokenizer.ggml.eos_token_id", kTinyEndOfText);
    w.setBool("tokenizer.ggml.add_bos_token", false);
}

gguf::Writer tinyModelWriter(const TinyModelOptions& o) {
    std::string arch = o.arch == TinyArch::Llama ? "llama" : o.arch == TinyArch::Qwen2 ? "qwen2" : "qwen3";
    if (!o.archName.empty()) arch = o.archName;
    const std::string a = arch + ".";
    const int64_t embd = 64, heads = 4, kvHeads = 2, ff = 128;
    const int64_t headDim = o.arch == TinyArch::Qwen3 ? 32 : 16;
    gguf::Writer w;
    w.setString("general.architecture", arch);
    w.setString("general.name", "tiny-" + arch);
    w.setUInt32(a + "block_count", uint32_t(o.layers));
    w.setUInt32(a + "context_length", uint32_t(o.context));
    w.setUInt32(a + "embedding_length", uint32_t(embd));
    w.setUInt32(a + "feed_forward_length", uint32_t(ff));
    w.setUInt32(a + "attention.head_count", uint32_t(heads));
    w.setUInt32(a + "attention.head_count_kv", uint32_t(kvHeads));
    w.setFloat32(a + "attention.layer_norm_rms_epsilon", o.arch == TinyArch::Llama ? 1e-5f : 1e-6f);
    w.setFloat32(a + "rope.freq_base", o.arch == TinyArch::Llama ? 10000.f : 1000000.f);
    if (o.arch == TinyArch::Llama) w.setUInt32(a + "rope.dimension_count", uint32_t(headDim));
    if (o.arch == TinyArch::Qwen3) {
        w.setUInt32(a + "attention.key_length", uint32_t(headDim));
        w.setUInt32(a + "attention.value_length", uint32_t(headDim));
    }
    if (o.yarn) {
        w.setString(a + "rope.scaling.type", "yarn");
        w.setFloat32(a + "rope.scaling.factor", 4.f);
        w.setUInt32(a + "rope.scaling.original_context_length", 64);
    }
    addTinyVocabulary(w);

    Normal normal(o.seed);
    auto matrix = [&](const std::string& name, int64_t cols, int64_t rows, float stddev, TensorType type) {
        std::vector<float> v(size_t(cols * rows));
        for (auto& x : v) x = normal(stddev);
        auto bytes = encodeRows(type, v, cols);
        w.addTensor(name, type, {cols, rows},
                    [bytes](std::span<uint8_t> out) { std::memcpy(out.data(), bytes.data(), out.size()); });
    };
    auto vector = [&](const std::string& name, int64_t n, float mean, float stddev) {
        std::vector<float> v(static_cast<size_t>(n));
        for (auto& x : v) x = mean + normal(stddev);
        w.addTensor(name, TensorType::F32, {n}, {reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4});
    };
    const float s = 1.f / std::sqrt(float(embd));
    matrix("token_embd.weight", embd, kTinyVocab, 2.5f * s, o.type);
    vector("output_norm.weight", embd, 1.f, 0.1f);
    if (!o.tied) matrix("output.weight", embd, kTinyVocab, 2.5f * s, o.type);
    if (o.ropeFreqs) {
        std::vector<float> f = {1, 1, 1, 1.5f, 2.7f, 8, 8, 8};
        w.addTensor("rope_freqs.weight", TensorType::F32, {int64_t(f.size())},
                    {reinterpret_cast<const uint8_t*>(f.data()), f.size() * 4});
    }
    for (int64_t l = 0; l < o.layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        vector(b + "attn_norm.weight", embd, 1.f, 0.1f);
        matrix(b + "attn_q.weight", embd, heads * headDim, s, o.type);
        matrix(b + "attn_k.weight", embd, kvHeads * headDim, s, o.type);
        matrix(b + "attn_v.weight", embd, kvHeads * headDim, s, o.type);
        if (o.arch == TinyArch::Qwen2) {
            vector(b + "attn_q.bias", heads * headDim, 0.f, 0.02f);
            vector(b + "attn_k.bias", kvHeads * headDim, 0.f, 0.02f);
            vector(b + "attn_v.bias", kvHeads * headDim, 0.f, 0.02f);
        }
        if (o.arch == TinyArch::Qwen3) {
            vector(b + "attn_q_norm.weight", headDim, 1.f, 0.1f);
            vector(b + "attn_k_norm.weight", headDim, 1.f, 0.1f);
        }
        matrix(b + "attn_output.weight", heads * headDim, embd, 2.f / std::sqrt(float(heads * headDim)), o.type);
        vector(b + "ffn_norm.weight", embd, 1.f, 0.1f);
        matrix(b + "ffn_gate.weight", embd, ff, s, o.type);
        matrix(b + "ffn_up.weight", embd, ff, s, o.type);
        matrix(b + "ffn_down.weight", ff, embd, 2.f / std::sqrt(float(ff)), o.type);
    }
    return w;
}

std::string writeTinyModel(const std::string& path, const TinyModelOptions& options) {
    tinyModelWriter(options).write(path);
    return path;
}

}  // namespace cairn::test
