// Loading gemma3, phi3 and smollm3: inconsistent metadata is refused at load,
// naming the key or tensor (sliding window 0 or missing, a layer pattern of
// another length than the model, LongRoPE with one factor tensor or without
// its original context, fused weights of the wrong width), and the metadata
// that picks each feature does what llama.cpp makes of it: the layer pattern
// (period 6 by default, per-layer flags), LongRoPE's long / short factors by
// the context size padded to 256, smollm3's NoPE layer. Each case is a copy of
// a shared fixture with one thing changed.
#include "cairn/exec.h"
#include "cairn/gguf.h"
#include "cairn/model.h"
#include "fixture_copy.h"
#include "shared_data.h"

#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <set>

using namespace cairn;

namespace {

const std::vector<int32_t> kTokens{1, 450, 7483, 310, 3444, 338, 3681, 29892, 322, 278, 7483, 310, 12730, 338};

// Logits of every position of kTokens in a memory of `context` positions.
std::vector<float> logitsOf(const Model& m, int64_t context = 64, std::span<const int32_t> tokens = kTokens) {
    ExecContext ctx(2);
    auto mem = m.newMemory({context, KvType::F32});
    std::vector<float> out(tokens.size() * size_t(m.info().vocabSize));
    prefill(m, *mem, tokens, 5, true, out.data(), ctx);
    return out;
}

}  // namespace

class TestWindowRopeLoad : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    void expectRefusal(const char* name, const std::set<std::string>& drop,
                       const std::function<void(gguf::Writer&)>& edit, const std::string& needle) {
        const std::string problem =
            test::refusalProblem(name, drop, edit, dir_.filePath("edited.gguf").toStdString(), needle);
        QVERIFY2(problem.empty(), problem.c_str());
    }

    std::unique_ptr<Model> loadCopy(const char* name, const std::function<void(gguf::Writer&)>& edit,
                                    const char* file = "copy.gguf") {
        auto f = gguf::File::open(test::sharedPath(std::string("fixtures/") + name + ".gguf"));
        auto w = test::copyOf(f);
        if (edit) edit(w);
        const std::string path = dir_.filePath(file).toStdString();
        w.write(path);
        return Model::load(path);
    }

private slots:
    void slidingWindowMetadata() {
        expectRefusal(
            "gemma3-f16", {}, [](gguf::Writer& w) { w.setUInt32("gemma3.attention.sliding_window", 0); },
            "gemma3.attention.sliding_window is 0");
        expectRefusal(
            "gemma3-f16", {}, [](gguf::Writer& w) { w.remove("gemma3.attention.sliding_window"); },
            "missing metadata key gemma3.attention.sliding_window");
        expectRefusal(
            "gemma3-q8_0", {},
            [](gguf::Writer& w) {
                w.setInt32s("gemma3.attention.sliding_window_pattern", {1, 1, 1, 1, 1, 0, 1});
            },
            "gemma3.attention.sliding_window_pattern has 7 values for 6 layers");
        expectRefusal(
            "gemma3-f16", {},
            [](gguf::Writer& w) {
                w.setStrings("gemma3.attention.sliding_window_pattern", {"local", "global"});
            },
            "gemma3.attention.sliding_window_pattern");
        expectRefusal("gemma3-f16", {"blk.3.post_ffw_norm.weight"}, nullptr,
                      "missing tensor blk.3.post_ffw_norm.weight");
        expectRefusal(
            "gemma3-f16", {}, [](gguf::Writer& w) { w.setFloat32("gemma3.final_logit_softcapping", 0.0f); },
            "gemma3.final_logit_softcapping");
    }

    // No key = period 6 (layers 0-4 local, 5 global) = the same pattern as flags; period 0 = all local.
    void layerPattern() {
        auto plain = Model::load(test::sharedPath("fixtures/gemma3-f16.gguf"));
        QVERIFY(plain->newMemory({})->canTruncate());
        std::vector<int32_t> tokens;
        for (int i = 0; i < 48; ++i) tokens.push_back(int32_t(300 + 37 * i));  // past the window of 32
        const auto reference = logitsOf(*plain, 64, tokens);
        auto flags = loadCopy(
            "gemma3-f16",
            [](gguf::Writer& w) {
                w.setInt32s("gemma3.attention.sliding_window_pattern", {1, 1, 1, 1, 1, 0});
            },
            "flags.gguf");
        QVERIFY(logitsOf(*flags, 64, tokens) == reference);
        auto period = loadCopy(
            "gemma3-f16", [](gguf::Writer& w) { w.setUInt32("gemma3.attention.sliding_window_pattern", 6); },
            "period.gguf");
        QVERIFY(logitsOf(*period, 64, tokens) == reference);
        auto allLocal = loadCopy(
            "gemma3-f16", [](gguf::Writer& w) { w.setUInt32("gemma3.attention.sliding_window_pattern", 0); },
            "local.gguf");
        QVERIFY(logitsOf(*allLocal, 64, tokens) != reference);
        // A window as long as the sequence: no position ever leaves it, so the window changes something.
        auto wide = loadCopy(
            "gemma3-f16", [](gguf::Writer& w) { w.setUInt32("gemma3.attention.sliding_window", 512); }, "wide.gguf");
        const auto wideLogits = logitsOf(*wide, 64, tokens);
        const size_t V = size_t(plain->info().vocabSize);
        QVERIFY(std::equal(reference.begin(), reference.begin() + std::ptrdiff_t(32 * V), wideLogits.begin()));
        QVERIFY(!std::equal(reference.begin() + std::ptrdiff_t(32 * V), reference.end(),
                            wideLogits.begin() + std::ptrdiff_t(32 * V)));
    }

    void longRopeMetadata() {
        expectRefusal("phi3-q8_0", {"rope_factors_short.weight"}, nullptr, "missing tensor rope_factors_short.weight");
        expectRefusal("phi3-q8_0", {"rope_factors_long.weight"}, nullptr, "missing tensor rope_factors_long.weight");
        expectRefusal(
            "phi3-q8_0", {}, [](gguf::Writer& w) { w.remove("phi3.rope.scaling.original_context_length"); },
            "missing metadata key phi3.rope.scaling.original_context_length");
        expectRefusal(
            "phi3-q8_0", {}, [](gguf::Writer& w) { w.setUInt32("phi3.rope.dimension_count", 16); },
            "tensor rope_factors_short.weight");
        expectRefusal(
            "phi3-q8_0", {}, [](gguf::Writer& w) { w.setFloat32("phi3.rope.scaling.attn_factor", -1.0f); },
            "phi3.rope.scaling.attn_factor");
    }

    void fusedWeightsOfTheWrongWidth() {
        expectRefusal(
            "phi3-q8_0", {}, [](gguf::Writer& w) { w.setUInt32("phi3.attention.head_count_kv", 1); },
            "tensor blk.0.attn_qkv.weight has shape [128, 256], expected [128, 192]");
        expectRefusal(
            "phi3-q8_0", {}, [](gguf::Writer& w) { w.setUInt32("phi3.feed_forward_length", 512); },
            "tensor blk.0.ffn_up.weight has shape [128, 512], expected [128, 1024]");
        expectRefusal("phi3-q8_0", {"blk.1.attn_qkv.weight"}, nullptr, "missing tensor blk.1.attn_qkv.weight");
    }

    // llama.cpp: the long factors when n_ctx, padded to a multiple of 256, exceeds the original 256.
    void longRopeFactorsByContext() {
        auto m = Model::load(test::sharedPath("fixtures/phi3-q8_0.gguf"));
        const auto at512 = logitsOf(*m, 512), at300 = logitsOf(*m, 300), at256 = logitsOf(*m, 256),
                   at64 = logitsOf(*m, 64);
        QVERIFY(at300 == at512);  // padded to 512: long
        QVERIFY(at64 == at256);  // padded to 256: short
        QVERIFY(at256 != at512);
    }

    // smollm3 is llama plus NoPE in layer 3: read as llama, the same file gives other logits.
    void smollm3NoPeLayer() {
        auto smol = Model::load(test::sharedPath("fixtures/smollm3-q8_0.gguf"));
        auto asLlama = loadCopy("smollm3-q8_0", [](gguf::Writer& w) {
            w.setString("general.architecture", "llama");
            auto f = gguf::File::open(test::sharedPath("fixtures/smollm3-q8_0.gguf"));
            for (const auto& v : f.metadata())
                if (v.key().rfind("smollm3.", 0) == 0) w.copyValue("llama." + std::string(v.key().substr(8)), v);
        });
        QCOMPARE(asLlama->info().architecture, std::string("llama"));
        QVERIFY(logitsOf(*smol) != logitsOf(*asLlama));
    }
};

CAIRN_CONFORMANCE_MAIN(TestWindowRopeLoad)
#include "test_window_rope_load.moc"
