#include "synth_mamba.h"

#include "cairn/error.h"
#include "cairn/gguf.h"
#include "tensor/quant.h"

#include <cmath>
#include <cstring>
#include <string_view>

namespace cairn::cli {
namespace {

constexpr int64_t kNeoxTokens = 50277;  // real entries of the gpt-neox vocabulary Mamba uses
constexpr int64_t kMambaVocab = 50280;  // padded to a multiple of 8

// Fast deterministic uniform numbers (splitmix64), one stream per tensor.
class Uniform {
public:
    explicit Uniform(uint64_t seed) : s_(seed) {}
    float operator()(float lo, float hi) {
        uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        return lo + (hi - lo) * float(double(z >> 40) / double(1ull << 24));
    }

private:
    uint64_t s_;
};

void addVocabulary(gguf::Writer& w, const std::string& vocabPath) {
    const auto vocab = gguf::File::open(vocabPath);
    for (const auto& v : vocab.metadata()) {
        const std::string_view key = v.key();
        if (key.substr(0, 10) != "tokenizer." || key == "tokenizer.ggml.tokens" || key == "tokenizer.ggml.token_type" ||
            key == "tokenizer.ggml.scores")
            continue;
        w.copyValue(v);
    }
    auto tokens = vocab.get("tokenizer.ggml.tokens").strings();
    if (int64_t(tokens.size()) < kNeoxTokens)
        throw Error(vocabPath, "expected the gpt-neox vocabulary (at least 50277 tokens)");
    const auto types = vocab.find("tokenizer.ggml.token_type") ? vocab.get("tokenizer.ggml.token_type").numbers()
                                                               : std::vector<double>();
    std::vector<std::string> outTokens;
    std::vector<int32_t> outTypes;
    for (int64_t i = 0; i < kMambaVocab; ++i) {
        if (i < kNeoxTokens) {
            outTokens.emplace_back(tokens[size_t(i)]);
            outTypes.push_back(size_t(i) < types.size() ? int32_t(types[size_t(i)]) : 1);
        } else {
            outTokens.push_back("[PAD" + std::to_string(i) + "]");
            outTypes.push_back(5);  // unused
        }
    }
    w.setStrings("tokenizer.ggml.tokens", outTokens);
    w.setInt32s("tokenizer.ggml.token_type", outTypes);
    if (!vocab.find("tokenizer.ggml.pre")) w.setString("tokenizer.ggml.pre", "mpt");
}

}  // namespace

const std::vector<MambaPreset>& mambaPresets() {
    static const std::vector<MambaPreset> presets = {
        {"mamba-370m", 1024, 48, 2048, 16, 4, 64},
        {"mamba-130m", 768, 24, 1536, 16, 4, 48},
    };
    return presets;
}

const MambaPreset* findMambaPreset(const std::string& name) {
    for (const auto& p : mambaPresets())
        if (p.name == name) return &p;
    return nullptr;
}

void writeMambaModel(const MambaPreset& p, TensorType type, const std::string& vocabPath, const std::string& path,
                     uint64_t seed) {
    if (!traits(type).supported) throw Error("synth", "unsupported weight type " + std::string(tensorTypeName(type)));
    const std::string a = "mamba.";
    const int64_t e = p.embedding, di = p.inner, ds = p.state;
    gguf::Writer w;
    w.setString("general.architecture", "mamba");
    w.setString("general.name", "cairn-synth-" + p.name);
    w.setString("general.type", "model");
    w.setUInt32("general.quantization_version", 2);
    w.setUInt32(a + "context_length", 1u << 20);
    w.setUInt32(a + "embedding_length", uint32_t(e));
    w.setUInt32(a + "feed_forward_length", 0);
    w.setUInt32(a + "attention.head_count", 0);
    w.setUInt32(a + "block_count", uint32_t(p.layers));
    w.setUInt32(a + "ssm.conv_kernel", uint32_t(p.conv));
    w.setUInt32(a + "ssm.inner_size", uint32_t(di));
    w.setUInt32(a + "ssm.state_size", uint32_t(ds));
    w.setUInt32(a + "ssm.time_step_rank", uint32_t(p.dtRank));
    w.setBool(a + "ssm.dt_b_c_rms", false);
    w.setFloat32(a + "attention.layer_norm_rms_epsilon", 1e-5f);
    addVocabulary(w, vocabPath);

    uint64_t stream = seed * 1000003;
    // A tensor of rows × cols values from gen(uniform, row, col), encoded in
    // `t` at write time; rows == 0 makes a 1-D tensor of cols values.
    auto add = [&](const std::string& name, TensorType t, int64_t cols, int64_t rowsOr0, auto gen) {
        const uint64_t s = ++stream;
        const int64_t rows = rowsOr0 == 0 ? 1 : rowsOr0;
        std::vector<int64_t> ne = {cols};
        if (rowsOr0 != 0) ne.push_back(rows);
        w.addTensor(name, t, ne, [=](std::span<uint8_t> out) {
            Uniform u(s);
            std::vector<float> row(static_cast<size_t>(cols));
            const size_t rb = rowBytes(t, cols);
            for (int64_t r = 0; r < rows; ++r) {
                for (int64_t c = 0; c < cols; ++c) row[size_t(c)] = gen(u, r, c);
                uint8_t* dst = out.data() + size_t(r) * rb;
                if (t == TensorType::F32) std::memcpy(dst, row.data(), size_t(cols) * 4);
                else tensor::quantizeRow(t, row.data(), dst, cols);
            }
        });
    };
    // Uniform with the given standard deviation.
    auto uni = [](float sd) {
        return [sd](Uniform& u, int64_t, int64_t) { return u(-1.7320508f * sd, 1.7320508f * sd); };
    };
    auto near1 = [](Uniform& u, int64_t, int64_t) { return 1.f + u(-0.17f, 0.17f); };
    // Weights in `type` where rows fill whole blocks, else F16 (as llama-quantize falls back).
    auto matType = [&](int64_t cols) {
        if (cols % traits(type).blockSize == 0) return type;
        return type == TensorType::F32 ? TensorType::F32 : TensorType::F16;
    };

    add("token_embd.weight", matType(e), e, kMambaVocab, uni(2.5f / std::sqrt(float(e))));
    add("output_norm.weight", TensorType::F32, e, 0, near1);
    for (int64_t l = 0; l < p.layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        add(b + "attn_norm.weight", TensorType::F32, e, 0, near1);
        add(b + "ssm_in.weight", matType(e), e, 2 * di, uni(1.f / std::sqrt(float(e))));
        // ssm_conv1d is never quantized (llama-quantize leaves it F32).
        add(b + "ssm_conv1d.weight", TensorType::F32, p.conv, di, uni(0.2887f));
        add(b + "ssm_conv1d.bias", TensorType::F32, di, 0, uni(0.2887f));
        add(b + "ssm_x.weight", matType(di), di, p.dtRank + 2 * ds, uni(1.f / std::sqrt(float(di))));
        add(b + "ssm_dt.weight", matType(p.dtRank), p.dtRank, di, uni(1.f / std::sqrt(3.f * float(p.dtRank))));
        // dt bias: inverse softplus of dt, dt log-uniform in [1e-3, 1e-1].
        add(b + "ssm_dt.bias", TensorType::F32, di, 0, [](Uniform& u, int64_t, int64_t) {
            const float dt = std::exp(u(std::log(1e-3f), std::log(1e-1f)));
            return dt + std::log(-std::expm1(-dt));
        });
        // A = −exp(A_log) with A_log = log(1..d_state), the Mamba initialization.
        add(b + "ssm_a", TensorType::F32, ds, di, [](Uniform&, int64_t, int64_t n) { return -float(n + 1); });
        add(b + "ssm_d", TensorType::F32, di, 0, [](Uniform&, int64_t, int64_t) { return 1.f; });
        add(b + "ssm_out.weight", matType(di), di, e, uni(1.f / std::sqrt(float(di))));
    }
    w.write(path);
}

}  // namespace cairn::cli
