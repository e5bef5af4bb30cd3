// Mamba-2 has no llama.cpp fixture here: check our forward pass on a tiny F32
// model against a direct double-precision transcription of llama.cpp's
// mamba2 layer (build_mamba2_layer + ggml_ssm_scan), token by token.
#include "cairn/exec.h"
#include "cairn/gguf.h"
#include "cairn/model.h"
#include "tiny_mamba.h"
#include "tiny_models.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <vector>

using namespace cairn;

namespace {

std::vector<double> tensorValues(const gguf::File& f, const std::string& name) {
    const auto& t = f.tensor(name);
    const float* p = reinterpret_cast<const float*>(t.data);
    return std::vector<double>(p, p + t.elements());
}

void rmsNorm(std::vector<double>& v, size_t off, size_t n, const std::vector<double>& w, size_t woff, double eps) {
    double ss = 0;
    for (size_t i = 0; i < n; ++i) ss += v[off + i] * v[off + i];
    const double s = 1.0 / std::sqrt(ss / double(n) + eps);
    for (size_t i = 0; i < n; ++i) v[off + i] = v[off + i] * s * w[woff + i];
}

std::vector<double> matVec(const std::vector<double>& W, size_t rows, size_t cols, const std::vector<double>& x) {
    std::vector<double> y(rows, 0.0);
    for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < cols; ++c) y[r] += W[r * cols + c] * x[c];
    return y;
}

double silu(double x) { return x / (1 + std::exp(-x)); }
double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }

}  // namespace

class TestMamba2Reference : public QObject {
    Q_OBJECT
private slots:
    void matchesDirectTranscription() {
        QTemporaryDir dir;
        test::TinyMambaOptions o;
        o.mamba2 = true;
        o.type = TensorType::F32;
        o.inner = 128;
        const std::string path = dir.filePath("m2.gguf").toStdString();
        test::writeTinyMamba(path, o);
        auto model = Model::load(path);
        const auto f = gguf::File::open(path);

        const size_t e = size_t(o.embedding), di = size_t(o.inner), ds = size_t(o.state), nh = size_t(o.heads),
                     ng = size_t(o.groups), K = size_t(o.conv), hd = di / nh, cpg = di / ng;
        const size_t cc = di + 2 * ng * ds, np = 2 * di + 2 * ng * ds + nh, V = size_t(test::kTinyVocab);
        const double eps = 1e-5;
        const auto embd = tensorValues(f, "token_embd.weight");
        const auto outNorm = tensorValues(f, "output_norm.weight");
        struct Layer {
            std::vector<double> norm, in, convW, convB, dtB, A, D, gnorm, out, hist, s;
        };
        std::vector<Layer> layers(size_t(o.layers));
        for (size_t l = 0; l < layers.size(); ++l) {
            const std::string b = "blk." + std::to_string(l) + ".";
            auto& L = layers[l];
            L.norm = tensorValues(f, b + "attn_norm.weight");
            L.in = tensorValues(f, b + "ssm_in.weight");
            L.convW = tensorValues(f, b + "ssm_conv1d.weight");
            L.convB = tensorValues(f, b + "ssm_conv1d.bias");
            L.dtB = tensorValues(f, b + "ssm_dt.bias");
            L.A = tensorValues(f, b + "ssm_a");
            L.D = tensorValues(f, b + "ssm_d");
            L.gnorm = tensorValues(f, b + "ssm_norm.weight");
            L.out = tensorValues(f, b + "ssm_out.weight");
            L.hist.assign(cc * (K - 1), 0.0);  // per channel, oldest first
            L.s.assign(di * ds, 0.0);
        }

        const std::vector<int32_t> tokens = {5, 200, 17, 256, 99, 42, 3, 180};
        ExecContext ctx(2);
        auto mem = model->newMemory({});
        std::vector<float> ours(tokens.size() * V);
        prefill(*model, *mem, tokens, 3, true, ours.data(), ctx);

        double worst = 0;
        for (size_t t = 0; t < tokens.size(); ++t) {
            std::vector<double> x(embd.begin() + long(size_t(tokens[t]) * e),
                                  embd.begin() + long(size_t(tokens[t] + 1) * e));
            for (auto& L : layers) {
                std::vector<double> xn = x;
                rmsNorm(xn, 0, e, L.norm, 0, eps);
                const auto proj = matVec(L.in, np, e, xn);
                // conv over xBC, taps oldest first
                std::vector<double> xc(cc);
                for (size_t c = 0; c < cc; ++c) {
                    double acc = L.convB[c];
                    for (size_t k = 0; k + 1 < K; ++k) acc += L.convW[c * K + k] * L.hist[c * (K - 1) + k];
                    acc += L.convW[c * K + K - 1] * proj[di + c];
                    for (size_t k = 0; k + 2 < K; ++k) L.hist[c * (K - 1) + k] = L.hist[c * (K - 1) + k + 1];
                    L.hist[c * (K - 1) + K - 2] = proj[di + c];
                    xc[c] = silu(acc);
                }
                std::vector<double> y(di);
                for (size_t h = 0; h < nh; ++h) {
                    const size_t g = h / (nh / ng);
                    const double delta = softplus(proj[di + cc + h] + L.dtB[h]);
                    const double dA = std::exp(delta * L.A[h]);
                    for (size_t p = 0; p < hd; ++p) {
                        const size_t c = h * hd + p;
                        double sum = 0;
                        for (size_t n = 0; n < ds; ++n) {
                            double& s = L.s[c * ds + n];
                            s = s * dA + xc[di + g * ds + n] * xc[c] * delta;
                            sum += s * xc[di + ng * ds + g * ds + n];
                        }
                        y[c] = (sum + L.D[h] * xc[c]) * silu(proj[c]);
                    }
                }
                for (size_t g = 0; g < ng; ++g) rmsNorm(y, g * cpg, cpg, L.gnorm, g * cpg, eps);
                const auto out = matVec(L.out, e, di, y);
                for (size_t i = 0; i < e; ++i) x[i] += out[i];
            }
            rmsNorm(x, 0, e, outNorm, 0, eps);
            const auto logits = matVec(embd, V, e, x);
            for (size_t v = 0; v < V; ++v) {
                const double d = std::abs(logits[v] - double(ours[t * V + v]));
                worst = std::max(worst, d);
                QVERIFY2(d < 2e-3 * (1 + std::abs(logits[v])),
                         qPrintable(
                             QString("token %1 logit %2: %3 vs %4").arg(t).arg(v).arg(ours[t * V + v]).arg(logits[v])));
            }
        }
        qInfo("max |logit diff| against the double-precision transcription: %g", worst);
    }
};

QTEST_APPLESS_MAIN(TestMamba2Reference)
#include "test_mamba2_reference.moc"
