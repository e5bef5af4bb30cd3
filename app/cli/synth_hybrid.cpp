#include "synth_hybrid.h"

#include "synth_common.h"

#include "cairn/error.h"
#include "cairn/gguf.h"
#include "tensor/quant.h"

#include <algorithm>
#include <cstring>
#include <span>

namespace cairn::cli {

const std::vector<HybridPreset>& hybridPresets() {
    static const std::vector<HybridPreset> presets = [] {
        std::vector<HybridPreset> p;
        // Granite 4.0-H 1B (GraniteMoeHybridForCausalLM, dense): hidden_size 1536, 40 layers with attention
        // at 5, 15, 25, 35, intermediate_size 4096, mamba_n_heads 48 × mamba_d_head 64 (expand 2),
        // mamba_d_state 128, mamba_n_groups 1, mamba_d_conv 4, attention_multiplier 0.0078125 (= 1/128:
        // head_dim 128, so 12 heads), embedding_multiplier 12, logits_scaling 6, no RoPE; from the config.json
        // at https://huggingface.co/bnbnoman01/test/blob/main/config.json (a copy of the published
        // ibm-granite/granite-4.0-h-1b config). residual_multiplier 0.22 and 4 KV heads as in the other
        // Granite 4.0 configs. Vocabulary: Granite's 100352 tokens are not in ../shared/vocab; llama-bpe
        // (128256) stands in.
        HybridPreset g{
            "granite-4.0-h-1b", "granitehybrid", "ggml-vocab-llama-bpe.gguf", 1536, 40, 12, 4, 128, 4096, 131072,
            {5, 15, 25, 35},    10000.0};
        g.ssmHeads = 48, g.ssmHeadDim = 64, g.ssmState = 128, g.ssmGroups = 1, g.ssmConv = 4;
        g.embeddingScale = 12, g.residualScale = 0.22f, g.attentionScale = 0.0078125f, g.logitScale = 6;
        p.push_back(g);
        // LFM2-1.2B (Lfm2ForCausalLM): hidden_size 2048, 16 layers, full_attn_idxs [2, 5, 8, 10, 12, 14],
        // 32 heads × 64, 8 KV heads, intermediate_size 8192 (block_ff_dim 12288 auto-adjusted), conv_L_cache 3,
        // rope_theta 1e6, max_position_embeddings 128000; from
        // https://huggingface.co/FastFlowLM/LFM2-1.2B-NPU2/blob/main/config.json (LiquidAI/LFM2-1.2B's
        // config). Vocabulary: LFM2's 65536 tokens are not in ../shared/vocab; gpt-neox (mpt) stands in.
        HybridPreset l{"lfm2-1.2b", "lfm2", "ggml-vocab-mpt.gguf", 2048,     16, 32, 8, 64,
                       8192,        128000, {2, 5, 8, 10, 12, 14}, 1000000.0};
        l.convCache = 3;
        p.push_back(l);
        // Qwen3.5-0.8B (text_config of Qwen3_5ForConditionalGeneration, no MTP layer): hidden_size 1024,
        // intermediate_size 3584, 24 layers, full_attention_interval 4, 8 heads × head_dim 256, 2 KV heads,
        // linear_num_key_heads 16, linear_num_value_heads 16, linear_key/value_head_dim 128,
        // linear_conv_kernel_dim 4, rms_norm_eps 1e-6, rope_theta 1e7, partial_rotary_factor 0.25 (64 dims),
        // mrope_section [11, 11, 10], vocab_size 248320, tied; Qwen/Qwen3.5-0.8B's config.json as quoted in
        // public test fixtures of Qwen3.5 loaders (e.g. a `kQwen35_0_8B_Config` string and an MLX config test,
        // which agree on every value). Vocabulary: the 248320-token one is not in ../shared/vocab; qwen2
        // (151936) stands in.
        HybridPreset q{"qwen3.5-0.8b", "qwen35", "ggml-vocab-qwen2.gguf", 1024, 24, 8, 2, 256, 3584, 262144, {},
                       10000000.0};
        q.interval = 4, q.keyHeads = 16, q.valueHeads = 16, q.linearHeadDim = 128, q.linearConv = 4, q.ropeDims = 64;
        p.push_back(q);
        return p;
    }();
    return presets;
}

const HybridPreset* findHybridPreset(const std::string& name) {
    for (const auto& p : hybridPresets())
        if (name == p.name) return &p;
    return nullptr;
}

void writeHybridModel(const HybridPreset& p, TensorType type, const std::string& vocabDir, const std::string& path,
                      uint64_t seed, ExecContext& ctx) {
    const bool granite = std::string(p.arch) == "granitehybrid", qwen35 = std::string(p.arch) == "qwen35";
    const std::string a = std::string(p.arch) + ".";
    const std::string vocabPath = vocabDir + "/" + p.vocabFile;
    gguf::Writer w;
    setCommonMetadata(w, {p.arch, p.name, p.layers, p.context, p.embedding, p.feedForward, p.heads}, type);
    std::vector<int32_t> kv(size_t(p.layers), 0);
    for (int l : p.attentionLayers) kv[size_t(l)] = int32_t(p.kvHeads);
    if (qwen35) {
        for (int64_t l = 0; l < p.layers; ++l)
            if ((l + 1) % p.interval == 0) kv[size_t(l)] = int32_t(p.kvHeads);
        w.setUInt32(a + "attention.head_count_kv", uint32_t(p.kvHeads));  // one value; the interval picks the layers
        w.setUInt32(a + "full_attention_interval", uint32_t(p.interval));
        w.setUInt32(a + "rope.dimension_count", uint32_t(p.ropeDims));
        w.setInt32s(a + "rope.dimension_sections", {11, 11, 10, 0});
        w.setUInt32(a + "ssm.conv_kernel", uint32_t(p.linearConv));
        w.setUInt32(a + "ssm.state_size", uint32_t(p.linearHeadDim));
        w.setUInt32(a + "ssm.group_count", uint32_t(p.keyHeads));
        w.setUInt32(a + "ssm.time_step_rank", uint32_t(p.valueHeads));
        w.setUInt32(a + "ssm.inner_size", uint32_t(p.valueHeads * p.linearHeadDim));
    } else {
        w.setInt32s(a + "attention.head_count_kv", kv);
    }
    w.setFloat32(a + "rope.freq_base", float(p.ropeBase));
    w.setFloat32(a + "attention.layer_norm_rms_epsilon", qwen35 ? 1e-6f : 1e-5f);
    if (qwen35 || p.headDim != p.embedding / p.heads) {
        w.setUInt32(a + "attention.key_length", uint32_t(p.headDim));
        w.setUInt32(a + "attention.value_length", uint32_t(p.headDim));
    }
    const int64_t inner = p.ssmHeads * p.ssmHeadDim, convCh = inner + 2 * p.ssmGroups * p.ssmState;
    if (granite) {
        w.setBool(a + "rope.scaling.finetuned", false);  // Granite 4.0-H: no position embedding
        w.setFloat32(a + "attention.scale", p.attentionScale);
        w.setFloat32(a + "embedding_scale", p.embeddingScale);
        w.setFloat32(a + "residual_scale", p.residualScale);
        w.setFloat32(a + "logit_scale", p.logitScale);
        w.setUInt32(a + "ssm.conv_kernel", uint32_t(p.ssmConv));
        w.setUInt32(a + "ssm.state_size", uint32_t(p.ssmState));
        w.setUInt32(a + "ssm.group_count", uint32_t(p.ssmGroups));
        w.setUInt32(a + "ssm.inner_size", uint32_t(inner));
        w.setUInt32(a + "ssm.time_step_rank", uint32_t(p.ssmHeads));
    } else if (!qwen35) {
        w.setUInt32(a + "shortconv.l_cache", uint32_t(p.convCache));
    }
    copyVocabulary(w, vocabPath);
    const auto vocab = gguf::File::open(vocabPath);
    const int64_t nVocab = int64_t(vocab.get("tokenizer.ggml.tokens").size());
    w.setUInt32(a + "vocab_size", uint32_t(nVocab));

    uint64_t tensorSeed = seed * 1000003;
    auto matrix = [&](const std::string& name, int64_t cols, int64_t rows, float stddev) {
        const TensorType t = fitType(type, cols);
        addRandomMatrix(w, ctx, name, t, cols, rows, stddev, ++tensorSeed * 0x100000001B3ull);
    };
    // An F32 tensor of the given shape from fn(i) or N(mean, sd).
    auto f32 = [&](const std::string& name, std::vector<int64_t> ne, float mean, float sd) {
        int64_t n = 1;
        for (int64_t d : ne) n *= d;
        std::vector<float> v(static_cast<size_t>(n));
        Rng rng{++tensorSeed * 0x100000001B3ull};
        rng.normals(v.data(), n, sd);
        for (auto& x : v) x += mean;
        w.addTensor(name, TensorType::F32, ne,
                    std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4));
    };
    auto values = [&](const std::string& name, std::vector<int64_t> ne, const std::vector<float>& v) {
        w.addTensor(name, TensorType::F32, ne,
                    std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4));
    };

    const int64_t e = p.embedding, qd = p.heads * p.headDim, kvd = p.kvHeads * p.headDim, ff = p.feedForward;
    const float se = 1.0f / std::sqrt(float(e));
    matrix("token_embd.weight", e, nVocab, 2.5f * se);  // tied
    f32(p.convCache ? "token_embd_norm.weight" : "output_norm.weight", {e}, 1.0f, 0.1f);
    const int64_t lk = p.keyHeads * p.linearHeadDim, lv = p.valueHeads * p.linearHeadDim, lc = 2 * lk + lv;
    for (int64_t l = 0; l < p.layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        const bool attention = kv[size_t(l)] > 0;
        f32(b + "attn_norm.weight", {e}, 1.0f, 0.1f);
        if (attention) {
            matrix(b + "attn_q.weight", e, qwen35 ? 2 * qd : qd, se);  // qwen35: query and gate rows per head
            matrix(b + "attn_k.weight", e, kvd, se);
            matrix(b + "attn_v.weight", e, kvd, se);
            matrix(b + "attn_output.weight", qd, e, 1.0f / std::sqrt(float(qd)));
            if (!granite) {
                f32(b + "attn_q_norm.weight", {p.headDim}, 1.0f, 0.1f);
                f32(b + "attn_k_norm.weight", {p.headDim}, 1.0f, 0.1f);
            }
        } else if (granite) {
            matrix(b + "ssm_in.weight", e, 2 * inner + 2 * p.ssmGroups * p.ssmState + p.ssmHeads, se);
            f32(b + "ssm_conv1d.weight", {p.ssmConv, convCh}, 0.0f, 0.29f);
            f32(b + "ssm_conv1d.bias", {convCh}, 0.0f, 0.29f);
            std::vector<float> dtBias, A, D;
            for (int64_t h = 0; h < p.ssmHeads; ++h) {
                const float dt =
                    std::exp(std::log(1e-3f) + (std::log(1e-1f) - std::log(1e-3f)) * float(h) / float(p.ssmHeads));
                dtBias.push_back(dt + std::log(-std::expm1(-dt)));  // inverse softplus
                A.push_back(-float(h % 16 + 1));
                D.push_back(1.0f);
            }
            values(b + "ssm_dt.bias", {p.ssmHeads}, dtBias);
            values(b + "ssm_a", {1, p.ssmHeads}, A);
            values(b + "ssm_d", {1, p.ssmHeads}, D);
            f32(b + "ssm_norm.weight", {inner / p.ssmGroups, p.ssmGroups}, 1.0f, 0.1f);
            matrix(b + "ssm_out.weight", inner, e, 1.0f / std::sqrt(float(inner)));
        } else if (qwen35) {
            matrix(b + "attn_qkv.weight", e, lc, se);
            matrix(b + "attn_gate.weight", e, lv, se);
            matrix(b + "ssm_beta.weight", e, p.valueHeads, se);
            matrix(b + "ssm_alpha.weight", e, p.valueHeads, se);
            f32(b + "ssm_conv1d.weight", {p.linearConv, lc}, 0.0f, 0.29f);
            f32(b + "ssm_dt.bias", {p.valueHeads}, 1.0f, 0.3f);
            std::vector<float> A;
            for (int64_t h = 0; h < p.valueHeads; ++h) A.push_back(-0.003f - 0.1f * float(h) / float(p.valueHeads));
            values(b + "ssm_a", {p.valueHeads}, A);
            f32(b + "ssm_norm.weight", {p.linearHeadDim}, 1.0f, 0.1f);
            matrix(b + "ssm_out.weight", lv, e, 1.0f / std::sqrt(float(lv)));
        } else {
            matrix(b + "shortconv.in_proj.weight", e, 3 * e, se);
            f32(b + "shortconv.conv.weight", {p.convCache, e}, 0.0f, 0.33f);
            matrix(b + "shortconv.out_proj.weight", e, e, se);
        }
        f32(b + (qwen35 ? "post_attention_norm.weight" : "ffn_norm.weight"), {e}, 1.0f, 0.1f);
        matrix(b + "ffn_gate.weight", e, ff, se);
        matrix(b + "ffn_up.weight", e, ff, se);
        matrix(b + "ffn_down.weight", ff, e, 1.0f / std::sqrt(float(ff)));
    }
    w.write(path);
}

}  // namespace cairn::cli
