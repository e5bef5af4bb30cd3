// Loading the hybrid architectures (lfm2, granitehybrid, qwen35): inconsistent
// layer-kind metadata, missing tensors, zero heads and state sizes that
// disagree with the tensor shapes are refused at load, naming the key or the
// tensor. Each case is a copy of a shared fixture with one thing changed.
#include "cairn/error.h"
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
using cairn::test::copyOf;

namespace {

void setInt32s(gguf::Writer& w, const std::string& key, std::vector<int32_t> v) { w.setInt32s(key, v); }

}  // namespace

class TestHybridLoad : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    // Loading fixture `name` changed by `edit` (and without `drop`) must fail naming `needle`.
    void expectRefusal(const char* name, const std::set<std::string>& drop,
                       const std::function<void(gguf::Writer&)>& edit, const std::string& needle) {
        const std::string problem =
            test::refusalProblem(name, drop, edit, dir_.filePath("edited.gguf").toStdString(), needle);
        QVERIFY2(problem.empty(), problem.c_str());
    }

private slots:
    void unchangedCopiesLoad() {
        for (const char* name : {"lfm2-f16", "granitehybrid-q8_0", "qwen35-q8_0"}) {
            auto f = gguf::File::open(test::sharedPath(std::string("fixtures/") + name + ".gguf"));
            const std::string path = dir_.filePath("copy.gguf").toStdString();
            copyOf(f).write(path);
            auto m = Model::load(path);
            QVERIFY(m->info().recurrent);
            QVERIFY(!m->newMemory({})->canTruncate());
        }
    }

    // A Qwen3.5 file with a multi-token-prediction block (nextn_predict_layers) loads without running it:
    // same logits as without the block.
    void qwen35MtpLayersAreSkipped() {
        const std::string fixture = test::sharedPath("fixtures/qwen35-q8_0.gguf");
        auto f = gguf::File::open(fixture);
        auto w = copyOf(f);
        for (const auto& t : f.tensors()) {
            const std::string name(t.name);
            if (name.rfind("blk.7.", 0) != 0) continue;
            std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.nDims);
            w.addTensor("blk.8." + name.substr(6), t.type, ne, {t.data, t.nbytes});
        }
        w.setUInt32("qwen35.block_count", 9);
        w.setUInt32("qwen35.nextn_predict_layers", 1);
        const std::string path = dir_.filePath("mtp.gguf").toStdString();
        w.write(path);
        auto withMtp = Model::load(path);
        auto plain = Model::load(fixture);
        QCOMPARE(withMtp->info().layers, int64_t(8));
        const std::vector<int32_t> tokens{9707, 11, 1879, 0, 358, 1079};
        ExecContext ctx(2);
        std::vector<float> a(size_t(plain->info().vocabSize)), b(a.size());
        auto ma = plain->newMemory({16, KvType::F16});
        auto mb = withMtp->newMemory({16, KvType::F16});
        prefill(*plain, *ma, tokens, 4, false, a.data(), ctx);
        prefill(*withMtp, *mb, tokens, 4, false, b.data(), ctx);
        QVERIFY(a == b);
        expectRefusal(
            "qwen35-q8_0", {}, [](gguf::Writer& w) { w.setUInt32("qwen35.nextn_predict_layers", 8); },
            "qwen35.nextn_predict_layers 8 does not fit block_count 8");
    }

    void layerPatternLongerThanTheModel() {
        expectRefusal(
            "lfm2-f16", {},
            [](gguf::Writer& w) {
                setInt32s(w, "lfm2.attention.head_count_kv", {0, 0, 2, 0, 2, 0, 2});
            },
            "lfm2.attention.head_count_kv has 7 values for 6 layers");
        expectRefusal(
            "granitehybrid-f16", {},
            [](gguf::Writer& w) {
                setInt32s(w, "granitehybrid.attention.head_count_kv", {0, 0, 2});
            },
            "granitehybrid.attention.head_count_kv has 3 values for 6 layers");
        expectRefusal(
            "qwen35-q8_0", {}, [](gguf::Writer& w) { w.setUInt32("qwen35.full_attention_interval", 9); },
            "qwen35.full_attention_interval 9 does not fit 8 layers");
        expectRefusal(
            "lfm2-f16", {},
            [](gguf::Writer& w) {
                w.setStrings("lfm2.attention.head_count_kv", {"a", "b"});
            },
            "lfm2.attention.head_count_kv");
    }

    void attentionLayerWithoutItsTensors() {
        expectRefusal("lfm2-f16", {"blk.2.attn_q.weight"}, nullptr, "missing tensor blk.2.attn_q.weight");
        // Layer 0 marked attention: it has short-conv tensors only.
        expectRefusal(
            "lfm2-f16", {},
            [](gguf::Writer& w) {
                setInt32s(w, "lfm2.attention.head_count_kv", {2, 0, 2, 0, 2, 0});
            },
            "missing tensor blk.0.attn_q.weight");
        expectRefusal("granitehybrid-q8_0", {"blk.5.attn_v.weight"}, nullptr, "missing tensor blk.5.attn_v.weight");
        expectRefusal("qwen35-q8_0", {"blk.3.attn_k_norm.weight"}, nullptr, "missing tensor blk.3.attn_k_norm.weight");
    }

    void recurrentLayerWithoutItsTensors() {
        expectRefusal("lfm2-f16", {"blk.0.shortconv.conv.weight"}, nullptr,
                      "missing tensor blk.0.shortconv.conv.weight");
        expectRefusal("granitehybrid-f16", {"blk.1.ssm_in.weight"}, nullptr, "missing tensor blk.1.ssm_in.weight");
        // Layer 2 marked recurrent: it has attention tensors only.
        expectRefusal(
            "granitehybrid-f16", {},
            [](gguf::Writer& w) {
                setInt32s(w, "granitehybrid.attention.head_count_kv", {0, 0, 0, 0, 0, 2});
            },
            "missing tensor blk.2.ssm_in.weight");
        expectRefusal("qwen35-q8_0", {"blk.6.ssm_beta.weight"}, nullptr, "missing tensor blk.6.ssm_beta.weight");
    }

    void zeroHeads() {
        expectRefusal(
            "granitehybrid-f16", {}, [](gguf::Writer& w) { w.setUInt32("granitehybrid.attention.head_count", 0); },
            "granitehybrid.attention.head_count is 0 for attention layer 2");
        expectRefusal(
            "lfm2-f16", {}, [](gguf::Writer& w) { w.setUInt32("lfm2.attention.head_count", 0); },
            "lfm2.attention.head_count is 0 for attention layer 2");
        expectRefusal(
            "qwen35-q8_0", {}, [](gguf::Writer& w) { w.setUInt32("qwen35.attention.head_count_kv", 0); },
            "qwen35.attention.head_count");
        expectRefusal(
            "qwen35-q8_0", {}, [](gguf::Writer& w) { w.setUInt32("qwen35.ssm.group_count", 0); },
            "qwen35.ssm.state_size / group_count");
    }

    void stateSizesDisagreeingWithTensorShapes() {
        expectRefusal(
            "granitehybrid-f16", {}, [](gguf::Writer& w) { w.setUInt32("granitehybrid.ssm.state_size", 32); },
            "tensor blk.0.ssm_in.weight has shape");
        expectRefusal(
            "granitehybrid-f16", {}, [](gguf::Writer& w) { w.setUInt32("granitehybrid.ssm.conv_kernel", 3); },
            "tensor blk.0.ssm_conv1d.weight has shape");
        expectRefusal(
            "lfm2-f16", {}, [](gguf::Writer& w) { w.setUInt32("lfm2.shortconv.l_cache", 4); },
            "tensor blk.0.shortconv.conv.weight has shape");
        expectRefusal(
            "qwen35-q8_0", {}, [](gguf::Writer& w) { w.setUInt32("qwen35.ssm.state_size", 16); },
            "qwen35.ssm.state_size / group_count / time_step_rank / inner_size disagree");
        expectRefusal(
            "qwen35-q8_0", {},
            [](gguf::Writer& w) {
                w.setUInt32("qwen35.ssm.state_size", 16);
                w.setUInt32("qwen35.ssm.inner_size", 64);
            },
            "tensor blk.0.attn_qkv.weight has shape");
        expectRefusal(
            "qwen35-q8_0", {}, [](gguf::Writer& w) { w.setUInt32("qwen35.rope.dimension_count", 80); },
            "qwen35.rope.dimension_count 80 does not fit the head size");
    }
};

CAIRN_CONFORMANCE_MAIN(TestHybridLoad)
#include "test_hybrid_load.moc"
