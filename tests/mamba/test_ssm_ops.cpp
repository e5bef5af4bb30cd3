// The conv1d and selective scan kernels against a plain double-precision
// transcription of the Mamba equations, and their state carry across chunks.
#include "cairn/exec.h"
#include "model/ssm_ops.h"
#include "model/vector_math.h"

#include <QTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace cairn;
using namespace cairn::model;

namespace {

std::vector<float> randomVec(size_t n, std::mt19937& rng, float lo, float hi) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

double siluD(double x) { return x / (1.0 + std::exp(-x)); }
double softplusD(double v) { return v > 20.0 ? v : std::log1p(std::exp(v)); }

}  // namespace

class TestSsmOps : public QObject {
    Q_OBJECT
private slots:
    // The sign-bit vmin/vmax/select give exactly std::min/std::max's bits
    // (a < b ? a : b) on every pair of these values but (−0, +0): negative,
    // positive, subnormal, huge, infinite, equal.
    void vectorMinMaxMatchScalar() {
        using namespace vec;
        const float inf = std::numeric_limits<float>::infinity(), tiny = std::numeric_limits<float>::denorm_min();
        const std::vector<float> vals = {-inf, -3.4e38f, -87.3f, -1.f, -1e-30f, -tiny, 0.f, tiny, 2 * tiny,
                                         1e-38f, 0.7071067f, 0.70710677f, 1.f, 20.f, 88.7f, 3.4e38f, inf};
        for (float a : vals) {
            const vf va = splat(a);
            vf vb{};
            for (int shift = 0; shift < int(vals.size()); shift += int(kLanes) - 1) {
                for (int64_t i = 0; i < kLanes; ++i) vb[i] = vals[size_t(i + shift) % vals.size()];
                const vf mn = vmin(va, vb), mx = vmax(va, vb);
                for (int64_t i = 0; i < kLanes; ++i) {
                    const float b = vb[i], wantMin = a < b ? a : b, wantMax = a > b ? a : b;
                    QVERIFY2(std::memcmp(&mn[i], &wantMin, 4) == 0 && std::memcmp(&mx[i], &wantMax, 4) == 0,
                             qPrintable(QString("%1 %2").arg(double(a)).arg(double(b))));
                }
            }
        }
    }

    // vexpEach taken a step at a time across eight vectors gives each the
    // bits of vexp (one vector), including the clamped ends and infinities.
    void groupedExpGivesTheBitsOfExp() {
        using namespace vec;
        std::mt19937 rng(3);
        std::uniform_real_distribution<float> d(-100.f, 100.f);
        for (int rep = 0; rep < 64; ++rep) {
            vf x[8], want[8];
            for (int j = 0; j < 8; ++j) {
                for (int64_t i = 0; i < kLanes; ++i) x[j][i] = d(rng) / float(1 + (i % 4) * 10);
                want[j] = vexp(x[j]);
            }
            x[0][0] = std::numeric_limits<float>::infinity();
            x[0][1] = -std::numeric_limits<float>::infinity();
            want[0] = vexp(x[0]);
            vexpEach(x);
            QVERIFY(std::memcmp(x, want, sizeof x) == 0);
        }
    }

    void elementFunctionsAreAccurate() {
        for (double x = -80; x <= 80; x += 0.37) {
            const double e = std::exp(double(float(x)));
            QVERIFY2(std::abs(ssm::expApprox(float(x)) - e) <= 4e-7 * e, qPrintable(QString::number(x)));
        }
        for (double x = -30; x <= 30; x += 0.173) {
            const double xf = double(float(x));
            QVERIFY(std::abs(ssm::siluApprox(float(x)) - siluD(xf)) <= 1e-6 * (1 + std::abs(xf)));
            const double sp = softplusD(xf);
            QVERIFY2(std::abs(ssm::softplusApprox(float(x)) - sp) <= 1e-6 * sp + 1e-30, qPrintable(QString::number(x)));
        }
        QCOMPARE(ssm::softplusApprox(25.f), 25.f);
    }

    void convMatchesDefinitionAndCarriesState() {
        std::mt19937 rng(3);
        const int64_t T = 11, C = 37, K = 4, ld = 50;
        auto x = randomVec(size_t(T * ld), rng, -2, 2);
        auto w = randomVec(size_t(C * K), rng, -0.5f, 0.5f);
        auto b = randomVec(size_t(C), rng, -0.5f, 0.5f);
        auto state0 = randomVec(size_t(C * (K - 1)), rng, -1, 1);

        ExecContext ctx(2);
        const auto wp = ssm::packLanes(w.data(), C, K);
        auto packed = ssm::packLanes(state0.data(), C, K - 1);
        std::vector<float> out(size_t(T * C));
        ssm::conv1dSilu(x.data(), ld, T, C, K, wp.data(), b.data(), packed.data(), out.data(), C, ctx);
        const auto state = ssm::unpackLanes(packed.data(), C, K - 1);
        for (int64_t t = 0; t < T; ++t)
            for (int64_t c = 0; c < C; ++c) {
                double acc = b[size_t(c)];
                for (int64_t k = 0; k < K; ++k) {
                    const int64_t i = t - (K - 1) + k;  // oldest tap first
                    const double in = i < 0 ? state0[size_t(c * (K - 1) + (K - 1) + i)] : x[size_t(i * ld + c)];
                    acc += w[size_t(c * K + k)] * in;
                }
                QVERIFY(std::abs(out[size_t(t * C + c)] - siluD(acc)) < 1e-5);
            }
        for (int64_t c = 0; c < C; ++c)
            for (int64_t r = 0; r < K - 1; ++r)
                QCOMPARE(state[size_t(c * (K - 1) + r)], x[size_t((T - (K - 1) + r) * ld + c)]);

        // Two tokens only: the new state keeps one old input.
        auto packed2 = ssm::packLanes(state0.data(), C, K - 1);
        std::vector<float> out2(size_t(2 * C));
        ssm::conv1dSilu(x.data(), ld, 2, C, K, wp.data(), b.data(), packed2.data(), out2.data(), C, ctx);
        const auto st2 = ssm::unpackLanes(packed2.data(), C, K - 1);
        for (int64_t c = 0; c < C; ++c) {
            QCOMPARE(st2[size_t(c * 3 + 0)], state0[size_t(c * 3 + 2)]);
            QCOMPARE(st2[size_t(c * 3 + 1)], x[size_t(c)]);
            QCOMPARE(st2[size_t(c * 3 + 2)], x[size_t(ld + c)]);
        }
    }

    // A chunk of T tokens and T chunks of one (decode has its own code path)
    // give the same bits, outputs and carried state, with and without bias
    // and activation, for kernel widths 1 to 5, on 1 to 3 threads.
    void convChunksGiveTheSameBits() {
        std::mt19937 rng(5);
        const int64_t T = 9, C = 37, ld = 41;
        const auto x = randomVec(size_t(T * ld), rng, -2, 2);
        const auto b = randomVec(size_t(C), rng, -0.5f, 0.5f);
        for (int64_t K : {1, 2, 4, 5})
            for (bool silu : {true, false}) {
                const auto w = ssm::packLanes(randomVec(size_t(C * K), rng, -0.5f, 0.5f).data(), C, K);
                // K = 1 carries nothing; one unused float keeps the pointer valid.
                const auto state0 = K > 1 ? ssm::packLanes(randomVec(size_t(C * (K - 1)), rng, -1, 1).data(), C, K - 1)
                                          : std::vector<float>(1, 0.f);
                auto run = [&](int64_t chunk, int threads, std::vector<float>& state) {
                    ExecContext ctx(threads);
                    std::vector<float> out(size_t(T * C));
                    for (int64_t t0 = 0; t0 < T; t0 += chunk) {
                        const int64_t n = std::min(chunk, T - t0);
                        if (silu)
                            ssm::conv1dSilu(&x[size_t(t0 * ld)], ld, n, C, K, w.data(), b.data(), state.data(),
                                            &out[size_t(t0 * C)], C, ctx);
                        else
                            ssm::conv1d(&x[size_t(t0 * ld)], ld, n, C, K, w.data(), state.data(),
                                        &out[size_t(t0 * C)], C, ctx);
                    }
                    return out;
                };
                auto refState = state0;
                const auto ref = run(T, 1, refState);
                for (int threads : {1, 2, 3})
                    for (int64_t chunk : {1, 2, 4}) {
                        auto state = state0;
                        const auto out = run(chunk, threads, state);
                        const QString what = QString("K %1 silu %2 threads %3 chunk %4")
                                                 .arg(K)
                                                 .arg(silu)
                                                 .arg(threads)
                                                 .arg(chunk);
                        QVERIFY2(std::memcmp(out.data(), ref.data(), out.size() * 4) == 0, qPrintable(what));
                        QVERIFY2(state == refState, qPrintable(what));
                    }
            }
    }

    void scanMatchesDefinition() { checkScanAgainstDefinition(false, 16); }
    // Mamba-2: one A per channel (decayA); 18 states also covers the tail of the four partial sums.
    void perChannelDecayScanMatchesDefinition() { checkScanAgainstDefinition(true, 18); }

    void packingRoundTrips() {
        std::vector<float> v(37 * 5);
        for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
        const auto p = ssm::packLanes(v.data(), 37, 5);
        QCOMPARE(p.size(), size_t(3 * 5 * ssm::kLanes));
        QCOMPARE(p[size_t((2 * 5 + 4) * ssm::kLanes + 36 % ssm::kLanes)], v[36 * 5 + 4]);
        QCOMPARE(p.back(), 0.f);  // padding lane
        QVERIFY(ssm::unpackLanes(p.data(), 37, 5) == v);
    }

    void scanChunksAndThreadsAreBitExact() { checkScanChunksAndThreads(false, 16); }
    // States left over after the groups whose exponentials are taken together.
    void scanWithStatesLeftOverIsBitExact() {
        checkScanAgainstDefinition(false, 21);
        checkScanChunksAndThreads(false, 21);
    }
    void perChannelDecayScanChunksAndThreadsAreBitExact() { checkScanChunksAndThreads(true, 19); }

private:
    void checkScanAgainstDefinition(bool perChannelDecay, int64_t N) {
        std::mt19937 rng(5);
        const int64_t T = 9, C = 21, nx = 2 * N + 3;
        auto x = randomVec(size_t(T * C), rng, -2, 2);
        auto dt = randomVec(size_t(T * C), rng, -3, 3);
        auto bias = randomVec(size_t(C), rng, -5, -1);
        auto bc = randomVec(size_t(T * nx), rng, -1, 1);
        auto z = randomVec(size_t(T * C), rng, -3, 3);
        auto D = randomVec(size_t(C), rng, 0.5f, 1.5f);
        std::vector<float> A(size_t(C * N));
        auto Ac = std::vector<float>(size_t(C));
        for (int64_t c = 0; c < C; ++c) {
            Ac[size_t(c)] = -(0.5f + float(c) / float(C));
            for (int64_t n = 0; n < N; ++n)
                A[size_t(c * N + n)] = perChannelDecay ? Ac[size_t(c)] : -float(n + 1) * (0.5f + float(c) / float(C));
        }
        auto h0 = randomVec(size_t(C * N), rng, -1, 1);
        dt[5] = 30.f;  // the softplus pass-through branch

        ssm::ScanInputs in;
        in.tokens = T;
        in.channels = C;
        in.stateSize = N;
        in.x = x.data();
        in.ldx = C;
        in.dt = dt.data();
        in.lddt = C;
        in.dtBias = bias.data();
        in.B = bc.data() + 3;
        in.C = bc.data() + 3 + N;
        in.ldbc = nx;
        const auto Ap = ssm::packLanes(A.data(), C, N);
        if (perChannelDecay) in.decayA = Ac.data();
        else in.A = Ap.data();
        in.D = D.data();
        in.z = z.data();
        in.ldz = C;
        auto hp = ssm::packLanes(h0.data(), C, N);
        std::vector<float> y(size_t(T * C));
        ExecContext ctx(3);
        ssm::selectiveScan(in, hp.data(), y.data(), C, ctx);
        const auto h = ssm::unpackLanes(hp.data(), C, N);

        std::vector<double> hr(h0.begin(), h0.end());
        for (int64_t t = 0; t < T; ++t)
            for (int64_t c = 0; c < C; ++c) {
                const double delta = softplusD(double(dt[size_t(t * C + c)]) + bias[size_t(c)]);
                const double xv = x[size_t(t * C + c)];
                double s = 0;
                for (int64_t n = 0; n < N; ++n) {
                    double& hv = hr[size_t(c * N + n)];
                    hv = std::exp(delta * A[size_t(c * N + n)]) * hv + delta * bc[size_t(t * nx + 3 + n)] * xv;
                    s += hv * bc[size_t(t * nx + 3 + N + n)];
                }
                const double expect = (s + D[size_t(c)] * xv) * siluD(z[size_t(t * C + c)]);
                QVERIFY2(
                    std::abs(y[size_t(t * C + c)] - expect) < 1e-4 * (1 + std::abs(expect)),
                    qPrintable(QString("t %1 c %2: %3 vs %4").arg(t).arg(c).arg(y[size_t(t * C + c)]).arg(expect)));
            }
        for (size_t i = 0; i < hr.size(); ++i) QVERIFY(std::abs(h[i] - hr[i]) < 1e-4 * (1 + std::abs(hr[i])));
    }

    void checkScanChunksAndThreads(bool perChannelDecay, int64_t N) {
        std::mt19937 rng(9);
        const int64_t T = 13, C = 70;
        auto x = randomVec(size_t(T * C), rng, -2, 2);
        auto dt = randomVec(size_t(T * C), rng, -3, 3);
        auto bias = randomVec(size_t(C), rng, -5, -1);
        auto bc = randomVec(size_t(T * 2 * N), rng, -1, 1);
        auto z = randomVec(size_t(T * C), rng, -3, 3);
        auto D = randomVec(size_t(C), rng, 0.5f, 1.5f);
        const auto A0 = randomVec(size_t(C * N), rng, -16, -1);
        const auto A = ssm::packLanes(A0.data(), C, N);
        const auto decayA = randomVec(size_t(C), rng, -16, -1);
        const size_t hSize = size_t(ssm::laneBlocks(C) * N * ssm::kLanes);
        auto run = [&](int64_t chunk, int threads, std::vector<float>& h) {
            ExecContext ctx(threads);
            std::vector<float> y(size_t(T * C));
            for (int64_t t0 = 0; t0 < T; t0 += chunk) {
                ssm::ScanInputs in;
                in.tokens = std::min(chunk, T - t0);
                in.channels = C;
                in.stateSize = N;
                in.x = &x[size_t(t0 * C)];
                in.ldx = C;
                in.dt = &dt[size_t(t0 * C)];
                in.lddt = C;
                in.dtBias = bias.data();
                in.B = &bc[size_t(t0 * 2 * N)];
                in.C = &bc[size_t(t0 * 2 * N + N)];
                in.ldbc = 2 * N;
                in.D = D.data();
                if (perChannelDecay) in.decayA = decayA.data();
                else in.A = A.data();
                in.D = D.data();
                in.z = &z[size_t(t0 * C)];
                in.ldz = C;
                ssm::selectiveScan(in, h.data(), &y[size_t(t0 * C)], C, ctx);
            }
            return y;
        };
        std::vector<float> h1(hSize, 0.f);
        const auto ref = run(T, 1, h1);
        for (int threads : {1, 2, 3})
            for (int64_t chunk : {1, 2, 5, 13}) {
                std::vector<float> h(hSize, 0.f);
                const auto y = run(chunk, threads, h);
                QVERIFY(std::memcmp(y.data(), ref.data(), y.size() * 4) == 0);
                QVERIFY(std::memcmp(h.data(), h1.data(), h.size() * 4) == 0);
            }
    }
};

QTEST_APPLESS_MAIN(TestSsmOps)
#include "test_ssm_ops.moc"
