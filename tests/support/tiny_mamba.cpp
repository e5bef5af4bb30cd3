#include "tiny_mamba.h"

#include "tensor/quant.h"
#include "tiny_models.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace cairn::test {
namespace {

std::vector<uint8_t> encodeRows(TensorType type, const std::vector<float>& v, int64_t cols) {
    const int64_t rows = int64_t(v.size()) / cols;
    const size_t rb = rowBytes(type, cols);
    std::vector<uint8_t> out(rb * size_t(rows));
    for (int64_t r = 0; r < rows; ++r) {
        const float* src = v.data() + r * cols;
        uint8_t* dst = out.data() + size_t(r) * rb;
        if (type == TensorType::F32) std::memcpy(dst, src, size_t(cols) * 4);
        else tensor::quantizeRow(type, src, dst, cols);
    }
    return out;
}

}  // namespace

gguf::Writer tinyMamba2Writer(const TinyMambaOptions& o);

gguf::Writer tinyMambaWriter(const TinyMambaOptions& o) {
    if (o.mamba2) return tinyMamba2Writer(o);
    const std::string a = "mamba.";
    const int64_t e = o.embedding, di = o.inner, ds = o.state;
    gguf::Writer w;
    w.setString("general.architecture", "mamba");
    w.setString("general.name", "tiny-mamba");
    w.setUInt32(a + "block_count", uint32_t(o.layers));
    w.setUInt32(a + "context_length", 1024);
    w.setUInt32(a + "embedding_length", uint32_t(e));
    w.setUInt32(a + "feed_forward_length", 0);
    w.setUInt32(a + "attention.head_count", 0);
    w.setUInt32(a + "ssm.conv_kernel", uint32_t(o.conv));
    w.setUInt32(a + "ssm.inner_size", uint32_t(di));
    w.setUInt32(a + "ssm.state_size", uint32_t(ds));
    w.setUInt32(a + "ssm.time_step_rank", uint32_t(o.dtRank));
    w.setBool(a + "ssm.dt_b_c_rms", o.dtBcRms);
    w.setFloat32(a + "attention.layer_norm_rms_epsilon", 1e-5f);
    addTinyVocabulary(w);

    std::mt19937 rng(o.seed);
    auto normal = [&](float sd) { return std::normal_distribution<float>(0.f, sd)(rng); };
    auto uniform = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); };
    auto add = [&](const std::string& name, TensorType type, std::vector<int64_t> ne, const std::vector<float>& v) {
        auto bytes = encodeRows(type, v, ne[0]);
        w.addTensor(name, type, std::move(ne),
                    [bytes](std::span<uint8_t> out) { std::memcpy(out.data(), bytes.data(), out.size()); });
    };
    auto gen = [](int64_t n, auto f) {
        std::vector<float> v(static_cast<size_t>(n));
        for (auto& x : v) x = f();
        return v;
    };
    // Block-quantized types need whole blocks per row; small rows stay F32.
    auto typeFor = [&](int64_t cols) { return cols % traits(o.type).blockSize == 0 ? o.type : TensorType::F32; };

    add("token_embd.weight", typeFor(e), {e, kTinyVocab},
        gen(e * kTinyVocab, [&] { return normal(2.5f / std::sqrt(float(e))); }));
    add("output_norm.weight", TensorType::F32, {e}, gen(e, [&] { return 1.f + normal(0.1f); }));
    if (!o.tied) add("output.weight", typeFor(e), {e, kTinyVocab}, gen(e * kTinyVocab, [&] { return normal(0.3f); }));
    for (int64_t l = 0; l < o.layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        add(b + "attn_norm.weight", TensorType::F32, {e}, gen(e, [&] { return 1.f + normal(0.1f); }));
        add(b + "ssm_in.weight", typeFor(e), {e, 2 * di},
            gen(e * 2 * di, [&] { return normal(1.f / std::sqrt(float(e))); }));
        add(b + "ssm_conv1d.weight", TensorType::F32, {o.conv, di},
            gen(o.conv * di, [&] { return uniform(-0.5f, 0.5f); }));
        add(b + "ssm_conv1d.bias", TensorType::F32, {di}, gen(di, [&] { return uniform(-0.5f, 0.5f); }));
        add(b + "ssm_x.weight", typeFor(di), {di, o.dtRank + 2 * ds},
            gen(di * (o.dtRank + 2 * ds), [&] { return normal(1.f / std::sqrt(float(di))); }));
        add(b + "ssm_dt.weight", typeFor(o.dtRank), {o.dtRank, di},
            gen(o.dtRank * di, [&] { return uniform(-0.5f, 0.5f); }));
        // dt bias: inverse softplus of dt, dt log-uniform in [1e-3, 1e-1] (as Mamba initializes it).
        add(b + "ssm_dt.bias", TensorType::F32, {di}, gen(di, [&] {
                const float dt = std::exp(uniform(std::log(1e-3f), std::log(1e-1f)));
                return dt + std::log(-std::expm1(-dt));
            }));
        std::vector<float> A(size_t(ds * di));
        for (int64_t c = 0; c < di; ++c)
            for (int64_t n = 0; n < ds; ++n) A[size_t(c * ds + n)] = -float(n + 1) * (1.f + 0.1f * normal(1.f));
        add(b + "ssm_a", TensorType::F32, {ds, di}, A);
        add(b + "ssm_d", TensorType::F32, {di}, gen(di, [&] { return 1.f + normal(0.1f); }));
        add(b + "ssm_out.weight", typeFor(di), {di, e},
            gen(di * e, [&] { return normal(4.f / std::sqrt(float(di))); }));
    }
    return w;
}

gguf::Writer tinyMamba2Writer(const TinyMambaOptions& o) {
    const std::string a = "mamba2.";
    const int64_t e = o.embedding, di = o.inner, ds = o.state, nh = o.heads, ng = o.groups;
    const int64_t cc = di + 2 * ng * ds, np = 2 * di + 2 * ng * ds + nh;
    gguf::Writer w;
    w.setString("general.architecture", "mamba2");
    w.setString("general.name", "tiny-mamba2");
    w.setUInt32(a + "block_count", uint32_t(o.layers));
    w.setUInt32(a + "context_length", 1024);
    w.setUInt32(a + "embedding_length", uint32_t(e));
    w.setUInt32(a + "feed_forward_length", 0);
    w.setUInt32(a + "attention.head_count", 0);
    w.setUInt32(a + "ssm.conv_kernel", uint32_t(o.conv));
    w.setUInt32(a + "ssm.inner_size", uint32_t(di));
    w.setUInt32(a + "ssm.state_size", uint32_t(ds));
    w.setUInt32(a + "ssm.time_step_rank", uint32_t(nh));
    w.setUInt32(a + "ssm.group_count", uint32_t(ng));
    w.setFloat32(a + "attention.layer_norm_rms_epsilon", 1e-5f);
    addTinyVocabulary(w);

    std::mt19937 rng(o.seed);
    auto normal = [&](float sd) { return std::normal_distribution<float>(0.f, sd)(rng); };
    auto uniform = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); };
    auto add = [&](const std::string& name, TensorType type, std::vector<int64_t> ne, const std::vector<float>& v) {
        auto bytes = encodeRows(type, v, ne[0]);
        w.addTensor(name, type, std::move(ne),
                    [bytes](std::span<uint8_t> out) { std::memcpy(out.data(), bytes.data(), out.size()); });
    };
    auto gen = [](int64_t n, auto f) {
        std::vector<float> v(static_cast<size_t>(n));
        for (auto& x : v) x = f();
        return v;
    };
    auto typeFor = [&](int64_t cols) { return cols % traits(o.type).blockSize == 0 ? o.type : TensorType::F32; };

    add("token_embd.weight", typeFor(e), {e, kTinyVocab},
        gen(e * kTinyVocab, [&] { return normal(2.5f / std::sqrt(float(e))); }));
    add("output_norm.weight", TensorType::F32, {e}, gen(e, [&] { return 1.f + normal(0.1f); }));
    for (int64_t l = 0; l < o.layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        add(b + "attn_norm.weight", TensorType::F32, {e}, gen(e, [&] { return 1.f + normal(0.1f); }));
        add(b + "ssm_in.weight", typeFor(e), {e, np}, gen(e * np, [&] { return normal(1.f / std::sqrt(float(e))); }));
        add(b + "ssm_conv1d.weight", TensorType::F32, {o.conv, cc},
            gen(o.conv * cc, [&] { return uniform(-0.5f, 0.5f); }));
        add(b + "ssm_conv1d.bias", TensorType::F32, {cc}, gen(cc, [&] { return uniform(-0.5f, 0.5f); }));
        add(b + "ssm_dt.bias", TensorType::F32, {nh}, gen(nh, [&] {
                const float dt = std::exp(uniform(std::log(1e-3f), std::log(1e-1f)));
                return dt + std::log(-std::expm1(-dt));
            }));
        add(b + "ssm_a", TensorType::F32, {1, nh}, gen(nh, [&] { return -uniform(1.f, 16.f); }));
        add(b + "ssm_d", TensorType::F32, {1, nh}, gen(nh, [&] { return 1.f + normal(0.1f); }));
        add(b + "ssm_norm.weight", TensorType::F32, {di / ng, ng}, gen(di, [&] { return 1.f + normal(0.1f); }));
        add(b + "ssm_out.weight", typeFor(di), {di, e},
            gen(di * e, [&] { return normal(2.f / std::sqrt(float(di))); }));
    }
    return w;
}

std::string writeTinyMamba(const std::string& path, const TinyMambaOptions& options) {
    tinyMambaWriter(options).write(path);
    return path;
}

}  // namespace cairn::test
